"""Figure-quality checker: reads an exported chart PDF back with PyMuPDF and measures, from
the file alone, what a reader would call a badly set figure.

Four kinds of defect of a figure that would need touching up (:class:`Defect`.kind):

``text_over_text``
    Two different text lines whose characters overlap by more than the tolerance in every
    direction, or a label background (a filled plate behind a text) painted over another text.
``text_over_data``
    A text's characters entered by a drawn data path (roof, ridge line, interconnect, sweep,
    measured link...) or overlapping a marker; or a label background / legend box painted
    over data drawn before it.
``truncation``
    A text with an ellipsis ("…" or "..."), or a label inside the plot that runs across the
    plot frame (the plot clip cuts it on screen).
``off_page``
    A text whose ink reaches outside the page.

Three more, of a figure too small to read (:func:`check_readability`, separate from
:func:`check_figure` so that a drawing without a plot can still be checked for overlaps):

``small_text``
    A text under ``MIN_TEXT_PT``; an axis title (a text outside the plot ending in its unit
    in brackets) under ``MIN_AXIS_TITLE_PT`` or under ``AXIS_TITLE_TO_TICKS`` × the size of
    its axis's tick labels (short texts starting with a digit along that plot edge).
``small_plot``
    A plot rectangle taking less than ``MIN_PLOT_SHARE`` of the page's area or
    ``MIN_PLOT_WIDTH`` of its width, both of the page less the band a legend beside or below
    the plot takes (no plot frame found at all is one too).
``large_legend``
    A legend outside the plot (a plate with texts, clear of the plot) whose band takes more
    than ``MAX_LEGEND_SHARE`` of the page's height (above or below the plot) or width (beside).

Geometry, all in PDF points with the origin at the top left of the page:

- A text line is one run of spans on one baseline and direction (PyMuPDF's text trace, merged
  where a span continues the one drawn just before it). Its ink is a row of cells, one per
  character from the first to the last non-blank one: the character's advance along the
  baseline, and its ink height across it (``INK_TOP``/``INK_DESCENT`` in em of DejaVu Sans:
  capitals and ascenders 0.76 above the baseline, lowercase 0.56, descenders 0.24 below;
  a space counts as a lowercase letter). Stacked legend lines or a wrapped title do not
  touch; a line just above lowercase letters is clear of them.
- The tolerance is ``max(MIN_TOLERANCE, TOLERANCE_EM × font size)`` of the smaller text
  involved: an overlap has to go deeper than that to count.
- The plot rectangle is the bounding box of the largest drawn shape that is not the page
  background (the plot background or the frame around it).
- Not data: faint paths (opacity below ``FAINT_OPACITY``: grid lines, minor ticks), paths
  with the plot rectangle's bounding box (frame, plot background), long thin axis-aligned
  lines spanning the plot at reduced opacity (grid), short axis-aligned segments touching the
  frame (ticks), filled rectangles behind texts (plates: label backgrounds, the legend box and
  its border), and anything wholly outside the plot rectangle (axes, tick labels, a legend
  placed beside the plot).
- Data lines are tested segment by segment (curves flattened): a stroke counts when its ink
  (centre line widened by half the line width) enters a character's cell deeper than the
  tolerance (and runs inside for at least the tolerance); a line that ends at a label's edge
  (a leader) does not. Markers are small closed shapes; they count when their outline
  (convex hull, widened by half the stroke) goes into a character's cell deeper than the
  tolerance, so a legend swatch beside its text does not.
- Plates take the drawing order into account: a plate hides what was drawn before it, so a
  plate drawn after a data path it covers, or after a text it covers, is a defect. Short
  leader lines that end inside a plate are exempt.

One more, of a text that names the wrong thing (:func:`check_attribution`, on what the chart
drew: :func:`canvas_attribution` reads it from a canvas, :func:`pdf_attribution` from an
exported file, with the canvas saying which operation each text and each colour stands for):

``misattributed``
    A text that a reader would pair with something else than what it names: without a
    leader line, its own marks are not the nearest to its box (every other at least
    ``ATTRIBUTION_RATIO`` times as far) or to its middle, or lie more than ``reach`` from it
    (a tag standing alone); with a leader, the leader does not join the text to one of its
    own marks (or joins a roof's value to its line where a marker sits on it). Marks are
    markers for the names of points, ridges and sweeps, and lines for the values of roofs;
    a text is compared with marks of its own kind.

Use ``check_pdf(path_or_bytes) -> list[Defect]`` (and ``check_readability(read_figure(...))``);
``format_defects`` prints them one per line; ``python tests/figures/figcheck.py FIG.pdf ...``
runs both checks from the command line.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pymupdf

TEXT_OVER_TEXT = "text_over_text"
TEXT_OVER_DATA = "text_over_data"
TRUNCATION = "truncation"
OFF_PAGE = "off_page"
SMALL_TEXT = "small_text"
SMALL_PLOT = "small_plot"
LARGE_LEGEND = "large_legend"
MISATTRIBUTED = "misattributed"
KINDS = (TEXT_OVER_TEXT, TEXT_OVER_DATA, TRUNCATION, OFF_PAGE, SMALL_TEXT, SMALL_PLOT,
         LARGE_LEGEND, MISATTRIBUTED)

#: the least size of any text on the page, in points (journals ask for 5–7 pt at print size)
MIN_TEXT_PT = 6.0
#: the least size of an axis title: this, and this share of its axis's tick labels' size
MIN_AXIS_TITLE_PT = 7.0
AXIS_TITLE_TO_TICKS = 0.8
#: the plot rectangle takes at least this share of the area the figure's title and a legend
#: beside or below the plot leave (what the axes, their labels and the margins may not eat
#: into), and this share of the page's width less such a legend
MIN_PLOT_SHARE = 0.33
MIN_PLOT_WIDTH = 0.6
#: a legend beside or below the plot takes at most this share of the page's width or height:
#: the chart keeps at least 45 % (a key of many long names below a paper column's plot, on a
#: page grown to a journal's 9 in, takes up to 55 %; less wherever a taller page would do)
MAX_LEGEND_SHARE = 0.56

#: ink above the baseline, in em (DejaVu Sans: capitals and digits 0.73, ascenders 0.76,
#: lowercase 0.55, low punctuation less)
INK_ASCENT = 0.76
INK_X_HEIGHT = 0.56
INK_TOP = {**dict.fromkeys("acemnorsuvwxz", INK_X_HEIGHT),
           **dict.fromkeys("-‐–—·=~+×÷<>:;", INK_X_HEIGHT), **dict.fromkeys(".,_…", 0.15)}
#: ink below the baseline, in em (g, j, p, q, y: 0.24; brackets, slash, comma about 0.13)
INK_DESCENT = {**dict.fromkeys("gjpqyµ_", 0.24), **dict.fromkeys("(),;/\\[]{}|Q@$", 0.13)}
TOLERANCE_EM = 0.1
MIN_TOLERANCE = 0.5
#: paths drawn with less opacity than this are faint (grid, minor ticks), not data
FAINT_OPACITY = 0.25
#: a closed shape whose larger side is at most this share of the page's smaller side is a marker
MARKER_SHARE = 0.06
#: a leader line is at most this share of the page diagonal long
LEADER_SHARE = 0.25
ELLIPSES = ("…", "...")

Point = tuple[float, float]
Box = tuple[float, float, float, float]  # x0, y0, x1, y1


@dataclass(frozen=True)
class Defect:
    """One defect: its kind, where on the page (a box in points, origin top left), the texts
    involved and what exactly is wrong."""

    kind: str
    box: Box
    texts: tuple[str, ...]
    detail: str

    def __str__(self) -> str:
        x0, y0, x1, y1 = self.box
        shown = [repr(t) for t in self.texts[:3]]
        if len(self.texts) > 3:
            shown.append(f"+{len(self.texts) - 3} more")
        texts = " / ".join(shown)
        return f"{self.kind}: {texts}: {self.detail} at ({x0:.1f}, {y0:.1f})–({x1:.1f}, {y1:.1f}) pt"


@dataclass
class TextLine:
    """A line of text as drawn: string, font size, drawing order, and the ink of each
    character as a cell in the line's own frame (along the baseline, up from it)."""

    text: str
    size: float
    seqno: int
    origin: Point  # baseline start
    direction: Point  # unit vector along the baseline (page coordinates, y down)
    colour: int = 0
    last_seqno: int = -1  # the last span merged into this line
    #: (u0, u1, v0, v1) per character from the first to the last inked one: advance along the
    #: baseline, ink below (negative) and above the baseline
    cells: list[tuple[float, float, float, float]] = field(default_factory=list, repr=False)

    @property
    def up(self) -> Point:
        dx, dy = self.direction
        return dy, -dx

    def _page(self, u: float, v: float) -> Point:
        (ox, oy), (dx, dy), (ux, uy) = self.origin, self.direction, self.up
        return ox + u * dx + v * ux, oy + u * dy + v * uy

    def _quad(self, u0: float, u1: float, v0: float, v1: float) -> list[Point]:
        return [self._page(u0, v0), self._page(u1, v0), self._page(u1, v1), self._page(u0, v1)]

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """The union of the cells (u0, u1, v0, v1)."""
        c = self.cells
        return (min(x[0] for x in c), max(x[1] for x in c), min(x[2] for x in c),
                max(x[3] for x in c))

    def corners(self) -> list[Point]:
        """The line's whole glyph box on the page."""
        return self._quad(*self.extent)

    def cell_corners(self) -> list[list[Point]]:
        return [self._quad(*c) for c in self.cells]

    def bbox(self) -> Box:
        return _bbox(self.corners())

    def local(self, p: Point) -> Point:
        """``p`` in the line's own coordinates (along the baseline, up from it)."""
        x, y = p[0] - self.origin[0], p[1] - self.origin[1]
        (dx, dy), (ux, uy) = self.direction, self.up
        return x * dx + y * dy, x * ux + y * uy

    @property
    def centre(self) -> Point:
        c = self.corners()
        return (c[0][0] + c[2][0]) / 2, (c[0][1] + c[2][1]) / 2

    def tolerance(self) -> float:
        return max(MIN_TOLERANCE, TOLERANCE_EM * self.size)


