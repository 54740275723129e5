"""On the live chart, every point is named as in figures: an operation whose name has no
clean place gets a short tag by its point ("3", or "A2" for a model's part) and a row of
the legend's key ("3 — name"); the key follows each zoom, pan and resize.

Mixed into :class:`~workbench.ui.canvas.RooflineCanvas` (with
:class:`~workbench.ui.canvas_layout.LayoutMixin`, whose key it uses).
"""

from __future__ import annotations

import math

from workbench.ui.axes import to_view
from workbench.ui.canvas_layout import LayoutMixin


class KeyMixin:
    """The live chart's tags and key (see the module docstring)."""

    #: on screen, names with no clean place are told by tags and the legend's key, as in
    #: figures (a figure's canvas makes its own legend and keeps its key between passes)
    key_on_screen = True

    def _layout_annotations(self) -> None:
        self._layout_on_screen()

    #: the view the key was made for, or last grew in: ``(x span, y span, width, height)``
    _key_view: tuple = (0.0, 0.0, 0.0, 0.0)
    #: how much more room makes the names be tried again (a wheel's few steps in keep the
    #: key: a remade key costs a placing for each size it passes through)
    MORE_ROOM = 1.25

    def _view_now(self) -> tuple:
        (x0, x1), (y0, y1) = self._vb.viewRange()
        return (abs(x1 - x0), abs(y1 - y0), float(self.width()), float(self.height()))

    def _roomier(self) -> bool:
        """Whether the chart has clearly more room for names than the key was made for
        (zoomed in, made larger)."""
        now, then = self._view_now(), self._key_view
        more = self.MORE_ROOM
        return (now[0] * more < then[0] or now[1] * more < then[1]
                or now[2] > then[2] * more ** 0.5 or now[3] > then[3] * more ** 0.5)

    def _layout_on_screen(self) -> None:
        """The live chart's full placing: :meth:`_layout_with_key` tags the names that find
        no clean place and lists them in the legend's key. With more room than the key was
        made for (a zoom in, a larger window) every name is tried again first; else (a pan,
        a zoom out, a new selection) the key is kept and only grows: one placing, not one
        for each size of the key."""
        scene = self._scene
        if scene is None or len(scene.points) != len(self._points):
            # (a rebuild under way: its points are not drawn yet; it places them itself)
            LayoutMixin._layout_annotations(self)
            return
        if not self._legend.isVisible():  # (View ▸ Legend off: no key to tell tags by)
            if self._key_tags:
                names = {p.op_id: p.label for p in scene.points if p.show_label}
                for op_id in self._key_tags:
                    if op_id in names and op_id in self._labels:
                        self._labels[op_id].setText(names[op_id])
                    elif op_id in self._labels:
                        self._labels.pop(op_id).setVisible(False)
                self._key_tags, self._key_rows, self._joined = {}, [], frozenset()
                self._key_made = False
            LayoutMixin._layout_annotations(self)
            return
        if not self._roomier() and self._key_made:
            legend = self._legend
            before = (legend.rows, legend.sceneBoundingRect(), self._legend_outside)
            if len(self._key_tags) > 1:
                self._join_tags()  # (markers closer or further apart now)
            self._kept_choice = self._legend_choice
            keyed = len(self._key_tags)
            try:
                self._layout_with_key(self._tag_unnamed(scene))
            finally:
                self._kept_choice = None
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
                self._sync_legend(scene, force=True)
        legend = self._legend
        before = (legend.rows, legend.sceneBoundingRect(), self._legend_outside)
        self._layout_with_key(tag_unnamed)
        self._attach_strays()
        self._repaint_legend(before, self._key_rows)

    #: whether the key was made since the points were drawn (a rebuild starts it again)
    _key_made = False

    def _tag_unnamed(self, scene) -> bool:
        view = self.workspace.document.session.view
        return bool(view.labels and not scene.labels_suppressed)

    def _repaint_legend(self, before: tuple, remade=()) -> None:
        legend = self._legend
        if remade or (legend.rows, legend.sceneBoundingRect(), self._legend_outside) != before:
            # the key was made again (the legend passed through other sizes): Qt repaints
            # only parts of where it was, and a part of a row's sample line is drawn
            # otherwise than the whole
            self.plot_widget.viewport().update()

    #: a tag that found no place joins a placed one's text this many marker sizes away
    STRAY_REACH = 2.0
    #: the groups of :meth:`_join_tags`, by the operation whose label says their tags
    _groups: dict = {}

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
            old_text, old_request = label.toPlainText(), self._label_of[("point", host)][1]
            own = self._groups.get(op_id) or [op_id]  # (a stray group: all its tags)
            label.setText(_joined_tags([self._key_tags[o] for o in [*group, *own]]))
            request = self._point_request(host, label, old_request.order)
            layout.remove(("point", host))
            placement = layout.place(request)
            if placement is None:  # no room for the longer text: as it was
                label.setText(old_text)
                self._apply(label, layout.place(old_request))
                continue
            self._label_of[("point", host)] = (label, request)
            self._apply(label, placement)
            self._groups[host] = [*group, *own]
            self._groups.pop(op_id, None)
            joined.update(own)
            self._labels[op_id].setVisible(False)
        self._joined = frozenset(joined)
        self._redraw_leaders()

    #: tagged operations whose markers lie on another tagged one's: that one's tag says
    #: theirs too ("A2, B2"; on screen), theirs is not drawn
    _joined: frozenset = frozenset()

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
