"""Every point is named, on the live chart as in figures: an operation whose name has no
clean place gets a short tag by its point ("3", or "A2" for a model's part) and a row of the
legend's key ("3 — name"); on screen the key follows each zoom, pan and resize.

:class:`TagsAndKey` owns the tags and the key: which operations are told by tags (op_id →
tag), the key's rows, the tags joined into another's text (markers that overlap), the
machines whose memory roofs the key names, and the view the key was made for. A part of
:class:`~workbench.ui.chart.canvas.RooflineCanvas`: it drives the text layout
(:mod:`workbench.ui.chart.labels`) and gives the legend (:mod:`workbench.ui.chart.legend`)
its key.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace

from workbench.model.chart.placement import PRIORITIES
from workbench.model.chart.tagging import crowd_parts, crowd_text, crowds, figure_key
from workbench.ui.chart.axes import to_view
from workbench.ui.chart.roofs import key_values

#: the kinds of the chart's texts placed before the roofs' values (but the operations')
_BEFORE_ROOFS = frozenset(k for k, v in PRIORITIES.items()
                          if v <= PRIORITIES["roof"] and k not in ("selected", "operation",
                                                                   "crowd"))


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
        #: theirs too ("A, B: 2, 5"), theirs is not drawn
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
        #: in a figure, the roof values the key says after their machine's name, as pairs
        #: ``(hw_id, kind)``: ``"compute"``, its compute roofs top to bottom (a value found
        #: no clean place beside its line: flat roofs a factor of two apart, their right
        #: ends taken by the kernels' tags); ``"memory"``, its one memory roof (no place
        #: along a line crowded with kernels)
        self._value_rows: frozenset = frozenset()
        #: the pairs of :attr:`_value_rows` the key said at the cost of another text's place
        self._values_refused: frozenset = frozenset()
        #: in a figure whose key lies below its chart, the compute values and ridges
        #: refused so, and the height (pixels) their rows would add to the key: a page that
        #: may grow takes it, and the chart keeps the height it had without them (see
        #: :meth:`values_lacking`)
        self._values_room: tuple[frozenset, float] = (frozenset(), 0.0)
        #: in a figure, the key it starts from (:meth:`with_values`), kept when the points
        #: are drawn anew: the operations tagged, the machines whose memory levels it
        #: names, the roofs' values it says
        self.seed: tuple[frozenset, frozenset, frozenset] = (frozenset(),) * 3
        #: the view :meth:`_pixels` worked for, and by operation the point and its pixel
        self._pixels_view: tuple = ()
        self._pixels_of: dict = {}
        #: :meth:`unlisted` as last found: for the key's rows (that list) and the number of
        #: rows the legend dropped
        self._unlisted: tuple = (None, 0, frozenset())

    @property
    def tags(self) -> Mapping[int, str]:
        """The operations told by tags: op_id → tag (read only)."""
        return self._key_tags

    @property
    def rows(self) -> list:
        """The key's rows (:func:`~workbench.model.chart.placement.figure_key`)."""
        return self._key_rows

    @property
    def groups(self) -> Mapping[int, list]:
        """The operations each tag text says, by the operation whose label says it (see
        :meth:`_join_tags`; read only)."""
        return self._groups

    @property
    def joined(self) -> frozenset:
        """Tagged operations whose tag another's text says (see :meth:`_join_tags`)."""
        return self._joined

    def values_lacking(self) -> float:
        """The height (pixels) a figure's key below its chart lacks for the rows of the
        compute roofs' values and the ridges it refused: they found no place beside their
        lines or diamonds, and said in the key they cost another text its place (0:
        none)."""
        return self._values_room[1]

    def with_values(self) -> tuple[frozenset, frozenset, frozenset]:
        """The key as it is with the values it refused (a :attr:`seed`): on a page
        taller by :meth:`values_lacking`, a figure that starts from it has the chart it
        has now, and its texts find the places they found."""
        return (frozenset(self._key_tags), self._roof_rows,
                self._value_rows | self._values_room[0])

    def said(self) -> frozenset:
        """The keys of the texts said: those placed, but the roofs' values, and each ridge
        of a machine whose ridges the key says (:meth:`ridges_in_key`), placed by its
        diamond or not (a ridge said in the key on a taller page is not a text lost)."""
        layout = self._text_layout
        keyed = self.ridges_in_key()
        return frozenset(k for k in (layout.placed if layout is not None else ())
                         if k[0] != "roof") | frozenset(
            ("ridge", i) for i, (ridge, _label) in enumerate(self._canvas.roofs.ridges)
            if ridge.hw_id in keyed)

    def untold(self) -> int:
        """How many tagged operations the chart does not tell: their tag's text found no
        place by their points."""
        return sum(len(self.crowd_of(op)) for op in self._unplaced())

    def _unplaced(self) -> list:
        """The tagged operations whose label (their tag, or their crowd's text) is not
        placed, in the key's order."""
        layout = self._text_layout
        placed = layout.placed if layout is not None else {}
        return [op for op in self._key_tags if op not in self._joined
                and op in self._labels and ("point", op) not in placed]

    def _pixels(self, ops) -> list[tuple[float, float]]:
        """Where the points carrying the labels of ``ops`` are drawn, in view pixels."""
        t = self._view_to_scene()
        ax, bx, ay, by = t
        marks, label_key = self._points, self._canvas.points.label_key
        # (a whole model's thousand tags, asked for by each step of a placing: each
        # point's pixel worked out once for the view, again when the point is another
        # object, as after an edit or a rebuild)
        if self._pixels_view != t:
            self._pixels_view, self._pixels_of = t, {}
        known = self._pixels_of
        # (a model's layers' points lie at a few places: each place's pixel worked out once)
        at: dict[tuple[float, float], tuple[float, float]] = {}
        out = []
        for op_id in ops:
            point = marks[label_key(op_id)]
            found = known.get(op_id)
            if found is None or found[0] is not point:
                place = (point.x, point.y)
                pixel = at.get(place)
                if pixel is None:
                    pixel = at[place] = (to_view(point.x) * ax + bx, to_view(point.y) * ay + by)
                found = known[op_id] = (point, pixel)
            out.append(found[1])
        return out

    def crowd_of(self, op_id: int) -> tuple:
        """The operations whose tags the label of ``op_id`` says (itself alone, or a crowd
        of touching markers: see :meth:`_join_tags`)."""
        return tuple(self._groups.get(op_id) or (op_id,))

    def clear(self) -> None:
        """The points are drawn anew: each carries its own name again, the key names no
        roof until one finds no place."""
        self._key_tags, self._key_rows = {}, []
        self._joined, self._key_made, self._groups = frozenset(), False, {}
        self._roof_rows = self._value_rows = self._values_refused = frozenset()
        self._values_room = (frozenset(), 0.0)
        self._pixels_view, self._pixels_of = (), {}

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
                self._groups = {}
                self._key_made = False
            labels.place_all()
            return
        if not self._roomier() and self._key_made:
            before = self._legend_state()
            if len(self._key_tags) > 1:
                self._join_tags()  # (markers closer or further apart now)
            legend.kept_choice = legend.choice
            keyed = len(self._key_tags)
            try:
                self.layout_with_key(self._tag_unnamed(scene))
            finally:
                legend.kept_choice = None
            self.attach_strays()
            if len(self._key_tags) != keyed:  # (it grew: made for this view now)
                self._key_view = self._view_now()
            self._repaint_legend(before)  # (the key kept: repainted where it was laid out)
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
                self._groups = {}
                canvas.sync_legend(scene, force=True)
        before = self._legend_state()
        self.layout_with_key(tag_unnamed)
        self.attach_strays()
        self._repaint_legend(before, self._key_rows)  # (a key made anew)

    def _tag_unnamed(self, scene) -> bool:
        view = self._canvas.workspace.document.session.view
        return bool(view.labels and not scene.labels_suppressed)

    def _legend_state(self) -> tuple:
        """The legend's rows, place, side and how many times it was laid out."""
        legend = self._canvas.legend
        return (legend.item.rows, legend.item.sceneBoundingRect(), legend.outside,
                legend.item.layouts)

    def _repaint_legend(self, before: tuple, remade=()) -> None:
        if remade or self._legend_state() != before:
            # the key was made again (the legend passed through other sizes): Qt repaints
            # only parts of where it was, and a part of a row's sample line is drawn
            # otherwise than the whole
            self._canvas.plot_widget.viewport().update()

    #: a tag that found no place joins a placed one's text this many marker sizes away
    STRAY_REACH = 4.0
    #: of the placed tags within reach, the nearest this many are tried, nearest first
    STRAY_HOSTS = 3

    def attach_strays(self) -> None:
        """A tag that found no place by its crowd of markers joins the text of a placed tag
        within :attr:`STRAY_REACH` marker sizes: the nearest whose text still finds a place
        with it (of the :attr:`STRAY_HOSTS` nearest)."""
        layout = self._text_layout
        if layout is None or len(self._key_tags) < 2:
            return
        placed = layout.placed
        strays = self._unplaced()
        if not strays:
            return
        reach = self.theme.point_size * self.STRAY_REACH
        placed_tags = [op for op in self._key_tags
                       if op not in self._joined and ("point", op) in placed]
        hosts = dict(zip(placed_tags, self._pixels(placed_tags), strict=True))
        joined = set(self._joined)
        for op_id, here in zip(strays, self._pixels(strays), strict=True):
            near = sorted((_pixel_gap(here, at), host) for host, at in hosts.items())
            own = self.crowd_of(op_id)  # (a stray crowd: all its tags)
            for gap, host in near[:self.STRAY_HOSTS]:
                if gap > reach:
                    break
                if self._join_stray(host, own):
                    self._groups.pop(op_id, None)
                    joined.update(own)
                    self._labels[op_id].setVisible(False)
                    break
        self._joined = frozenset(joined)
        self._redraw_leaders()

    def _join_stray(self, host, own: list) -> bool:
        """Give the placed tag text of ``host`` the tags of ``own`` too, where the longer
        text finds a place by the host's markers; else leave it as it was (placed again
        where it was). True when joined."""
        layout = self._text_layout
        group = self.crowd_of(host)
        label = self._labels[host]
        old_text, old_request = label.toPlainText(), self._entry(("point", host))[1]
        longer = crowd_text([self._key_tags[o] for o in [*group, *own]])
        layout.remove(("point", host))
        if not self._canvas.labels.fits_plot(label, longer):
            # (no place in the plot holds the longer text: the host placed again as it is,
            # its label left as it was)
            self._apply(label, layout.place(old_request))
            return False
        label.setText(longer)
        request = self._point_request(host, label, old_request.order)
        placement = layout.place(request)
        if placement is None:  # no room for the longer text: as it was
            label.setText(old_text)
            self._apply(label, layout.place(old_request))
            return False
        self._set_entry(("point", host), label, request)
        self._apply(label, placement)
        self._groups[host] = [*group, *own]
        return True

    def _join_tags(self) -> None:
        """Give operations whose markers touch one tag text between them (on screen and in
        figures two tags side by side would find no place by one point): a crowd of
        markers (:func:`~workbench.model.chart.tagging.crowds`), said by its first operation's
        label (:func:`~workbench.model.chart.tagging.crowd_text`)."""
        self._joined, self._groups = frozenset(), {}
        ops = list(self._key_tags)  # (in the key's order)
        # markers that touch or overlap, and theirs in turn
        groups: list[list] = ([[ops[i] for i in crowd]
                               for crowd in crowds(self._pixels(ops), self.theme.point_size)]
                              if len(ops) >= 2 else [[op] for op in ops])
        self._groups = {group[0]: group for group in groups}
        self._joined = frozenset(op for group in groups for op in group[1:])
        for group in groups:  # (a text set only where it changes: Qt lays it out again)
            label = self._labels.get(group[0])
            text = (crowd_text([self._key_tags[o] for o in group]) if len(group) > 1
                    else self._key_tags[group[0]])
            if label is not None and label.toPlainText() != text:
                label.setText(text)

    # -- the key (figures and screen) -------------------------------------------------

    def _set_key(self, ops: set) -> None:
        """Name the operations ``ops`` by tags and the key (:func:`figure_key`): each one's
        point carries its tag instead of its name, the legend lists the key."""
        scene = self._canvas.scene_model
        every, seen = [], set()
        for point in scene.points:
            if point.op_id not in seen:
                seen.add(point.op_id)
                every.append((point.op_id, point.label))
        named = [(op_id, label) for op_id, label in every if op_id in ops]
        # (numbered by all the chart's operations: a model's part keeps its number in every
        # figure of the session, whichever names found a place)
        self._key_tags, self._key_rows = figure_key(named, every)
        for op_id, tag in self._key_tags.items():
            self._canvas.labels.add_point_label(op_id).setText(tag)
        self._join_tags()
        self._canvas.sync_legend(scene, force=True)

    def unlisted(self) -> set:
        """The tagged operations the legend had no room to list (see
        :meth:`Legend.set_max_height`)."""
        legend = self._canvas.legend.item
        dropped = legend.dropped if legend.isVisible() else 0
        if not dropped or not self._key_rows:
            return set()
        # (asked for by each placing: a whole model's key of hundreds of rows read once for
        # the rows and the number dropped)
        rows_for, dropped_for, ops = self._unlisted
        if rows_for is not self._key_rows or dropped_for != dropped:
            rows = [r for r in self._key_rows if not r.heading][-dropped:]
            ops = frozenset(i for r in rows for i in r.ids)
            self._unlisted = (self._key_rows, dropped, ops)
        return set(ops)

    def keyed_legend(self, legend) -> tuple:
        """A figure's legend: the machines, the key of the tagged operations, then the notes.
        No other row lists an operation: each is named on the chart or in the key."""
        from workbench.model.chart.scene import LegendEntry

        scene = self._canvas.scene_model
        colors = {p.op_id: p.color for p in scene.points} if scene else {}
        # a row's colour swatch where its points have one colour (a whole model's kind: the
        # same colour in every phase, shared by kinds of one family, such as the norms);
        # a row whose points differ in colour has none, as no one marker would be true
        shades = [{colors.get(i) for i in row.ids} for row in self._key_rows]
        # (a figure's roofs whose values found no place by their lines: after the machine's
        # name, on its row)
        values, shared = key_values(scene, self._value_rows) if scene else ({}, None)
        out = [replace(e, text=f"{e.text}: {values[e.id]}") if e.id in values else e
               for e in legend if e.kind == "machine"]
        if shared:  # (the compute roofs every machine shares, as one text names their lines)
            out.append(LegendEntry("note", shared))
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
            if len(row_shades) == 1 and color is not None:
                out.append(LegendEntry("operation", row.text, row.ids[0], color))
            else:
                out.append(LegendEntry("key", row.text))
        return tuple(out)

    def layout_with_key(self, tag_unnamed: bool = True) -> None:
        """Place every text (:meth:`LabelLayer.place_all`) so that every operation is named:
        one that carries no name, or whose name finds no clean place, gets a tag and a row
        in the key, and the texts are placed again (the key changes the legend's size)
        until each name or tag has been tried. (Nothing drawn changes meanwhile: what the
        data covers is worked out once for each frame of the plot.)"""
        canvas = self._canvas
        labels = canvas.labels
        with labels.reusing_occupancy():
            # (on screen, where the legend stays where it is, a placing in which no name or
            # tag can find a place is known without placing: a whole model's crowds, then
            # said in parts by one placing; see LabelLayer.deferring)
            with (labels.deferring() if self.key_on_screen and not canvas.search_legend_places
                  else contextlib.nullcontext()):
                self._layout_with_key(tag_unnamed)
            labels.place_deferred()

    def _layout_with_key(self, tag_unnamed: bool) -> None:
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
        tagged, roof_rows, value_rows = self.seed
        if not self.key_on_screen and (tagged - keyed or roof_rows - self._roof_rows
                                       or value_rows - self._value_rows):
            self._roof_rows |= roof_rows
            self._value_rows |= value_rows
            if tagged - keyed:
                self._set_key(set(self._key_tags) | tagged)
            else:
                canvas.sync_legend(scene, force=True)
        split = False
        # (a machine's several memory levels: one alone is the main memory's, beside
        # its ridge; the key names levels only where several lines need telling apart)
        levels = Counter(r.hw_id for r, _label in canvas.roofs.roof_texts
                         if r.sloped and r.kind == "memory")
        # (the roof values the key has just begun to say, and the texts placed without
        # them that nothing else would say: kept only where none of those then loses its
        # place)
        trial: tuple[set, set, int, tuple] | None = None
        restored = False  # (the placing before a trial refused, put back: not placed again)
        for _ in range(8):
            # a pass that leaves a name out is followed by another: of it, only which names
            # found a place counts (unless a figure's roof values count too)
            # (a trial of the key's values places every text, to see what it costs, but
            # stops where a name is left out: the values are refused for that alone)
            labels.names_missed = (self._missed_names if trial is not None or (
                self.key_on_screen or max(levels.values(), default=0) <= 1) else None)
            try:
                if not restored:
                    labels.place_all()
            finally:
                labels.names_missed = None
                restored = False
            placed = self._text_layout.placed if self._text_layout is not None else {}
            if trial is not None:
                added, before, dropped, saved = trial
                trial = None
                kind = next(iter(added))[1]  # (each trial is of one kind)
                if (before - self._before_values(placed, kind) or self._missed_names(placed)
                        or (canvas.legend_item.dropped > dropped
                            and any(k != "compute" for _hw, k in added))):
                    # (the longer rows took the room of a text that ranks before them, or
                    # of an operation's name: the values stay unsaid; so do memories'
                    # values and ridges whose rows would leave rows of the key out, which
                    # makes a paper's page taller for one value a machine)
                    longer = canvas.legend_item.height()
                    self._value_rows -= added
                    self._values_refused |= added
                    canvas.sync_legend(scene, force=True)
                    # (the key as it was: its texts go back where they were, where the
                    # legend and the plot are too)
                    restored = labels.restore_placing(saved)
                    # (a paper's page may grow for its compute roofs' and ridges' rows)
                    grown = frozenset(p for p in added if p[1] in ("compute", "ridge"))
                    if canvas.legend.outside == "bottom" and grown:
                        pairs, room = self._values_room
                        self._values_room = (pairs | grown, max(
                            room, longer - canvas.legend_item.height()))
                    continue
            missed = self._missed_names(placed)
            roofs = {roof.hw_id for i, (roof, _label) in enumerate(canvas.roofs.roof_texts)
                     if roof.sloped and roof.kind == "memory" and levels[roof.hw_id] > 1
                     and ("roof", i) not in placed}
            roofs -= self._roof_rows
            if self.key_on_screen:  # (on screen the key names operations only)
                roofs = set()
            if not missed and not roofs:
                every = (self._values_missed(placed, levels) - self._value_rows
                         - self._values_refused)
                # (a figure's roof values and ridges with no place: said in the key, the
                # compute roofs' first, then the memory's, then the ridges', each kind
                # tried on its own)
                # (a paper's page that is to grow for its compute roofs' values grows for
                # them alone: the ridges are tried on the page grown, with them in its key)
                growing = any(k == "compute" for _hw, k in self._values_room[0])
                for kind in ("compute", "memory", "ridge"):
                    unsaid = {p for p in every if p[1] == kind}
                    if not unsaid or (kind == "ridge" and growing):
                        continue
                    dropped = canvas.legend_item.dropped
                    before_rows = labels.saved_placing()  # (the key without them)
                    self._value_rows = self._value_rows | unsaid
                    canvas.sync_legend(scene, force=True)
                    if kind == "compute" or canvas.legend_item.dropped <= dropped:
                        trial = (unsaid, self._before_values(placed, kind), dropped,
                                 before_rows)
                        break
                    # (memories' values or ridges whose rows leave rows of the key out,
                    # known without a placing: the key as it was, the texts where they are)
                    self._value_rows -= unsaid
                    self._values_refused |= unsaid
                    canvas.sync_legend(scene, force=True)
                if trial is not None:
                    continue
                if split:
                    return
                # tags with no place: crowds said in parts, lone tags joined, where that
                # tells more (a name that then lost its place is keyed by the next pass)
                split = True
                if not self._improve_crowds():
                    return
                missed = self._missed_names(self._text_layout.placed)
                if not missed:
                    return
            self._roof_rows = self._roof_rows | roofs
            if missed:
                self._set_key(set(self._key_tags) | missed)  # (its crowds joined anew)
                split = False
            else:
                canvas.sync_legend(scene, force=True)
        # (still more to name after as many passes: the key is as it is, placed once more
        # with the legend it made)
        labels.place_all()

    def _values_missed(self, placed, levels: Counter) -> set:
        """In a figure, the roof values and ridges shown nowhere, as pairs ``(hw_id,
        kind)``: a compute roof's, or the memory roof's of a machine with one (``levels``:
        memory roofs by machine; the key names several levels in rows of their own), with no
        place beside its line in ``placed`` (one said for several machines of one line
        counts for each); ``(hw_id, "ridge")``: a ridge in view whose text found no place by
        its diamond."""
        if self.key_on_screen:  # (on screen the key names operations only)
            return set()
        roofs, labels = self._canvas.roofs, self._canvas.labels
        return {(r.hw_id, roof.kind) for i, (roof, _label) in enumerate(roofs.roof_texts)
                if ("roof", i) not in placed and (roof.kind == "compute" or (
                    roof.kind == "memory" and roof.sloped and levels[roof.hw_id] == 1))
                for r in roofs.says(i)} | {
            (ridge.hw_id, "ridge") for i, (ridge, _label) in enumerate(roofs.ridges)
            if ("ridge", i) not in placed and labels.entry(("ridge", i)) is not None}

    def ridges_in_key(self) -> frozenset:
        """The machines whose ridges a figure's key says after their names (their texts by
        the diamonds are not drawn)."""
        return frozenset(hw for hw, kind in self._value_rows if kind == "ridge")

    def _before_values(self, placed, kind: str) -> set:
        """The keys of the texts ``placed`` that the values of ``kind`` in the key give way
        to: those as important as a roof's value or more (:data:`PRIORITIES`: a compared
        pair's figures, a measured kernel's verdict), but not the operations' names and tags
        nor, for a roof's value, the roofs' values (the key says those it leaves out); for
        a ridge, the roofs' values too."""
        return {k for k in placed if k[0] in _BEFORE_ROOFS and (k[0] != "roof"
                                                                 or kind == "ridge")}

    def _missed_names(self, placed) -> set:
        """The operations named (not tagged) whose name found no place (one with no marker
        in view is not named at all, not even by a tag in the key)."""
        missed = {op for op in self._labels
                  if ("point", op) not in placed and op not in self._key_tags}
        return missed & self._canvas.labels.ops_in_view() if missed else missed

    def _split_crowds(self, said: dict) -> bool:
        """Say in parts (:func:`crowd_parts`) each crowd whose tags found no place together:
        each part's first operation's label is to say the part's tags (``said`` gets its
        text, by the operation). True when one was split."""
        layout = self._text_layout
        if layout is None:
            return False
        placed = layout.placed
        split = False
        joined = set(self._joined)
        for host, ops in list(self._groups.items()):
            if (len(ops) < 2 or ("point", host) in placed
                    or not all(o in self._key_tags for o in ops)):
                continue
            for part in crowd_parts([self._key_tags[o] for o in ops]):
                members = [ops[i] for i in part]
                first = members[0]
                self._groups[first] = members
                joined.difference_update(members[:1])
                joined.update(members[1:])
                if first in self._labels:
                    said[first] = crowd_text([self._key_tags[o] for o in members])
            split = True
        self._joined = frozenset(joined)
        return split

    #: unplaced tags whose markers lie this many marker sizes apart or closer are said
    #: together (a row of markers along a roof, each with no room of its own)
    ROW_REACH = 2.5

    def _gather_strays(self, said: dict) -> bool:
        """Join the tags that found no place (each alone, or a crowd's) into crowds of
        markers up to :attr:`ROW_REACH` marker sizes apart, said by one text each (``said``
        gets each text, by the operation whose label is to say it). True when any were
        joined."""
        if self._text_layout is None:
            return False
        hosts = self._unplaced()
        if len(hosts) < 2:
            return False
        gathered = False
        joined = set(self._joined)
        for crowd in crowds(self._pixels(hosts), self.ROW_REACH * self.theme.point_size):
            if len(crowd) < 2:
                continue
            members = [m for i in crowd for m in self.crowd_of(hosts[i])]
            first = hosts[crowd[0]]
            for i in crowd[1:]:
                self._groups.pop(hosts[i], None)
            self._groups[first] = members
            joined.update(m for m in members if m != first)
            said[first] = crowd_text([self._key_tags[m] for m in members])
            gathered = True
        self._joined = frozenset(joined)
        return gathered

    def _told(self) -> int:
        """How many operations the placed texts tell: names, and each placed tag text's
        operations."""
        placed = self._text_layout.placed if self._text_layout is not None else {}
        return sum(len(self.crowd_of(op)) if op in self._key_tags else 1
                   for op in self._labels
                   if op not in self._joined and ("point", op) in placed)

    def _improve_crowds(self) -> bool:
        """Where tags found no place: say crowds in parts (:meth:`_split_crowds`), then join
        lone tags near one another (:meth:`_gather_strays`), each kept only when the chart
        then tells more operations. True when one was kept (texts placed for it)."""
        best = self._told()
        kept = False
        # (the legend stays where the placing put it: these steps change only tags)
        legend = self._canvas.legend
        kept_choice, legend.kept_choice = legend.kept_choice, legend.choice
        try:
            for step in (self._split_crowds, self._gather_strays):
                kept |= self._try_crowds(step, best)
                best = max(best, self._told())
        finally:
            legend.kept_choice = kept_choice
        return kept

    def _try_crowds(self, step, best: int) -> bool:
        """Take ``step`` and place the texts again; undo it unless the chart then tells
        more than ``best`` operations."""
        saved = (dict(self._groups), self._joined)
        said: dict = {}  # (the texts the step gives labels, by the operation)
        if not step(said):
            return False
        labels = self._canvas.labels
        if self._no_room_for(said):
            # every text the step makes is larger than the plot: placed again, the rest
            # would go where they are and the chart tell no more (a whole model's crowds
            # of hundreds of tags): undone without a placing
            self._groups, self._joined = saved
            return False
        texts = {}  # (the labels the step changes, as they were)
        for op, text in said.items():
            label = self._labels[op]
            texts[op] = label.toPlainText()
            label.setText(text)
        placing = labels.saved_placing()
        labels.place_all()
        if self._told() > best:
            return True
        self._groups, self._joined = saved
        for op, text in texts.items():
            self._labels[op].setText(text)
        # (the texts as they were, the legend and the view where they were: the texts go
        # back where that placing put them, not placed again)
        if not labels.restore_placing(placing):
            labels.place_all()
        return False

    def _no_room_for(self, said: dict) -> bool:
        """Whether the texts ``said`` (op_id → the text its label is to say) are each
        larger than the plot (none finds a place, whatever else is placed), the live chart
        placed for the view as it is (its legend stays where it is: a figure's tries other
        places as texts are left out)."""
        canvas = self._canvas
        labels = canvas.labels
        if not said or canvas.search_legend_places or not labels.placed_for_view():
            return False
        return not any(labels.fits_plot(self._labels[op], text) for op, text in said.items())


def _pixel_gap(a: tuple, b: tuple) -> float:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))
