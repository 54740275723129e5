"""Qt's SVG made portable: shapes drawn with cosmetic pens under the chart's log-scaled data
transform ("non-scaling-stroke", which renderers treat differently) are rewritten as paths
in page coordinates and cut to the plot area (no clip paths needed); generic font names
become the concrete family Qt used; the size is physical."""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import field

from workbench.records import record
from workbench.ui.figures.figure_size import FigureSize

__all__ = ["portable_svg", "portable_tree", "svg_bytes", "SvgMark"]

_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
_MATRIX = re.compile(r"^\s*matrix\(([^)]*)\)\s*$")
_PATH_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SHAPES = {"path", "polyline", "polygon", "rect", "line"}
_MAPPED = _SHAPES | {"ellipse", "circle"}  # shapes whose strokes a data transform affects

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # left, top, right, bottom
Runs = list[tuple[list[Point], bool]]  # a shape's outline: (points, closed) runs


def _num(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _apply(m: Sequence[float], x: float, y: float) -> Point:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


@functools.lru_cache(maxsize=64)
def _local(tag: str) -> str:
    return tag.split("}")[-1]


def _outlines(element: ET.Element, parsed: dict[str, Runs] | None = None) -> Runs | None:
    """The straight-line outlines of a shape as ``(points, closed)`` runs, in its own
    coordinates; None for anything with curves (left as it is). ``parsed``: path data
    already read (:func:`_path_data`'s), by its text."""
    tag = _local(element.tag)
    if tag == "path":
        d = element.get("d", "")
        known = parsed.get(d) if parsed else None
        return known if known is not None else _path_outlines(d)
    if tag in ("polyline", "polygon"):
        values = [float(v) for v in _PATH_TOKEN.findall(element.get("points", ""))]
        if len(values) % 2:
            raise ValueError("odd number of coordinates")
        pts = [(values[i], values[i + 1]) for i in range(0, len(values), 2)]
        return [(pts, tag == "polygon")]
    if tag == "line":
        return [([(float(element.get("x1", 0)), float(element.get("y1", 0))),
                  (float(element.get("x2", 0)), float(element.get("y2", 0)))], False)]
    if tag == "rect":
        x, y = float(element.get("x", 0)), float(element.get("y", 0))
        w, h = float(element.get("width", 0)), float(element.get("height", 0))
        if element.get("rx") or element.get("ry"):
            return None
        return [([(x, y), (x + w, y), (x + w, y + h), (x, y + h)], True)]
    return None


@functools.lru_cache(maxsize=256)
def _path_outlines(d: str) -> list[tuple[list[Point], bool]] | None:
    """:func:`_outlines` of path data ``d`` (cached: a chart's markers share a few shapes;
    the result is only read)."""
    runs: list[tuple[list[Point], bool]] = []
    numbers: list[float] = []
    command = ""

    def flush() -> None:
        if not numbers:
            return
        if len(numbers) % 2:
            raise ValueError("odd number of coordinates")
        pts = [(numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2)]
        numbers.clear()
        if command == "M":
            runs.append((pts[:1], False))
            pts = pts[1:]
        if pts:
            if not runs:
                raise ValueError("line before move")
            runs[-1][0].extend(pts)

    for token in _PATH_TOKEN.findall(d):
        if token.isalpha():
            flush()
            if token not in "MLZ":
                return None
            if token == "Z" and runs:
                runs[-1] = (runs[-1][0], True)
            command = token
        else:
            numbers.append(float(token))
    flush()
    return runs


def _clip_segment(p: Point, q: Point, r: Rect) -> tuple[Point, Point, bool, bool] | None:
    """Liang–Barsky: the part of segment ``pq`` inside ``r`` and whether each end moved."""
    (x0, y0), (x1, y1) = p, q
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for edge_p, edge_q in ((-dx, x0 - r[0]), (dx, r[2] - x0), (-dy, y0 - r[1]),
                           (dy, r[3] - y0)):
        if edge_p == 0:
            if edge_q < 0:
                return None
            continue
        t = edge_q / edge_p
        if edge_p < 0:
            if t > t1:
                return None
            t0 = max(t0, t)
        else:
            if t < t0:
                return None
            t1 = min(t1, t)
    return ((x0 + t0 * dx, y0 + t0 * dy), (x0 + t1 * dx, y0 + t1 * dy), t0 > 0, t1 < 1)


def _clip_polyline(points: list[Point], r: Rect) -> list[list[Point]]:
    runs: list[list[Point]] = []
    open_run = False
    for p, q in itertools.pairwise(points):
        part = _clip_segment(p, q, r)
        if part is None:
            open_run = False
            continue
        a, b, moved_a, moved_b = part
        if open_run and not moved_a:
            runs[-1].append(b)
        else:
            runs.append([a, b])
        open_run = not moved_b
    if len(points) == 1 and r[0] <= points[0][0] <= r[2] and r[1] <= points[0][1] <= r[3]:
        runs.append(list(points))
    return runs


def _clip_polygon(points: list[Point], r: Rect) -> list[Point]:
    """Sutherland–Hodgman against the rectangle ``r``."""
    def inside(p: Point, edge: int) -> bool:
        return (p[0] >= r[0], p[0] <= r[2], p[1] >= r[1], p[1] <= r[3])[edge]

    def cross(p: Point, q: Point, edge: int) -> Point:
        (x0, y0), (x1, y1) = p, q
        if edge < 2:
            x = r[0] if edge == 0 else r[2]
            t = (x - x0) / (x1 - x0)
            return x, y0 + t * (y1 - y0)
        y = r[1] if edge == 2 else r[3]
        t = (y - y0) / (y1 - y0)
        return x0 + t * (x1 - x0), y

    out = list(points)
    for edge in range(4):
        if not out:
            break
        source, out = out, []
        prev = source[-1]
        for cur in source:
            if inside(cur, edge):
                if not inside(prev, edge):
                    out.append(cross(prev, cur, edge))
                out.append(cur)
            elif inside(prev, edge):
                out.append(cross(prev, cur, edge))
            prev = cur
    return out


def _path_data(runs: Runs, parsed: dict[str, Runs] | None = None) -> str:
    """The path data of straight-line ``runs``. With ``parsed``, it also gets what
    :func:`_path_outlines` reads back from that text (the numbers as written), by the text:
    the marks are then found without reading the paths just written again."""
    parts = []
    read: Runs = []
    for points, closed in runs:
        if not points:
            continue
        texts = [(_num(x), _num(y)) for x, y in points]
        parts.append("M" + ",".join(texts[0]))
        parts += [f"L{x},{y}" for x, y in texts[1:]]
        if closed:
            parts.append("Z")
        if parsed is not None:
            read.append(([(float(x), float(y)) for x, y in texts], closed))
    d = " ".join(parts)
    if parsed is not None:
        parsed[d] = read
    return d


def _to_page(element: ET.Element, m: Sequence[float], clip: Rect | None, filled: bool,
             parsed: dict[str, Runs] | None = None) -> str:
    """Rewrite a shape drawn under the data transform ``m`` as a page-coordinate path cut to
    ``clip`` (the plot area). Returns "done", "empty" (nothing inside: drop it) or "kept"
    (curved: left as it is). ``parsed`` gets the new path data as read back
    (:func:`_path_data`)."""
    try:
        runs = _outlines(element)
        if runs is None and _local(element.tag) == "path":  # curves (round markers): mapped,
            element.set("d", _transform_path(element.get("d", ""), m))  # not cut
            element.attrib.pop("vector-effect", None)
            return "done"
    except ValueError:
        return "kept"
    if runs is None:
        return "kept"
    page = [([_apply(m, x, y) for x, y in pts], closed) for pts, closed in runs]
    if clip is not None:
        cut: list[tuple[list[Point], bool]] = []
        left, top, right, bottom = clip
        for pts, closed in page:
            if all(left <= x <= right and top <= y <= bottom for x, y in pts):
                # wholly inside (most shapes): what the clippers would return, for less work
                if closed or filled:
                    if len(pts) >= 3:
                        cut.append((pts, True))
                elif pts:  # the clipped segments' ends: x0 + 1.0 * (x1 - x0), as computed there
                    cut.append(([pts[0]] + [(x0 + (x1 - x0), y0 + (y1 - y0)) for (x0, y0), (x1, y1)
                                            in itertools.pairwise(pts)], False))
                continue
            if closed or filled:
                polygon = _clip_polygon(pts, clip)
                if len(polygon) >= 3:
                    cut.append((polygon, True))
            else:
                cut += [(run, False) for run in _clip_polyline(pts, clip)]
        page = cut
    if not page:
        return "empty"
    keep = {k: v for k, v in element.attrib.items()
            if k not in ("d", "points", "x", "y", "width", "height", "x1", "y1", "x2", "y2",
                         "vector-effect")}
    element.clear()
    element.tag = f"{{{_SVG}}}path"
    element.attrib.update(keep)
    element.set("d", _path_data(page, parsed))
    return "done"


def _transform_path(d: str, m: Sequence[float]) -> str:
    """Absolute ``M``/``L``/``C``/``Q``/``Z`` path data mapped by the affine ``m`` (exact for
    Bézier curves: their control points map with them)."""
    a, b, c, dd, e, f = m
    return " ".join(item if isinstance(item, str)
                    else f"{_num(a * item[0] + c * item[1] + e)},"
                         f"{_num(b * item[0] + dd * item[1] + f)}"
                    for item in _path_items(d))


@functools.lru_cache(maxsize=256)
def _path_items(d: str) -> tuple[str | Point, ...]:
    """Path data as its commands and points, in order (cached: markers share their shape).
    ValueError for what :func:`_transform_path` cannot map."""
    out: list[str | Point] = []
    numbers: list[float] = []

    def flush() -> None:
        if len(numbers) % 2:
            raise ValueError("odd number of coordinates")
        out.extend((numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2))
        numbers.clear()

    for token in _PATH_TOKEN.findall(d):
        if token.isalpha():
            flush()
            if token not in "MLCQZ":
                raise ValueError(f"path command {token} not handled")
            out.append(token)
        else:
            numbers.append(float(token))
    flush()
    return tuple(out)


def _is_rigid(m: Sequence[float]) -> bool:
    """A translation or rotation: strokes keep their width under it."""
    a, b, c, d, _, _ = m
    return abs(a * a + b * b - 1) < 1e-6 and abs(c * c + d * d - 1) < 1e-6 \
        and abs(a * c + b * d) < 1e-6


def portable_svg(raw: bytes, fig: FigureSize, background: str | None,
                 families: dict[str, str] | None = None, plot_area: Rect | None = None,
                 marks: Sequence[SvgMark] = ()) -> bytes:
    """Qt's SVG made to draw the same in any renderer: :func:`portable_tree`, written out."""
    return svg_bytes(portable_tree(raw, fig, background, families, plot_area, marks))


def svg_bytes(root: ET.Element) -> bytes:
    """The SVG file (UTF-8, with its XML declaration) of the element tree ``root``."""
    return b'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(
        root, encoding="unicode").encode("utf-8", "xmlcharrefreplace")