@dataclass
class Shape:
    """A drawn path: flattened into polylines, with its style and drawing order."""

    seqno: int
    polylines: list[list[Point]]
    bbox: Box
    stroked: bool
    filled: bool
    width: float
    colour: tuple[float, ...] | None
    fill: tuple[float, ...] | None
    opacity: float
    closed: bool
    rectangular: bool
    dashed: bool = False
    role: str = "data"  # data, marker, plate, frame, background, grid, tick, outside
    owners: list[TextLine] = field(default_factory=list)  # texts on a plate

    def segments(self) -> Iterable[tuple[Point, Point]]:
        for line in self.polylines:
            yield from itertools.pairwise(line)

    def describe(self) -> str:
        x0, y0, x1, y1 = self.bbox
        if self.role == "marker":
            return (f"a marker ({_hex(self.fill or self.colour)}) at "
                    f"({(x0 + x1) / 2:.1f}, {(y0 + y1) / 2:.1f})")
        colour = _hex(self.colour if self.stroked else self.fill)
        style = ", dashed" if self.dashed else ""
        return (f"a data line ({colour}, {self.width:.1f} pt{style}) spanning ({x0:.1f}, {y0:.1f})–"
                f"({x1:.1f}, {y1:.1f})")


@dataclass
class Figure:
    """What :func:`read_figure` found on a page."""

    page: Box
    plot: Box
    texts: list[TextLine]
    shapes: list[Shape]

    def by_role(self, role: str) -> list[Shape]:
        return [s for s in self.shapes if s.role == role]


# ---------------------------------------------------------------------------------------------
# reading


def _open(source) -> pymupdf.Document:
    if isinstance(source, bytes | bytearray):
        return pymupdf.open(stream=bytes(source), filetype="pdf")
    return pymupdf.open(os.fspath(source))


def read_figure(source, page_number: int = 0) -> Figure:
    """Texts and shapes of one page of a PDF file (path or bytes), classified."""
    with _open(source) as doc:
        page = doc[page_number]
        r = page.rect
        texts = _text_lines(page.get_texttrace())
        shapes = [s for s in (_shape(d) for d in page.get_drawings(extended=True)) if s]
    fig = Figure((r.x0, r.y0, r.x1, r.y1), (r.x0, r.y0, r.x1, r.y1), texts, shapes)
    _classify(fig)
    return fig


def _char_width(char, direction: Point, size: float) -> float:
    """A character's advance from its axis-aligned box (rotated text has no other)."""
    x0, y0, x1, y1 = char[3]
    dx, dy = abs(direction[0]), abs(direction[1])
    height = size  # the trace's boxes run from ascender 0.8 to descender -0.2 em
    if dx >= dy:
        return max(0.0, ((x1 - x0) - height * dy) / dx)
    return max(0.0, ((y1 - y0) - height * dx) / dy)


def _ink(char: str) -> tuple[float, float]:
    """Ink below and above the baseline of one character, in em (DejaVu Sans; a space as
    a lowercase letter, so a line through the gap between two words still counts)."""
    top = INK_TOP.get(char, INK_ASCENT) if not char.isspace() else INK_X_HEIGHT
    return -INK_DESCENT.get(char, 0.0), top


def _text_lines(trace: list[dict]) -> list[TextLine]:
    lines: list[TextLine] = []
    for span in trace:
        chars = span.get("chars") or ()
        if not chars or span.get("type", 0) == 3:  # 3: invisible text
            continue
        if span.get("opacity", 1.0) < FAINT_OPACITY:
            continue
        size = float(span["size"])
        d = span["dir"]
        norm = math.hypot(d[0], d[1]) or 1.0
        direction = (d[0] / norm, d[1] / norm)
        origin = tuple(chars[0][2])
        text = "".join(chr(c[0]) for c in chars)
        if not text.strip():
            continue
        line = TextLine(text, size, int(span.get("seqno", 0)), origin, direction,
                        int(_colour_int(span.get("color"))))
        cells = []
        for c in chars:
            u, v = line.local(tuple(c[2]))
            below, above = _ink(chr(c[0]))
            cells.append((chr(c[0]), (u, u + _char_width(c, direction, size), v + below * size,
                                      v + above * size)))
        if any(t.text == line.text and _close(t.origin, line.origin, 0.5) for t in lines):
            continue  # the same text drawn twice in the same place reads as one
        if _extend(lines, line, cells):
            continue
        line.cells = _trimmed(cells)
        lines.append(line)
    return lines


def _trimmed(cells: list) -> list[tuple[float, float, float, float]]:
    """The cells from the first to the last inked character."""
    inked = [i for i, (ch, _) in enumerate(cells) if not ch.isspace()]
    return [c for _, c in cells[inked[0]:inked[-1] + 1]]


def _extend(lines: list[TextLine], new: TextLine, cells: list) -> bool:
    """Append ``new`` to the previous line when it continues it (drawn right after it, same
    colour and direction, baseline near, starting where it ends): one line split into spans
    by a change of font."""
    if not lines:
        return False
    prev = lines[-1]
    if new.seqno - max(prev.seqno, prev.last_seqno) > 1 or new.colour != prev.colour:
        return False
    if abs(prev.direction[0] - new.direction[0]) > 1e-3 or abs(prev.direction[1] - new.direction[1]) > 1e-3:
        return False
    u, v = prev.local(new.origin)
    size = max(prev.size, new.size)
    end = prev.extent[1]
    if abs(v) > 0.5 * size or not (end - 0.3 * size <= u <= end + 0.6 * size):
        return False
    shifted = [(ch, (a + u, b + u, c + v, d + v)) for ch, (a, b, c, d) in cells]
    inked = [c for ch, c in shifted if not ch.isspace()]
    if inked:
        # the gap up to the continuation is part of the line (as a space would be)
        gap = (end, inked[0][0], 0.0, INK_X_HEIGHT * size)
        prev.cells = prev.cells + ([gap] if gap[1] > gap[0] else []) + _trimmed(shifted)
    prev.text += new.text
    prev.last_seqno = new.seqno
    prev.size = max(prev.size, new.size)
    return True


def _colour_int(value) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, Sequence) and len(value) >= 3:
        return (round(value[0] * 255) << 16) | (round(value[1] * 255) << 8) | round(value[2] * 255)
    return 0


def _hex(colour) -> str:
    if not colour:
        return "none"
    return "#" + "".join(f"{round(c * 255):02x}" for c in colour[:3])


def _bezier(p0: Point, p1: Point, p2: Point, p3: Point, n: int = 8) -> list[Point]:
    out = []
    for i in range(1, n + 1):
        t = i / n
        a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t ** 3
        out.append((a * p0[0] + b * p1[0] + c * p2[0] + d * p3[0],
                    a * p0[1] + b * p1[1] + c * p2[1] + d * p3[1]))
    return out


def _shape(d: dict) -> Shape | None:
    kind = d.get("type")
    if kind not in ("f", "s", "fs"):
        return None
    polylines: list[list[Point]] = []
    current: list[Point] = []
    rect_like = True

    def pt(p) -> Point:
        return (float(p.x), float(p.y))

    def start(p: Point) -> None:
        nonlocal current
        if current and _close(current[-1], p):
            return
        if len(current) > 1:
            polylines.append(current)
        current = [p]

    for item in d.get("items", ()):
        op = item[0]
        if op == "l":
            a, b = pt(item[1]), pt(item[2])
            start(a)
            current.append(b)
            if abs(a[0] - b[0]) > 1e-3 and abs(a[1] - b[1]) > 1e-3:
                rect_like = False
        elif op == "c":
            a = pt(item[1])
            start(a)
            current.extend(_bezier(a, pt(item[2]), pt(item[3]), pt(item[4])))
            rect_like = False
        elif op == "re":
            r = item[1]
            if len(current) > 1:
                polylines.append(current)
            current = []
            polylines.append([(r.x0, r.y0), (r.x1, r.y0), (r.x1, r.y1), (r.x0, r.y1), (r.x0, r.y0)])
        elif op == "qu":
            q = item[1]
            if len(current) > 1:
                polylines.append(current)
            current = []
            polylines.append([pt(q.ul), pt(q.ur), pt(q.lr), pt(q.ll), pt(q.ul)])
            if not q.is_rectangular:
                rect_like = False
    if len(current) > 1:
        polylines.append(current)
    if not polylines:
        return None
    filled = "f" in kind
    stroked = "s" in kind
    closed = bool(d.get("closePath")) or all(_close(p[0], p[-1]) for p in polylines)
    if filled:  # a filled path is closed by definition
        polylines = [p if _close(p[0], p[-1]) else p + [p[0]] for p in polylines]
        closed = True
    opacity = max(d.get("fill_opacity") or 0.0 if filled else 0.0,
                  d.get("stroke_opacity") or 0.0 if stroked else 0.0)
    r = d["rect"]
    box = (r.x0, r.y0, r.x1, r.y1)
    rectangular = filled and rect_like and len(polylines) == 1 and all(
        any(_close(p, c, 0.1) for c in _box_corners(box)) for p in polylines[0])
    return Shape(int(d.get("seqno", 0)), polylines, box, stroked, filled,
                 float(d.get("width") or 0.0), d.get("color"), d.get("fill"), float(opacity),
                 closed, rectangular, _is_dashed(d.get("dashes")))


