"""Where the boxes around the chart's texts go: the corner of the plot a legend takes
(:func:`free_corners`, :func:`legend_corner`) and the lines a title is broken into
(:func:`wrap_title`). In device units, free of Qt, as :mod:`workbench.model.chart.placement`."""

from __future__ import annotations

from workbench.model.chart.occupancy import Occupancy, Rect

__all__ = ["free_corners", "legend_corner", "wrap_title"]


def free_corners(occupancy: Occupancy, w: float, h: float, margin: float = 8.0
                 ) -> list[tuple[str, Rect]]:
    """The corners of the plot where a ``w`` × ``h`` legend covers nothing, as ``(name,
    rect)``, the one with least drawn around it first (bottom right first on a tie: under the
    flat roofs, right of the slopes, a roofline chart is usually empty)."""
    left, top, right, bottom = occupancy.frame
    if w + 2 * margin > right - left or h + 2 * margin > bottom - top:
        return []
    corners = {
        "bottom-right": (right - margin - w, bottom - margin - h),
        "top-left": (left + margin, top + margin),
        "bottom-left": (left + margin, bottom - margin - h),
        "top-right": (right - margin - w, top + margin),
    }
    found = []
    for rank, (name, (x, y)) in enumerate(corners.items()):
        rect = (x, y, x + w, y + h)
        if occupancy.count(rect):
            continue
        # what lies around it: the texts placed later want that room
        gx, gy = w * 0.5, h * 0.8
        around = occupancy.count((x - gx, y - gy, x + w + gx, y + h + gy))
        found.append(((around, rank), name, rect))
    return [(name, rect) for _key, name, rect in sorted(found)]


def legend_corner(occupancy: Occupancy, w: float, h: float, margin: float = 8.0
                  ) -> tuple[str, Rect] | None:
    """The first of :func:`free_corners`, or ``None`` when no corner is free (the legend
    then goes outside the plot)."""
    corners = free_corners(occupancy, w, h, margin)
    return corners[0] if corners else None


def wrap_title(words_width, text: str, room: float, lines: int = 2) -> list[str]:
    """``text`` on one line when ``words_width(text) <= room``, else on two lines broken at
    the space that balances them best; with ``lines`` > 2, on as few lines (up to
    ``lines``) as keep every line within ``room``, broken to balance them. ``words_width``
    measures a string (the view's font metrics)."""
    if words_width(text) <= room or " " not in text.strip():
        return [text]
    words = text.split(" ")
    best = None
    for i in range(1, len(words)):
        a, b = " ".join(words[:i]), " ".join(words[i:])
        widest = max(words_width(a), words_width(b))
        if best is None or widest < best[0]:
            best = (widest, [a, b])
    assert best is not None  # (a text with a space has two words)
    if best[0] <= room or lines <= 2:
        return best[1]
    for count in range(3, lines + 1):
        # the narrowest width that still breaks the words into ``count`` lines: greedy
        # filling, searched between the widest word and the whole text
        lo = max(words_width(w) for w in words)
        hi = words_width(text)
        found = _greedy_lines(words_width, words, hi)
        for _ in range(24):
            mid = (lo + hi) / 2
            trial = _greedy_lines(words_width, words, mid)
            if len(trial) <= count:
                hi, found = mid, trial
            else:
                lo = mid
        if max(words_width(line) for line in found) <= room or count == lines:
            return found
    return best[1]


def _greedy_lines(words_width, words: list[str], width: float) -> list[str]:
    """``words`` filled into lines no wider than ``width`` (a word wider stays alone)."""
    out: list[str] = []
    line = ""
    for word in words:
        trial = f"{line} {word}" if line else word
        if line and words_width(trial) > width:
            out.append(line)
            line = word
        else:
            line = trial
    if line:
        out.append(line)
    return out
