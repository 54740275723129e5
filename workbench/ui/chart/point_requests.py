"""The requests for the operations' names and tags on the chart: where each may go around
its markers (or its crowd's), its leader, how large its text is, whether its markers are
in view, and what it names (:class:`PointRequests`, a part of
:class:`~workbench.ui.chart.labels.LabelLayer`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from PySide6.QtWidgets import QGraphicsTextItem

from workbench.model.chart.placement import (
    Request,
    far_candidates,
    lead_from,
    point_candidates,
)
from workbench.ui.chart.axes import to_view
from workbench.ui.chart.naming import AIR, names_of

#: The text item's own margin around its text, less a pixel of air: the box the layout
#: keeps clear is the item's rectangle inset by this.
TEXT_INSET = 3.0


class PointRequests:
    """The names' and tags' requests of a :class:`~workbench.ui.chart.labels.LabelLayer`
    (its canvas, frame, markers and caches)."""

    def point_request(self, op_id: int, label, order: float, t=None,
                       selected: int | None = -1) -> Request:
        """The placing asked for an operation's name (or tag) ``label``: a tag is placed
        around its operations' markers close by (on the other machines), and a crowd's
        around the whole crowd (:meth:`TagsAndKey.crowd_of`), its leader leaving them, not
        one marker; where there is no place beside them, farther off, its leader crossing
        lines of data if it must (never a marker or a text)."""
        canvas = self._canvas
        points, key = canvas.points, canvas.key
        ax, bx, ay, by = t or canvas.view_to_scene()
        radius = canvas.theme.point_size / 2
        crowd = key.crowd_of(op_id)
        tag = op_id in key.tags
        frame = self._frame()
        w, h = self._text_box(label)
        if not self.fits(w, h, frame):
            # (a text larger than the plot has no place in it, beside its markers or
            # farther off: a whole model's crowd of hundreds of tags, to be said in parts)
            return Request(("point", op_id), self._point_kind(op_id, crowd, selected), w, h,
                           np.zeros((0, 6)), order, cross_lines=tag,
                           air=TAG_AIR if tag else NAME_AIR)
        xs, ys = [], []
        t = (ax, bx, ay, by)
        # (within reusing_occupancy nothing drawn moves: each anchor is found once, not
        # once for each crowd it is in, in each of a key's passes)
        anchors = self._anchors if self._reuse else {}
        for member in crowd:
            memo = (member, t, frame)
            at = anchors.get(memo)
            if at is None:
                at = anchors[memo] = self._anchor(member, t, frame)
            xs.append(at[0])
            ys.append(at[1])
        own = far = None
        if tag:
            # the markers of what it names: its points on every machine, its measured
            # points and their predictions (its leader may cross them)
            theme = canvas.theme
            # (its points' view positions by row: a model's crowd has a thousand)
            rows = points.rows_of([k for member in crowd for k in points.keys_of(member)])
            mine = len(rows)
            spots = []
            members = set(crowd)
            for mark, _curve, _label in canvas.overlays.measured_texts:
                if mark.op_id in members:
                    spots += [(mark.x, mark.y, theme.point_size * 1.3),
                              (mark.px, mark.py, theme.point_size * 0.9)]
            arr = np.asarray(spots, dtype=float).reshape(-1, 3)
            view = points.xy[rows].reshape(-1, 2)
            px, py = self._px(np.concatenate((view[:, 0], to_view(arr[:, 0]))),
                              np.concatenate((view[:, 1], to_view(arr[:, 1]))), (ax, bx, ay, by))
            half = np.concatenate((np.full(mine, float(theme.point_size)), arr[:, 2])) / 2 + AIR
            own = np.column_stack((px - half, py - half, px + half, py + half))
            # it is placed around its points close by, too (on the other machines)
            near = 2.5 * theme.point_size
            x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
            qx, qy = px[:mine], py[:mine]
            close = (qx >= x0 - near) & (qx <= x1 + near) & (qy >= y0 - near) & (qy <= y1 + near)
            xs += qx[close].tolist()
            ys += qy[close].tolist()
        marker = radius
        if len(xs) > 1:
            x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
            sx, sy = (x0 + x1) / 2, (y0 + y1) / 2
            radius += max(x1 - x0, y1 - y0) / 2
        else:
            sx, sy = xs[0], ys[0]
        kind = self._point_kind(op_id, crowd, selected)
        if len(crowd) > 1 or radius > 1.5 * canvas.theme.point_size:
            # beside a crowd, a text with no leader does not say which markers it names:
            # the places of the nearest ring with their leaders (and the far ones)
            cands = point_candidates(sx, sy, w, h, radius, CROWD_RINGS)[8:]
        else:
            cands = point_candidates(sx, sy, w, h, radius)
        # a leader leaves the marker nearest the text, not the middle of a crowd
        cands = lead_from(cands, xs, ys, marker)
        if tag:
            far = self._far_places(sx, sy, w, h, radius, (xs, ys, marker))
        if not self.in_view(crowd, (ax, bx, ay, by), rows if tag else None):
            # none of its markers is in view: a text would name empty plot (a tag's leader
            # ran to the edge); the note over the chart counts the points outside
            cands, far = cands[:0], None
        return Request(("point", op_id), kind, w, h, cands, order, cross_lines=tag, own=own,
                       far=far, air=TAG_AIR if tag else NAME_AIR,
                       names=names_of(self._marker_rects, self._marker_ops, self._marks, crowd))

    def _point_kind(self, op_id: int, crowd: tuple, selected: int | None = -1) -> str:
        """The kind of an operation's name or tag (its priority: the selected one's first,
        then a crowd's tags, which need the most room, then the single names and tags)."""
        if selected == -1:
            selected = self._canvas.workspace.selection.current
        return ("selected" if selected == op_id else
                "crowd" if len(crowd) > 1 else "operation")

    @staticmethod
    def fits(w: float, h: float, frame) -> bool:
        """Whether a ``w`` × ``h`` text could lie within the plot ``frame`` at all (a place
        the layout takes lies inside the plot; a pixel's slack for rounding)."""
        return w <= frame[2] - frame[0] + 1.0 and h <= frame[3] - frame[1] + 1.0

    def fits_plot(self, label, text: str | None = None) -> bool:
        """Whether the text of ``label`` (or ``text``, were the label to say it) could lie
        within the plot at all (see :meth:`fits`)."""
        box = self._text_box(label) if text is None else self.text_box_of(label, text)
        return self.fits(*box, self._frame())

    _measure: QGraphicsTextItem | None = None

    def text_box_of(self, label, text: str) -> tuple[float, float]:
        """The box :meth:`_text_box` gives ``label`` were it to say ``text``, the label left
        as it is: laid out by a text item of the label's font, and kept by font and text
        (a whole model's crowds are said again at each edit, hundreds of lines)."""
        if label.toPlainText() == text:
            return self._text_box(label)
        font = label.textItem.font()
        key = (font.key(), text)
        size = _SIZES.get(key)
        if size is None:
            item = self._measure
            if item is None:
                item = self._measure = QGraphicsTextItem()
            item.setFont(font)
            item.setPlainText(text)
            rect = item.boundingRect()
            size = (rect.width(), rect.height())
            if len(_SIZES) >= _SIZES_KEPT:
                _SIZES.clear()
            _SIZES[key] = size
        w, h = size
        return max(1.0, w - 2 * TEXT_INSET), max(1.0, h - 2 * TEXT_INSET)

    def placed_for_view(self) -> bool:
        """Whether the last placing was made for the plot's frame and view as they are."""
        return self._text_layout is not None and self._placed_for == self._view_now()

    def _anchor(self, op_id: int, t, frame=None) -> tuple[float, float]:
        """Where an operation's name is said, in scene pixels: by the point that carries it
        (:meth:`PointLayer.label_point`), or, when that one is out of view, by the highest
        of its points in view (its leader ran out of the plot to a marker not seen)."""
        points = self._canvas.points
        point = points.label_point(op_id)
        ax, bx, ay, by = t
        # (plain numbers: the same sums as an array's, without numpy's cost for one)
        sx, sy = to_view(point.x) * ax + bx, to_view(point.y) * ay + by
        left, top, right, bottom = frame or self._frame()
        if left <= sx <= right and top <= sy <= bottom:
            return float(sx), float(sy)
        rows = points.rows_of(points.keys_of(op_id))
        if len(rows):
            xs, ys = self._px(points.xy[rows, 0], points.xy[rows, 1], t)
            seen = _within(xs, ys, (left, top, right, bottom))
            if seen.any():
                best = int(np.argmin(np.where(seen, ys, np.inf)))  # (the highest on screen)
                return float(xs[best]), float(ys[best])
        return float(sx), float(sy)

    def in_view(self, crowd, t=None, rows=None) -> bool:
        """Whether a marker of any of the operations ``crowd`` lies within the plot
        (``t``: the view's transform, the current one when not given; ``rows``: their
        markers' rows of the hover arrays, when already found)."""
        t = t or self._canvas.view_to_scene()
        points = self._canvas.points
        if rows is None:
            rows = points.rows_of([k for member in crowd for k in points.keys_of(member)])
        if not len(rows):
            return False
        xs, ys = self._px(points.xy[rows, 0], points.xy[rows, 1], t)
        return bool(np.any(_within(xs, ys, self._frame())))

    def ops_in_view(self, t=None) -> set:
        """The operations with a marker within the plot (all at once)."""
        t = t or self._canvas.view_to_scene()
        points = self._canvas.points
        if not len(points.keys):
            return set()
        xy = points.pixels(t)
        inside = _within(xy[:, 0], xy[:, 1], self._frame())
        return {key[0] for key, seen in zip(points.keys, inside, strict=True) if seen}

    def _point_request_now(self, op_id: int, label, order: float, t, selected) -> Request:
        """:meth:`point_request`; within :meth:`reusing_occupancy` (nothing drawn changes)
        the same request again where the text, its crowd, its tag, its order, the
        selection and the view are the same."""
        if not self._reuse:
            return self.point_request(op_id, label, order, t, selected)
        key = self._canvas.key
        memo = (op_id, label.toPlainText(), self._text_box(label), key.crowd_of(op_id),
                op_id in key.tags, order, selected, self._view_now(),
                self._canvas.width(), self._canvas.height())
        request = self._point_requests.get(memo)
        if request is None:
            request = self.point_request(op_id, label, order, t, selected)
            self._point_requests[memo] = request
        return request

    def _far_places(self, sx: float, sy: float, w: float, h: float, radius: float,
                    lead=None):
        """The places farther off (:func:`far_candidates`, each with its leader: from the
        nearest of the markers ``lead``, ``(xs, ys, half-size)``, where given) for a text
        that finds none beside its mark at ``(sx, sy)``: made when first asked for, once."""
        canvas = self._canvas
        frame = self._frame()
        diagonal = math.hypot(frame[2] - frame[0], frame[3] - frame[1])
        most = min(FAR_REACH * diagonal,
                   LEADER_MOST * math.hypot(canvas.width(), canvas.height()))
        step = max(6.0, diagonal / 80.0)

        # (made once: a tag with no place is tried again, its leader across its markers)
        @functools.lru_cache(maxsize=1)
        def far():
            places = far_candidates(sx, sy, w, h, radius, frame, most, step)
            return lead_from(places, *lead) if lead else places
        return far



#: rings of places around a crowd of markers: the first twice, its second time with leaders
CROWD_RINGS = (0.0, 0.0, 14.0, 30.0, 50.0, 75.0, 105.0)
#: a tag is tried this share of the plot's diagonal away from its markers, at most, and
#: its leader is at most this share of the chart's diagonal long
FAR_REACH = 0.5
LEADER_MOST = 0.24
#: air kept between a tag and other texts, pixels ("add_fp32" and a tag "22" side by side
#: read as one label)
TAG_AIR = 3.0
#: and between an operation's name and other texts ("g_512" and "g_1024" side by side
#: read as one name "g_512 g_1024" a pixel apart)
NAME_AIR = 2.0


#: texts' sizes laid out by :meth:`LabelLayer.text_box_of`, by font and text, and how many
#: are kept (then forgotten all at once)
_SIZES: dict[tuple[str, str], tuple[float, float]] = {}
_SIZES_KEPT = 1024


def _within(xs: np.ndarray, ys: np.ndarray, frame) -> np.ndarray:
    """Which of the pixels ``(xs, ys)`` lie within the plot ``frame`` (edges included)."""
    left, top, right, bottom = frame
    return (xs >= left) & (xs <= right) & (ys >= top) & (ys <= bottom)