def _is_dashed(dashes) -> bool:
    """PyMuPDF gives the dash pattern as PDF text, "[ on off ] phase"; "[] 0" is solid."""
    if not dashes:
        return False
    pattern = str(dashes).split("]")[0].strip("[ ")
    return bool(pattern)


def _close(a: Point, b: Point, eps: float = 0.05) -> bool:
    return abs(a[0] - b[0]) <= eps and abs(a[1] - b[1]) <= eps


# ---------------------------------------------------------------------------------------------
# reading an SVG file (as Qt's SVG generator writes it)

SVG_NS = "{http://www.w3.org/2000/svg}"
#: inherited presentation attributes (a <g> sets them for what it holds)
_SVG_STYLE = ("fill", "stroke", "fill-opacity", "stroke-opacity", "stroke-width",
              "stroke-dasharray", "font-size", "font-weight", "opacity")
#: length units of the svg element's width and height, in points
_SVG_UNITS = {"pt": 1.0, "in": 72.0, "mm": 72.0 / 25.4, "cm": 72.0 / 2.54, "px": 0.75, "": 0.75}
_FONT_FILES = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
               "/usr/share/fonts/TTF/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf")
Matrix = tuple[float, float, float, float, float, float]  # a, b, c, d, e, f as in SVG


class SvgError(ValueError):
    """An SVG the reader cannot read, with what and where."""


_FONT: pymupdf.Font | None = None


def _svg_font() -> pymupdf.Font:
    """DejaVu Sans (the figures' font) for the advance of each character; PyMuPDF's
    Helvetica where it is not installed."""
    global _FONT
    if _FONT is None:
        path = next((p for p in _FONT_FILES if os.path.exists(p)), None)
        _FONT = pymupdf.Font(fontfile=path) if path else pymupdf.Font("helv")
    return _FONT


@functools.cache
def _advance(char: str) -> float:
    """A character's advance in em."""
    return _svg_font().text_length(char, fontsize=1.0)


def _compose(m: Matrix, n: Matrix) -> Matrix:
    """``m`` after ``n`` (a point is mapped by ``n``, then by ``m``)."""
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (a * a2 + c * b2, b * a2 + d * b2, a * c2 + c * d2, b * c2 + d * d2,
            a * e2 + c * f2 + e, b * e2 + d * f2 + f)


def _apply(m: Matrix, x: float, y: float) -> Point:
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


def _svg_numbers(text: str) -> list[float]:
    return [float(v) for v in text.replace(",", " ").split()]


def _svg_transform(text: str, where: str) -> Matrix:
    out: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    for part in text.split(")"):
        if not part.strip():
            continue
        name, _, args = part.partition("(")
        name, v = name.strip(" ,"), _svg_numbers(args)
        if name == "matrix" and len(v) == 6:
            m = (v[0], v[1], v[2], v[3], v[4], v[5])
        elif name == "translate" and len(v) in (1, 2):
            m = (1.0, 0.0, 0.0, 1.0, v[0], v[1] if len(v) == 2 else 0.0)
        elif name == "scale" and len(v) in (1, 2):
            m = (v[0], 0.0, 0.0, v[-1], 0.0, 0.0)
        else:
            raise SvgError(f"{where}: transform {part.strip()})' is not read")
        out = _compose(out, m)
    return out


def _svg_colour(value: str | None) -> tuple[float, ...] | None:
    if not value or value == "none":
        return None
    if value.startswith("#") and len(value) == 7:
        return tuple(int(value[i:i + 2], 16) / 255 for i in (1, 3, 5))
    named = {"black": (0.0, 0.0, 0.0), "white": (1.0, 1.0, 1.0)}
    if value in named:
        return named[value]
    raise SvgError(f"colour {value!r} is not read")


def _svg_path(d: str, where: str) -> list[tuple[list[Point], bool, bool]]:
    """The subpaths of a path's ``d`` (absolute M, L, C, Z; curves flattened), each as its
    points, whether it is closed and whether it runs along the axes only."""
    tokens = d.replace(",", " ")
    for op in "MLCZmlcz":
        tokens = tokens.replace(op, f" {op} ")
    items = tokens.split()
    out: list[tuple[list[Point], bool, bool]] = []
    current: list[Point] = []
    straight = True
    closed = False
    i, op = 0, ""

    def flush() -> None:
        nonlocal current, straight, closed
        if len(current) > 1:
            out.append((current, closed, straight))
        current, straight, closed = [], True, False

    while i < len(items):
        if items[i].isalpha():
            op = items[i]
            i += 1
            if op in "Zz":
                if current:
                    current.append(current[0])
                    closed = True
                    start = current[0]
                    flush()
                    current = [start]
                continue
        if op not in "MLC":
            raise SvgError(f"{where}: path command {op!r} is not read")
        n = 6 if op == "C" else 2
        v = [float(t) for t in items[i:i + n]]
        i += n
        if op == "M":
            flush()
            current = [(v[0], v[1])]
            op = "L"  # (more pairs after M are lines)
        elif op == "L":
            p = (v[0], v[1])
            if current and abs(current[-1][0] - p[0]) > 1e-3 and abs(current[-1][1] - p[1]) > 1e-3:
                straight = False
            current.append(p)
        else:
            current.extend(_bezier(current[-1], (v[0], v[1]), (v[2], v[3]), (v[4], v[5])))
            straight = False
    flush()
    return out


def _svg_shape(kind: str, el, style: dict, m: Matrix, seqno: int, where: str) -> Shape | None:
    if kind == "path":
        parts = _svg_path(el.get("d", ""), where)
    elif kind in ("polyline", "polygon"):
        v = _svg_numbers(el.get("points", ""))
        pts = list(zip(v[0::2], v[1::2], strict=True))
        if kind == "polygon" and pts:
            pts.append(pts[0])
        parts = [(pts, kind == "polygon", all(
            abs(p[0] - q[0]) <= 1e-3 or abs(p[1] - q[1]) <= 1e-3 for p, q in itertools.pairwise(pts)))]
    elif kind == "rect":
        x, y = float(el.get("x", 0)), float(el.get("y", 0))
        w, h = float(el.get("width", 0)), float(el.get("height", 0))
        parts = [([(x, y), (x + w, y), (x + w, y + h), (x, y + h), (x, y)], True, True)]
    else:
        return None
    fill, stroke = _svg_colour(style.get("fill")), _svg_colour(style.get("stroke"))
    parts = [p for p in parts if len(p[0]) > 1]
    # (a closed path painted neither way is an area Qt marks out: the plot's, kept so that
    # the plot rectangle is found as on the PDF page, where the same path is filled)
    unpainted = fill is None and stroke is None
    if not parts or (unpainted and not all(c for _p, c, _s in parts)):
        return None
    polylines = [[_apply(m, *p) for p in pts] for pts, _c, _s in parts]
    filled, stroked = fill is not None, stroke is not None
    closed = all(c or _close(p[0], p[-1]) for (_pts, c, _s), p in zip(parts, polylines, strict=True))
    if filled:
        polylines = [p if _close(p[0], p[-1]) else p + [p[0]] for p in polylines]
        closed = True
    base = float(style.get("opacity", 1.0))
    opacity = base * max(float(style.get("fill-opacity", 1.0)) if filled else 0.0,
                         float(style.get("stroke-opacity", 1.0)) if stroked else 0.0,
                         1.0 if unpainted else 0.0)
    box = _bbox(p for line in polylines for p in line)
    axis_aligned = abs(m[1]) <= 1e-9 and abs(m[2]) <= 1e-9
    rectangular = filled and axis_aligned and len(parts) == 1 and parts[0][2] and all(
        any(_close(p, c, 0.1) for c in _box_corners(box)) for p in polylines[0])
    scale = math.sqrt(abs(m[0] * m[3] - m[1] * m[2]))
    dashes = style.get("stroke-dasharray", "none")
    return Shape(seqno, polylines, box, stroked, filled,
                 float(style.get("stroke-width", 1.0)) * scale, stroke, fill, opacity, closed,
                 rectangular, bool(dashes) and dashes != "none")


