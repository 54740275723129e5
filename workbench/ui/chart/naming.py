"""What each text of the chart names, for the rule that a reader pairs it with that
(:class:`~workbench.model.chart.placement.Attribution`): in device pixels, from what the chart
draws (a part of :mod:`workbench.ui.chart.labels`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from workbench.model.chart.occupancy import clip_segment
from workbench.model.chart.placement import PAIRING_REACH, Attribution, box_gaps, same_spot
from workbench.ui.chart.axes import to_view

#: Air around lines and markers, pixels.
AIR = 1.5


def other_marks(canvas, to_px) -> tuple[np.ndarray, np.ndarray]:
    """The marks besides the operations' points that a text could be taken to name:
    the ridges' diamonds (-3) and the sweeps' ends (-1: owned by no operation), the
    sweeps' samples drawn as dots and the measured points and their predictions (owned by
    their operation), as ``(rects, owners)``. (A sweep's end text right over the dot of
    another sample reads as that sample's value; a roof value's leader ending on one, as
    its name.)"""
    theme = canvas.theme
    spots: list[tuple[float, float, float, int]] = []
    marks = canvas.roofs.ridge_marks
    if marks.isVisible():
        xs, ys = marks.getData()
        if xs is not None:
            spots += [(x, y, theme.ridge_size, -3) for x, y in zip(xs, ys, strict=True)]
    # the sweeps' ends (owned by no operation: a name keeps off another's sweep)
    spots += [(to_view(path.xs[end]), to_view(path.ys[end]), theme.point_size * 0.55, -1)
              for path, end, _label in canvas.overlays.sweep_texts]
    for path, _curve in canvas.overlays.sweep_paths_drawn:
        if path.dots:
            size, owner = theme.point_size * 0.55, path.op_id
            spots += [(to_view(x), to_view(y), size, owner)
                      for x, y in zip(path.xs, path.ys, strict=True)]
    for mark, _curve, _label in canvas.overlays.measured_texts:
        owner = -1 if mark.op_id is None else mark.op_id
        spots += [(to_view(mark.x), to_view(mark.y), theme.point_size * 1.3, owner),
                  (to_view(mark.px), to_view(mark.py), theme.point_size * 0.9, owner)]
    if not spots:
        return np.zeros((0, 4)), np.zeros(0, dtype=np.int64)
    arr = np.asarray(spots, dtype=float)
    px, py = to_px(arr[:, 0], arr[:, 1])
    half = arr[:, 2] / 2 + AIR
    return (np.column_stack((px - half, py - half, px + half, py + half)),
            arr[:, 3].astype(np.int64))


def names_of(marker_rects, marker_ops, marks, ops) -> Attribution:
    """What a name or tag of the operations ``ops`` names: their markers on every
    machine and their measured points, against every other mark."""
    rects, owners = marker_rects, marker_ops
    marks, mark_owners = marks
    if len(owners) != len(rects):  # (markers not drawn yet)
        owners = np.full(len(rects), -2, dtype=np.int64)
    mine, theirs = _owned(owners, ops), _owned(mark_owners, ops)
    own = np.concatenate((rects[mine], marks[theirs]))
    others = np.concatenate((rects[~mine], marks[~theirs]))
    own = own[np.isfinite(own).all(axis=1)]
    others = others[np.isfinite(others).all(axis=1)]
    return Attribution(own, others[~same_spot(others, own, AIR)])


def misnamed(layout, near, moved: np.ndarray, names_of_point) -> set:
    """Of the texts ``near`` placed by ``layout`` (near the markers an edit moved to
    ``moved``, rows ``left, top, right, bottom``; untouched by them), those that no longer
    name what they name where they are: an operation's name as ``names_of_point(op_id)``
    says now; another text as its request said, the moved markers among the marks it must
    not be taken to name (where they were too: a text that passes so still names its own)."""
    out = set()
    for key in near:
        if key[0] == "point":
            names = names_of_point(key[1])
        else:
            names = layout.requests[key].names
            if names is None:
                continue
            names = replace(names, others=np.concatenate((names.others, moved)))
        if not layout.still_named(key, names):
            out.add(key)
    return out


def _owned(owners: np.ndarray, ops) -> np.ndarray:
    """Which of ``owners`` are among ``ops`` (a name's few operations: compared one by one,
    quicker than :func:`numpy.isin` for so few)."""
    ops = list(ops)
    if len(ops) > 8:
        return np.isin(owners, ops)
    mine = np.zeros(len(owners), dtype=bool)
    for op in ops:
        mine |= owners == op
    return mine


def names_spot(sx: float, sy: float, size: float, drawn: DrawnMarks,
               with_marks: bool = True, reach: float = PAIRING_REACH,
               drawn_size: float | None = None) -> Attribution:
    """What a text of a mark at ``(sx, sy)`` (device pixels) of ``size`` names: that
    mark, against the marks ``drawn`` (the operations' markers and the other marks; but
    the ridges' without ``with_marks``), those drawn over it aside (an operation's point on
    its ridge is at its place). ``drawn_size``: the mark's size as drawn, where ``size``
    gives it more room (a sweep's end): a mark is drawn over it where it meets that, not
    the room (another sweep's end half a pixel off, on another operation's point, is
    another mark to a reader)."""
    half = size / 2 + AIR
    own = np.array([[sx - half, sy - half, sx + half, sy + half]])
    others = drawn.rects(with_marks)
    if drawn_size is None:
        a = own[0] + (AIR, AIR, -AIR, -AIR)
    else:
        seen = drawn_size / 2
        a = np.array([sx - seen, sy - seen, sx + seen, sy + seen])
    b0, b1, b2, b3 = drawn.as_drawn(with_marks)
    over = (b0 < a[2]) & (a[0] < b2) & (b1 < a[3]) & (a[1] < b3)
    return Attribution(own, others[~over], reach)


class DrawnMarks:
    """The operations' markers and the other marks (:func:`other_marks`) that are drawn
    (finite), for the texts of one placing: each set made once, when first asked for."""

    def __init__(self, marker_rects, marks) -> None:
        self._rects = np.reshape(marker_rects, (-1, 4))
        self._marks = marks
        self._made: dict[bool, np.ndarray] = {}
        self._sides: dict[bool, tuple[np.ndarray, ...]] = {}

    def rects(self, with_ridges: bool = True) -> np.ndarray:
        """The drawn marks (rows ``left, top, right, bottom``), the ridges' diamonds too
        when ``with_ridges``."""
        found = self._made.get(with_ridges)
        if found is None:
            rects, owners = self._marks
            others = np.concatenate((self._rects,
                                     rects if with_ridges else rects[owners != -3]))
            found = self._made[with_ridges] = others[np.isfinite(others).all(axis=1)]
        return found

    def as_drawn(self, with_ridges: bool = True) -> tuple[np.ndarray, ...]:
        """The sides (left, top, right, bottom: a row each) of :meth:`rects` as drawn, less
        the air around each (for the texts of one placing, made once)."""
        found = self._sides.get(with_ridges)
        if found is None:
            inset = self.rects(with_ridges) + (AIR, AIR, -AIR, -AIR)
            found = self._sides[with_ridges] = tuple(np.ascontiguousarray(inset.T))
        return found


def roof_segments(canvas, to_px, frame=None) -> list[tuple[object, np.ndarray]]:
    """Each visible roof's line as segments in device pixels (rows ``x0, y0, x1,
    y1``), with its roof; with ``frame`` (the plot's ``left, top, right, bottom``), only
    their parts inside it: what a reader sees of them (a line just over the plot's top is
    no line a text beside it names)."""
    out = []
    for roof, curve in canvas.roofs.roofs:
        if not curve.isVisible():
            continue
        xs, ys = curve.getData()
        if xs is None or len(xs) < 2:
            continue
        px, py = to_px(xs, ys)
        seg = np.column_stack((px[:-1], py[:-1], px[1:], py[1:]))
        seg = seg[np.isfinite(seg).all(axis=1)]
        if frame is not None:
            seg = seen_parts(seg, frame)
        out.append((roof, seg))
    return out


def seen_parts(segments: np.ndarray, frame) -> np.ndarray:
    """The parts of ``segments`` (rows ``x0, y0, x1, y1``) inside ``frame``, a row each
    (none for a segment wholly outside)."""
    parts = [part for seg in segments.tolist()
             if (part := clip_segment(*seg, frame)) is not None]
    return np.asarray(parts, dtype=float).reshape(-1, 4)


#: where along its line a roof's value said off it is led to: the middle of the part in
#: view first, then farther from it; then the spots between those (a short part in view,
#: points all along it)
LINE_SPOTS = (0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.18, 0.82, 0.1, 0.9,
              0.46, 0.54, 0.38, 0.62, 0.3, 0.7, 0.22, 0.78, 0.14, 0.86, 0.06, 0.94)


def line_spot(seen, drawn: DrawnMarks, size: float) -> tuple[float, float] | None:
    """The point of the segment ``seen`` (``x0, y0, x1, y1``, device pixels) a leader to
    its line runs to: the first of :data:`LINE_SPOTS` at least ``size`` pixels from every
    mark ``drawn`` (the operations' markers and the others, see :func:`other_marks`; a leader
    ending where a point sits on the line reads as that point's); None where every one
    lies that near a mark (the part in view crowded with points: no leader to it)."""
    spots = line_spots(seen, drawn, size, 1)
    return spots[0] if spots else None


#: the spots of one line a value's leaders may run to lie this fraction of its part in
#: view apart at least
SPOTS_APART = 0.15


def line_spots(seen, drawn: DrawnMarks, size: float, most: int = 5
               ) -> list[tuple[float, float]]:
    """Up to ``most`` spots of the segment ``seen`` a leader to its line may run to: the
    first is :func:`line_spot`'s, the next ones the next of :data:`LINE_SPOTS` as clear of
    the marks and :data:`SPOTS_APART` along the line from those taken (where the lines lie
    close together, the leaders of the other lines' values may close every way out from
    the first: the value is then led to another)."""
    x0, y0, x1, y1 = seen
    rects = drawn.rects()
    taken: list[float] = []
    out: list[tuple[float, float]] = []
    for f in LINE_SPOTS:
        if len(out) >= most:
            break
        if any(abs(f - t) < SPOTS_APART - 1e-9 for t in taken):
            continue
        x, y = x0 + (x1 - x0) * f, y0 + (y1 - y0) * f
        # (only a marker less than ``size`` across and up from the spot can be nearer)
        near = rects[(rects[:, 2] > x - size) & (rects[:, 0] < x + size)
                     & (rects[:, 3] > y - size) & (rects[:, 1] < y + size)]
        if not len(near) or box_gaps(np.array([[x, y, x, y]]), near).min() >= size:
            taken.append(f)
            out.append((x, y))
    return out
