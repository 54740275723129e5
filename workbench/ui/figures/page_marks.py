"""What an HTML figure's script needs to know of the chart's SVG: the marks drawn for each
point, measured kernel, ridge, roof and text, where they are on the page and whose they are
(``class`` and ``data-*`` attributes, matched to the SVG's elements by
:func:`~workbench.ui.figures.svg_portable.portable_tree`), so that hiding a machine, an
operation or a kernel on the page hides everything drawn for it."""

from __future__ import annotations

import json
import math
from typing import Any

from workbench.ui.figures.svg_portable import MARK_TOLERANCE, SvgMark

__all__ = ["page_marks", "page_axes"]


def page_axes(canvas, source, sx: float, sy: float) -> str:
    """Where the plot is on the page and how its axes read, for the page's script to draw
    the axes of a zoomed view: ``"left top right bottom x1 dx y1 dy"``, the plot's frame,
    then for each axis where the value 1 is along it and how far one decade goes (a value
    ``v`` is at ``x1 + dx · log10 v``)."""
    from PySide6.QtCore import QPointF

    vb = canvas.view_box

    def on_page(p) -> list[float]:  # (a point of the scene)
        return [(p.x() - source.left()) * sx, (p.y() - source.top()) * sy]

    frame = vb.sceneBoundingRect()
    one, ten = (on_page(vb.mapViewToScene(QPointF(v, v))) for v in (0.0, 1.0))
    numbers = [*on_page(frame.topLeft()), *on_page(frame.bottomRight()),
               one[0], ten[0] - one[0], one[1], ten[1] - one[1]]
    return " ".join(f"{v:.3f}".rstrip("0").rstrip(".") for v in numbers)


