"""The HTML figure without a browser: its SVG is the SVG export with the marks named (and
drawn the same), its JSON block holds the numbers ``analyze`` prints, and session texts can
neither end the script blocks nor add markup. The page's behaviour in a browser is
``test_html_export_browser.py``'s."""

from __future__ import annotations

import contextlib
import io
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.cli import main as cli
from workbench.io.sessions import load_session
from workbench.model.session import number_from_one
from workbench.ui.figures.export import (
    figure_svg_sized,
    last_figure_canvas,
    render_figure,
    resolve_size,
)
from workbench.ui.figures.html_page import FIELDS, page_data, script_json
from workbench.ui.figures.svg_portable import SvgMark, _path_data, _path_outlines, name_marks

BY_NAME = {p.stem: p for p in EXAMPLES}
ADDED = re.compile(rb' (class|data-[a-z]+)="[^"]*"')


def _analyze(path) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli(["analyze", str(path), "--format", "json"]) == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize("name", ["attention", "real_kernels_h100_h200", "llama_ffn",
                                  "predicted_vs_measured"])
def test_naming_the_marks_leaves_the_drawing_as_it_was(qtbot, name):
    session = load_session(BY_NAME[name])
    number_from_one(session)  # (the ids the page's copy takes)
    fig = resolve_size(None)
    plain, _ = figure_svg_sized(session, fig)
    drawn: dict = {}
    named, _ = figure_svg_sized(session, fig, drawn=drawn)
    assert ADDED.sub(b"", named) == plain  # attributes added, nothing else
    scene = drawn["scene"]
    keys = [k for spot in re.findall(rb'data-pts="([^"]*)"', named) for k in spot.split()]
    assert sorted(keys) == sorted(f"{p.op_id}:{p.hw_id}".encode() for p in scene.points)
    assert sorted(re.findall(rb'data-ms="([^"]*)"', named)) == sorted(
        f"{m.index}:{m.hw_id}".encode() for m in scene.measured)
    assert named.count(b'class="rw-ridge"') == len(scene.ridges) > 0
    assert named.count(b'class="rw-roof"') == len(scene.roofs) > 0
    # every operation's name written on the chart (not a key's number) is named for it
    names = {e.id: e.operation.name for e in session.operations}
    texts = [(el.get("class"), el.get("data-op"), "".join(el.itertext()).strip())
             for el in ET.fromstring(named).iter("{http://www.w3.org/2000/svg}text")]
    labels = [(int(op), text) for kind, op, text in texts if kind == "rw-label"]
    assert labels and all(names[op] == text for op, text in labels)
    assert sorted(text for _, _, text in texts if text in names.values()) == sorted(
        text for _, text in labels)
    # and the leader of each such name: a line from its text to its point, named for the
    # operation (hidden with it on the page); nothing else is named a leader
    leaders = {}
    for el in ET.fromstring(named).iter():
        if el.get("class") == "rw-leader":
            leaders[int(el.get("data-op"))] = el
    canvas = last_figure_canvas()
    placed = canvas.labels.text_layout.placed
    led = {op for op, _ in labels if placed[("point", op)].leader is not None}
    assert set(leaders) == led
    assert all(el.tag.rsplit("}", 1)[-1] in {"path", "polyline", "line"}
               for el in leaders.values())


def test_a_mark_is_the_shape_drawn_where_it_is():
    """Hand-made drawing: two markers, one beside the other's place; a roof and a grid line
    on the same line, the grid line longer."""
    svg = ET.fromstring(
        '<svg xmlns="http://www.w3.org/2000/svg">'
        '<g transform="matrix(1,0,0,1,100,50)"><path id="a" d="M-3,-3 L3,-3 L3,3 L-3,3 Z"/></g>'
        '<path id="b" d="M197,97 L203,97 L203,103 L197,103 Z"/>'
        '<path id="grid" d="M0,300 L900,300"/>'
        '<path id="roof" d="M400,300 L900,300"/>'
        '</svg>')
    found = name_marks(svg, [
        SvgMark("marker", ((100.5, 50.5),), {"class": "p1"}),  # a: centre (100, 50), 0.7 off
        SvgMark("marker", ((203.0, 100.0),), {"class": "p2"}),  # b: centre 3 px away: no
        SvgMark("line", ((350.0, 300.0), (950.0, 300.0)), {"class": "roof"}),
    ])
    by_id = {el.get("id"): el.get("class") for el in svg.iter() if el.get("id")}
    assert found == 2
    assert by_id == {"a": "p1", "b": None, "grid": None, "roof": "roof"}