def _svg_text(el, style: dict, m: Matrix, seqno: int) -> TextLine | None:
    text = "".join(el.itertext())
    opacity = float(style.get("opacity", 1.0)) * float(style.get("fill-opacity", 1.0))
    if not text.strip() or _svg_colour(style.get("fill")) is None or opacity < FAINT_OPACITY:
        return None
    ox, oy = _apply(m, float(el.get("x", 0)), float(el.get("y", 0)))
    ax, ay = m[0], m[1]
    along = math.hypot(ax, ay) or 1.0
    scale = math.sqrt(abs(m[0] * m[3] - m[1] * m[2]))
    size = float(style.get("font-size", 12.0)) * scale
    colour = _svg_colour(style.get("fill"))
    line = TextLine(text, size, seqno, (ox, oy), (ax / along, ay / along), _colour_int(colour))
    u, cells = 0.0, []
    for ch in text:
        advance = _advance(ch) * size
        below, above = _ink(ch)
        cells.append((ch, (u, u + advance, below * size, above * size)))
        u += advance
    line.cells = _trimmed(cells)
    return line


def read_svg(source) -> Figure:
    """Texts and shapes of an SVG file (path or bytes), classified as a PDF page's are
    (:func:`read_figure`): each ``<text>`` is one text line (its box from its ``x``, ``y``,
    transform and font size, each character's advance from DejaVu Sans), each ``<path>``,
    ``<polyline>`` and ``<rect>`` a shape, in drawing order. Coordinates are in points (the
    user units scaled by the file's width, so the checker's tolerances mean what they mean
    for a PDF)."""
    import xml.etree.ElementTree as ET
    from pathlib import Path

    data = source if isinstance(source, bytes | bytearray) else Path(source).read_bytes()
    name = "the SVG" if isinstance(source, bytes | bytearray) else os.fspath(source)
    try:
        root = ET.fromstring(bytes(data))
    except ET.ParseError as e:
        raise SvgError(f"{name}: not XML: {e}") from None
    if root.tag != SVG_NS + "svg":
        raise SvgError(f"{name}: the root element is {root.tag!r}, not svg")
    box = _svg_numbers(root.get("viewBox", ""))
    if len(box) != 4:
        raise SvgError(f"{name}: the svg element has no viewBox")
    width = root.get("width", "").strip()
    unit = width.lstrip("0123456789.")
    if width and unit in _SVG_UNITS:
        k = float(width[:len(width) - len(unit)]) * _SVG_UNITS[unit] / box[2]
    else:
        k = 1.0
    page_matrix: Matrix = (k, 0.0, 0.0, k, -box[0] * k, -box[1] * k)
    texts: list[TextLine] = []
    shapes: list[Shape] = []
    seqno = 0

    def walk(el, style: dict, m: Matrix) -> None:
        nonlocal seqno
        tag = el.tag.removeprefix(SVG_NS)
        if tag in ("defs", "title", "desc", "clipPath", "mask", "pattern", "marker", "symbol"):
            return
        style = {**style, **{a: el.get(a) for a in _SVG_STYLE if el.get(a) is not None}}
        if el.get("transform"):
            m = _compose(m, _svg_transform(el.get("transform"), f"{name}: <{tag}>"))
        if tag == "text":
            seqno += 1
            line = _svg_text(el, style, m, seqno)
            if line is not None:
                texts.append(line)
            return
        if tag in ("path", "polyline", "polygon", "rect"):
            seqno += 1
            shape = _svg_shape(tag, el, style, m, seqno, f"{name}: <{tag}> {seqno}")
            if shape is not None:
                shapes.append(shape)
            return
        for child in el:
            walk(child, style, m)

    walk(root, {"fill": "black"}, page_matrix)
    page = (0.0, 0.0, box[2] * k, box[3] * k)
    fig = Figure(page, page, texts, shapes)
    _classify(fig)
    return fig


# ---------------------------------------------------------------------------------------------
# classification


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _same_box(a: Box, b: Box, eps: float) -> bool:
    return all(abs(x - y) <= eps for x, y in zip(a, b, strict=True))


def _inside(p: Point, b: Box, eps: float = 0.0) -> bool:
    return b[0] - eps <= p[0] <= b[2] + eps and b[1] - eps <= p[1] <= b[3] + eps


def _contains(outer: Box, inner: Box, eps: float = 0.0) -> bool:
    return (outer[0] - eps <= inner[0] and outer[1] - eps <= inner[1]
            and inner[2] <= outer[2] + eps and inner[3] <= outer[3] + eps)


def _classify(fig: Figure) -> None:
    page = fig.page
    page_area = _area(page)
    # the plot rectangle: of the large shapes that are not the page background (the plot's
    # background and frame, a legend box), the one holding the most lines (grid and data)
    big = [s for s in fig.shapes if s.opacity >= 0.5 and _area(s.bbox) >= 0.05 * page_area
           and not _same_box(s.bbox, page, 1.0)]
    if big:
        lines = [s.bbox for s in fig.shapes if not s.closed or s.opacity < FAINT_OPACITY]

        def held(shape: Shape) -> tuple[int, float]:
            return sum(_contains(shape.bbox, b, 1.0) for b in lines), _area(shape.bbox)

        fig.plot = max(big, key=held).bbox
    plot = fig.plot
    pw, ph = plot[2] - plot[0], plot[3] - plot[1]
    marker_side = MARKER_SHARE * min(page[2] - page[0], page[3] - page[1])
    plates: list[Shape] = []
    for s in fig.shapes:
        x0, y0, x1, y1 = s.bbox
        w, h = x1 - x0, y1 - y0
        if _same_box(s.bbox, page, 1.0) or (_contains(s.bbox, plot, 1.0) and s.filled):
            s.role = "background"
        elif _same_box(s.bbox, plot, 2.0):
            s.role = "frame"
        elif s.opacity < FAINT_OPACITY or (min(w, h) <= 2.0 and (w >= 0.9 * pw or h >= 0.9 * ph)
                                           and s.opacity < 0.6):
            s.role = "grid"
        elif s.filled and s.rectangular and w > marker_side and h > 0 and any(
                _inside(t.centre, s.bbox) for t in fig.texts):
            s.role = "plate"  # anywhere on the page: a legend beside the plot is one too
            plates.append(s)
        elif not _overlaps(s.bbox, plot, 0.5):
            s.role = "outside"
        elif _is_tick(s, plot):
            s.role = "tick"
        elif s.closed and max(w, h) <= marker_side:
            s.role = "marker"
        else:
            s.role = "data"
    # a plate carries the texts drawn on it, up to the next plate: the first one drawn after
    # it if it is on it at all (a label's background may be clipped at the plot edge while
    # the label runs on), and any others wholly inside it (legend entries; not an axis title
    # that strays onto it)
    for i, plate in enumerate(plates):
        until = plates[i + 1].seqno if i + 1 < len(plates) else math.inf
        after = sorted((t for t in fig.texts if plate.seqno < t.seqno < until), key=lambda t: t.seqno)
        plate.owners = [t for n, t in enumerate(after) if (
            (n == 0 and _overlaps(t.bbox(), plate.bbox))
            or _contains(plate.bbox, t.bbox(), t.tolerance()))]
    markers = [s for s in fig.shapes if s.role == "marker"]
    for s in fig.shapes:
        # the border drawn around a plate (the legend's frame) belongs to it
        if s.role in ("data", "marker") and any(_same_box(s.bbox, p.bbox, 1.5) for p in plates):
            s.role = "plate_border"
        # a marker's outline stroked over its fill is the same marker
        elif s.role == "marker" and not s.filled and any(
                m.filled and m.seqno < s.seqno and _same_box(m.bbox, s.bbox, 0.3) for m in markers):
            s.role = "marker_outline"


def _overlaps(a: Box, b: Box, eps: float = 0.0) -> bool:
    return a[0] < b[2] - eps and b[0] < a[2] - eps and a[1] < b[3] - eps and b[1] < a[3] - eps


def _is_tick(s: Shape, plot: Box) -> bool:
    """A short axis-aligned segment with an end on the plot frame."""
    if s.filled or len(s.polylines) != 1 or len(s.polylines[0]) != 2:
        return False
    (ax, ay), (bx, by) = s.polylines[0]
    short = 0.05 * min(plot[2] - plot[0], plot[3] - plot[1])
    if abs(ax - bx) <= 0.1 and abs(ay - by) <= short:  # vertical: on the bottom or top edge
        return any(min(abs(ay - e), abs(by - e)) <= 1.0 for e in (plot[1], plot[3]))
    if abs(ay - by) <= 0.1 and abs(ax - bx) <= short:
        return any(min(abs(ax - e), abs(bx - e)) <= 1.0 for e in (plot[0], plot[2]))
    return False


# ---------------------------------------------------------------------------------------------
# geometry


def _project(points: Sequence[Point], axis: Point) -> tuple[float, float]:
    values = [p[0] * axis[0] + p[1] * axis[1] for p in points]
    return min(values), max(values)


def penetration(a: Sequence[Point], b: Sequence[Point], axes: Iterable[Point]) -> float:
    """How deep two convex shapes overlap: the smallest overlap of their projections on the
    separating axes given (negative: apart)."""
    depth = math.inf
    for axis in axes:
        a0, a1 = _project(a, axis)
        b0, b1 = _project(b, axis)
        depth = min(depth, min(a1, b1) - max(a0, b0))
    return depth


def _axes(line: TextLine) -> list[Point]:
    return [line.direction, line.up]