def page_marks(canvas, source, sx: float, sy: float) -> list[SvgMark]:
    """The marks of the chart to name in its SVG, where they are on the page: each drawn
    point (``class="rw-pt"``, ``data-pts="op:hw …"``, the points it is drawn for, and
    ``data-spot``, the same on every marker drawn at its place where there are several), measured
    point (``rw-ms``, ``data-ms="measurement:hw"``), ridge (``rw-ridge``, ``data-hw``,
    ``data-precision``), roof (``rw-roof``, ``data-hw``, ``data-kind``, ``data-name``),
    point label (``rw-label``, ``data-op``) and its leader (``rw-leader``, ``data-op``), and
    a tag that names points for the key and its leader (``rw-tag``, ``data-ops="op …"``)."""
    import numpy as np
    from PySide6.QtCore import QPointF

    from workbench.ui.chart.axes import to_view

    vb = canvas.view_box

    def page(x: float, y: float):
        vx, vy = to_view(float(x)), to_view(float(y))
        if not (math.isfinite(vx) and math.isfinite(vy)):
            return None
        p = vb.mapViewToScene(QPointF(vx, vy))
        return on_page(p.x(), p.y())

    def on_page(x: float, y: float):  # (a point of the scene)
        return ((x - source.left()) * sx, (y - source.top()) * sy)

    marks: list[SvgMark] = []
    spots: dict[tuple[float, float], list[str]] = {}
    shared = 0  # (the places with several markers so far)
    for op_id, hw_id, x, y in canvas.point_items():
        spots.setdefault((x, y), []).append(f"{op_id}:{hw_id}")
    colors = canvas.point_colors()
    scene = canvas.scene_model
    hollow = {(p.op_id, p.hw_id) for p in scene.points if p.bound == "overhead"} \
        if scene is not None else set()
    for (x, y), keys in spots.items():
        where = page(x, y)
        if where is None:
            continue
        # each marker there, found by its colour (an operation's on two machines at one
        # place: the one drawn last on top), for its points: a machine's points of one
        # colour at one place are one marker, of two colours two (two operations of the
        # same shape), as are a filled one and a hollow (overhead-bound) one of a colour,
        # each hidden with its own; the markers at one place share a
        # data-spot (the page's tooltip names the others' points too: listed on each
        # marker, a thousand operations of a few shapes took a hundred kilobytes)
        mine: dict[tuple[str, str, bool], list[str]] = {}
        for key in keys:
            op_id, hw_id = (int(v) for v in key.split(":"))
            mine.setdefault((str(hw_id), colors.get((op_id, hw_id), ""),
                             (op_id, hw_id) in hollow), []).append(key)
        for (_hw, color, _hollow), own in reversed(mine.items()):
            attrs = {"class": "rw-pt", "data-pts": " ".join(own)}
            if len(mine) > 1:
                attrs["data-spot"] = str(shared)
            marks.append(SvgMark("marker", (where,), attrs, color=color))
        shared += len(mine) > 1
    names = {p.op_id: p.label for p in scene.points} if scene is not None else {}
    layout = canvas.labels.text_layout
    placed = layout.placed if layout is not None else {}
    tags = canvas.key.groups
    labels = canvas.labels.point_labels
    for op_id, text, _x, _y in canvas.label_items():
        if text == names.get(op_id):  # (not a key's number, which may stand for several)
            marks.append(SvgMark("text", (), {"class": "rw-label", "data-op": str(op_id)}, text))
            attrs = {"class": "rw-leader", "data-op": str(op_id)}
        elif op_id in tags and op_id in labels:
            # a tag ("6, 7, 11"), for the operations the key lists under it: shown while
            # one of them is; found where it is drawn (a "1" is also an axis's number)
            attrs = {"class": "rw-tag", "data-ops": " ".join(str(o) for o in tags[op_id])}
            r = labels[op_id].textItem.mapRectToScene(labels[op_id].textItem.boundingRect())
            box = (on_page(r.left(), r.top()), on_page(r.right(), r.bottom()))
            marks += [SvgMark("text", box, attrs, line) for line in text.splitlines()
                      if line.strip()]
        else:
            continue
        placement = placed.get(("point", op_id))
        if placement is not None and placement.leader is not None:
            # its leader goes with it (hidden with the operation on the page)
            x0, y0, x1, y1 = placement.leader
            marks.append(SvgMark("line", (on_page(x0, y0), on_page(x1, y1)), attrs))
    measured = list(scene.measured) if scene is not None else []
    for item in canvas.measured_items():
        mark = next((m for m in measured if (m.name, m.hw_id, m.op_id)
                     == (item["name"], item["hw_id"], item["op_id"])), None)
        where = page(item["x"], item["y"])
        if mark is None or where is None:
            continue
        measured.remove(mark)
        marks.append(SvgMark("marker", (where,), {"class": "rw-ms",
                                                  "data-ms": f"{mark.index}:{mark.hw_id}"}))
    for ridge in scene.ridges if scene is not None else ():
        where = page(ridge.x, ridge.y)
        if where is not None:  # (in its machine's colour: a sweep's sample may lie on it)
            marks.append(SvgMark("marker", (where,), {
                "class": "rw-ridge", "data-hw": str(ridge.hw_id), "data-precision": ridge.precision},
                color=canvas.theme.roof_color(ridge.style_index)))
    for hw_id, kind, name, xs, ys in canvas.roof_items():
        ends = [page(x, y) for x, y in zip(xs, ys, strict=True)]
        ends = [e for e in ends if e is not None and np.isfinite(e).all()]
        if len(ends) >= 2:
            marks.append(SvgMark("line", (ends[0], ends[-1]), {
                "class": "rw-roof", "data-hw": str(hw_id), "data-kind": kind, "data-name": name}))
    if scene is not None:
        marks += _part_marks(canvas, scene, page, on_page, placed)
    return marks