@pytest.mark.parametrize("name", ["attention", "real_kernels_h100_h200"])
def test_the_page_holds_the_numbers_analyze_prints(qtbot, name):
    session = load_session(BY_NAME[name])
    number_from_one(session)  # (the ids the page's copy takes)
    drawn: dict = {}
    figure_svg_sized(session, resolve_size(None), drawn=drawn)
    data = json.loads(script_json(page_data(session, drawn["scene"])))
    analysis = _analyze(BY_NAME[name])
    strings = data["strings"]
    at = {f: i for i, f in enumerate(FIELDS)}
    pages = {(strings[row[at["operation"]]], strings[row[at["machine"]]]): row
             for row in data["points"].values()}
    assert len(pages) == len(analysis["results"])
    for r in analysis["results"]:
        row = pages[(r["operation"], r["hardware"])]
        for ours, theirs in (("flops", "flops"), ("bytes", "bytes"), ("intensity", "intensity"),
                             ("attainable", "attainable_flops"), ("t_lower", "t_lower_s"),
                             ("t_predicted", "t_predicted_s")):
            assert row[at[ours]] == r[theirs]
        assert strings[row[at["bound"]]] == r["bound"]
        assert strings[row[at["level"]]] == r["level"]
    measured = {(strings[row[at["operation"]]], strings[row[at["machine"]]]): row
                for row in data["measured"].values()}
    assert len(measured) == len(analysis["measurements"])
    for m in analysis["measurements"]:
        row = measured[(m["name"], m["hardware"])]
        assert row[at["measured"]] == m["measured_time_s"]
        assert strings[row[at["verdict"]]] == m["verdict_label"]
        if m["operation"] is not None:  # the operation's own row says it too
            point = pages[(m["operation"], m["hardware"])]
            assert point[at["measured"]] == m["measured_time_s"]


def test_script_json_cannot_end_its_block():
    text = "</script><!-- & \u2028\u2029 >"
    out = script_json({"name": text})
    assert out == ('{"name":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\\u2029 '
                   '\\u003e"}')
    assert json.loads(out) == {"name": text}
    with pytest.raises(ValueError):
        script_json({"x": float("inf")})


def test_hostile_names_add_no_markup_to_the_page(qtbot, tmp_path):
    session = load_session(BY_NAME["llama_ffn"])
    names = ["</script><script>alert(1)</script>", '"><img src=x onerror=alert(2)>',
             "</svg><svg onload=alert(3)>"]
    for entry, name in zip(session.operations, names, strict=False):
        entry.operation.name = name
    session.title = "</title><script>alert(4)</script>"
    target = tmp_path / "fig.html"
    render_figure(session, target)
    page = target.read_text(encoding="utf-8")
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the page's own
    assert "<img" not in page and "<svg onload" not in page
    assert page.count("<svg") == 1 and page.count("</svg>") == 1
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown as text


def test_thecompact_svg_draws_what_the_export_draws(qtbot):
    """The page's SVG is smaller than the export's (properties a shape would inherit
    anyway, fonts on groups without text, neighbouring groups of one style) and paints the
    same pixels."""
    from PySide6.QtCore import QByteArray
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    from workbench.ui.figures.html_page import compact_svg

    session = load_session(BY_NAME["attention"])
    svg, fig = figure_svg_sized(session, resolve_size(None), drawn={})
    compact = compact_svg(svg.decode("utf-8")).encode("utf-8")
    assert len(compact) < 0.85 * len(svg)

    def pixels(data: bytes) -> np.ndarray:
        image = QImage(fig.width, fig.height, QImage.Format.Format_ARGB32)
        image.fill(0)
        painter = QPainter(image)
        QSvgRenderer(QByteArray(data)).render(painter)
        painter.end()
        return np.frombuffer(image.constBits(), np.uint8).copy()

    assert np.array_equal(pixels(svg), pixels(compact))


