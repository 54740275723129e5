"""A figure as one self-contained HTML page: the SVG export, inline, with its marks named
(:func:`~workbench.ui.figures.svg_portable.name_marks`), a table of the Results rows, the
numbers and formula lines of every mark as JSON, the session (a "download session YAML"
link) and a short script of our own (``html_figure.js``) for tooltips, hiding and isolating
machines, operations and memory levels, sorting the table, a "top N by time" cut of the
measured kernels, and zoom and pan.

Nothing is fetched: no network, no CDN; a Content-Security-Policy in the page lets only its
own script and style run (by their hashes). Without JavaScript the figure and the table still
show. Every text from the session is escaped where it lands: HTML text and attributes
(``html.escape``), SVG text (the XML writer), and the JSON block (``<``, ``>``, ``&`` and the
line separators U+2028/U+2029 as ``\\uXXXX``), so a name such as ``</script><script>…`` is
shown as text and runs nothing.

The numbers are the engine's: the evaluated pair of each point (what ``analyze`` prints), its
tooltip text (:func:`~workbench.model.chart.scene.point_tooltip`, the chart's), the judged
measurements (:func:`~workbench.model.measured_session.judge_session`) and the machine's
lines of the operation's derivation (:func:`~workbench.document.derivation.machine_sections`,
the editor's).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import json
import math
from collections import Counter
from pathlib import Path

from workbench.model.chart.profiled_kernels import kernel_row_name
from workbench.model.rules import FORMULAS
from workbench.model.units import format_quantity

__all__ = ["figure_page", "page_data", "script_json", "compact_svg", "FIELDS", "COLUMNS"]

_HERE = Path(__file__).resolve().parent
_SCRIPT = "html_figure.js"
_STYLE = "html_figure.css"

#: what each row of ``points`` and ``measured`` holds, in order (texts as indices into
#: ``strings``): the operation's and machine's ids, the numbers of the Results table, the
#: tooltip's lines and the lines of the derivation
FIELDS = ("op", "hw", "operation", "machine", "level", "flops", "bytes", "intensity",
          "attainable", "bound", "t_lower", "t_predicted", "measured", "verdict",
          "verdict_order", "tip", "lines")

#: the order the table sorts verdicts in (``verdict_order``: a row's place in it), not
#: their texts' alphabetical one: how the measured time met its prediction, from faster
#: than predicted (to re-measure) through as predicted to a likely bug, the overhead-bound
#: (which meet their prediction, launch outweighing the work) right after the kernels as
#: predicted; within a verdict, by measured time / T_predicted, so that sorted the other
#: way the kernels furthest below their prediction come first
_VERDICT_ORDER = ("re-measure", "as-predicted", "overhead-bound", "below-prediction",
                  "likely-bug")

#: the table's columns: (heading, key of a row's numbers, unit for format_quantity or "")
COLUMNS = (
    ("Operation", "operation", ""), ("Machine", "machine", ""), ("FLOPs", "flops", "flops"),
    ("Bytes", "bytes", "bytes"), ("Intensity", "intensity", "intensity"),
    ("Attainable", "attainable", "flop_rate"), ("Bound", "bound", ""),
    ("T_lower", "t_lower", "time"), ("T_predicted", "t_predicted", "time"),
    ("Measured", "measured", "time"), ("Verdict", "verdict", ""),
)


def figure_page(session, svg, scene, theme: str = "light", *, document=None,
                results=None) -> bytes:
    """The page (UTF-8) of ``session``'s figure: ``svg`` is its SVG with the marks named
    (the file's bytes, or its element tree, which the page rewrites) and ``scene`` the scene
    it draws (:func:`~workbench.ui.figures.export.figure_svg_sized` with a ``drawn`` dict
    gives both, and the figure's ``document`` and ``results``: see :func:`page_data`)."""
    data = page_data(session, scene, document=document, results=results)
    from workbench.ui.chart.theme import get_theme

    drawn = get_theme(theme)
    for entry in data["operations"]:  # (the key's dots in the colours the chart draws them)
        entry["color"] = drawn.point_color(entry["color"])
    if isinstance(svg, bytes):
        svg = svg.decode("utf-8")
    return _page(session, svg, data, theme).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# the numbers


def page_data(session, scene, *, document=None, results=None) -> dict:
    """Everything the page says of each mark of ``scene`` (the scene the figure draws), as
    JSON-ready data: ``machines``, ``operations``, ``levels``, ``points`` (by ``"op:hw"``),
    ``measured`` (by ``"measurement:hw"``), ``roofs`` and ``ridges`` (by the attributes the
    SVG names them with). Their text lines (``tip``, ``lines``) are indices into
    ``strings``. ``document`` and ``results`` (its :class:`ResultCache`), when given, hold
    the session the scene was built from, with its pairs already evaluated: the derivations
    are read from them instead of from a copy of ``session`` evaluated again."""
    from workbench.document import Document, ResultCache
    from workbench.document.derivation import NBSP, machine_sections
    from workbench.model.measured_session import judge_session

    if document is None or results is None:
        # (a document gives colours to the session it holds: a copy)
        document = Document(copy.deepcopy(session))
        results = ResultCache(document)
    session = document.session
    judged = judge_session(session) if session.measurements else []
    index_of = {id(m): i for i, m in enumerate(session.measurements)}
    by_point: dict[tuple[int, int], list] = {}
    judgement_of: dict[str, object] = {}
    for point in judged:
        if point.judgement is None or point.hardware is None:
            continue
        key = f"{index_of[id(point.measurement)]}:{point.hardware.id}"
        judgement_of[key] = point.judgement
        if point.operation is not None:
            by_point.setdefault((point.operation.id, point.hardware.id), []).append(
                point.judgement)

    def q(value, unit: str) -> str:
        return format_quantity(float(value), unit) if _finite(value) else "—"

    derivations: dict[int, dict[int, list[str]]] = {}

    def lines_of(op_id: int, hw_id: int) -> list[str]:
        if op_id not in derivations:
            derivations[op_id] = {
                s.hw_id: [f"{label}: {value}".replace(NBSP, " ") for label, value in s.rows]
                for s in machine_sections(document, results, op_id)}
        return derivations[op_id].get(hw_id, [])

    # each judged row's place among them in the verdicts' order (see _VERDICT_ORDER)
    ranked: list[tuple[int, float, int, str]] = []

    def rank(key: str, judgement) -> None:
        if judgement is None:
            return
        ratio = judgement.vs_predicted
        ranked.append((_VERDICT_ORDER.index(judgement.verdict)
                       if judgement.verdict in _VERDICT_ORDER else len(_VERDICT_ORDER),
                       ratio if ratio is not None and _finite(ratio) else math.inf,
                       len(ranked), key))

    points = {}
    for p in scene.points:
        r = p.result
        mine = by_point.get((p.op_id, p.hw_id), [])
        tip = p.tooltip.split("\n")
        tip[2:2] = [f"FLOPs: {q(r.flops, 'flops')}", f"Bytes: {q(r.bytes, 'bytes')}"]
        for j in mine:
            tip.append(f"Measured: {q(j.measured_time_s, 'time')} ({_percent(j.fraction)} of "
                       f"the predicted ceiling): {j.verdict_label}")
        points[f"{p.op_id}:{p.hw_id}"] = (
            p.op_id, p.hw_id, p.label, p.machine, r.level, r.flops, r.bytes, r.intensity,
            r.attainable_flops, r.bound, r.t_lower_s, r.t_predicted_s,
            mine[0].measured_time_s if mine else None, mine[0].verdict_label if mine else None,
            None, tip, lines_of(p.op_id, p.hw_id))
        rank(f"pt {p.op_id}:{p.hw_id}", mine[0] if mine else None)
    measured = {}
    for m in scene.measured:
        key = f"{m.index}:{m.hw_id}"
        j = judgement_of.get(key)
        measured[key] = (
            # (the roof's attainable at its intensity; what it achieved is in its tooltip)
            m.op_id, m.hw_id, m.name, m.machine, None, j.flops if j else None,
            j.bytes if j else None, m.x, j.predicted_attainable_flops if j else None,
            j.predicted_bound if j else None,
            j.predicted_time_s if j else None, j.t_predicted_s if j else None,
            j.measured_time_s if j else None, m.verdict_label, None, m.tooltip.split("\n"),
            [])
        rank(f"ms {key}", j)
    order = FIELDS.index("verdict_order")
    for place, (*_, key) in enumerate(sorted(ranked)):
        table = points if key.startswith("pt ") else measured
        row = table[key[3:]]
        table[key[3:]] = (*row[:order], place, *row[order + 1:])
    roofs, ridges = _roofs_and_ridges(scene, q)
    # each text once (a machine's lines and a file's notes recur on every point): the rows'
    # texts and lines are indices into "strings"
    strings: dict[str, int] = {}

    def ref(text):
        return None if text is None else strings.setdefault(text, len(strings))

    def row(values) -> list:
        *numbers, tip, lines = values
        return [ref(v) if isinstance(v, str) else v if _finite(v) or v is None else None
                for v in numbers] + [
            [ref(line) for line in tip], [ref(line) for line in lines]]

    for entry in [*roofs, *ridges]:
        entry["tip"] = [ref(line) for line in entry["tip"]]
    colors = {p.op_id: p.color for p in scene.points}
    operations = [{"id": e.id, "name": e.operation.name, "color": colors[e.id]}
                  for e in session.operations if e.id in colors]
    levels = sorted({p[4] for p in points.values() if p[4]}
                    | {r["level"] for r in roofs if r["level"]})
    return {"title": session.title, "machines": [{"id": m.hw_id, "name": m.name}
                                                 for m in scene.machines],
            "operations": operations, "levels": levels, "fields": list(FIELDS),
            "points": {k: row(v) for k, v in points.items()},
            "measured": {k: row(v) for k, v in measured.items()},
            # (a figure's tag of a measured kernel, "K3", shown before its name in the table,
            # and the name its key gives it)
            "tags": {f"{m.index}:{m.hw_id}": m.tag for m in scene.measured if m.tag},
            "keyed": dict(e.text.split(" — ", 1) for e in scene.legend
                          if e.kind == "key" and " — " in e.text),
            "roofs": roofs, "ridges": ridges, "strings": list(strings)}


def _roofs_and_ridges(scene, q) -> tuple[list[dict], list[dict]]:
    """What the page says of each roof and ridge of ``scene`` (``q`` formats a quantity)."""
    machines = {m.hw_id: m for m in scene.machines}
    roofs = []
    for roof in scene.roofs:
        kind = f"derated {roof.kind}" if roof.derated else roof.kind
        machine = machines[roof.hw_id].name if roof.hw_id in machines else ""
        unit = "flop_rate" if roof.kind == "compute" else "bandwidth"
        what = "peak" if roof.kind == "compute" else "bandwidth"
        formula = ("attainable = peak" if roof.kind == "compute"
                   else "attainable = I × bandwidth")
        lines = [f"{machine}: {roof.name} {kind} roof",
                 f"{what}: {q(roof.value, unit)}" + (" (derated by the machine's efficiency)"
                                                     if roof.derated else ""),
                 formula]
        roofs.append({"hw": roof.hw_id, "kind": kind, "name": roof.name,
                      "level": None if roof.kind == "compute" else roof.name, "tip": lines})
    ridges = []
    for ridge in scene.ridges:
        m = machines.get(ridge.hw_id)
        lines = [f"{m.name if m else ''}: {ridge.label}"]
        if m is not None:
            lines.append(f"{FORMULAS['ridge']} = {q(ridge.y, 'flop_rate')} / "
                         f"{q(m.bandwidth, 'bandwidth')} ({m.main_memory}) = "
                         f"{q(ridge.x, 'intensity')}")
        ridges.append({"hw": ridge.hw_id, "precision": ridge.precision,
                       "level": m.main_memory if m else None, "tip": lines})
    return roofs, ridges


def _finite(value) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _percent(value: float) -> str:
    return f"{value * 100:.3g} %"


# ---------------------------------------------------------------------------------------------
# the page


def script_json(value) -> str:
    """``value`` as JSON safe inside ``<script type="application/json">``: no ``<``, ``>``
    or ``&`` (no ``</script>`` nor ``<!--`` can end or change the block) and no U+2028 or
    U+2029 (line ends to older JavaScript parsers). ValueError for a number that is not
    finite (JSON has none)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def _cell(value, unit: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "<td>—"
    if unit:
        return f"<td>{html.escape(format_quantity(float(value), unit))}"
    return f"<td>{html.escape(str(value))}"


def _rows(data: dict) -> str:
    """The Results table's rows (the page sorts them by the numbers of the JSON block).
    A cell's end tag is left out, as HTML allows: a thousand operations on three machines
    are 33 000 cells."""
    strings = data["strings"]
    columns = [(FIELDS.index(name), unit) for _, name, unit in COLUMNS]
    # each cell's text once: an operation's FLOPs, bytes and intensity, a machine's name and
    # the bounds recur on every row of it
    made: dict[tuple, str] = {}
    out = []
    tags, keyed = data.get("tags", {}), data.get("keyed", {})
    named = FIELDS.index("operation")
    for attr, table in (("data-pt", data["points"]), ("data-ms", data["measured"])):
        for key, row in table.items():
            cells = []
            for index, unit in columns:
                value = row[index]
                if not unit and value is not None:
                    value = strings[value]
                if index == named and attr == "data-ms" and isinstance(value, str):
                    # a profiled kernel's C++ signature as the figure's key and the app's
                    # Measurements table name it, with the figure's tag by its marker; the
                    # whole name where the pointer rests
                    tag = tags.get(key)
                    short = keyed.get(tag) or kernel_row_name(value)
                    tagged = f"{tag} — {short}" if tag else short
                    cells.append(_cell(tagged, unit) if short == value else
                                 f'<td title="{html.escape(value)}">{html.escape(tagged)}')
                    continue
                known = (type(value), value, unit)
                cell = made.get(known)
                if cell is None:
                    cell = made[known] = _cell(value, unit)
                cells.append(cell)
            out.append(f'<tr {attr}="{html.escape(key)}">{"".join(cells)}</tr>')
    return "\n".join(out)


#: the SVG properties a shape takes from its group, and their initial values
_INHERITED = {"fill": "black", "fill-opacity": "1", "fill-rule": "nonzero", "stroke": "none",
              "stroke-opacity": "1", "stroke-width": "1", "stroke-linecap": "butt",
              "stroke-linejoin": "miter", "stroke-dasharray": "none",
              "stroke-dashoffset": "0", "font-family": None, "font-size": None,
              "font-weight": None, "font-style": None}
_FONT = ("font-family", "font-size", "font-weight", "font-style")


def compact_svg(svg) -> str:
    """The figure's SVG for the page, drawn the same with fewer bytes: no XML declaration
    (no place for it inside HTML); no property an element would take from its group anyway;
    no font on a group that holds no text; the font most texts are in said once, by the
    figure; one group for neighbouring groups of the same properties; no blank lines.
    ``svg`` is the SVG's text or its element tree (rewritten)."""
    import xml.etree.ElementTree as ET

    ns = "http://www.w3.org/2000/svg"
    ET.register_namespace("", ns)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ET.fromstring(svg.encode("utf-8")) if isinstance(svg, str) else svg
    text_tag, group_tag = f"{{{ns}}}text", f"{{{ns}}}g"

    def walk(element, inherited: dict) -> bool:
        """Compact ``element``'s subtree; whether it holds text."""
        mine = dict(inherited)
        for name in _INHERITED:
            value = element.get(name)
            if value is None:
                continue
            if value == inherited.get(name):
                del element.attrib[name]
            else:
                mine[name] = value
        has_text = element.tag == text_tag
        for child in element:
            has_text = walk(child, mine) or has_text
        if not has_text and element.tag != text_tag:
            for name in _FONT:
                element.attrib.pop(name, None)
        return has_text

    fonts: Counter[tuple] = Counter()

    def fonted(element, named: frozenset) -> bool:
        """Whether each text of ``element``'s subtree is given every font property, by
        itself or a group (then one font on the figure changes none)."""
        own = [element.get(name) for name in _FONT]
        if None not in own and (element.tag == text_tag or element.find(text_tag) is not None):
            fonts[tuple(own)] += 1
        named = named | {name for name, value in zip(_FONT, own, strict=True) if value}
        if element.tag == text_tag:
            return len(named) == len(_FONT)
        return all(fonted(child, named) for child in element)

    if fonted(root, frozenset()) and fonts:
        root.attrib.update(zip(_FONT, fonts.most_common(1)[0][0], strict=True))
    walk(root, dict(_INHERITED))
    for parent in list(root.iter()):
        previous = None
        for child in list(parent):
            if (previous is not None and child.tag == group_tag == previous.tag
                    and child.attrib == previous.attrib):
                previous.extend(list(child))  # (drawn in the same order, with the same state)
                parent.remove(child)
            else:
                previous = child
    for element in root.iter():
        if element.tail is not None and not element.tail.strip():
            element.tail = "\n" if element.tail else None
    return ET.tostring(root, encoding="unicode")


def _file_name(title: str) -> str:
    """A session file name from its title (letters, digits, ``.``, ``_`` and ``-`` only)."""
    import re

    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", title or "").strip("-.")[:60]
    return f"{stem or 'session'}.yaml"


def _hash(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _page(session, svg, data: dict, theme: str) -> str:
    from workbench.io.sessions import dumps_session

    svg = compact_svg(svg)
    script = (_HERE / _SCRIPT).read_text(encoding="utf-8")
    style = (_HERE / _STYLE).read_text(encoding="utf-8")
    from workbench.ui.chart.theme import get_theme

    # the page in the figure's own background (its colour is the figure's: nothing to escape)
    style += f"body {{ background: {get_theme(theme).background[:7]}; }}\n"
    csp = (f"default-src 'none'; script-src 'sha256-{_hash(script)}'; "
           f"style-src 'sha256-{_hash(style)}'; base-uri 'none'; "
           "form-action 'none'")
    title = html.escape(session.title or "Roofline chart")
    from urllib.parse import quote

    # percent-encoded: most of a session is letters and spaces, which stay as they are
    yaml = quote(dumps_session(session), safe=" ,.:/_-()[]{}+=*@!$~;?'")
    columns = [name for _, name, _ in COLUMNS]
    caption = " and every measured kernel" if data["measured"] else ""
    heads = "".join(f'<th scope="col" tabindex="0">{html.escape(h)}</th>' for h, _, _ in COLUMNS)
    measured = ('<label class="topn" hidden>Measured kernels: the <input type="number" '
                'min="1" step="1" id="topn"> slowest (of <span id="topn-of"></span>)</label>'
                if data["measured"] else "")
    return f"""<!DOCTYPE html>
<html lang="en" class="theme-{html.escape(theme)}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="Roofline Workbench">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<main>
<div class="bar"><span class="hint" hidden>Hover or tap a point, roof or ridge for its numbers;
wheel to zoom, drag to pan.</span> <button type="button" id="reset" hidden>Reset view</button>
<a download="{html.escape(_file_name(session.title))}" href="data:application/x-yaml;charset=utf-8,{yaml}"
>Download session YAML</a></div>
<div class="figure" id="figure">
{svg}
<div class="tip" id="tip" role="tooltip" hidden></div>
</div>
<div class="key" id="key" hidden></div>
{measured}
<div class="rows"><table id="results" data-fields="{html.escape(json.dumps(columns))}">
<caption>Results: every operation on every machine drawn{caption}</caption>
<thead><tr>{heads}</tr></thead>
<tbody>
{_rows(data)}
</tbody>
</table></div>
</main>
<script type="application/json" id="figure-data">{script_json(data)}</script>
<script>{script}</script>
</body>
</html>
"""