def _text_depth(a: TextLine, b: TextLine) -> float:
    """How deep the ink cells of two lines overlap (the deepest pair of characters)."""
    axes = _axes(a) + _axes(b)
    cells_b = [(q, _bbox(q)) for q in b.cell_corners()]
    depth = -math.inf
    for qa in a.cell_corners():
        box_a = _bbox(qa)
        for qb, box_b in cells_b:
            if _overlaps(box_a, box_b):
                depth = max(depth, penetration(qa, qb, axes))
    return depth


def _depth_into_text(shape: Sequence[Point], shape_axes: list[Point], line: TextLine) -> float:
    """How deep a convex shape goes into the ink cells of a line (the deepest character)."""
    axes = shape_axes + _axes(line)
    box = _bbox(shape)
    depth = -math.inf
    for cell in line.cell_corners():
        if _overlaps(box, _bbox(cell)):
            depth = max(depth, penetration(shape, cell, axes))
    return depth


def _box_corners(b: Box) -> list[Point]:
    return [(b[0], b[1]), (b[2], b[1]), (b[2], b[3]), (b[0], b[3])]


def hull(points: Iterable[Point]) -> list[Point]:
    """The convex hull of ``points`` (counter-clockwise, no repeats)."""
    pts = sorted(set(points))
    if len(pts) <= 2:
        return pts

    def cross(o: Point, a: Point, b: Point) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[Point] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[Point] = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def _normals(polygon: Sequence[Point]) -> list[Point]:
    out = []
    for a, b in zip(polygon, list(polygon[1:]) + [polygon[0]], strict=True):
        dx, dy = b[0] - a[0], b[1] - a[1]
        n = math.hypot(dx, dy)
        if n > 1e-9:
            out.append((-dy / n, dx / n))
    return out


def _marker_outline(marker: Shape) -> list[Point]:
    shape = hull(p for line in marker.polylines for p in line)
    return shape if len(shape) >= 3 else _box_corners(marker.bbox)


def _marker_depth(marker: Shape, corners: Sequence[Point], axes: list[Point]) -> float:
    """How deep a marker's ink (its outline's convex hull, widened by half its stroke) goes
    into the convex polygon ``corners`` whose edge directions are ``axes``."""
    shape = _marker_outline(marker)
    half = marker.width / 2 if marker.stroked else 0.0
    return penetration(shape, corners, axes + _normals(shape)) + half


def _marker_depth_into_text(marker: Shape, line: TextLine) -> float:
    shape = _marker_outline(marker)
    half = marker.width / 2 if marker.stroked else 0.0
    return _depth_into_text(shape, _normals(shape), line) + half


def _segment_enters(line: TextLine, p: Point, q: Point, shrink: float) -> tuple[float, float] | None:
    """The part of segment p–q inside ``line``'s ink, each character's cell shrunk by
    ``shrink`` above and below (and the line at its two ends), as parameters t0 < t1 along
    the segment (the first entry to the last exit), or None."""
    (pu, pv), (qu, qv) = line.local(p), line.local(q)
    first, last = line.cells[0][0], line.cells[-1][1]
    found: tuple[float, float] | None = None
    for u0, u1, v0, v1 in line.cells:
        span = _clip(pu, pv, qu, qv, (max(u0, first + shrink), v0 + shrink),
                     (min(u1, last - shrink), v1 - shrink))
        if span:
            found = span if found is None else (min(found[0], span[0]), max(found[1], span[1]))
    return found


def _clip(pu: float, pv: float, qu: float, qv: float, lo: Point, hi: Point) -> tuple[float, float] | None:
    """Liang–Barsky: the parameters of segment (pu, pv)–(qu, qv) inside the box lo–hi."""
    if lo[0] >= hi[0] or lo[1] >= hi[1]:
        return None
    t0, t1 = 0.0, 1.0
    for start, delta, low, high in ((pu, qu - pu, lo[0], hi[0]), (pv, qv - pv, lo[1], hi[1])):
        if abs(delta) < 1e-12:
            if not low < start < high:
                return None
            continue
        a, b = (low - start) / delta, (high - start) / delta
        if a > b:
            a, b = b, a
        t0, t1 = max(t0, a), min(t1, b)
        if t0 >= t1:
            return None
    return t0, t1


def _rect_enters(rect: Box, p: Point, q: Point, shrink: float) -> bool:
    return _clip(p[0], p[1], q[0], q[1], (rect[0] + shrink, rect[1] + shrink),
                 (rect[2] - shrink, rect[3] - shrink)) is not None


def _bbox(points: Iterable[Point]) -> Box:
    xs, ys = zip(*points, strict=True)
    return min(xs), min(ys), max(xs), max(ys)


def _intersection(a: Box, b: Box) -> Box:
    box = (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))
    if box[0] > box[2] or box[1] > box[3]:  # touching only: the smaller one
        return a if _area(a) <= _area(b) else b
    return box


# ---------------------------------------------------------------------------------------------
# checks


def check_pdf(source, page_number: int = 0) -> list[Defect]:
    """Every defect on one page of the PDF at ``source`` (a path or the file's bytes)."""
    return check_figure(read_figure(source, page_number))


def check_figure(fig: Figure) -> list[Defect]:
    defects: list[Defect] = []
    defects += _truncations(fig)
    defects += _off_page(fig)
    defects += _text_over_text(fig)
    defects += _text_over_data(fig)
    return defects


# ---------------------------------------------------------------------------------------------
# readability: text sizes, the plot's share of the page, the legend's


def is_axis_title(fig: Figure, t: TextLine) -> bool:
    """An axis title: outside the plot, ending in its unit in brackets ("… [FLOP/s]")."""
    text = t.text.strip()
    return text.endswith("]") and "[" in text and not _inside(t.centre, fig.plot)


def tick_labels(fig: Figure, side: str) -> list[TextLine]:
    """The tick labels beside the plot's left edge (``"left"``) or under its bottom edge
    (``"bottom"``): short horizontal texts starting with a digit, outside the plot, level
    with it (left) or under it (bottom), nearer to it than three of their own heights."""
    x0, y0, x1, y1 = fig.plot
    out = []
    for t in fig.texts:
        text = t.text.strip()
        if not text or not text[0].isdigit() or len(text) > 16 or abs(t.direction[1]) > 1e-3:
            continue
        _bx0, by0, bx1, _by1 = t.bbox()
        cx, cy = t.centre
        beside = y0 - 1 <= cy <= y1 + 1 and bx1 <= x0 + 1 and x0 - bx1 < 3 * t.size
        under = x0 - t.size <= cx <= x1 + t.size and by0 >= y1 - 1 and by0 - y1 < 3 * t.size
        if (side == "left" and beside) or (side == "bottom" and under):
            out.append(t)
    return out


def legend_box(fig: Figure) -> Box | None:
    """The legend placed beside or below the plot: the largest plate carrying two texts or
    more that lies outside the plot rectangle (None: no legend there)."""
    boxes = [p.bbox for p in fig.by_role("plate")
             if p.owners and not _overlaps(p.bbox, fig.plot, 1.0)]
    return max(boxes, key=_area) if boxes else None


def plot_share(fig: Figure) -> float:
    """The plot rectangle's area over the page's (0 when no plot frame was found)."""
    if _same_box(fig.plot, fig.page, 1.0):
        return 0.0
    return _area(fig.plot) / _area(fig.page)


def _legend_band(fig: Figure) -> tuple[str, float]:
    """Where a legend outside the plot is (``"across"``: above or below the plot, ``"beside"``:
    left or right of it, ``""``: none) and the share of the page's height (across) or width
    (beside) its band takes."""
    box = legend_box(fig)
    if box is None:
        return "", 0.0
    page, plot = fig.page, fig.plot
    if box[1] >= plot[3] - 1.0 or box[3] <= plot[1] + 1.0:
        return "across", (box[3] - box[1]) / (page[3] - page[1])
    return "beside", (box[2] - box[0]) / (page[2] - page[0])


def legend_share(fig: Figure) -> float:
    """How much of the page a legend outside the plot takes: its height over the page's
    for a legend above or below the plot, its width over the page's for one beside it."""
    return _legend_band(fig)[1]


def title_band(fig: Figure) -> float:
    """The share of the page's height above the plot that its title takes: from the top of
    the page to the lowest horizontal text wholly above the plot (0: no title)."""
    above = [t.bbox()[3] for t in fig.texts
             if abs(t.direction[1]) < 1e-3 and t.bbox()[3] <= fig.plot[1] + 0.5]
    if not above:
        return 0.0
    return (max(above) - fig.page[1]) / (fig.page[3] - fig.page[1])


def plot_room_shares(fig: Figure) -> tuple[float, float]:
    """The plot's share of the page's area and of its width, of the page less what the
    figure's content takes besides the chart: the band a legend beside or below the plot
    takes, and the title's band over it (0 when no plot frame was found)."""
    share = plot_share(fig)
    if not share:
        return 0.0, 0.0
    where, band = _legend_band(fig)
    page, plot = fig.page, fig.plot
    width = (plot[2] - plot[0]) / (page[2] - page[0])
    if where == "beside":
        width /= 1.0 - band
        return share / ((1.0 - band) * (1.0 - title_band(fig))), width
    return share / (1.0 - band - title_band(fig)), width