def portable_tree(raw: bytes, fig: FigureSize, background: str | None,
                  families: dict[str, str] | None = None, plot_area: Rect | None = None,
                  marks: Sequence[SvgMark] = ()) -> ET.Element:
    """Qt's SVG made to draw the same in any renderer, as an element tree.

    Shapes drawn under the chart's log-scaled data transform with cosmetic pens
    ("non-scaling-stroke", which renderers treat differently) are rewritten as paths in page
    coordinates, cut to ``plot_area`` (so the file needs no clip paths); generic font names
    become the concrete family Qt used, with a generic fallback; width and height are
    physical; a background rectangle is added unless ``background`` is None. Each of
    ``marks`` found in the drawing gets its attributes (see :func:`name_marks`)."""
    ET.register_namespace("", _SVG)
    ET.register_namespace("xlink", _XLINK)
    root = ET.fromstring(_without_empty_groups(raw))
    # (the paths written here, as read back, where marks are to be found in them)
    parsed: dict[str, Runs] | None = {} if marks else None
    identity = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    for parent in list(root.iter()):
        for group in [g for g in parent if _local(g.tag) == "g"]:
            match = _MATRIX.match(group.get("transform", ""))
            values = re.split(r"[\s,]+", match.group(1).strip()) if match else []
            m = tuple(float(v) for v in values) if len(values) == 6 else identity
            shapes = [el for el in group if _local(el.tag) in _MAPPED]
            if not shapes:
                continue
            if _is_rigid(m):  # strokes are the same with or without non-scaling-stroke
                for el in shapes:
                    el.attrib.pop("vector-effect", None)
                continue
            done = []
            for el in shapes:
                filled = (el.get("fill") or group.get("fill") or "black") != "none"
                outcome = _to_page(el, m, plot_area, filled, parsed)
                if outcome == "empty":
                    group.remove(el)
                elif outcome == "done":
                    done.append(el)
            rest = list(group)
            if not rest:
                parent.remove(group)
            elif len(done) == len(rest):
                group.attrib.pop("transform", None)
            elif done:  # mixed group: undo the group's transform on the rewritten shapes
                inverse = ",".join(repr(float(v)) for v in _inverse(m))
                for el in done:
                    el.set("transform", f"matrix({inverse})")
    families = families or {}
    for el in root.iter():
        family = el.get("font-family")
        if family is not None:
            concrete = families.get(family) or families.get("") or family
            names = [concrete] if concrete == family else [concrete, family]
            el.set("font-family", ", ".join(f"'{n}'" for n in names) + ", sans-serif")
    w_in, h_in = fig.inches
    root.set("width", f"{_num(w_in * 25.4)}mm")
    root.set("height", f"{_num(h_in * 25.4)}mm")
    if background is not None:
        lw, lh = fig.logical
        rect = ET.Element(f"{{{_SVG}}}rect", {"x": "0", "y": "0", "width": _num(lw),
                                             "height": _num(lh), "fill": background[:7],
                                             "stroke": "none"})
        first = next((i for i, el in enumerate(root)
                      if _local(el.tag) not in ("title", "desc", "defs")), len(root))
        root.insert(first, rect)
    for group in [g for g in root.iter() if _local(g.tag) == "g"]:
        for empty in [g for g in group if _local(g.tag) == "g" and len(g) == 0]:
            group.remove(empty)
    if marks:
        name_marks(root, marks, parsed)
    return root