class _Parts:
    """The drawings that go with a machine, an operation or a measured kernel, to hide with
    it on the page (``class="rw-part"``, ``data-of``: a JSON list of whose they are, each
    ``{"hw", "op", "level"}``, ``{"ms": "measurement:hw"}`` or a list of such that all must
    show; shown while one of them does; or, for one measured kernel's alone, no class and
    ``data-kernel="measurement:hw"``; a marker's class also ``rw-dot``): the sweep paths,
    their samples, ends' texts and ridge crossings; a measured kernel's link from its
    prediction, its verdict scale, its predicted point, its marks at the other memory levels
    and its text; a compared pair's arc, arrow and text; the roofs' and ridges' texts and the
    ridges' lines down to the floor; and the leader of each text."""

    def __init__(self, canvas, page, on_page) -> None:
        self.canvas, self.page, self.on_page = canvas, page, on_page
        # an arrow's head (11 pixels long) on the page
        (x0, y0), (x1, y1) = on_page(0.0, 0.0), on_page(12.0, 12.0)
        self.arrow_reach = max(abs(x1 - x0), abs(y1 - y0))
        self.marks: list[SvgMark] = []
        #: each text shown: its item, whose each of its lines is, its key in the layout
        self.texts: dict[int, tuple[Any, dict[str, list], tuple]] = {}
        #: of a text said for several owners in their own colours: each owner's colour
        self.fills: dict[int, dict[str, str]] = {}

    def part(self, kind: str, where, owners: list, text: str = "", color: str = "",
             reach: float = MARK_TOLERANCE, fills: list[str] | None = None) -> None:
        if where is None or any(p is None for p in where):
            return
        # (a marker keeps its size on the page when zoomed, as the chart's points do)
        dot = " rw-dot" if kind == "marker" else ""
        if len(owners) == 1 and isinstance(owners[0], dict) and set(owners[0]) == {"ms"}:
            # (one measured kernel's: most parts of a profile, said in fewer bytes)
            attrs = {"data-kernel": owners[0]["ms"]}
            if dot:
                attrs["class"] = dot.strip()
        else:
            attrs = {"class": "rw-part" + dot,
                     "data-of": json.dumps(owners, separators=(",", ":"))}
        if fills is not None and len(set(fills)) > 1:
            # (a text said for several in their colours: the page shows it in the colour of
            # the first of them shown)
            attrs["data-fills"] = json.dumps(fills, separators=(",", ":"))
        self.marks.append(SvgMark(kind, tuple(where), attrs, text, color, reach))

    def path(self, curve, owners: list) -> None:
        from workbench.ui.chart.axes import to_data

        xs, ys = curve.getData()
        self.part("path", [self.page(x, y) for x, y in zip(to_data(xs), to_data(ys),
                                                           strict=True)], owners)

    def said(self, label, key: tuple, owners: list, line: str | None = None,
             fills: list[str] | None = None) -> None:
        """A text shown, for ``owners``; ``line``: of a text several share, the line that
        is theirs (a crossing's at a ridge corner), else every line; ``fills``: each
        owner's colour, for a text drawn in its first owner's."""
        if not label.isVisible():
            return
        _label, lines, _key = self.texts.setdefault(id(label), (label, {}, key))
        if fills is not None:
            self.fills.setdefault(id(label), {}).update(
                (json.dumps(o, sort_keys=True), c) for o, c in zip(owners, fills, strict=True))
        for text in [line] if line is not None else label.toPlainText().splitlines():
            mine = lines.setdefault(text, [])
            mine.extend(o for o in owners if o not in mine)

    def sweeps(self) -> None:
        overlays = self.canvas.overlays
        for path, curve in overlays.sweep_paths_drawn:
            if not curve.isVisible():
                continue
            owner = [{"hw": path.hw_id, "op": path.op_id}]
            self.path(curve, owner)
            # (two sweeps' samples may lie at one place: each is its own colour's)
            color = self.canvas.theme.point_color(path.color)
            for x, y in zip(path.xs, path.ys, strict=True) if path.dots else ():
                self.part("marker", [self.page(x, y)], owner, color=color)
            for mark in path.crossings:
                self.part("marker", [self.page(mark.x, mark.y)], owner, color=color)
        # (the same "m = 1" of several paths on one machine is said once, by the first: it
        # is theirs whose end it is said at, drawn in the colour of the first of them
        # shown; a path whose end is elsewhere has no text there)
        theme = self.canvas.theme
        by_text: dict[tuple[int, str], list] = {}
        for path, end, label in overlays.sweep_texts:
            by_text.setdefault((path.hw_id, label.toPlainText()), []).append(
                (self.page(path.xs[end], path.ys[end]), {"hw": path.hw_id, "op": path.op_id},
                 theme.point_color(path.color)))
        for i, (path, end, label) in enumerate(overlays.sweep_texts):
            here = self.page(path.xs[end], path.ys[end])
            same = [(owner, color) for at, owner, color in by_text[(path.hw_id,
                                                                    label.toPlainText())]
                    if here is not None and at is not None
                    and math.hypot(at[0] - here[0], at[1] - here[1]) <= 1.0] or [
                ({"hw": path.hw_id, "op": path.op_id}, theme.point_color(path.color))]
            self.said(label, ("sweep", i), [o for o, _c in same], fills=[c for _o, c in same])
        for mark, label in overlays.crossing_texts:
            self.said(label, ("crossing", id(label)), [{"hw": mark.hw_id, "op": mark.op_id}],
                      mark.label)

    def measured(self) -> None:
        """A measured kernel's drawings, and its text (one for the kernel drawn at one spot
        on several machines)."""
        page = self.page
        spots: dict[tuple[str, float, float], list] = {}
        measured = self.canvas.overlays.measured_texts
        for mark, _link, label in measured:
            owner = [{"ms": f"{mark.index}:{mark.hw_id}"}]
            self.part("line", [page(mark.px, mark.py), page(mark.x, mark.y)], owner)
            if mark.standalone:
                self.part("marker", [page(mark.px, mark.py)], owner)
            for _key, low, high in mark.bands:  # (its verdict scale, a bar per band)
                self.part("line", [page(mark.px, low), page(mark.px, high)], owner)
            if mark.level_xs:
                xs = [x for _level, x, _tip in mark.level_xs]
                self.part("line", [page(min(xs), mark.y), page(max(xs), mark.y)], owner)
                for x in xs:
                    self.part("marker", [page(x, mark.y)], owner)
            spots.setdefault((label.toPlainText(), round(mark.x, 9), round(mark.y, 9)),
                             []).extend(owner)
        for i, (mark, _link, label) in enumerate(measured):
            self.said(label, ("measured", i),
                      spots[(label.toPlainText(), round(mark.x, 9), round(mark.y, 9))])

    def pairs(self) -> None:
        """A compared pair's arc, arrow and text: while both its ends show (two operations
        on a machine, or a kernel's two runs); a text said once for several pairs is all of
        theirs."""
        from workbench.ui.chart.axes import to_data

        overlays = self.canvas.overlays
        at = {(mark.hw_id, mark.x, mark.y): f"{mark.index}:{mark.hw_id}"
              for mark, _link, _label in overlays.measured_texts}
        ends: list[list] = []
        same: dict[tuple, list] = {}
        for link, _curve, _arrow, label in overlays.pair_texts:
            if link.comparison_id == -1:
                keys = (at.get((link.hw_id, link.x0, link.y0)),
                        at.get((link.hw_id, link.x1, link.y1)))
                both = [{"ms": key} for key in keys if key is not None]
            else:
                both = [{"hw": link.hw_id, "op": link.first_id},
                        {"hw": link.hw_id, "op": link.second_id}]
            ends.append(both)
            same.setdefault((link.first, link.second, label.toPlainText()), []).append(both)
        for i, (link, curve, arrow, label) in enumerate(overlays.pair_texts):
            if curve.isVisible():
                self.path(curve, [ends[i]])
            if arrow.isVisible():  # (its head: the shape in its colour nearest its tip)
                tip = arrow.pos()
                self.part("marker", [self.page(to_data(tip.x()), to_data(tip.y()))], [ends[i]],
                          color=self.canvas.theme.roof_color(link.style_index),
                          reach=self.arrow_reach)
            self.said(label, ("pair", i), same[(link.first, link.second, label.toPlainText())])

    def roof_texts(self, scene) -> None:
        roofs = self.canvas.roofs
        levels = {m.hw_id: m.main_memory for m in scene.machines}
        for i, (_roof, label) in enumerate(roofs.roof_texts):
            said = roofs.says(i)  # (one text for machines of one line: hidden with the last)
            self.said(label, ("roof", i), [{"hw": r.hw_id, "level": None
                                            if r.kind == "compute" else r.name} for r in said],
                      fills=[roofs.line_color(r) for r in said] if len(said) > 1 else None)
        for i, (ridge, label) in enumerate(roofs.ridges):
            self.said(label, ("ridge", i), [{"hw": ridge.hw_id,
                                             "level": levels.get(ridge.hw_id)}])
        for ridge, curve in roofs.ridge_lines:  # (its line down to the floor goes with it)
            if curve.isVisible():
                self.path(curve, [{"hw": ridge.hw_id, "level": levels.get(ridge.hw_id)}])

    def text_marks(self, placed) -> None:
        """Each text's lines where it is drawn, and its leader."""
        on_page = self.on_page
        for label, lines, key in self.texts.values():
            r = label.textItem.mapRectToScene(label.textItem.boundingRect())
            box = [on_page(r.left(), r.top()), on_page(r.right(), r.bottom())]
            every: list = []
            colors = self.fills.get(id(label), {})
            for text, owners in lines.items():
                if text.strip():
                    fills = [colors.get(json.dumps(o, sort_keys=True), "") for o in owners]
                    self.part("text", box, owners, text,
                              fills=fills if colors and all(fills) else None)
                    every.extend(o for o in owners if o not in every)
            placement = placed.get(key)
            if placement is not None and placement.leader is not None:
                x0, y0, x1, y1 = placement.leader
                self.part("line", [on_page(x0, y0), on_page(x1, y1)], every)


def _part_marks(canvas, scene, page, on_page, placed) -> list[SvgMark]:
    """The marks of :class:`_Parts`, after the chart's own."""
    parts = _Parts(canvas, page, on_page)
    parts.sweeps()
    parts.measured()
    parts.pairs()
    parts.roof_texts(scene)
    parts.text_marks(placed)
    return parts.marks