def check_readability(fig: Figure, min_plot_share: float = MIN_PLOT_SHARE,
                      min_plot_width: float = MIN_PLOT_WIDTH) -> list[Defect]:
    """Defects of a figure too small to read: a text below :data:`MIN_TEXT_PT`, an axis
    title below :data:`MIN_AXIS_TITLE_PT` or smaller than :data:`AXIS_TITLE_TO_TICKS` × its
    tick labels; a plot taking less than ``min_plot_share`` of the page's area or
    ``min_plot_width`` of its width (of the page less a legend's band beside or below the
    plot), and such a legend taking more than :data:`MAX_LEGEND_SHARE` of the page."""
    out = []
    ticks = {side: [t.size for t in tick_labels(fig, side)] for side in ("left", "bottom")}
    for t in fig.texts:
        if t.size < MIN_TEXT_PT - 0.05:
            out.append(Defect(SMALL_TEXT, t.bbox(), (t.text,),
                              f"set in {t.size:.1f} pt (least {MIN_TEXT_PT:g} pt)"))
            continue
        if not is_axis_title(fig, t):
            continue
        side = "left" if abs(t.direction[1]) > 0.5 else "bottom"
        sizes = sorted(ticks[side])
        tick = sizes[len(sizes) // 2] if sizes else 0.0
        least = max(MIN_AXIS_TITLE_PT, AXIS_TITLE_TO_TICKS * tick)
        if t.size < least - 0.05:
            out.append(Defect(SMALL_TEXT, t.bbox(), (t.text,),
                              f"axis title set in {t.size:.1f} pt (least {least:.1f} pt: "
                              f"{MIN_AXIS_TITLE_PT:g} pt and {AXIS_TITLE_TO_TICKS:g} × the "
                              f"tick labels' {tick:.1f} pt)"))
    share, width = plot_room_shares(fig)
    where, band = _legend_band(fig)
    title = title_band(fig)
    less = ([f"the legend's {band:.0%}"] if where else []) + (
        [f"the title's {title:.0%}"] if title else [])
    besides = f" of the page less {' and '.join(less)}" if less else " of the page"
    if not share:
        out.append(Defect(SMALL_PLOT, fig.plot, (), "no plot frame found"))
    else:
        if share < min_plot_share:
            out.append(Defect(SMALL_PLOT, fig.plot, (), f"the plot takes {share:.0%} of the area"
                              f"{besides} (least {min_plot_share:.0%})"))
        if width < min_plot_width:
            out.append(Defect(SMALL_PLOT, fig.plot, (), f"the plot takes {width:.0%} of the "
                              f"width of the page{' less the legend' if where == 'beside' else ''}"
                              f" (least {min_plot_width:.0%})"))
    if band > MAX_LEGEND_SHARE:
        out.append(Defect(LARGE_LEGEND, legend_box(fig) or fig.plot, (),
                          f"the legend takes {band:.0%} of the page's "
                          f"{'height' if where == 'across' else 'width'} "
                          f"(most {MAX_LEGEND_SHARE:.0%})"))
    return out


def _truncations(fig: Figure) -> list[Defect]:
    out = []
    for t in fig.texts:
        if any(e in t.text for e in ELLIPSES):
            out.append(Defect(TRUNCATION, t.bbox(), (t.text,), "ends in an ellipsis"
                              if t.text.rstrip().endswith(ELLIPSES) else "contains an ellipsis"))
    if _same_box(fig.plot, fig.page, 1.0):
        return out
    for t in fig.texts:
        if not _inside(t.centre, fig.plot):
            continue
        box, tol = t.bbox(), t.tolerance()
        outside = max(fig.plot[0] - box[0], fig.plot[1] - box[1], box[2] - fig.plot[2],
                      box[3] - fig.plot[3])
        if outside > tol:
            out.append(Defect(TRUNCATION, box, (t.text,),
                              f"runs {outside:.1f} pt across the plot frame (cut by the plot clip)"))
    return out


def _off_page(fig: Figure) -> list[Defect]:
    out = []
    page = fig.page
    for t in fig.texts:
        box = t.bbox()
        beyond = {"left": page[0] - box[0], "top": page[1] - box[1], "right": box[2] - page[2],
                  "bottom": box[3] - page[3]}
        side, amount = max(beyond.items(), key=lambda kv: kv[1])
        if amount > MIN_TOLERANCE:
            out.append(Defect(OFF_PAGE, box, (t.text,), f"{amount:.1f} pt off the {side} edge"))
    return out


def _text_over_text(fig: Figure) -> list[Defect]:
    out = []
    texts = fig.texts
    boxes = [t.bbox() for t in texts]
    for i, a in enumerate(texts):
        for j in range(i + 1, len(texts)):
            b = texts[j]
            if not _overlaps(boxes[i], boxes[j]):
                continue
            depth = _text_depth(a, b)
            tol = min(a.tolerance(), b.tolerance())
            if depth > tol:
                out.append(Defect(TEXT_OVER_TEXT, _intersection(boxes[i], boxes[j]), (a.text, b.text),
                                  f"characters overlap by {depth:.1f} pt"))
    # a text on another label's plate (the legend box, a label background): painted over
    # when the plate came later, drawn over it (reading as part of it) when earlier
    for plate in fig.by_role("plate"):
        corners = _box_corners(plate.bbox)
        names = tuple(o.text for o in plate.owners) or ("(empty box)",)
        for t in texts:
            if t in plate.owners:
                continue
            box = t.bbox()
            if not _overlaps(box, plate.bbox):
                continue
            depth = _depth_into_text(corners, [(1.0, 0.0), (0.0, 1.0)], t)
            if depth > t.tolerance():
                how = "is painted over it" if t.seqno < plate.seqno else "is under it"
                out.append(Defect(TEXT_OVER_TEXT, _intersection(box, plate.bbox), (t.text, *names),
                                  f"{_plate_name(names)} {how} ({depth:.1f} pt deep)"))
    return out


def _text_over_data(fig: Figure) -> list[Defect]:
    out = []
    data = fig.by_role("data")
    markers = fig.by_role("marker")
    for t in fig.texts:
        tbox, tol = t.bbox(), t.tolerance()
        for s in data:
            half = s.width / 2 if s.stroked else 0.0
            if not _overlaps(tbox, s.bbox, -half - 0.01):
                continue
            hit = None
            for p, q in s.segments():
                hit = _segment_enters(t, p, q, tol - half)
                if hit and (hit[1] - hit[0]) * math.dist(p, q) >= tol:  # not a corner graze
                    a = (p[0] + (q[0] - p[0]) * hit[0], p[1] + (q[1] - p[1]) * hit[0])
                    b = (p[0] + (q[0] - p[0]) * hit[1], p[1] + (q[1] - p[1]) * hit[1])
                    out.append(Defect(TEXT_OVER_DATA, _bbox([a, b]), (t.text,),
                                      f"crossed by {s.describe()}"))
                    break
        hits = []  # all markers under one text make one defect
        for m in markers:
            if not _overlaps(tbox, m.bbox):
                continue
            depth = _marker_depth_into_text(m, t)
            if depth > tol:
                hits.append((m, depth))
        if len(hits) == 1:
            m, depth = hits[0]
            out.append(Defect(TEXT_OVER_DATA, _intersection(tbox, m.bbox), (t.text,),
                              f"overlaps {m.describe()} by {depth:.1f} pt"))
        elif hits:
            colours = ", ".join(sorted({_hex(m.fill or m.colour) for m, _ in hits}))
            box = _bbox([c for m, _ in hits for c in _box_corners(_intersection(tbox, m.bbox))])
            out.append(Defect(TEXT_OVER_DATA, box, (t.text,),
                              f"overlaps {len(hits)} markers ({colours}) by up to "
                              f"{max(d for _, d in hits):.1f} pt"))
    # plates painted over data drawn before them: one defect per plate
    diagonal = math.hypot(fig.page[2] - fig.page[0], fig.page[3] - fig.page[1])
    for plate in fig.by_role("plate"):
        names = tuple(o.text for o in plate.owners)
        if not names:
            continue
        tol = min(o.tolerance() for o in plate.owners)
        hidden: list[Shape] = []
        for s in data + markers:
            if s.seqno > plate.seqno or not _overlaps(plate.bbox, s.bbox):
                continue
            if _is_leader(s, plate.bbox, tol, diagonal):
                continue
            half = s.width / 2 if s.stroked else 0.0
            if s.role == "marker":
                depth = _marker_depth(s, _box_corners(plate.bbox), [(1.0, 0.0), (0.0, 1.0)])
                if depth > tol:
                    hidden.append(s)
            elif any(_rect_enters(plate.bbox, p, q, tol - half) for p, q in s.segments()):
                hidden.append(s)
        if hidden:
            what = _plate_name(names)
            lines = [h for h in hidden if h.role == "data"]
            marks = [h for h in hidden if h.role == "marker"]
            parts = []
            if lines:
                colours = ", ".join(sorted({_hex(h.colour if h.stroked else h.fill) for h in lines}))
                parts.append(f"{len(lines)} data line{'s' * (len(lines) > 1)} ({colours})")
            if marks:
                parts.append(f"{len(marks)} marker{'s' * (len(marks) > 1)}")
            box = _bbox([c for h in hidden for c in _box_corners(_intersection(plate.bbox, h.bbox))])
            out.append(Defect(TEXT_OVER_DATA, box, names,
                              f"{what} is painted over {' and '.join(parts)}"))
    return out


def _plate_name(names: Sequence[str]) -> str:
    return f"the box behind {len(names)} texts" if len(names) > 1 else f"the background of {names[0]!r}"


def _is_leader(s: Shape, plate: Box, tol: float, diagonal: float) -> bool:
    """A short open line with one end at (or inside) the plate: the leader to its label."""
    if s.filled or s.closed or len(s.polylines) != 1 or len(s.polylines[0]) > 4:
        return False
    line = s.polylines[0]
    length = sum(math.dist(p, q) for p, q in itertools.pairwise(line))
    if length > LEADER_SHARE * diagonal:
        return False
    return _inside(line[0], plate, tol) or _inside(line[-1], plate, tol)


# ---------------------------------------------------------------------------------------------
# attribution: each text names what a reader pairs it with

#: without a leader, every other mark is at least this many times as far from a text's box
#: as the nearest of its own
ATTRIBUTION_RATIO = 1.25
#: and the nearest of its own lies at most this many text heights from its box
ATTRIBUTION_REACH = 1.6
#: a roof's value lies at most this many text heights from its line
ATTRIBUTION_LINE_REACH = 2.0


@dataclass(frozen=True)
class Mark:
    """Something drawn that a text may name: a marker's box (``kind`` ``"marker"``) or a
    line's segment ``(x0, y0, x1, y1)`` (``"line"``), and whose it is (several owners where
    the drawing cannot tell them apart: one colour for two operations)."""

    kind: str
    geometry: Box
    owners: frozenset


@dataclass(frozen=True)
class NamingText:
    """A text that names marks of ``kind`` owned by any of ``owners``: its box, and its
    leader line's two ends (None: no leader); ``reach`` the farthest its box may be from
    them without a leader."""

    text: str
    box: Box
    owners: frozenset
    kind: str = "marker"
    leader: tuple[Point, Point] | None = None
    reach: float = math.inf
    #: how far a leader's ends may stop short of the text and of the mark (a leader leaves
    #: its marker a pixel or two out)
    slack: float = 1.0
    #: a mark drawn over one of its own is at its place, no other (a ridge's diamond under
    #: an operation's point: the text says which ridge)
    over_own: bool = False


def _gap_box(a: Box, b: Box) -> float:
    dx = max(0.0, b[0] - a[2], a[0] - b[2])
    dy = max(0.0, b[1] - a[3], a[1] - b[3])
    return math.hypot(dx, dy)


def _gap_point_segment(p: Point, s: Box) -> float:
    (x0, y0, x1, y1), (px, py) = s, p
    dx, dy = x1 - x0, y1 - y0
    t = 0.0 if dx == dy == 0 else max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy)
                                                / (dx * dx + dy * dy)))
    return math.hypot(x0 + t * dx - px, y0 + t * dy - py)