#: an empty group and the whitespace after it (a ">" inside an attribute value makes this
#: not match: such a group is then left to the tree)
_EMPTY_GROUP = re.compile(rb"<g\b[^>]*>\s*</g>\s*")
_OPEN_TAG = re.compile(rb"<g\b[^>]*>")


def _without_empty_groups(raw: bytes) -> bytes:
    """Qt's SVG less the empty groups inside its outer group (a group for every change of
    painter state: more than half of a chart's elements); removed before parsing, as the
    serialised result drops them anyway, so that little is parsed, walked and written."""
    first = _OPEN_TAG.search(raw)
    if first is None:
        return raw
    return raw[:first.end()] + _EMPTY_GROUP.sub(b"", raw[first.end():])


def _inverse(m: Sequence[float]) -> tuple[float, ...]:
    a, b, c, d, e, f = m
    det = a * d - b * c
    ia, ib, ic, id_ = d / det, -b / det, -c / det, a / det
    return ia, ib, ic, id_, -(ia * e + ic * f), -(ib * e + id_ * f)


# ---------------------------------------------------------------------------------------------
# naming the marks: found by where they are drawn


#: a marker's centre is within this many logical pixels of where it was asked for; a roof's
#: every vertex within this many of its line
MARK_TOLERANCE = 1.5
#: a marker is at most this many logical pixels across; a roof's drawn piece at least this long
MARKER_MOST = 40.0
LINE_LEAST = 6.0


