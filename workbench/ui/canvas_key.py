"""Every point is named, on the live chart as in figures: an operation whose name has no
clean place gets a short tag by its point ("3", or "A2" for a model's part) and a row of the
legend's key ("3 — name"); on screen the key follows each zoom, pan and resize.

:class:`TagsAndKey` owns the tags and the key: which operations are told by tags (op_id →
tag), the key's rows, the tags joined into another's text (markers that overlap), the
machines whose memory roofs the key names, and the view the key was made for. A part of
:class:`~workbench.ui.canvas.RooflineCanvas`: it drives the text layout
(:mod:`workbench.ui.canvas_layout`) and gives the legend (:mod:`workbench.ui.canvas_legend`)
its key.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping

from workbench.model.layout import figure_key
from workbench.ui.axes import to_view


class TagsAndKey:
    """The chart's tags and key (see the module docstring)."""

    #: how much more room makes the names be tried again (a wheel's few steps in keep the
    #: key: a remade key costs a placing for each size it passes through)
    MORE_ROOM = 1.25

    def __init__(self, canvas) -> None:
        self._canvas = canvas
        #: operations named by a tag on the chart and a row of the key: op_id → tag
        self._key_tags: dict = {}
        self._key_rows: list = []
        #: tagged operations whose markers lie on another tagged one's: that one's tag says
        #: theirs too ("A2, B2"; on screen), theirs is not drawn
        self._joined: frozenset = frozenset()
        #: the groups of :meth:`_join_tags`, by the operation whose label says their tags
        self._groups: dict = {}
        #: whether the key was made since the points were drawn (a rebuild starts it again)
        self._key_made = False
        #: the view the key was made for, or last grew in: ``(x span, y span, width, height)``
        self._key_view: tuple = (0.0, 0.0, 0.0, 0.0)
        #: machines whose memory roofs the key names, left to right (a value found no clean
        #: place along its line: a CPU's L1, L2, L3 lie close together)
        self._roof_rows: frozenset = frozenset()

    @property
    def tags(self) -> Mapping[int, str]:
        """The operations told by tags: op_id → tag (read only)."""
        return self._key_tags

    @property
    def rows(self) -> list:
        """The key's rows (:func:`~workbench.model.layout.figure_key`)."""
        return self._key_rows

    @property
    def joined(self) -> frozenset:
        """Tagged operations whose tag another's text says (see :meth:`_join_tags`)."""
        return self._joined

    def clear(self) -> None:
        """The points are drawn anew: each carries its own name again, the key names no
        roof until one finds no place."""
        self._key_tags, self._key_rows = {}, []
        self._joined, self._key_made = frozenset(), False
        self._roof_rows = frozenset()

    # -- the chart's parts, as the methods below read them ------------------------------

    @property
    def theme(self):
        return self._canvas.theme

    @property
    def key_on_screen(self) -> bool:
        return self._canvas.key_on_screen

    @property
    def _points(self):
        return self._canvas.points.marks

    def _label_key(self, op_id: int) -> tuple[int, int]:
        return self._canvas.points.label_key(op_id)

    @property
    def _labels(self):
        return self._canvas.labels.point_labels

    @property
    def _text_layout(self):
        return self._canvas.labels.text_layout

    def _entry(self, key):
        return self._canvas.labels.entry(key)

    def _set_entry(self, key, label, request) -> None:
        self._canvas.labels.set_entry(key, label, request)

    def _view_to_scene(self):
        return self._canvas.view_to_scene()

    def _point_request(self, op_id: int, label, order: float):
        return self._canvas.labels.point_request(op_id, label, order)

    def _apply(self, label, placement) -> None:
        self._canvas.labels.apply(label, placement)

    def _redraw_leaders(self) -> None:
        self._canvas.labels.redraw_leaders()

    # -- on screen ----------------------------------------------------------------------

    def _view_now(self) -> tuple:
        canvas = self._canvas
        (x0, x1), (y0, y1) = canvas.view_box.viewRange()
        return (abs(x1 - x0), abs(y1 - y0), float(canvas.width()), float(canvas.height()))

    def _roomier(self) -> bool:
        """Whether the chart has clearly more room for names than the key was made for
        (zoomed in, made larger)."""
        now, then = self._view_now(), self._key_view
        more = self.MORE_ROOM
        return (now[0] * more < then[0] or now[1] * more < then[1]
                or now[2] > then[2] * more ** 0.5 or now[3] > then[3] * more ** 0.5)

    def layout_on_screen(self) -> None:
        """The live chart's full placing: :meth:`layout_with_key` tags the names that find
        no clean place and lists them in the legend's key. With more room than the key was
        made for (a zoom in, a larger window) every name is tried again first; else (a pan,
        a zoom out, a new selection) the key is kept and only grows: one placing, not one
        for each size of the key."""
        canvas = self._canvas
        labels, legend = canvas.labels, canvas.legend
        scene = canvas.scene_model
        if scene is None or len(scene.points) != len(self._points):
            # (a rebuild under way: its points are not drawn yet; it places them itself)
            labels.place_all()
            return
        if not legend.item.isVisible():  # (View ▸ Legend off: no key to tell tags by)
            if self._key_tags:
                names = {p.op_id: p.label for p in scene.points if p.show_label}
                for op_id in self._key_tags:
                    if op_id in names and op_id in self._labels:
                        self._labels[op_id].setText(names[op_id])
                    elif op_id in self._labels:
                        labels.drop_point_label(op_id)
                self._key_tags, self._key_rows, self._joined = {}, [], frozenset()
                self._key_made = False
            labels.place_all()
            return
        if not self._roomier() and self._key_made:
            before = (legend.item.rows, legend.item.sceneBoundingRect(), legend.outside)
            if len(self._key_tags) > 1:
                self._join_tags()  # (markers closer or further apart now)
            legend.kept_choice = legend.choice
            keyed = len(self._key_tags)
            try:
                self.layout_with_key(self._tag_unnamed(scene))
            finally:
                legend.kept_choice = None
            self._attach_strays()
            if len(self._key_tags) != keyed:  # (it grew: made for this view now)
                self._key_view = self._view_now()
            self._repaint_legend(before, self._key_rows)
            return
        self._key_made = True
        self._key_view = self._view_now()
        # (with labels off, or past MAX_LABELS, the points carry no names: the legend says
        # so; else the points that carry none are tagged from the start, as in figures)
        tag_unnamed = self._tag_unnamed(scene)
        start = ({p.op_id for p in scene.points} - {p.op_id for p in scene.points
                                                    if p.show_label}) if tag_unnamed else set()
        if set(self._key_tags) != start:
            names = {p.op_id: p.label for p in scene.points if p.show_label}
            for op_id in set(self._key_tags) - start:
                label = self._labels.get(op_id)
                if label is not None and op_id in names:
                    label.setText(names[op_id])
            if start:
                self._set_key(start)
            else:
                self._key_tags, self._key_rows, self._joined = {}, [], frozenset()
                canvas.sync_legend(scene, force=True)
        before = (legend.item.rows, legend.item.sceneBoundingRect(), legend.outside)
        self.layout_with_key(tag_unnamed)
        self._attach_strays()
        self._repaint_legend(before, self._key_rows)

    def _tag_unnamed(self, scene) -> bool:
        view = self._canvas.workspace.document.session.view
        return bool(view.labels and not scene.labels_suppressed)

    def _repaint_legend(self, before: tuple, remade=()) -> None:
        legend = self._canvas.legend
        if remade or (legend.item.rows, legend.item.sceneBoundingRect(), legend.outside) != before:
            # the key was made again (the legend passed through other sizes): Qt repaints
            # only parts of where it was, and a part of a row's sample line is drawn
            # otherwise than the whole
            self._canvas.plot_widget.viewport().update()

    #: a tag that found no place joins a placed one's text this many marker sizes away
    STRAY_REACH = 2.0
    def _attach_strays(self) -> None:
        """A tag that found no place by its crowd of markers joins the text of the nearest
        placed tag (within :attr:`STRAY_REACH` marker sizes), when that text still finds a
        place with it."""
        layout = self._text_layout
        if layout is None or len(self._key_tags) < 2:
            return
        placed = layout.placed
        strays = [op for op in self._key_tags if op not in self._joined
                  and ("point", op) not in placed and op in self._labels]
        if not strays:
            return
        ax, bx, ay, by = self._view_to_scene()

        def pixel(op_id):
            point = self._points[self._label_key(op_id)]
            return to_view(point.x) * ax + bx, to_view(point.y) * ay + by

        reach = self.theme.point_size * self.STRAY_REACH
        hosts = {op: pixel(op) for op in self._key_tags
                 if op not in self._joined and ("point", op) in placed}
        joined = set(self._joined)
        for op_id in strays:
            here = pixel(op_id)
            near = sorted((_pixel_gap(here, at), host) for host, at in hosts.items())
            if not near or near[0][0] > reach:
                continue
            host = near[0][1]
            group = self._groups.get(host) or [host]
            label = self._labels[host]
            old_text, old_request = label.toPlainText(), self._entry(("point", host))[1]
            own = self._groups.get(op_id) or [op_id]  # (a stray group: all its tags)
            label.setText(_joined_tags([self._key_tags[o] for o in [*group, *own]]))
            request = self._point_request(host, label, old_request.order)
            layout.remove(("point", host))
            placement = layout.place(request)
            if placement is None:  # no room for the longer text: as it was
                label.setText(old_text)
                self._apply(label, layout.place(old_request))
                continue
            self._set_entry(("point", host), label, request)
            self._apply(label, placement)
            self._groups[host] = [*group, *own]
            self._groups.pop(op_id, None)
            joined.update(own)
            self._labels[op_id].setVisible(False)
        self._joined = frozenset(joined)
        self._redraw_leaders()

    def _join_tags(self) -> None:
        """Give operations whose markers overlap one tag between them (on screen two tags
        side by side would find no place by one point)."""
        self._joined, self._groups = frozenset(), {}
        for op_id, tag in self._key_tags.items():  # (a text that said a group's tags)
            label = self._labels.get(op_id)
            if label is not None and label.toPlainText() != tag:
                label.setText(tag)
        if not self.key_on_screen or len(self._key_tags) < 2:
            return
        ax, bx, ay, by = self._view_to_scene()
        near = self.theme.point_size  # markers that touch or overlap
        # each tag joins the first group with a member within ``near`` (cells of that size:
        # the neighbouring ones hold every candidate)
        cells: dict[tuple[int, int], list] = {}
        groups: list[list] = []
        for op_id in self._key_tags:  # (in the key's order)
            point = self._points[self._label_key(op_id)]
            sx, sy = to_view(point.x) * ax + bx, to_view(point.y) * ay + by
            if not (math.isfinite(sx) and math.isfinite(sy)):
                continue
            cx, cy = int(sx // near), int(sy // near)
            found = None
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for gx, gy, group in cells.get((cx + dx, cy + dy), ()):
                        if abs(gx - sx) <= near and abs(gy - sy) <= near:
                            found = group
                            break
                    if found is not None:
                        break
                if found is not None:
                    break
            if found is None:
                found = []
                groups.append(found)
            found.append(op_id)
            if len(found) == 1:
                cells.setdefault((cx, cy), []).append((sx, sy, found))  # (its first)
        joined = set()
        self._groups = {ops[0]: ops for ops in groups}
        for ops in groups:
            if len(ops) > 1:
                self._labels[ops[0]].setText(_joined_tags([self._key_tags[o] for o in ops]))
                joined.update(ops[1:])
        self._joined = frozenset(joined)


    # -- the key (figures and screen) -------------------------------------------------

    def _set_key(self, ops: set) -> None:
        """Name the operations ``ops`` by tags and the key (:func:`figure_key`): each one's
        point carries its tag instead of its name, the legend lists the key."""
        scene = self._canvas.scene_model
        named, seen = [], set()
        for point in scene.points:
            if point.op_id in ops and point.op_id not in seen:
                seen.add(point.op_id)
                named.append((point.op_id, point.label))
        self._key_tags, self._key_rows = figure_key(named)
        for op_id, tag in self._key_tags.items():
            self._canvas.labels.add_point_label(op_id).setText(tag)
        if self.key_on_screen:
            self._join_tags()
        self._canvas.sync_legend(scene, force=True)

    def unlisted(self) -> set:
        """The tagged operations the legend had no room to list (see
        :meth:`Legend.set_max_height`)."""
        legend = self._canvas.legend.item
        dropped = legend.dropped if legend.isVisible() else 0
        if not dropped or not self._key_rows:
            return set()
        rows = [r for r in self._key_rows if not r.heading][-dropped:]
        return {i for r in rows for i in r.ids}

    def keyed_legend(self, legend) -> tuple:
        """A figure's legend: the machines, the key of the tagged operations, then the notes.
        No other row lists an operation: each is named on the chart or in the key."""
        from workbench.model.scene import LegendEntry

        scene = self._canvas.scene_model
        colors = {p.op_id: p.color for p in scene.points} if scene else {}
        # a row's colour swatch where that colour is its alone in the key (it names the
        # point even where the tag found no place); the tag, else
        shades = [{colors.get(i) for i in row.ids} for row in self._key_rows]
        uses = Counter(c for row_shades in shades for c in row_shades)
        out = [e for e in legend if e.kind == "machine"]
        # the notes before the key: with its headings, a line of their own when the legend
        # flows below the plot
        out += [e for e in legend if e.kind not in ("machine", "operation")
                and not e.text.startswith("and ")]
        for machine in (scene.machines if scene else ()):
            if machine.hw_id not in self._roof_rows:
                continue
            # the memory roofs are parallel lines, the fastest leftmost
            levels = sorted((r for r in scene.roofs if r.hw_id == machine.hw_id
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

    def layout_with_key(self, tag_unnamed: bool = True) -> None:
        """Place every text (:meth:`LabelLayer.place_all`) so that every operation is named:
        one that carries no name, or whose name finds no clean place, gets a tag and a row
        in the key, and the texts are placed again (the key changes the legend's size)
        until each name or tag has been tried."""
        canvas = self._canvas
        labels = canvas.labels
        scene = canvas.scene_model
        if scene is None:
            labels.place_all()
            return
        keyed = set(self._key_tags)
        unnamed = {p.op_id for p in scene.points} - set(self._labels) if tag_unnamed else set()
        if unnamed - keyed:
            self._set_key(keyed | unnamed)
        for _ in range(8):
            labels.place_all()
            placed = self._text_layout.placed if self._text_layout is not None else {}
            missed = {op for op in self._labels if ("point", op) not in placed}
            missed -= set(self._key_tags)
            # (a machine's several memory levels: one alone is the main memory's, beside
            # its ridge; the key names levels only where several lines need telling apart)
            levels = Counter(r.hw_id for r, _label in canvas.roofs.roof_texts
                             if r.sloped and r.kind == "memory")
            roofs = {roof.hw_id for i, (roof, _label) in enumerate(canvas.roofs.roof_texts)
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
                canvas.sync_legend(scene, force=True)
        # (still more to name after as many passes: the key is as it is, placed once more
        # with the legend it made)
        labels.place_all()


def _pixel_gap(a: tuple, b: tuple) -> float:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


def _joined_tags(tags: list[str], per_line: int = 4) -> str:
    """Tags said together ("A2, A5" over "B1, B3"): a line per group's letter, at most
    ``per_line`` to a line (a compact block by a crowd of markers, not a long line)."""
    letters: dict[str, list[str]] = {}
    for tag in sorted(tags, key=lambda t: (t.rstrip("0123456789"), len(t), t)):
        letters.setdefault(tag.rstrip("0123456789"), []).append(tag)
    lines = []
    for same in letters.values():
        lines += [", ".join(same[i:i + per_line]) for i in range(0, len(same), per_line)]
    return "\n".join(lines)