def test_render_writes_an_html_page(qtbot, tmp_path):
    target = tmp_path / "fig.html"
    assert cli(["render", str(BY_NAME["attention"]), "-o", str(target)]) == 0
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # no address but the names of SVG's namespaces (names, never fetched)
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) <= {
        "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert not re.search(r"<(link|img|iframe|object|embed)\b|\bsrc=", page)


@pytest.mark.parametrize("name", ["real_kernels_h100_h200", "llama31_8b_inference"])
def test_each_point_carries_the_editors_derivation_lines_of_its_machine(qtbot, name):
    """The page reads its derivation lines from the figure's own session and evaluated
    pairs: the same page data as from a copy of the session evaluated anew, and for each
    point the lines the operation editor shows for that machine."""
    import copy

    from workbench.document import Document, ResultCache
    from workbench.document.derivation import NBSP, build_derivation

    session = load_session(BY_NAME[name])
    number_from_one(session)  # (the ids the page's copy takes)
    drawn: dict = {}
    figure_svg_sized(session, resolve_size(None), drawn=drawn)
    shared = page_data(session, drawn["scene"], document=drawn["document"],
                       results=drawn["results"])
    assert shared == page_data(session, drawn["scene"])
    document = Document(copy.deepcopy(session))
    results = ResultCache(document)
    strings, at = shared["strings"], {f: i for i, f in enumerate(FIELDS)}
    assert shared["points"]
    for key, row in shared["points"].items():
        op_id, hw_id = (int(part) for part in key.split(":"))
        (section,) = [s for s in build_derivation(document, results, op_id)
                      if s.hw_id == hw_id]
        assert [strings[i] for i in row[at["lines"]]] == [
            f"{label}: {value}".replace(NBSP, " ") for label, value in section.rows]


_coord = st.floats(min_value=-50.0, max_value=950.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(_coord, _coord), min_size=1, max_size=6),
                          st.booleans()), min_size=1, max_size=5),
       st.lists(st.tuples(_coord, _coord), max_size=4))
def test_marks_found_in_paths_as_written_are_those_found_reading_them_back(runs, spots):
    """The export names the marks in the paths it has just written from what it wrote
    (their numbers as written), not by reading each path again: the same shapes are named,
    and what it keeps for a path is what reading that path gives."""
    parsed: dict = {}
    written = [_path_data([(list(points), closed)], parsed) for points, closed in runs]
    for d in written:
        assert parsed[d] == _path_outlines(d)
    # a marker at each spot, and a line through each path's first and last corner
    marks = [SvgMark("marker", (spot,), {"class": f"m{i}"}) for i, spot in enumerate(spots)]
    marks += [SvgMark("line", (points[0], points[-1]), {"class": f"l{i}"})
              for i, (points, _closed) in enumerate(runs) if len(points) > 1]
    body = "".join(f'<path id="p{i}" d="{d}"/>' for i, d in enumerate(written))
    trees = [ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{body}</svg>')
             for _ in range(2)]
    found = (name_marks(trees[0], marks, parsed), name_marks(trees[1], marks))
    assert found[0] == found[1]
    assert [el.attrib for el in trees[0].iter()] == [el.attrib for el in trees[1].iter()]


def test_the_table_names_a_profiled_kernel_by_its_figure_tag(qtbot, tmp_path):
    """A figure tags each profiled kernel "K3" by its marker and names it in the key: the
    page's table says the tag and the key's name, so that a row is found from the figure
    (the H200 Llama pass of tests/fixtures/h200); the kernel's whole C++ signature, which
    made rows five lines tall, is the cell's tooltip."""
    import html

    from figures.test_profile_figures import FIXTURES, profiled

    session = profiled(FIXTURES / "h200" / "kineto_llama.json.gz", "h200")
    target = tmp_path / "trace.html"
    render_figure(session, target, size="slide")
    page = target.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="figure-data">(.*?)</script>', page, flags=re.S).group(1))
    tags = data["tags"]
    figure = page.split("<table", 1)[0]
    keyed = set(re.findall(r"\b(K\d+) — ", figure))  # the figure's key
    assert len(tags) >= 8 and set(tags.values()) == keyed
    at = FIELDS.index("operation")
    long = 0
    for key, tag in tags.items():
        name = data["strings"][data["measured"][key][at]]  # (the data keep the name alone)
        title, cell = re.search(rf'<tr data-ms="{re.escape(key)}"><td(?: title="([^"]*)")?>'
                                r"([^<]*)", page).groups()
        row = html.unescape(cell)
        assert row.startswith(f"{tag} — ")
        # the key's row, word for word (the SVG draws it as text)
        assert html.escape(row, quote=False) in figure or row in figure, row
        if title is not None:
            long += 1
            assert html.unescape(title) == name != row.split(" — ", 1)[1]
        else:
            assert row == f"{tag} — {name}"
    assert long >= 8  # (library kernels: cuDNN's attention, nvjet's GEMMs, ATen's functors)