@record(frozen=True)
class SvgMark:
    """A mark to name in the figure: ``kind`` ``"marker"`` (a point's, a measured point's or
    a ridge's symbol, centred on ``where[0]``), ``"line"`` (a roof, the straight line
    through ``where[0]`` and ``where[1]``), ``"path"`` (a line through all of ``where``),
    in page coordinates (logical pixels), or ``"text"`` (the text element that says
    ``text``; with ``where``, the box it is drawn in: the one nearest it); ``attrs`` are set
    on the element found (id, class, data attributes)."""

    kind: str
    where: tuple[Point, ...]
    attrs: dict[str, str] = field(default_factory=dict)
    text: str = ""
    #: a marker's colour ("#rrggbb"): its fill's, or its outline's where it is not filled;
    #: of marks drawn at one place (two sweeps' samples), the one in it
    color: str = ""
    #: how far from ``where[0]`` a marker's centre may be (an arrow's head: from its tip)
    reach: float = MARK_TOLERANCE


def _parse_matrix(element: ET.Element) -> tuple[float, ...] | None:
    match = _MATRIX.match(element.get("transform", ""))
    if not match:
        return None
    values = re.split(r"[\s,]+", match.group(1).strip())
    return tuple(float(v) for v in values) if len(values) == 6 else None


def _compose(m: Sequence[float], n: Sequence[float]) -> tuple[float, ...]:
    """The transform ``m`` after ``n`` (a point is mapped by ``n`` first)."""
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (a * a2 + c * b2, b * a2 + d * b2, a * c2 + c * d2, b * c2 + d * d2,
            a * e2 + c * f2 + e, b * e2 + d * f2 + f)