def _gap(box: Box, mark: Mark) -> float:
    """The gap between a box and a mark (a line's segment crossing the box: 0)."""
    if mark.kind != "line":
        return _gap_box(box, mark.geometry)
    x0, y0, x1, y1 = mark.geometry
    if _clip(x0, y0, x1, y1, (box[0], box[1]), (box[2], box[3])) is not None:
        return 0.0
    corners = [_gap_point_segment(c, mark.geometry) for c in _box_corners(box)]
    return min(corners + [_gap_box(box, (x0, y0, x0, y0)), _gap_box(box, (x1, y1, x1, y1))])


def check_attribution(texts: Sequence[NamingText], marks: Sequence[Mark]) -> list[Defect]:
    """Texts a reader would pair with something else than what they name (see the module
    docstring, ``misattributed``). The middle of a text is compared with the marks within
    its ``reach`` of its box (one farther off is not read with it)."""
    out = []
    for t in texts:
        same = [m for m in marks if m.kind == t.kind]
        own = [m for m in same if m.owners & t.owners]
        # (a mark drawn where one of its own is, a sweep's end on its operation's point,
        # cannot be told from it)
        others = [m for m in same if not m.owners & t.owners
                  and not any(_same_spot(m, o) or (t.over_own and _overlaps(m.geometry,
                                                                            o.geometry))
                              for o in own)]
        if not own:
            out.append(Defect(MISATTRIBUTED, t.box, (t.text,), "names nothing drawn"))
            continue
        tolerance = t.slack + 1e-9  # (a leader that stops exactly that short)
        if t.leader is not None:
            a, b = t.leader
            if _gap_box(t.box, (*a, *a)) > _gap_box(t.box, (*b, *b)):
                a, b = b, a  # (a: the end at the text, b: at the mark)
            at_text = _gap_box(t.box, (*a, *a)) <= tolerance
            at_mark = min(_gap(( *b, *b), m) for m in own) <= tolerance
            if not (at_text and at_mark):
                out.append(Defect(MISATTRIBUTED, t.box, (t.text,),
                                  "its leader line joins it to no mark of its own"))
            elif t.kind == "line" and (on := [m for m in marks if m.kind == "marker"
                                              and _gap((*b, *b), m) <= 1.0]):
                # (a roof's value led to its line where a point sits reads as that point's)
                out.append(Defect(MISATTRIBUTED, t.box, (t.text,),
                                  f"its leader line ends on a marker at {_where(on[0])}"))
            continue
        mine = min(_gap(t.box, m) for m in own)
        if mine > t.reach:
            out.append(Defect(MISATTRIBUTED, t.box, (t.text,),
                              f"lies {mine:.1f} from its own mark with no leader line "
                              f"(most {t.reach:.1f})"))
            continue
        if not others:
            continue
        nearest = min(others, key=lambda m: _gap(t.box, m))
        theirs = _gap(t.box, nearest)
        if theirs < ATTRIBUTION_RATIO * mine:
            out.append(Defect(MISATTRIBUTED, t.box, (t.text,),
                              f"{theirs:.1f} from another mark at {_where(nearest)}, "
                              f"{mine:.1f} from its own (no leader line)"))
            continue
        cx, cy = (t.box[0] + t.box[2]) / 2, (t.box[1] + t.box[3]) / 2
        middle = (cx, cy, cx, cy)
        mine_c = min(_gap(middle, m) for m in own)
        close = [m for m in others if _gap(t.box, m) <= t.reach]
        if not close:
            continue
        nearest_c = min(close, key=lambda m: _gap(middle, m))
        if _gap(middle, nearest_c) + tolerance < mine_c:
            out.append(Defect(MISATTRIBUTED, t.box, (t.text,),
                              f"its middle is nearer another mark at {_where(nearest_c)} "
                              f"than its own (no leader line)"))
    return out


def _same_spot(a: Mark, b: Mark) -> bool:
    """Two markers drawn at one place: their centres a quarter of the smaller one's size
    apart or less, each way."""
    if a.kind != "marker" or b.kind != "marker":
        return False
    ga, gb = a.geometry, b.geometry
    near = 0.25 * min(ga[2] - ga[0], gb[2] - gb[0])
    return (abs((ga[0] + ga[2]) - (gb[0] + gb[2])) / 2 <= near + 0.1
            and abs((ga[1] + ga[3]) - (gb[1] + gb[3])) / 2 <= near + 0.1)


def _where(mark: Mark) -> str:
    x0, y0, x1, y1 = mark.geometry
    return f"({(x0 + x1) / 2:.1f}, {(y0 + y1) / 2:.1f})"


#: the text items' own margin around their text (see workbench.ui.chart.labels)
_ITEM_MARGIN = 3.0
#: a leader stops this many device pixels short of its marker, or less
_LEADER_SLACK = 2.5


