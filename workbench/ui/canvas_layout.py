"""The canvas's side of the text layout: what is drawn where in device pixels, how large
each text is, and putting each text where :mod:`workbench.model.layout` decides.

Mixed into :class:`~workbench.ui.canvas.RooflineCanvas`; the same code places the texts of
the live chart and of every exported figure (which is drawn by the same canvas).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from workbench.model.layout import (
    Occupancy,
    Request,
    TextLayout,
    as_array,
    corner_candidates,
    figure_key,
    flat_candidates,
    free_corners,
    point_candidates,
    sloped_candidates,
)
from workbench.ui.axes import to_view

#: The text item's own margin around its text, less a pixel of air: the box the layout
#: keeps clear is the item's rectangle inset by this.
TEXT_INSET = 3.0
#: Occupancy cell, pixels.
CELL = 2.0
#: Air around lines and markers, pixels.
AIR = 1.5
#: moved markers beyond which an edit updates their cells all at once (a model's edit)
BATCH_MOVED = 16


class LayoutMixin:
    """Text placement for the canvas (see the module docstring)."""

    _text_layout: TextLayout | None = None
    _leader_pen = None
    _marker_rects = np.zeros((0, 4))
    _legend_outside: str | None = None
    legend_user_placed = False

    # -- geometry ---------------------------------------------------------------------

    def _frame(self) -> tuple[float, float, float, float]:
        f = self._vb.sceneBoundingRect()
        return f.left(), f.top(), f.right(), f.bottom()

    def _px(self, xs, ys, t=None):
        ax, bx, ay, by = t or self._view_to_scene()
        return np.asarray(xs, float) * ax + bx, np.asarray(ys, float) * ay + by

    def _text_box(self, label) -> tuple[float, float]:
        w, h = label.size()
        return max(1.0, w - 2 * TEXT_INSET), max(1.0, h - 2 * TEXT_INSET)

    def _marker_rect(self, sx: float, sy: float, size: float) -> tuple:
        half = size / 2 + AIR
        return (sx - half, sy - half, sx + half, sy + half)

    # -- what is drawn ------------------------------------------------------------------

    def _occupancy(self) -> Occupancy:
        """Everything drawn on the plot, in device pixels: roofs, ridge lines and marks,
        markers, sweep paths and marks, measured points, pair links and bands."""
        t = self._view_to_scene()
        occ = Occupancy(self._frame(), CELL)
        theme = self.theme
        for roof, curve in self._roofs:
            if not curve.isVisible():
                continue
            xs, ys = curve.getData()
            px, py = self._px(xs, ys, t)
            # a cache level's thin line (View ▸ All Memory Roofs): no text on it, but a
            # leader may cross it to a name beyond (lines close together above the points
            # left the names no place)
            occ.add_polyline(px, py, self._roof_width(roof) / 2 + AIR,
                             soft=roof.kind == "memory" and roof.emphasis != "main")
        xs, ys = self._ridge_lines.getData()
        if xs is not None and len(xs):
            px, py = self._px(xs, ys, t)
            for i in range(0, len(px) - 1, 2):
                occ.add_polyline(px[i:i + 2], py[i:i + 2], 0.5 + AIR, soft=True)
        for item in (self._sweep_drawn, ):
            for _path, curve in item:
                if curve.isVisible():
                    cx, cy = curve.getData()
                    px, py = self._px(cx, cy, t)
                    occ.add_polyline(px, py, 0.8 + AIR)
        for drawn in (self._measured_drawn, self._pair_drawn):
            for entry in drawn:
                curve = entry[1]
                if curve.isVisible():
                    cx, cy = curve.getData()
                    px, py = self._px(cx, cy, t)
                    occ.add_polyline(px, py, 0.9 + AIR)
        for band in self._band_pool.shown:
            bx_, by_ = band.getData()
            if bx_ is not None:
                px, py = self._px(bx_, by_, t)
                for i in range(0, len(px) - 1, 2):
                    occ.add_polyline(px[i:i + 2], py[i:i + 2], 2.0 + AIR, soft=True)
        # markers: the operations' points (kept by key, for moves), then the other marks
        self._marker_rects = np.zeros((0, 4))
        if len(self._hover_xy):
            px, py = self._px(self._hover_xy[:, 0], self._hover_xy[:, 1], t)
            half = theme.point_size / 2 + AIR
            rects = np.column_stack((px - half, py - half, px + half, py + half))
            occ.add_rects(rects)
            self._marker_rects = rects  # by row of the hover arrays
        for scatter, size in ((self._ridge_marks, theme.ridge_size),
                              (self._sweep_dots, theme.point_size * 0.55),
                              (self._crossing_marks, theme.point_size + 5),
                              (self._measured_marks, theme.point_size * 1.3),
                              (self._predicted_marks, theme.point_size * 0.9)):
            if not scatter.isVisible():
                continue
            xs, ys = scatter.getData()
            if xs is None or not len(xs):
                continue
            px, py = self._px(xs, ys, t)
            half = size / 2 + AIR
            occ.add_rects(np.column_stack((px - half, py - half, px + half, py + half)))
        return occ

    # -- the legend -------------------------------------------------------------------

    def _place_legend(self, occ: Occupancy, choice: str | None = None) -> bool:
        """Put the legend in the first corner of the plot where it covers nothing, else
        outside the plot (right of it on a wide chart, below it on a tall one); reserve its
        place. ``choice`` asks for one corner, or ``"outside"``; False when that corner is
        not free. A legend the user dragged stays where it was put."""
        legend = self._legend
        if not legend.isVisible():
            self._set_legend_outside(None)
            return True
        w, h = legend.width(), legend.height()
        if self.legend_user_placed:
            r = legend.sceneBoundingRect()
            occ.add_rect((r.left() - 2, r.top() - 2, r.right() + 2, r.bottom() + 2))
            return True
        if self._legend_outside is None and choice != "outside":
            corners = free_corners(occ, w, h, margin=10.0)
            if choice is not None:
                corners = [c for c in corners if c[0] == choice]
                if not corners:
                    return False
            if corners:
                name, rect = corners[0]
                self._legend_choice = name
                legend.attach_corner(self._vb, name, 10.0)
                occ.add_rect((rect[0] - 3, rect[1] - 3, rect[2] + 3, rect[3] + 3))
                return True
        self._legend_choice = "outside"
        if self._legend_outside is None:
            self._set_legend_outside(self._outside_side())
        else:
            legend.attach_outside(self._plot, self._vb, self._legend_outside)
        return True

    #: a legend below the plot takes at most this share of the chart's height (smaller
    #: type, down to :attr:`LEAST_LEGEND_PT`, before more)
    LEGEND_BELOW = 0.25
    LEGEND_MOST = 0.35
    LEAST_LEGEND_PT = 6.0

    def _least_legend_zoom(self) -> float:
        """The legend's least zoom: its type at least :attr:`LEAST_LEGEND_PT` on the page
        (a figure's page has ``0.75 × figure_type_scale`` points to the pixel)."""
        per_pixel = 0.75 * float(getattr(self, "figure_type_scale", 1.0) or 1.0)
        pixels = math.ceil(self.LEAST_LEGEND_PT / per_pixel - 1e-6)
        return min(1.0, pixels / max(self._legend.base_pixels(), 1e-9))

    def _outside_side(self) -> str:
        """Right of a wide chart when the legend takes little of the width, else below."""
        w = self._legend.width()
        return ("right" if self.width() > 1.25 * self.height() and w < 0.28 * self.width()
                else "bottom")

    def _set_legend_outside(self, side: str | None) -> None:
        """Make room for the legend right of or below the plot (``None``: no room)."""
        if side == "right" and self._legend.height() > 0.8 * self.height():
            side = "bottom"  # taller than the chart (a long key): below it, flowing
        if side == self._legend_outside:
            return
        self._legend_outside = side
        # the legend leaves the place it was painted at, which Qt does not always repaint
        self.plot_widget.viewport().update()
        left, top, right, bottom = self._base_margins
        legend = self._legend
        legend.max_height = None
        legend.set_zoom(1.0)
        legend.set_columns(1)
        legend.set_flow(None)
        if side == "bottom":
            room = self.width() - 12.0
            # below the plot, rows side by side as the width allows: the plot keeps its
            # height (a legend of five rows below a single-column figure took a third)
            rows = len(legend.shown_rows())
            for columns in (3, 2):
                if rows >= 2 * columns - 1 and legend.width_in(columns) <= room:
                    legend.set_columns(columns)
                    break
            if not self.search_legend_places and not self._key_rows:
                # on screen: columns, set smaller to fit (a key flows, as in figures)
                if legend.width() > room > 0:
                    legend.set_zoom(room / legend.width())
            elif (legend.height() > self.LEGEND_BELOW * self.height() and rows > 3
                    or legend.width() > room > 0):
                # a long key, or one wider than the figure: its rows side by side, as many
                # to a line as fit (a longer one wraps)
                legend.set_columns(1)
                legend.set_flow(room)
            for _ in range(3 if legend.flow is not None else 0):  # (re-flowed at each size)
                if legend.height() <= self.LEGEND_BELOW * self.height():
                    break
                # smaller still, to leave the plot its room, but never below a readable size
                least = self._least_legend_zoom()
                zoom = max(legend.zoom * self.LEGEND_BELOW * self.height() / legend.height(),
                           least)
                if zoom >= legend.zoom:
                    break
                legend.set_zoom(zoom)
                if legend.flow is not None:
                    legend.set_flow(room)
            if legend.flow is not None:
                # a key too long for the figure even so: as many rows as fit, one line
                # counts the rest (their points keep no tag; the tables list every one)
                legend.set_max_height(self.LEGEND_MOST * self.height())
        if side == "right":
            right += legend.width() + 12
        elif side == "bottom":
            bottom += legend.height() + 10
        self._plot.setContentsMargins(left, top, right, bottom)
        self._refit_plot()
        self._plot.layout.activate()
        if side is not None:
            legend.attach_outside(self._plot, self._vb, side)

    # -- placing ----------------------------------------------------------------------

    #: the texts whose being left out moves the legend (in figures)
    _MISS_COST = {"selected": 100, "pair": 100, "measured": 100, "operation": 100}
    _legend_choice: str | None = None
    #: try the legend's other places when names find no place (figures; on screen the
    #: legend stays put while the user works, and can be dragged or collapsed)
    search_legend_places = False

    #: the legend's place to try first (on screen, a placing that keeps the key keeps the
    #: legend where it is when that place is still free: one placing, not two)
    _kept_choice: str | None = None

    def _layout_once(self, choice: str | None):
        """One full placing with the legend at ``choice`` (see :meth:`_place_legend`):
        ``(layout, placements)``, or None when that corner is not free."""
        if choice != "outside":  # every placing starts with the legend inside the plot
            self._set_legend_outside(None)
        elif choice == "outside" and self._legend_outside is None:
            self._set_legend_outside(self._outside_side())
        self._apply_title()  # the room over the plot is known now
        self._fit_axis_titles()
        self._bend_links()
        occ = self._occupancy()
        before = self._frame()
        if not self._place_legend(occ, choice):
            return None
        if self._frame() != before:  # the legend moved outside: the plot is smaller now
            self._fit_axis_titles()
            self._bend_links()
            occ = self._occupancy()
            self._place_legend(occ, choice)
        layout = TextLayout(occ)
        requests = self._requests()
        return layout, layout.place_all(requests.values())

    def _missed(self, placed: dict) -> int:
        """How many names of operations (and annotations asked for) found no place."""
        return sum(1 for key, p in placed.items()
                   if p is None and self._MISS_COST.get(self._label_of[key][1].kind, 1) >= 100)

    def _layout_annotations(self) -> None:
        """Place every text of the chart (see :mod:`workbench.model.layout`). When names of
        operations find no place, the legend's other free corners and a place outside the
        plot are tried too (a few texts: the search is bounded), and the placing that leaves
        out least is kept."""
        self._layout_pending = False
        self._layout_timer.stop()  # placed for the current view: a queued placing is moot
        if self._scene is None:
            return
        trial = self._layout_once(self._kept_choice) if self._kept_choice else None
        layout, placed = trial if trial is not None else self._layout_once(None)
        missed = self._missed(placed)
        if (self.search_legend_places and missed and self._legend.isVisible()
                and not self.legend_user_placed and len(self._label_of) <= 60):
            best = self._legend_choice
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
                    if not missed:
                        break
            if current != best:
                layout, placed = self._layout_once(best)
        self._text_layout = layout
        for key, (label, _request) in self._label_of.items():
            self._apply(label, placed.get(key))
        self._redraw_leaders()
        self._layout_timer.stop()  # what the placing itself resized is placed for

    def _apply(self, label, placement) -> None:
        if placement is None:
            label.setVisible(False)
            return
        ax, bx, ay, by = self._view_to_scene()
        left, top = placement.rect[0] - TEXT_INSET, placement.rect[1] - TEXT_INSET
        label.setVisible(True)
        label.setAnchor((0, 0))
        label.set_offset(0.0, 0.0)
        label.setPos((left - bx) / ax, (top - by) / ay)

    def _label_key(self, op_id: int) -> tuple[int, int]:
        """The key of the point that carries an operation's name (or its tag: the highest
        point of an operation that carries no name)."""
        keys = self._op_points[op_id]
        return next((k for k in keys if self._points[k].show_label),
                    None) or max(keys, key=lambda k: self._points[k].y)

    # -- the key (figures) ------------------------------------------------------------

    #: operations named by a tag on the chart and a row of the key: op_id → tag
    _key_tags: dict = {}
    _key_rows: list = []

    def _set_key(self, ops: set) -> None:
        """Name the operations ``ops`` by tags and the key (:func:`figure_key`): each one's
        point carries its tag instead of its name, the legend lists the key."""
        scene = self._scene
        named, seen = [], set()
        for point in scene.points:
            if point.op_id in ops and point.op_id not in seen:
                seen.add(point.op_id)
                named.append((point.op_id, point.label))
        self._key_tags, self._key_rows = figure_key(named)
        for op_id, tag in self._key_tags.items():
            label = self._labels.get(op_id)
            if label is None:
                label = self._labels[op_id] = self._take_label("point")
            label.setText(tag)
        if self.key_on_screen:
            self._join_tags()
        self._sync_legend(scene, force=True)

    #: the live chart's tags and key (see :mod:`workbench.ui.canvas_key`)
    key_on_screen = False
    _joined: frozenset = frozenset()

    #: machines whose memory roofs the key names, left to right (a value found no clean
    #: place along its line: a CPU's L1, L2, L3 lie close together)
    _roof_rows: frozenset = frozenset()

    def _unlisted(self) -> set:
        """The tagged operations the legend had no room to list (see
        :meth:`Legend.set_max_height`)."""
        dropped = self._legend.dropped if self._legend.isVisible() else 0
        if not dropped or not self._key_rows:
            return set()
        rows = [r for r in self._key_rows if not r.heading][-dropped:]
        return {i for r in rows for i in r.ids}

    def _keyed_legend(self, legend) -> tuple:
        """A figure's legend: the machines, the key of the tagged operations, then the notes.
        No other row lists an operation: each is named on the chart or in the key."""
        from workbench.model.scene import LegendEntry

        colors = {p.op_id: p.color for p in self._scene.points} if self._scene else {}
        # a row's colour swatch where that colour is its alone in the key (it names the
        # point even where the tag found no place); the tag, else
        shades = [{colors.get(i) for i in row.ids} for row in self._key_rows]
        uses = Counter(c for row_shades in shades for c in row_shades)
        out = [e for e in legend if e.kind == "machine"]
        # the notes before the key: with its headings, a line of their own when the legend
        # flows below the plot
        out += [e for e in legend if e.kind not in ("machine", "operation")
                and not e.text.startswith("and ")]
        for machine in (self._scene.machines if self._scene else ()):
            if machine.hw_id not in self._roof_rows:
                continue
            # the memory roofs are parallel lines, the fastest leftmost
            levels = sorted((r for r in self._scene.roofs if r.hw_id == machine.hw_id
                             and r.sloped and r.kind == "memory" and r.label),
                            key=lambda r: -r.value)
            out.append(LegendEntry("roof", f"{machine.name}, memory roofs left to right:",
                                   machine.hw_id, style_index=machine.style_index))
            out += [LegendEntry("key", r.label) for r in levels]  # (each kept on one line)
        for row, row_shades in zip(self._key_rows, shades, strict=True):
            if row.heading:
                out.append(LegendEntry("heading", row.text))
                continue
            color = next(iter(row_shades))
            if len(row_shades) == 1 and color is not None and uses[color] == 1:
                out.append(LegendEntry("operation", row.text, row.ids[0], color))
            else:
                out.append(LegendEntry("key", row.text))
        return tuple(out)

    def _layout_with_key(self, tag_unnamed: bool = True) -> None:
        """Place every text (:meth:`_layout_annotations`) so that every operation is named:
        one that carries no name, or whose name finds no clean place, gets a tag and a row
        in the key, and the texts are placed again (the key changes the legend's size)
        until each name or tag has been tried."""
        scene = self._scene
        if scene is None:
            LayoutMixin._layout_annotations(self)
            return
        keyed = set(self._key_tags)
        unnamed = {p.op_id for p in scene.points} - set(self._labels) if tag_unnamed else set()
        if unnamed - keyed:
            self._set_key(keyed | unnamed)
        for _ in range(8):
            LayoutMixin._layout_annotations(self)
            placed = self._text_layout.placed if self._text_layout is not None else {}
            missed = {op for op in self._labels if ("point", op) not in placed}
            missed -= set(self._key_tags)
            # (a machine's several memory levels: one alone is the main memory's, beside
            # its ridge; the key names levels only where several lines need telling apart)
            levels = Counter(r.hw_id for r, _label in self._roof_labels
                             if r.sloped and r.kind == "memory")
            roofs = {roof.hw_id for i, (roof, _label) in enumerate(self._roof_labels)
                     if roof.sloped and roof.kind == "memory" and levels[roof.hw_id] > 1
                     and ("roof", i) not in placed}
            roofs -= self._roof_rows
            if self.key_on_screen:  # (on screen the key names operations only)
                roofs = set()
            if not missed and not roofs:
                return
            self._roof_rows = self._roof_rows | roofs
            if missed:
                self._set_key(set(self._key_tags) | missed)
            else:
                self._sync_legend(scene, force=True)
        # (still more to name after as many passes: the key is as it is, placed once more
        # with the legend it made)
        LayoutMixin._layout_annotations(self)

    def _point_request(self, op_id: int, label, order: float, t=None,
                       selected: int | None = -1) -> Request:
        point = self._points[self._label_key(op_id)]
        ax, bx, ay, by = t or self._view_to_scene()
        sx, sy = to_view(point.x) * ax + bx, to_view(point.y) * ay + by
        w, h = self._text_box(label)
        if selected == -1:
            selected = self.workspace.selection.current
        kind = "selected" if selected == op_id else "operation"
        return Request(("point", op_id), kind, w, h,
                       point_candidates(sx, sy, w, h, self.theme.point_size / 2), order)

    def _requests(self) -> dict:
        """Every text to place, keyed, with its label item."""
        t = self._view_to_scene()
        frame = self._frame()
        out: dict = {}
        self._label_of = {}

        def add(key, label, kind, candidates, order=0.0):
            w, h = self._text_box(label)
            request = Request(key, kind, w, h, candidates(w, h), order)
            out[key] = request
            self._label_of[key] = (label, request)

        selected = self.workspace.selection.current
        unlisted = self._unlisted() | self._joined
        for op_id, label in self._labels.items():
            if op_id in unlisted:
                label.setVisible(False)
                continue
            point = self._points[self._label_key(op_id)]
            request = self._point_request(op_id, label, -point.y, t, selected)
            out[request.key] = request
            self._label_of[request.key] = (label, request)

        for i, (roof, label) in enumerate(self._roof_labels):
            xs, ys = self._px(to_view(np.asarray(roof.xs)), to_view(np.asarray(roof.ys)), t)
            order = i + (0 if roof.emphasis == "main" and not roof.derated else 100)
            if roof.sloped:
                add(("roof", i), label, "roof",
                    lambda w, h, xs=xs, ys=ys: sloped_candidates(xs[0], ys[0], xs[1], ys[1],
                                                                 w, h, frame), order)
            else:
                add(("roof", i), label, "roof",
                    lambda w, h, xs=xs, ys=ys, roof=roof: flat_candidates(
                        xs[0], xs[1], ys[0], w, h, frame, below_first=roof.derated), order)

        for i, (ridge, label) in enumerate(self._ridge_items):
            sx, sy = (float(v) for v in self._px(to_view(ridge.x), to_view(ridge.y), t))
            add(("ridge", i), label, "ridge",
                lambda w, h, sx=sx, sy=sy: np.vstack((
                    as_array(corner_candidates(sx, sy, w, h)),
                    point_candidates(sx, sy, w, h, self.theme.ridge_size / 2)[8:])), i)

        for i, (region, curve, label) in enumerate(self._region_items):
            if not curve.isVisible():
                label.setVisible(False)
                continue
            edge = float(self._px(to_view(region.xs[1] if region.kind == "memory"
                                          else region.xs[0]), 0.0, t)[0])

            def region_place(w, h, region=region, edge=edge):
                left, _top, right, bottom = frame
                if region.kind == "memory":
                    x = left + 6
                    return [] if edge < x + w else [_cand(x, bottom - h - 5)]
                x = right - 6 - w
                return [] if edge > x else [_cand(x, bottom - h - 5)]
            add(("region", i), label, "region", region_place, i)

        g = self.theme.point_size / 2
        done: set[int] = set()
        for mark, label in self._crossing_labels:
            if id(label) in done:
                continue
            done.add(id(label))
            sx, sy = (float(v) for v in self._px(to_view(mark.x), to_view(mark.y), t))
            add(("crossing", id(label)), label, "crossing",
                lambda w, h, sx=sx, sy=sy: point_candidates(sx, sy, w, h, g + 3, first="left"))
        for i, (mark, _link, label) in enumerate(self._measured_drawn):
            sx, sy = (float(v) for v in self._px(to_view(mark.x), to_view(mark.y), t))
            add(("measured", i), label, "measured",
                lambda w, h, sx=sx, sy=sy: point_candidates(sx, sy, w, h, g * 1.3), i)
        # the same pair with the same figures on several machines is said once, by whichever
        # of its links has room (the lower arc may be boxed in by the roof and the arc above)
        apexes: dict[tuple[str, str, str], list[int]] = {}
        for i, (link, _curve, _arrow, label) in enumerate(self._pair_drawn):
            said = (link.first, link.second, label.toPlainText())
            if said in apexes:
                label.setVisible(False)
            apexes.setdefault(said, []).append(i)
        for links in apexes.values():
            i = links[0]
            add(("pair", i), self._pair_drawn[i][3], "pair",
                lambda w, h, links=links: np.vstack([
                    point_candidates(*self._pair_apex[j], w, h, 2.0) for j in links]), i)
        seen: set[tuple[int, str]] = set()
        for i, (path, end, label) in enumerate(self._sweep_labels):
            key = (path.hw_id, label.toPlainText())
            if key in seen:  # the same "m = 1" on one machine: once
                label.setVisible(False)
                continue
            seen.add(key)
            sx, sy = (float(v) for v in self._px(to_view(path.xs[end]), to_view(path.ys[end]),
                                                 t))
            add(("sweep", i), label, "sweep",
                lambda w, h, sx=sx, sy=sy, end=end: point_candidates(
                    sx, sy, w, h, g * 0.55 + 1, first="left" if end == 0 else "right"), i)
        return out

    # -- incremental ----------------------------------------------------------------------

    def _relayout_moved(self, keys: list, rows: np.ndarray, xy: np.ndarray) -> None:
        """After an edit moved the markers ``keys`` (rows ``rows`` of the hover arrays) to
        the view positions ``xy``: update their cells and re-place only the texts they (or
        the moved operations' labels) touch."""
        layout = self._text_layout
        if layout is None or self._layout_pending:
            return
        occ = layout.occupancy
        t = self._view_to_scene()
        size = self.theme.point_size
        hit: set = set()
        rects = self._marker_rects
        if len(keys) > BATCH_MOVED:
            hit = self._move_marker_rects(rows, xy, t, size)
        else:
            for row, (vx, vy) in zip(rows.tolist(), xy.tolist(), strict=True):
                if row >= len(rects):
                    continue
                old = tuple(float(v) for v in rects[row])
                if all(math.isfinite(v) for v in old):
                    occ.add_rect(old, -1)  # the same cells add_rects covered
                sx, sy = (float(v) for v in self._px(vx, vy, t))
                new = self._marker_rect(sx, sy, size)
                rects[row] = new
                if all(math.isfinite(v) for v in new):
                    occ.add_rect(new, 1)
                    hit.update(layout.hit_by(new))
        for op_id in {key[0] for key in keys}:
            if op_id in self._labels:
                hit.add(("point", op_id))
        self._relayout_keys(hit)

    def _move_marker_rects(self, rows: np.ndarray, xy: np.ndarray, t, size: float) -> set:
        """Many moved markers at once (a whole model's edit): their cells and the placed
        texts their new boxes meet, as the one-by-one loop of :meth:`_relayout_moved`."""
        layout = self._text_layout
        occ = layout.occupancy
        rects = self._marker_rects
        inside = rows < len(rects)
        rows, xy = rows[inside], xy[inside]
        if not len(rows):
            return set()
        old = np.asarray(rects[rows], dtype=float).reshape(-1, 4)
        occ.add_rects(old[np.isfinite(old).all(axis=1)], -1)
        sx, sy = self._px(xy[:, 0], xy[:, 1], t)
        half = size / 2 + AIR
        new = np.stack((sx - half, sy - half, sx + half, sy + half), axis=1)
        rects[rows] = new
        new = new[np.isfinite(new).all(axis=1)]
        occ.add_rects(new, 1)
        return layout.hit_by_any(new)

    def _relayout_keys(self, hit) -> None:
        """Place the texts ``hit`` again (their anchors may have moved), in priority order."""
        layout = self._text_layout
        if layout is None or self._layout_pending or not hit:
            return
        order = []
        for key in hit:
            entry = self._label_of.get(key)
            if entry is None:
                continue
            label, request = entry
            if key[0] == "point":
                request = self._point_request(key[1], label, request.order)
                self._label_of[key] = (label, request)
            layout.remove(key)
            order.append((request, label))
        order.sort(key=lambda rl: (rl[0].priority, rl[0].order))
        unplaced = False
        for request, label in order:
            placement = layout.place(request)
            self._apply(label, placement)
            unplaced |= placement is None and request.key[0] == "point"
        self._redraw_leaders()
        if unplaced and self.key_on_screen:
            # a name that lost its place: tagged and keyed by the full placing, a moment on
            self._layout_timer.start()

    def _redraw_leaders(self) -> None:
        """Draw a thin line from each far text to its marker (unchanged ones are left)."""
        self._leaders.reset()
        ax, bx, ay, by = self._view_to_scene()
        pen = self._pen(self.theme.muted, 0.8)
        fresh = pen is not self._leader_pen
        self._leader_pen = pen
        for placement in self._text_layout.placed.values():
            if placement.leader is not None:
                x0, y0, x1, y1 = placement.leader
                curve = self._leaders.take()
                xs = np.array([(x0 - bx) / ax, (x1 - bx) / ax])
                ys = np.array([(y0 - by) / ay, (y1 - by) / ay])
                old_x, old_y = curve.getData()
                if (fresh or old_x is None or not np.array_equal(old_x, xs)
                        or not np.array_equal(old_y, ys)):
                    curve.setData(x=xs, y=ys, pen=pen)
        self._leaders.finish()

    def _bend_links(self) -> None:
        """Bend each compared pair's link into an arc (in pixels: a straight link between
        two memory-bound points would lie on the roof), turn its arrow along it and note the
        arc's apex (its label goes there)."""
        ax, bx, ay, by = self._view_to_scene()
        g = self.theme.point_size / 2 + 2
        self._pair_apex = []
        for (link, curve, arrow, _label), row in zip(self._pair_drawn, self._pair_rows,
                                                     strict=True):
            p0 = np.array([to_view(link.x0) * ax + bx, to_view(link.y0) * ay + by])
            p1 = np.array([to_view(link.x1) * ax + bx, to_view(link.y1) * ay + by])
            d = p1 - p0
            length = float(math.hypot(*d))
            if length < 1.0:
                apex, control = (p0 + p1) / 2, p1
            else:
                normal = np.array([-d[1], d[0]]) / length
                if normal[1] > 0:  # bend upwards on screen
                    normal = -normal
                bend = min(0.2 * length, 32.0)
                apex = (p0 + p1) / 2 + normal * bend
                control = 2 * apex - (p0 + p1) / 2
            s = np.linspace(0.0, 1.0, 33)[:, None]
            arc = (1 - s) ** 2 * p0 + 2 * (1 - s) * s * control + s**2 * p1
            curve.setData(x=(arc[:, 0] - bx) / ax, y=(arc[:, 1] - by) / ay)
            self._overlay_xy[row] = ((apex[0] - bx) / ax, (apex[1] - by) / ay)
            self._pair_apex.append((float(apex[0]), float(apex[1])))
            tangent = p1 - control
            t_len = float(math.hypot(*tangent))
            if length < 2 * g or t_len == 0:
                arrow.setVisible(False)
                continue
            ux, uy = tangent / t_len
            back = self.theme.point_size / 2 + 1.5  # the tip touches the second point
            sx, sy = p1[0] - ux * back, p1[1] - uy * back
            arrow.setVisible(True)
            arrow.setStyle(angle=math.degrees(math.atan2(-uy, -ux)))
            arrow.setPos((sx - bx) / ax, (sy - by) / ay)


def _cand(left: float, top: float):
    from workbench.model.layout import Candidate

    return Candidate(left, top)