def _page_vertices(root: ET.Element, parsed: dict[str, Runs] | None = None
                   ) -> list[tuple[ET.Element, list[Point]]]:
    """``(element, vertices in page coordinates)`` of every shape, in document order: its
    outline's corners, or for a curved path its points and control points (``parsed``: see
    :func:`_outlines`)."""
    identity = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    out: list[tuple[ET.Element, list[Point]]] = []

    def walk(element: ET.Element, m: tuple[float, ...]) -> None:
        if "transform" in element.attrib:
            own = _parse_matrix(element)
            if own is not None:
                m = _compose(m, own)
        if _local(element.tag) in _MAPPED:
            try:
                runs = _outlines(element, parsed)
                if runs is None and _local(element.tag) == "path":
                    pts = [p for p in _path_items(element.get("d", "")) if not isinstance(p, str)]
                else:
                    pts = [p for run, _closed in (runs or ()) for p in run]
            except ValueError:
                pts = []
            if pts:
                a, b, c, d, e, f = m
                out.append((element, [(a * x + c * y + e, b * x + d * y + f) for x, y in pts]))
        for child in element:
            walk(child, m)

    walk(root, identity)
    return out


def name_marks(root: ET.Element, marks: Sequence[SvgMark],
               parsed: dict[str, Runs] | None = None) -> int:
    """Set each mark's attributes on the shape that draws it: for a marker, the unnamed
    small shape whose centre is nearest its place (within :data:`MARK_TOLERANCE`); for a
    line, the longest unnamed straight shape lying along it; for a text, the first unnamed
    text element that says it. Marks are served in order (a point before a ridge drawn at
    the same place). A marker whose box is not centred on its place gets ``data-c``, the
    place. Returns how many were found. ``parsed``: path data already read, by
    its text (:func:`_path_data`)."""
    small: dict[tuple[int, int], list[tuple[float, float, ET.Element]]] = {}
    # (each straight shape with its extent: a roof's line is looked for only among the
    # shapes whose extent lies within its segment's, as every vertex must)
    lines: list[tuple[ET.Element, list[Point], float, Rect]] = []
    for element, pts in _page_vertices(root, parsed):
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        w, h = x1 - x0, y1 - y0
        if 0 < max(w, h) <= MARKER_MOST:
            cx, cy = (x1 + x0) / 2, (y1 + y0) / 2
            small.setdefault((round(cx), round(cy)), []).append((cx, cy, element))
        # (a single segment however short: a measured kernel's link, a bar of its scale)
        if (math.hypot(w, h) >= LINE_LEAST or (len(pts) == 2 and max(w, h) > 0)) \
                and _local(element.tag) != "text":
            lines.append((element, pts, math.hypot(w, h), (x0, y0, x1, y1)))
    # (by their left ends, each with its place in the drawing: a mark looks only at those
    # from its own left end to its right one, and of two as long takes the one drawn first)
    order = sorted(range(len(lines)), key=lambda i: lines[i][3][0])
    lefts = [lines[i][3][0] for i in order]
    texts: dict[str, list[ET.Element]] = {}
    anchors: dict[int, Point] = {}
    if any(mark.kind == "text" for mark in marks):
        for element, anchor in _text_anchors(root):
            texts.setdefault("".join(element.itertext()).strip(), []).append(element)
            anchors[id(element)] = anchor
    colors: dict[int, str] = {}
    if any(mark.color for mark in marks):
        def paint(element: ET.Element, inherited: tuple[str, str, str]) -> None:
            fill, stroke, opacity = (element.get(name) or inherited[i] for i, name in
                                     enumerate(("fill", "stroke", "fill-opacity")))
            # the colour it shows: its fill, or its outline where it is not filled (an
            # overhead-bound point's ring over a filled point of the same colour)
            clear = fill == "none" or float(opacity) == 0
            colors[id(element)] = (stroke if clear else fill).lower()[:7]
            for child in element:
                paint(child, (fill, stroke, opacity))

        paint(root, ("black", "none", "1"))
    taken: set[int] = set()
    found = 0
    best_c = (0.0, 0.0)  # (a marker's: the centre of its box)
    for mark in marks:
        best = None
        if mark.kind == "text" and mark.where:
            # the one that says it nearest the box it is drawn in
            (left, top), (right, bottom) = mark.where
            cx, cy = (left + right) / 2, (top + bottom) / 2
            best = min((el for el in texts.get(mark.text.strip(), ()) if id(el) not in taken),
                       key=lambda el: math.hypot(anchors[id(el)][0] - cx,
                                                 anchors[id(el)][1] - cy), default=None)
            if best is not None and not (
                    left - MARKER_MOST <= anchors[id(best)][0] <= right + MARKER_MOST
                    and top - MARKER_MOST <= anchors[id(best)][1] <= bottom + MARKER_MOST):
                best = None
        elif mark.kind == "text":
            best = next((el for el in texts.get(mark.text.strip(), ()) if id(el) not in taken),
                        None)
        elif mark.kind == "marker":
            x, y = mark.where[0]
            rx, ry = round(x), round(y)
            best_d = mark.reach
            cells = range(-math.ceil(mark.reach) - 1, math.ceil(mark.reach) + 2)
            for i in cells:
                for j in cells:
                    for cx, cy, element in small.get((rx + i, ry + j), ()):
                        d = math.hypot(cx - x, cy - y)
                        if d <= best_d and id(element) not in taken and (
                                not mark.color or mark.color.lower()[:7] == colors[id(element)]):
                            best, best_d, best_c = element, d, (cx, cy)
        else:  # a line through where[0] and where[1], or a path through every one of where
            t = MARK_TOLERANCE
            xs, ys = [p[0] for p in mark.where], [p[1] for p in mark.where]
            left, right, top, bottom = min(xs) - t, max(xs) + t, min(ys) - t, max(ys) + t
            best_len, best_i = 0.0, len(lines)
            for i in order[bisect.bisect_left(lefts, left):bisect.bisect_right(lefts, right)]:
                element, pts, length, (x0, y0, x1, y1) = lines[i]
                if (length > best_len or (length == best_len and i < best_i)) \
                        and x1 <= right and top <= y0 \
                        and y1 <= bottom and id(element) not in taken \
                        and (_along(pts, mark.where[0], mark.where[1]) if mark.kind == "line"
                             else _on_path(pts, mark.where)):
                    best, best_len, best_i = element, length, i
        if best is not None:
            taken.add(id(best))
            found += 1
            for key, value in mark.attrs.items():
                best.set(key, value)
            if mark.kind == "marker" and math.hypot(best_c[0] - mark.where[0][0],
                                                    best_c[1] - mark.where[0][1]) > 0.05:
                # drawn off the centre of its box (an arrow's head, from its tip): the place
                # it marks, for a page to keep its size about when zoomed
                best.set("data-c", f"{_num(mark.where[0][0])},{_num(mark.where[0][1])}")
    return found


