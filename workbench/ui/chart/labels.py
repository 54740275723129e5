"""The chart's texts and their layout: what is drawn where in device pixels, how large each
text is, and putting each text where :mod:`workbench.model.chart.placement` decides.

:class:`LabelLayer` owns the operations' name items (op_id → text item), the table of every
text placed (its key → the text item and what was asked for it), the last layout, the
markers' boxes in it, the leader lines, and when to place the texts again (a moment after a
zoom, pan or resize; at the next paint when the chart was filled while hidden). It reads
what is drawn from the chart's other parts (roofs, points, overlays), asks the legend for
its place first, and is driven by the key of tags (:mod:`workbench.ui.chart.tags`).

A part of :class:`~workbench.ui.chart.canvas.RooflineCanvas`; the same code places the texts of
the live chart and of every exported figure (which is drawn by the same canvas).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from typing import ClassVar

import numpy as np
from PySide6.QtCore import QTimer

from workbench.model.chart.kept_places import KeptPlaces
from workbench.model.chart.placement import (
    Occupancy,
    Request,
    TextLayout,
    lead_from,
    point_candidates,
)
from workbench.model.chart.scene import Scene
from workbench.ui.chart.axes import to_view
from workbench.ui.chart.drawn_cells import CELL, drawn_occupancy
from workbench.ui.chart.items import Label, Pool, Segment, draw_segments
from workbench.ui.chart.naming import AIR, misnamed, names_of
from workbench.ui.chart.point_places import (
    CROWD_RINGS,
    NAME_AIR,
    TAG_AIR,
    anchor_of,
    far_places,
    fits,
    in_plot,
    text_size,
    within,
)
from workbench.ui.chart.roof_values import say_values_short
from workbench.ui.chart.text_requests import RoofLines, chart_text_requests, roof_text_requests

#: The text item's own margin around its text, less a pixel of air: the box the layout
#: keeps clear is the item's rectangle inset by this.
TEXT_INSET = 3.0
#: moved markers beyond which an edit updates their cells all at once (a model's edit)
BATCH_MOVED = 16


class LabelLayer:
    """The chart's texts and their placing (see the module docstring)."""

    #: the texts whose being left out moves the legend (in figures)
    _MISSED_KINDS: ClassVar[frozenset] = frozenset({"selected", "pair", "measured", "crowd", "operation"})

    def __init__(self, canvas, add) -> None:
        """``add`` puts an item into the view."""
        self._canvas = canvas
        self._labels: dict[int, Label] = {}
        self._label_of: dict = {}  # layout key -> (label item, its request)
        self._text_layout: TextLayout | None = None
        self._leaders = Pool(lambda: Segment(18, smooth=False), add)
        self._leader_pen = None
        self._marker_rects = np.zeros((0, 4))
        #: the operation of each of the markers' boxes (by row), and the other marks a
        #: text could be taken to name: ``(rects, operation or -1)``
        self._marker_ops = np.zeros(0, dtype=np.int64)
        self._marks = (np.zeros((0, 4)), np.zeros(0, dtype=np.int64))
        self._layout_timer = QTimer(canvas, singleShot=True, interval=40)
        self._layout_timer.timeout.connect(canvas.layout_annotations)
        # a rebuild while the canvas is hidden (a window being built) places the labels when
        # it is next painted or read, at the size it is shown at, not now
        self._layout_pending = False
        #: within :meth:`reusing_occupancy`, the operations' requests made so far, by what
        #: they depend on besides what is drawn (a key's passes ask again for most of them);
        #: where each name is said (:meth:`_anchor`), by the view; what is drawn, by the plot
        #: frame and view (the occupancy and the markers' tables); the other texts' requests,
        #: the texts hidden and what each said, by the view
        self._point_requests: dict = {}
        self._anchors: dict = {}
        self._occ_cache: dict = {}
        self._chart_texts: dict = {}
        self._lines = RoofLines(canvas)  # (kept while a placing lasts)
        #: what each text found at earlier placings, taken where nothing around it changed
        self.kept: KeptPlaces | None = None  # (made after the first: see _place_all)

    # -- when ----------------------------------------------------------------------------

    def schedule(self) -> None:
        """Place the texts a moment from now (after a zoom, a pan, a resize ends)."""
        self._layout_timer.start()

    @property
    def scheduled(self) -> bool:
        """Whether a placing is queued (see :meth:`schedule`)."""
        return self._layout_timer.isActive()

    def stop(self) -> None:
        """No queued placing."""
        self._layout_timer.stop()

    def hold_until_shown(self) -> None:
        """Place the texts when the chart is next painted or read (it is hidden now)."""
        self._layout_pending = True

    @property
    def pending(self) -> bool:
        """Whether the texts wait for the chart to be shown (see :meth:`hold_until_shown`)."""
        return self._layout_pending

    # -- the operations' names ------------------------------------------------------------

    @property
    def point_labels(self) -> Mapping[int, Label]:
        """The text item naming each operation (or telling its tag), by op_id (read only)."""
        return self._labels

    def sync_points(self, scene: Scene) -> None:
        """A text item for each operation whose point carries its name."""
        labels = self._canvas.styles.texts("point")
        labels.reset()
        self._labels = {}
        for point in scene.points:
            if point.show_label:
                item = self._canvas.styles.take_label("point")
                item.setText(point.label)
                self._labels[point.op_id] = item
        labels.finish()

    def add_point_label(self, op_id: int) -> Label:
        """The text item of operation ``op_id``, made when it has none (a tag's)."""
        label = self._labels.get(op_id)
        if label is None:
            label = self._labels[op_id] = self._canvas.styles.take_label("point")
        return label

    def drop_point_label(self, op_id: int) -> None:
        """Operation ``op_id`` carries no text any more."""
        self._labels.pop(op_id).setVisible(False)

    @property
    def text_layout(self) -> TextLayout | None:
        """The last layout of the texts (None before the first)."""
        return self._text_layout

    def entry(self, key) -> tuple | None:
        """``(text item, its request)`` of a placed text, by its layout key."""
        return self._label_of.get(key)

    def set_entry(self, key, label, request: Request) -> None:
        """What is asked for a text now (its text grew: a tag joined by others)."""
        self._label_of[key] = (label, request)

    def entries(self) -> list[tuple]:
        """``(key, text item, its request)`` of each text placed or asked for."""
        return [(key, *entry) for key, entry in self._label_of.items()]

    def dispose(self) -> None:
        self._layout_timer.stop()
        self._labels = {}

    # -- geometry ---------------------------------------------------------------------

    _placed_for: tuple = ()  # the plot's frame and mapping the texts were placed for

    def _view_now(self) -> tuple:
        return self._frame(), tuple(self._canvas.view_to_scene())

    #: within :meth:`requests` (which moves nothing), the plot's frame, read once
    _fixed_frame: tuple | None = None

    def _frame(self) -> tuple[float, float, float, float]:
        if self._fixed_frame is not None:
            return self._fixed_frame
        f = self._canvas.view_box.sceneBoundingRect()
        return f.left(), f.top(), f.right(), f.bottom()

    def _px(self, xs, ys, t=None):
        ax, bx, ay, by = t or self._canvas.view_to_scene()
        return np.asarray(xs, float) * ax + bx, np.asarray(ys, float) * ay + by

    def _text_box(self, label) -> tuple[float, float]:
        w, h = label.size()
        return max(1.0, w - 2 * TEXT_INSET), max(1.0, h - 2 * TEXT_INSET)

    def _marker_rect(self, sx: float, sy: float, size: float) -> tuple:
        half = size / 2 + AIR
        return (sx - half, sy - half, sx + half, sy + half)

    # -- what is drawn ------------------------------------------------------------------

    @contextlib.contextmanager
    def reusing_occupancy(self):
        """Within this block, what is drawn is not changed (only texts and the legend):
        :meth:`occupancy` is worked out once for each plot frame and view, and copied (the
        several placings of one full layout: the key's passes, the legend's places, each
        placing starting with the legend inside the plot and perhaps moving it outside)."""
        self._reuse += 1
        try:
            with self.placing():
                yield
        finally:
            self._reuse -= 1
            if not self._reuse:
                self._occ_cache = {}
                self._point_requests = {}
                self._anchors = {}
                self._chart_texts = {}

    _reuse = 0

    def occupancy(self) -> Occupancy:
        """Everything drawn on the plot, in device pixels: roofs, ridge lines and marks,
        markers, sweep paths and marks, measured points, pair links and bands."""
        if not self._reuse:
            return self._occupancy_now()
        key = (self._frame(), tuple(self._canvas.view_to_scene()))
        cached = self._occ_cache.get(key)
        if cached is None:
            occ = self._occupancy_now()
            self._occ_cache[key] = (occ.copy(), self._marker_rects.copy(), self._marker_ops,
                                    self._marks)
            return occ
        self._marker_rects = cached[1].copy()
        self._marker_ops, self._marks = cached[2], cached[3]
        return cached[0].copy()

    def _occupancy_now(self) -> Occupancy:
        t = self._canvas.view_to_scene()
        occ, self._marker_rects, self._marker_ops, self._marks = drawn_occupancy(
            self._canvas, lambda x, y: self._px(x, y, t), self._frame(), CELL)
        return occ

    # -- placing ----------------------------------------------------------------------

    def _layout_once(self, choice: str | None, again: tuple | None = None):
        """One full placing with the legend at ``choice`` (see :meth:`ChartLegend.place`):
        ``(layout, placements)``, or None when that corner is not free. ``again``: an
        earlier placing at that corner (:meth:`_placed_at`), taken as it is when the legend,
        the plot's frame and the view are as they were for it (the same placing)."""
        canvas = self._canvas
        legend = canvas.legend
        if choice != "outside":  # every placing starts with the legend inside the plot
            legend.set_outside(None)
        elif choice == "outside" and legend.outside is None:
            legend.set_outside(canvas.outside_side())
        occ = self._legend_placed(choice)
        if occ is None:
            return None
        if again is not None and again[0] == self._placed_at():
            self._label_of = again[3]
            return again[1], again[2]
        # (within reusing_occupancy, a placing again from the same counts takes what the last
        # one found for the texts that did not change)
        last = self._text_layout if self._reuse else None
        kept = self.kept if self._placed_for == self._view_now() else None  # (a pan moved all)
        layout = TextLayout(occ, again=last.found if last is not None else None,
                            record=bool(self._reuse), kept=kept)
        if self._defer and not self._any_name_fits():
            self._label_of = {}
            return layout, None  # (the texts left to a later placing: see deferring)
        requests = self.requests()
        missed = (self.names_missed if not legend.searches(len(self._label_of)) else None)
        return layout, layout.place_all(requests.values(), missed)

    def _legend_placed(self, choice: str | None) -> Occupancy | None:
        """The legend placed at ``choice`` (:meth:`ChartLegend.place`), the titles and links
        fitted to the plot it leaves: what is drawn, or None where that corner is taken."""
        canvas = self._canvas
        legend = canvas.legend
        canvas.titles.apply()  # the room over the plot is known now
        canvas.titles.fit_axis_titles()
        canvas.overlays.bend_links()
        occ = self.occupancy()
        before = self._frame()
        if not legend.place(occ, choice):
            return None
        if self._frame() != before:  # the legend moved outside: the plot is smaller now
            canvas.titles.fit_axis_titles()
            canvas.overlays.bend_links()
            occ = self.occupancy()
            legend.place(occ, choice)
        return occ

    def _any_name_fits(self) -> bool:
        """Whether an operation's name or tag to be placed could lie within the plot."""
        key = self._canvas.key
        hidden = key.unlisted() | key.joined
        frame = self._frame()
        return any(fits(*self._text_box(label), frame)
                   for op_id, label in self._labels.items() if op_id not in hidden)

    def _placed_at(self) -> tuple:
        """What a placing's result depends on besides the texts: the plot's frame, the
        view, and the legend's place."""
        legend = self._canvas.legend
        return (self._frame(), tuple(self._canvas.view_to_scene()), legend.choice,
                legend.outside, legend.item.isVisible(), legend.item.sceneBoundingRect())

    def _missed(self, placed: dict) -> int:
        """How many names of operations (and annotations asked for) found no place."""
        return sum(1 for key, p in placed.items()
                   if p is None and self._label_of[key][1].kind in self._MISSED_KINDS)

    def place_all(self) -> None:
        """Place every text of the chart (see :mod:`workbench.model.chart.placement`). When names of
        operations find no place, the legend's other free corners and a place outside the
        plot are tried too (a few texts: the search is bounded), and the placing that leaves
        out least is kept."""
        with self.placing():
            self._place_all()

    #: placings under way (the legend they move resizes the plot: no placing within one)
    busy = 0
    #: set by the key's passes: ``names_missed(placed)``, the operations named whose name
    #: found no place; a placing that leaves one out places names and tags alone
    names_missed = None

    @contextlib.contextmanager
    def placing(self):
        """Within this block a placing is under way (:attr:`busy`)."""
        self.busy += 1
        try:
            yield
        finally:
            self.busy -= 1
            if not self.busy:
                self._lines.forget()

    def _place_all(self) -> None:
        self._layout_pending = False
        self._layout_timer.stop()  # placed for the current view: a queued placing is moot
        canvas = self._canvas
        legend = canvas.legend
        if canvas.scene_model is None:
            return
        kept = legend.kept_choice
        trial = self._layout_once(kept) if kept else None
        layout, placed = trial if trial is not None else self._layout_once(None)
        self._deferred = placed is None
        if placed is None:  # (the legend placed; the texts left where they are)
            self._text_layout = layout
            self._placed_for = self._view_now()
            self._layout_timer.stop()
            return
        missed = self._missed(placed)
        if missed and legend.searches(len(self._label_of)):
            best = legend.choice
            # (the best placing so far, to take again when the legend returns to it)
            kept_placing = (self._placed_at(), layout, placed, dict(self._label_of))
            tried = {best}
            current = best
            for choice in ("bottom-right", "top-left", "bottom-left", "top-right", "outside"):
                if choice in tried:
                    continue
                tried.add(choice)
                current = choice  # a trial changes the legend's place, even when it fails
                trial = self._layout_once(choice)
                if trial is None:
                    continue
                # worth moving the legend for a name of an operation, not for a roof value
                if self._missed(trial[1]) < missed:
                    layout, placed = trial
                    missed, best = self._missed(trial[1]), choice
                    kept_placing = (self._placed_at(), layout, placed, dict(self._label_of))
                    if not missed:
                        break
            if current != best:
                layout, placed = self._layout_once(best, kept_placing)
        self._text_layout = layout
        self._placed_for = self._view_now()
        for key, (label, _request) in self._label_of.items():
            self.apply(label, placed.get(key))
        self.redraw_leaders()
        self._leaders.keep_spare(8)  # (the leaders an edit's texts may take)
        self._layout_timer.stop()  # what the placing itself resized is placed for
        if self.kept is None:  # (the first window's texts are placed once, at start-up)
            self.kept = KeptPlaces()

    #: within :meth:`deferring`, how deep; whether the last placing left the texts
    _defer = 0
    _deferred = False

    @contextlib.contextmanager
    def deferring(self):
        """Within this block, a placing in which no operation's name or tag could lie
        within the plot (each larger than it: a whole model's crowds of hundreds of tags)
        places the legend and leaves the texts where they are: a layout in which no
        operation's text is placed, as the placing would find, for the key's steps to read.
        The next placing, or :meth:`place_deferred` after the block, places them all (a
        crowd said in parts takes one placing, not two)."""
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1

    def place_deferred(self) -> None:
        """Place the texts a placing within :meth:`deferring` left, if the last one did."""
        if self._deferred:
            self.place_all()

    def saved_placing(self) -> tuple:
        """What the last placing left (its layout, the texts' requests, the view and the
        legend's place), for :meth:`restore_placing`."""
        return (self._text_layout, dict(self._label_of), self._placed_for, self._placed_at(),
                self._deferred)

    def restore_placing(self, saved: tuple) -> bool:
        """Put every text back where the placing ``saved`` (:meth:`saved_placing`) put it,
        once the texts, tags and crowds it placed are as they were then: what placing them
        again would do, as long as the legend and the view are where they were (nothing
        drawn changes meanwhile, within :meth:`reusing_occupancy`). False (nothing done)
        when they are not."""
        layout, label_of, placed_for, at, deferred = saved
        if layout is None or deferred or not self._reuse:
            return False
        legend = self._canvas.legend
        if at != self._placed_at() and at[4] == legend.item.isVisible():
            # (the legend laid out as that placing had it, its rows as they were then: a
            # trial's longer key below the plot, taken back, left the plot short)
            legend.set_outside(None)
            legend.set_outside(at[3] if at[2] == "outside" else None)
            self._legend_placed(at[2])
        if at != self._placed_at() or placed_for != self._view_now():
            return False
        self._layout_pending = False
        self._layout_timer.stop()
        key = self._canvas.key
        unlisted = key.unlisted() | key.joined
        for op_id, label in self._labels.items():
            if op_id in unlisted:
                label.setVisible(False)
        self._text_layout = layout
        self._label_of = label_of
        self._placed_for = placed_for
        for k, (label, _request) in label_of.items():
            self.apply(label, layout.placed.get(k))
        self.redraw_leaders()
        return True

    def apply(self, label, placement) -> None:
        """Put a text where the layout placed it (hidden when it found no place)."""
        if placement is None:
            label.setVisible(False)
            return
        ax, bx, ay, by = self._canvas.view_to_scene()
        left, top = placement.rect[0] - TEXT_INSET, placement.rect[1] - TEXT_INSET
        label.setVisible(True)
        label.set_offset(0.0, 0.0, anchor=(0, 0))  # (anchor and offset: one re-positioning)
        label.setPos((left - bx) / ax, (top - by) / ay)

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
        if not fits(w, h, frame):
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
                at = anchors[memo] = anchor_of(points, member, t, frame)
            xs.append(at[0])
            ys.append(at[1])
        xs, ys = in_plot(xs, ys, frame)
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
            close &= within(qx, qy, frame)  # (none out of the plot: see in_plot)
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

    def fits_plot(self, label, text: str | None = None) -> bool:
        """Whether the text of ``label`` (or ``text``, were the label to say it) could lie
        within the plot at all (:func:`~workbench.ui.chart.point_places.fits`)."""
        box = self._text_box(label) if text is None else self.text_box_of(label, text)
        return fits(*box, self._frame())

    def text_box_of(self, label, text: str) -> tuple[float, float]:
        """The box :meth:`_text_box` gives ``label`` were it to say ``text``, the label left
        as it is (:func:`text_size` of its font: a whole model's crowds are said again at
        each edit, hundreds of lines)."""
        if label.toPlainText() == text:
            return self._text_box(label)
        w, h = text_size(label.textItem.font(), text)
        return max(1.0, w - 2 * TEXT_INSET), max(1.0, h - 2 * TEXT_INSET)

    def placed_for_view(self) -> bool:
        """Whether the last placing was made for the plot's frame and view as they are."""
        return self._text_layout is not None and self._placed_for == self._view_now()

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
        return bool(np.any(within(xs, ys, self._frame())))

    def ops_in_view(self, t=None) -> set:
        """The operations with a marker within the plot (all at once)."""
        t = t or self._canvas.view_to_scene()
        points = self._canvas.points
        if not len(points.keys):
            return set()
        xy = points.pixels(t)
        inside = within(xy[:, 0], xy[:, 1], self._frame())
        return {key[0] for key, seen in zip(points.keys, inside, strict=True) if seen}

    def _point_request_now(self, op_id: int, label, order: float, t, selected,
                           view: tuple) -> Request:
        """:meth:`point_request`; within :meth:`reusing_occupancy` (nothing drawn changes)
        the same request again where the text, its crowd, its tag, its order, the
        selection and the view (``view``: the plot's frame and view, the canvas's size)
        are the same."""
        if not self._reuse:
            return self.point_request(op_id, label, order, t, selected)
        key = self._canvas.key
        memo = (op_id, label.toPlainText(), self._text_box(label), key.crowd_of(op_id),
                op_id in key.tags, order, selected, view)
        request = self._point_requests.get(memo)
        if request is None:
            request = self.point_request(op_id, label, order, t, selected)
            self._point_requests[memo] = request
        return request

    def _far_places(self, sx: float, sy: float, w: float, h: float, radius: float,
                    lead=None):
        """:func:`far_places` of a text in this chart's plot."""
        canvas = self._canvas
        return far_places(sx, sy, w, h, radius, self._frame(), (canvas.width(),
                                                                 canvas.height()), lead)

    def requests(self) -> dict:
        """Every text to place, keyed, with its label item."""
        frame = self._frame()
        self._fixed_frame = frame  # (read by every request: the plot moves not meanwhile)
        try:
            return self._requests(frame)
        finally:
            self._fixed_frame = None

    def _requests(self, frame: tuple) -> dict:
        canvas = self._canvas
        t = canvas.view_to_scene()
        view = (frame, tuple(t), canvas.width(), canvas.height())
        out: dict = {}
        self._label_of = {}

        selected = canvas.workspace.selection.current
        unlisted = canvas.key.unlisted() | canvas.key.joined
        for op_id, label in self._labels.items():
            if op_id in unlisted:
                if label.isVisible():  # (a whole model's: a thousand hidden already)
                    label.setVisible(False)
                continue
            point = canvas.points.label_point(op_id)
            # the higher first; a crowd's tags before, the largest crowd first (it names
            # the most operations and needs the most room)
            order = (-math.log10(max(point.y, 1e-300))
                     - 1e3 * (len(canvas.key.crowd_of(op_id)) - 1))
            request = self._point_request_now(op_id, label, order, t, selected, view)
            out[request.key] = request
            self._label_of[request.key] = (label, request)
        for key, label, request in chart_text_requests(
                canvas, frame, lambda x, y: self._px(x, y, t), self._marker_rects, self._marks,
                self._text_box, self._far_places, self._chart_texts if self._reuse else None,
                view, lambda: self._lines.of(frame, t, self._px, self.busy)):
            out[key] = request
            self._label_of[key] = (label, request)
        return out

    # -- incremental ----------------------------------------------------------------------

    def relayout_moved(self, keys: list, rows: np.ndarray, xy: np.ndarray) -> None:
        """After an edit moved the markers ``keys`` (rows ``rows`` of the hover arrays) to
        the view positions ``xy``: update their cells and re-place only the texts they (or
        the moved operations' labels) touch, and those they now come near enough to bear on
        whom a reader pairs them with (:meth:`TextLayout.hit_by_any`: a marker moved
        beside another's name, untouched, would read as named by it)."""
        layout = self._text_layout
        if layout is None or self._layout_pending:
            return
        if self._view_now() != self._placed_for:
            # the plot was resized or zoomed since the texts were placed (its placing still
            # to come): every text is placed again, for the view as it is now
            self._canvas.layout_annotations()
            return
        occ = layout.occupancy
        t = self._canvas.view_to_scene()
        size = self._canvas.theme.point_size
        rects = self._marker_rects
        if len(keys) > BATCH_MOVED:
            new = self._move_marker_rects(rows, xy, t, size)
        else:
            moved = []
            for row, (vx, vy) in zip(rows.tolist(), xy.tolist(), strict=True):
                if row >= len(rects):
                    continue
                old = tuple(float(v) for v in rects[row])
                if all(math.isfinite(v) for v in old):
                    occ.add_rect(old, -1)  # the same cells add_rects covered
                sx, sy = (float(v) for v in self._px(vx, vy, t))
                rect = self._marker_rect(sx, sy, size)
                rects[row] = rect
                if all(math.isfinite(v) for v in rect):
                    occ.add_rect(rect, 1)
                    moved.append(rect)
            new = np.asarray(moved, dtype=float).reshape(-1, 4)
        hit = layout.hit_by_any(new)
        for op_id in {key[0] for key in keys}:
            if op_id in self._labels:
                hit.add(("point", op_id))
        near = layout.hit_by_any(new, bearing=True) - hit
        hit |= misnamed(layout, near, new, lambda op_id: names_of(
            self._marker_rects, self._marker_ops, self._marks,
            self._canvas.key.crowd_of(op_id)))
        self.relayout_keys(hit)

    def _move_marker_rects(self, rows: np.ndarray, xy: np.ndarray, t, size: float
                           ) -> np.ndarray:
        """Many moved markers at once (a whole model's edit): their cells and boxes updated
        as the one-by-one loop of :meth:`relayout_moved` does; the new boxes drawn."""
        layout = self._text_layout
        occ = layout.occupancy
        rects = self._marker_rects
        inside = rows < len(rects)
        rows, xy = rows[inside], xy[inside]
        if not len(rows):
            return np.zeros((0, 4))
        old = np.asarray(rects[rows], dtype=float).reshape(-1, 4)
        occ.add_rects(old[np.isfinite(old).all(axis=1)], -1)
        sx, sy = self._px(xy[:, 0], xy[:, 1], t)
        half = size / 2 + AIR
        new = np.stack((sx - half, sy - half, sx + half, sy + half), axis=1)
        rects[rows] = new
        new = new[np.isfinite(new).all(axis=1)]
        occ.add_rects(new, 1)
        return new

    def relayout_keys(self, hit) -> None:
        """Place the texts ``hit`` again (their anchors, or the marks they must not be taken
        to name, may have moved), in priority order, each asked for afresh."""
        layout = self._text_layout
        if layout is None or self._layout_pending or not hit:
            return
        if self._view_now() != self._placed_for:  # (see relayout_moved)
            self._canvas.layout_annotations()
            return
        fresh = None
        if any(key[0] != "point" for key in hit if key in self._label_of):
            # (what the other texts must not be taken to name is drawn where it is now)
            fresh = {key: request for key, _label, request in self.requests_of_chart()}
        order = []
        for key in hit:
            entry = self._label_of.get(key)
            if entry is None:
                continue
            label, request = entry
            if key[0] == "point":
                request = self.point_request(key[1], label, request.order)
            elif fresh is not None and key in fresh:
                request = fresh[key]
            self._label_of[key] = (label, request)
            layout.remove(key)
            order.append((request, label))
        order.sort(key=lambda rl: (rl[0].priority, rl[0].order))
        unplaced = False
        for request, label in order:
            placement = layout.place(request)
            self.apply(label, placement)
            unplaced |= placement is None and request.key[0] == "point"
        say_values_short(self._canvas, hit)  # (of those asked for again)
        self.redraw_leaders()
        if unplaced and self._canvas.key_on_screen:
            # a name that lost its place: tagged and keyed by the full placing, a moment on
            self._layout_timer.start()

    def requests_of_chart(self, roofs=None, text_box=None, ridges=()) -> list:
        """The requests of the texts other than the operations' names, for the view as it
        is (:func:`chart_text_requests`), as ``(key, label, request)``; ``roofs``: of these
        roof texts alone and the ridge texts ``ridges`` (by index), each text's box
        ``text_box(label)``."""
        canvas, frame, t = self._canvas, self._frame(), self._canvas.view_to_scene()
        px, lines = (lambda x, y: self._px(x, y, t)), (lambda: self._lines.of(frame, t, self._px, self.busy))
        if roofs is not None:
            return roof_text_requests(canvas, frame, px, self._marker_rects, self._marks, text_box,
                                      self._far_places, roofs, ridges, lines)
        view = (frame, tuple(t), canvas.width(), canvas.height())
        return chart_text_requests(canvas, frame, px, self._marker_rects, self._marks, self._text_box,
                                   self._far_places, None, view, lines)

    @property
    def leader_curves(self) -> list[Segment]:
        """The leader lines drawn (their items)."""
        return self._leaders.shown

    @property
    def leader_lines_all(self) -> list[Segment]:
        """Every leader item, the spare (hidden) ones too."""
        return self._leaders.items

    def redraw_leaders(self) -> None:
        """Draw a thin line from each far text to its marker (unchanged ones are left)."""
        pen = self._canvas.styles.pen(self._canvas.theme.muted, 0.8)
        draw_segments(self._leaders, [p.leader for p in self._text_layout.placed.values()
                                      if p.leader is not None],
                      self._canvas.view_to_scene(), pen, pen is not self._leader_pen)
        self._leader_pen = pen