def canvas_attribution(canvas) -> tuple[list[NamingText], list[Mark]]:
    """What a chart canvas shows, in its device pixels: the placed names and tags of its
    operations (owned by the operations they name), its ridge, sweep and measured texts
    (owned by their mark), the values of its roofs (owned by their line); and the marks
    drawn: each operation's markers, each ridge's and sweep end's, each sweep's samples (its
    operation's), each measured point, and each roof's line. A mark whose middle lies
    outside the plot is not drawn (the view clips it): a text that names it names nothing a
    reader sees."""
    labels = canvas.labels
    layout = labels.text_layout
    ax, bx, ay, by = canvas.view_to_scene()
    theme = canvas.theme
    plot = canvas.view_box.sceneBoundingRect()

    def px(x: float, y: float) -> Point:
        return _to_view(x) * ax + bx, _to_view(y) * ay + by

    def spot(x: float, y: float, size: float, *owners) -> Mark:
        cx, cy = px(x, y)
        half = size / 2
        return Mark("marker", (cx - half, cy - half, cx + half, cy + half),
                    frozenset(o for o in owners if o is not None))

    marks = [spot(m.x, m.y, theme.point_size, key[0])
             for key, m in canvas.points.marks.items()
             if math.isfinite(m.x) and math.isfinite(m.y) and m.x > 0 and m.y > 0]
    for i, (ridge, _label) in enumerate(canvas.roofs.ridges):
        # (a ridge's text names its machine: it is told from another ridge by its words)
        marks.append(spot(ridge.x, ridge.y, theme.ridge_size, ("ridge", i), "ridge"))
    for i, (path, end, _label) in enumerate(canvas.overlays.sweep_texts):
        marks.append(spot(path.xs[end], path.ys[end], theme.point_size * 0.55, ("sweep", i),
                          path.op_id))
    for path, _curve in canvas.overlays.sweep_paths_drawn:
        # (a sweep's samples, its operation's: "m = 4096" over the dot of m = 1024 reads
        # as that dot's value)
        if path.dots:
            marks += [spot(x, y, theme.point_size * 0.55, path.op_id)
                      for x, y in zip(path.xs, path.ys, strict=True)]
    for i, (mark, _curve, _label) in enumerate(canvas.overlays.measured_texts):
        # a measured point and its prediction are its operation's too
        marks.append(spot(mark.x, mark.y, theme.point_size * 1.3, ("measured", i), mark.op_id))
        marks.append(spot(mark.px, mark.py, theme.point_size * 0.9, ("measured", i),
                          mark.op_id))
    roof_index = {}
    for i, (roof, curve) in enumerate(canvas.roofs.roofs):
        roof_index[id(roof)] = i
        xs, ys = curve.getData()
        if not curve.isVisible() or xs is None:
            continue
        pts = [((x - 0.0) * ax + bx, y * ay + by) for x, y in zip(xs, ys, strict=True)]
        # (of each line, the part inside the plot: the view clips the rest, and a text by a
        # line just over the plot's edge names nothing a reader sees)
        lo, hi = (plot.left() - 0.5, plot.top() - 0.5), (plot.right() + 0.5, plot.bottom() + 0.5)
        for p, q in itertools.pairwise(pts):
            if not all(math.isfinite(v) for v in (*p, *q)):
                continue
            inside = _clip(*p, *q, lo, hi)
            if inside is not None:
                (t0, t1), (dx, dy) = inside, (q[0] - p[0], q[1] - p[1])
                marks.append(Mark("line", (p[0] + t0 * dx, p[1] + t0 * dy, p[0] + t1 * dx,
                                           p[1] + t1 * dy), frozenset([("roof", i)])))
    marks = [m for m in marks if m.kind != "marker" or plot.contains(
        (m.geometry[0] + m.geometry[2]) / 2, (m.geometry[1] + m.geometry[3]) / 2)]
    texts = []
    if layout is None:
        return texts, marks
    # (a leader counts where it is drawn: one the layout placed but nothing drew joins the
    # text to nothing a reader sees)
    drawn = [tuple(round(v, 1) for v in line) for line in canvas.leader_lines()]
    for key, placement in layout.placed.items():
        entry = labels.entry(key)
        if entry is None:
            continue
        label = entry[0]
        if not label.isVisible():
            continue
        r = label.textItem.mapRectToScene(label.textItem.boundingRect())
        m = _ITEM_MARGIN
        box = (r.left() + m, r.top() + m, r.right() - m, r.bottom() - m)
        height = box[3] - box[1]
        kind, what = key[0], key[1]
        if kind == "point":
            owners = frozenset(canvas.key.crowd_of(what))
        elif kind == "ridge":
            owners = frozenset([("ridge", what), "ridge"])
        elif kind == "sweep":
            owners = frozenset([("sweep", what)])
        elif kind == "measured":
            owners = frozenset([("measured", what)])
        leader = None
        if (placement.leader is not None
                and tuple(round(v, 1) for v in placement.leader) in drawn):
            x0, y0, x1, y1 = placement.leader
            leader = ((x0, y0), (x1, y1))
        if kind == "roof":
            roof = canvas.roofs.roof_texts[what][0]
            # (machines' roofs drawn as one line: a text beside it names each)
            same = frozenset(("roof", roof_index.get(id(r))) for r in canvas.roofs.same_line(roof))
            texts.append(NamingText(label.toPlainText(), box, same, "line",
                                    leader, ATTRIBUTION_LINE_REACH * height,
                                    _LEADER_SLACK + 1.5))  # (a leader stops short of its line)
            continue
        if kind not in ("point", "ridge", "sweep", "measured"):
            continue  # (titles of regions, pairs' figures, crossings: said by their line)
        texts.append(NamingText(label.toPlainText(), box, owners, "marker", leader,
                                ATTRIBUTION_REACH * height, _LEADER_SLACK, kind != "point"))
    return texts, marks


def leader_at(box: Box, segments: Sequence[Sequence[Point]], reach: float,
              others: Sequence[Box] = ()) -> tuple[Point, Point] | None:
    """The leader line of a text whose box is ``box``, of the straight ``segments`` on the
    page: the one with an end nearest the box, within ``reach`` of it, as ``(that end, the
    other)`` (None: none ends there). Nearest, not first: the end of another line (a
    measured point's gap bar) can lie a few points from a text whose own leader ends at
    its edge. A line with an end nearer one of the ``others`` (the other texts' boxes) is
    theirs: a leader that ends at a marker a few points from this text starts at its own
    text."""
    best, gap = None, math.inf
    for a, b in segments:
        near, far = sorted((a, b), key=lambda q: _gap_box(box, (*q, *q)))
        d = _gap_box(box, (*near, *near))
        if d <= reach and d < gap and not any(_gap_box(o, (*q, *q)) < d
                                              for o in others for q in (a, b)):
            best, gap = (near, far), d
    return best


def _to_view(value: float) -> float:
    """A data value on the chart's log axes."""
    return math.log10(value) if value > 0 else -math.inf


def pdf_attribution(fig: Figure, canvas) -> tuple[list[NamingText], list[Mark]]:
    """What an exported figure shows, read from the file (``fig``, :func:`read_figure`),
    with the canvas it was drawn from telling which operations each name or tag stands for
    and whose each marker is: the names and tags of the operations as the page has them
    (each found by its words, nearest where the canvas placed it), any leader line from
    them, and the markers on the page, each owned as the canvas's marker drawn there."""
    # the page is the canvas's view, scaled
    view = canvas.plot_widget
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    sx = (fig.page[2] - fig.page[0]) / shown.width()
    sy = (fig.page[3] - fig.page[1]) / shown.height()

    def page(x: float, y: float) -> Point:
        return fig.page[0] + (x - shown.left()) * sx, fig.page[1] + (y - shown.top()) * sy

    # the markers on the page, each the canvas's marker drawn there (of about its size,
    # centred within a quarter of it): its owners (not a link's arrow head, say)
    drawn = []
    for m in canvas_attribution(canvas)[1]:
        if m.kind == "marker":
            g = m.geometry
            (x0, y0), (x1, y1) = page(g[0], g[1]), page(g[2], g[3])
            drawn.append(((x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0), m.owners))
    marks = []
    for m in fig.by_role("marker"):
        g = m.bbox
        cx, cy, side = (g[0] + g[2]) / 2, (g[1] + g[3]) / 2, max(g[2] - g[0], g[3] - g[1])
        owners = frozenset(o for x, y, size, own in drawn
                           if abs(x - cx) <= 0.25 * size + 0.5 and abs(y - cy) <= 0.25 * size + 0.5
                           and 0.7 * size <= side <= 1.5 * size + 1.0 for o in own)
        if owners:
            marks.append(Mark("marker", g, owners))
    lines = [s for s in fig.shapes if s.role in ("data", "outside") and not s.closed
             and len(s.polylines) == 1 and len(s.polylines[0]) == 2]
    texts = []
    read = []  # (each placed text as the page has it: its words, box, size and owners)
    layout = canvas.labels.text_layout
    for key, placement in (layout.placed.items() if layout is not None else ()):
        if key[0] != "point":
            continue
        label = canvas.labels.entry(key)[0]
        if not label.isVisible():
            continue
        words = [w for w in label.toPlainText().split("\n") if w.strip()]
        r = placement.rect
        (left, top), (right, bottom) = page(r[0], r[1]), page(r[2], r[3])
        found = []
        for word in words:
            same = [t for t in fig.texts if t.text.strip() == word.strip()
                    and _inside(t.centre, fig.plot)]
            if same:
                found.append(min(same, key=lambda t: _gap_box(t.bbox(), (left, top, right,
                                                                        bottom))))
        if not found:
            continue
        box = _bbox([c for t in found for c in _box_corners(t.bbox())])
        read.append((label.toPlainText(), box, max(t.size for t in found),
                     frozenset(canvas.key.crowd_of(key[1]))))
    segments = [s.polylines[0] for s in lines]
    for i, (text, box, size, owners) in enumerate(read):
        reach_end = 0.6 * size  # (the leader ends at the text's box, the ink a little inside)
        others = [r[1] for j, r in enumerate(read) if j != i]
        leader = leader_at(box, segments, reach_end, others)
        texts.append(NamingText(text, box, owners, "marker", leader,
                                ATTRIBUTION_REACH * size + reach_end,
                                max(_LEADER_SLACK * max(sx, sy), reach_end)))
    return texts, marks


# ---------------------------------------------------------------------------------------------
# reporting


def count_by_kind(defects: Iterable[Defect]) -> dict[str, int]:
    counts = dict.fromkeys(KINDS, 0)
    for d in defects:
        counts[d.kind] += 1
    return counts


def format_defects(defects: Sequence[Defect], name: str = "") -> str:
    head = f"{name}: " if name else ""
    counts = ", ".join(f"{k} {v}" for k, v in count_by_kind(defects).items())
    lines = [f"{head}{len(defects)} defects ({counts})"]
    lines += [f"  - {d}" for d in defects]
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    worst = 0
    for path in argv:
        fig = read_figure(path)
        defects = check_figure(fig) + check_readability(fig)
        print(format_defects(defects, os.path.basename(path)))
        worst = max(worst, 1 if defects else 0)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