def _on_path(pts: Sequence[Point], path: Sequence[Point]) -> bool:
    """Whether every point of ``pts`` lies on the path through ``path``'s points."""
    return all(any(_along([point], p, q) for p, q in itertools.pairwise(path) if p != q)
               for point in pts)


def _text_anchors(root: ET.Element) -> list[tuple[ET.Element, Point]]:
    """Every text element with where it is drawn from (its ``x``, ``y``) on the page."""
    out: list[tuple[ET.Element, Point]] = []

    def first(value: str | None) -> float:
        found = _PATH_TOKEN.findall(value or "")
        return float(found[0]) if found and not found[0].isalpha() else 0.0

    def walk(element: ET.Element, m: tuple[float, ...]) -> None:
        if "transform" in element.attrib:
            own = _parse_matrix(element)
            if own is not None:
                m = _compose(m, own)
        if _local(element.tag) == "text":
            out.append((element, _apply(m, first(element.get("x")), first(element.get("y")))))
        for child in element:
            walk(child, m)

    walk(root, (1.0, 0.0, 0.0, 1.0, 0.0, 0.0))
    return out


def _along(pts: Sequence[Point], p: Point, q: Point) -> bool:
    """Whether every point of ``pts`` lies on the segment from ``p`` to ``q`` (a grid line
    on the same line but longer is not the roof)."""
    (x0, y0), (x1, y1) = p, q
    length = math.hypot(x1 - x0, y1 - y0)
    if not length:
        return False
    t = MARK_TOLERANCE
    left, right, top, bottom = min(x0, x1) - t, max(x0, x1) + t, min(y0, y1) - t, max(y0, y1) + t
    return all(left <= x <= right and top <= y <= bottom
               and abs((x1 - x0) * (y0 - y) - (x0 - x) * (y1 - y0)) / length <= t
               for x, y in pts)
