"""Every roof's value is told: beside its line, or in the key after its machine's name
(compute roofs every machine shares, once, on a row of their own). Two machines of one peak
draw one line, and one text names it for both: the H100's and the H200's "bf16 989
TFLOP/s" each had the other's line as near as its own, so a reader could not pair either
with its line and neither was ever placed; in the kernels example no compute roof was named
at any size (five flat lines, fp8 to fp32, unlabelled), and at single-column size the
H200's memory roof had no value anywhere ("hbm 4.8 TB/s" found no place along a line
crowded with kernels).

The peaks read here are the presets' (``hardware_presets/``): H100 and H200 SXM share
their tensor and vector peaks (989.4 TFLOP/s bf16, 1,979 TFLOP/s fp8, 494.7 TFLOP/s tf32,
133.8 TFLOP/s bf16 vector, 67 TFLOP/s fp32); the memories differ (3.35 and 4.8 TB/s)."""

from __future__ import annotations

import unicodedata

import pytest
from figures.example_figures import example_figure
from PySide6.QtGui import QFont, QFontMetricsF

from workbench.io.presets import examples_dir
from workbench.io.sessions import load_session
from workbench.model.analysis import evaluate_session
from workbench.model.chart.scene import build_scene
from workbench.ui.figures.export import figure_svg_sized, last_figure_canvas, resolve_size

KERNELS = "real_kernels_h100_h200"


def _flat(text: str) -> str:
    """``text`` with no-break spaces as spaces and without word joiners (the key keeps a
    value on one line)."""
    return unicodedata.normalize("NFKC", text).replace("\u2060", "")


def _compute_values(stem: str) -> dict[str, list[str]]:
    """By machine's name, each compute roof's value as the chart says it ("bf16 989
    TFLOP/s"), highest first, from the scene: the words the figure must show somewhere."""
    session = load_session(examples_dir() / f"{stem}.yaml")
    names = {e.id: e.hardware.label for e in session.hardware}
    scene = build_scene(session, evaluate_session(session, visible_only=True))
    out: dict[str, list[str]] = {}
    for roof in sorted(scene.roofs, key=lambda r: -r.value):
        if roof.kind == "compute" and roof.label and not roof.derated:
            out.setdefault(names[roof.hw_id], []).append(roof.label.split(": ", 1)[-1])
    return out


def _memory_values(stem: str) -> dict[str, str]:
    """By machine's name, its one memory roof's value as the chart says it ("hbm 4.8
    TB/s")."""
    session = load_session(examples_dir() / f"{stem}.yaml")
    names = {e.id: e.hardware.label for e in session.hardware}
    scene = build_scene(session, evaluate_session(session, visible_only=True))
    out = {}
    for roof in scene.roofs:
        if roof.kind == "memory" and roof.sloped and roof.label:
            assert names[roof.hw_id] not in out  # (one level each in these examples)
            out[names[roof.hw_id]] = roof.label
    return out


def _key_rows(texts: list[str], first: str) -> str:
    """The key's row that begins with ``first``, its wrapped lines joined (a wrapped line
    ends in a comma); empty where there is none."""
    for i, t in enumerate(texts):
        if t.startswith(first):
            row = [t]
            while row[-1].rstrip().endswith(",") and i + len(row) < len(texts):
                row.append(texts[i + len(row)])
            return " ".join(row)
    return ""


def test_the_attention_figure_names_the_peak_both_machines_share(qapp):
    """The attention example (an H100 and an H200, one bf16 peak): its flat roof carries
    one text, beside the line, with no machine's name before it (it is both machines')."""
    session = load_session(examples_dir() / "attention.yaml")
    figure_svg_sized(session, resolve_size(None))
    roofs = last_figure_canvas().roofs
    shown = [(i, label.toPlainText()) for i, (roof, label) in enumerate(roofs.roof_texts)
             if label.isVisible() and roof.kind == "compute"]
    assert [text for _i, text in shown] == ["bf16 989 TFLOP/s"]
    assert len({r.hw_id for r in roofs.says(shown[0][0])}) == 2  # (drawn as one line)
    texts = [_flat(t.text) for t in example_figure("attention", None).figure().texts]
    assert texts.count("bf16 989 TFLOP/s") == 1


@pytest.mark.parametrize("size", [None, "single", "double"])
def test_every_compute_roof_of_the_kernels_example_is_named(qapp, size):
    """Five flat roofs a factor of two apart, their right ends taken by the kernels' tags:
    each value is said beside its line or, where it finds no place there, in the key, highest
    first: the H100's and the H200's are the same five, said once for both machines. (At
    double-column size the longer key would take the room of a kernel's verdict, which
    ranks before a roof's value: the page grows by the row instead, see
    ``test_a_page_grows_for_the_values_its_chart_has_no_room_for``. A slide cannot grow:
    there the values stay unsaid.)"""
    texts = [_flat(t.text) for t in example_figure(KERNELS, size).figure().texts]
    values_of = _compute_values(KERNELS)
    assert len(values_of) == 2 and all(len(v) == 5 for v in values_of.values())
    [values] = {tuple(v) for v in values_of.values()}  # (the presets' peaks: one list)
    shared = _key_rows(texts, "both machines:")
    assert shared, texts  # (no place by their lines at either size)
    at = [shared.find(v) for v in values]
    assert all(i >= 0 for i in at) and at == sorted(at), (values, shared)
    for name in values_of:  # (not said again on each machine's row)
        assert not any(v in _key_rows(texts, f"{name}:") for v in values), texts


@pytest.mark.parametrize(("stem", "size"), [(KERNELS, None), (KERNELS, "single"),
                                            (KERNELS, "double"), ("llama_ffn", "single"),
                                            ("attention", "single")])
def test_every_memory_roof_is_named(qapp, stem, size):
    """Each machine's memory roof value is said beside its line (a text that ends with it)
    or after its machine's name in the key: the kernels example's H200 "hbm 4.8 TB/s" at
    single and double-column size, and the Llama FFN example's H100 "hbm 3.35 TB/s" at
    single-column size, found no place along their lines and were said nowhere."""
    texts = [_flat(t.text) for t in example_figure(stem, size).figure().texts]
    for name, value in _memory_values(stem).items():
        beside = any(t.endswith(value) and not t.startswith(name) for t in texts)
        row = _key_rows(texts, f"{name}:")
        assert beside or row.startswith(f"{name}: {value}"), (name, value, texts)


def test_a_memorys_value_that_would_leave_rows_of_the_key_out_costs_no_placing(
        qapp, monkeypatch):
    """The Llama-3.1-8B example at single-column size: the H100's and the RTX 4090's memory
    values find no place by their lines, and their rows would leave rows of the key out
    (the page would grow for them): the key says them not, and knows it from the legend's
    rows alone. The figure is the one made with memories' values never tried in the key,
    from as many placings of its texts."""
    from workbench.ui.chart.labels import LabelLayer
    from workbench.ui.chart.tags import TagsAndKey

    session = load_session(examples_dir() / "llama31_8b_inference.yaml")
    fig = resolve_size("single")
    placings = [0]
    place_all = LabelLayer.place_all

    def counted(self):
        placings[0] += 1
        place_all(self)

    monkeypatch.setattr(LabelLayer, "place_all", counted)
    made, _ = figure_svg_sized(session, fig)
    tried = placings[0]
    texts = [_flat(t.text) for t in example_figure("llama31_8b_inference", "single")
             .figure().texts]
    unsaid = [v for v in _memory_values("llama31_8b_inference").values()
              if not any(v in t for t in texts)]
    assert unsaid, texts  # (the case this test is about: a memory's value said nowhere)

    missed = TagsAndKey._values_missed
    monkeypatch.setattr(TagsAndKey, "_values_missed", lambda self, placed, levels: {
        p for p in missed(self, placed, levels) if p[1] != "memory"})
    placings[0] = 0
    plain, _ = figure_svg_sized(session, fig)
    assert made == plain
    assert tried == placings[0]


def test_the_key_takes_no_room_from_a_text_nothing_else_says(qapp):
    """The fusion example at single-column size: its machine's two vector roofs find no
    place by their lines, and the longer machine's row would push the comparison's text
    ("−268 MB, 2.37× faster") off the shorter plot; the comparison keeps its place, and the
    page grows by the row (it said neither value before)."""
    texts = [_flat(t.text) for t in example_figure("fusion", "single").figure().texts]
    assert any("2.37× faster" in t for t in texts), texts
    [(name, values)] = _compute_values("fusion").items()
    row = _key_rows(texts, f"{name}:")
    assert row == f"{name}: {', '.join(values)}", texts


def test_the_key_takes_no_room_from_an_operations_name(qapp):
    """The TPU example at single-column size: the two machines' rows with their values
    would leave "bf16 matmul, B=512" no place by its point (a tag and a row of the key
    instead); an operation's name ranks before a roof's value, so the name stays, and the
    page grows by the rows: the four flat roofs, two machines' int8 and bf16 peaks within a
    factor of five, were named nowhere."""
    texts = [_flat(t.text) for t in example_figure("tpu_critical_batch", "single")
             .figure().texts]
    assert "bf16 matmul, B=512" in texts, texts
    assert not any(t.endswith("bf16 matmul, B=512") and "—" in t for t in texts), texts
    values_of = _compute_values("tpu_critical_batch")
    assert sorted(len(v) for v in values_of.values()) == [2, 2]
    for name, values in values_of.items():
        assert _key_rows(texts, f"{name}:") == f"{name}: {', '.join(values)}", texts


@pytest.mark.parametrize(("stem", "size"), [("fusion", "single"),
                                            ("tpu_critical_batch", "single"),
                                            (KERNELS, "double")])
def test_a_page_grows_for_the_values_its_chart_has_no_room_for(qapp, monkeypatch, stem,
                                                                size):
    """Where the key's rows of the compute values would cost another text its place, a page
    that may grow grows by them instead: its chart keeps the height it had without them, and
    every text placed on it then is placed on it now (the key starts as it ended, with the
    values: the same chart, the same placing)."""
    from workbench.ui.figures import export

    session = load_session(examples_dir() / f"{stem}.yaml")
    fig = resolve_size(size)

    def chart():
        """The page's height, the plot's frame, and the texts placed on it, but the roofs'
        values."""
        _svg, made = figure_svg_sized(session, fig)
        canvas = last_figure_canvas()
        layout = canvas.labels.text_layout
        said = {k: p.rect for k, p in layout.placed.items() if k[0] != "roof"}
        return made.height, layout.occupancy.frame, said

    grown, frame, said = chart()
    monkeypatch.setattr(export, "_taller_for_values", lambda canvas, fig: None)
    height, frame_before, said_before = chart()
    assert grown > height
    assert frame[3] - frame[1] >= frame_before[3] - frame_before[1] - 0.5
    assert set(said_before) <= set(said), set(said_before) - set(said)


def test_a_key_row_is_not_wrapped_inside_a_value(qapp):
    """The kernels example at single-column size: the key's row of the compute roofs wraps
    between values ("…, tf32 495 TFLOP/s," then "bf16 vector 134 TFLOP/s, …"), never inside
    one."""
    texts = [_flat(t.text) for t in example_figure(KERNELS, "single").figure().texts]
    values = [v for vs in _compute_values(KERNELS).values() for v in vs]
    rows = [i for i, t in enumerate(texts) if t.startswith("both machines:")]
    assert rows, texts
    first = rows[0]
    lines = [texts[first]]
    for t in texts[first + 1:]:
        if not lines[-1].rstrip().endswith(","):
            break
        lines.append(t)
    assert len(lines) > 1, "the row is longer than a column is wide"
    for line in lines:
        body = line.split(": ", 1)[-1]
        for part in body.strip().strip(",").split(", "):
            assert part in values, (part, lines)


def test_the_legend_measures_a_row_in_the_width_it_draws_it(qapp):
    """A flowing legend row a pixel or two too wide for the line's room by its padding, but
    drawn in one line, takes one line: it was measured as two and left a blank line."""
    from workbench.ui.chart.items import Legend

    legend = Legend((0, 0))
    font = QFont()
    font.setPixelSize(13)
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QBrush, QColor, QPen

    legend.set_style(QBrush(), QPen(Qt.PenStyle.NoPen), QColor("black"), font)
    text = "AMD Instinct MI300X 192GB: bf16 1.31 PFLOP/s, fp32 vector 163 TFLOP/s"
    sample = (QPen(QColor("black")), None, 8.0, None, None)
    metrics = QFontMetricsF(font)
    lead = Legend.SAMPLE + Legend.GAP
    one_line = None
    for extra in (40.0, -0.5):  # room with air to spare, then half a pixel short of it
        room = lead + metrics.horizontalAdvance(text) + extra
        legend.set_flow(room + 2 * Legend.FLOW_MARGIN)
        legend.set_rows([(text, sample)])
        if one_line is None:
            one_line = legend.height()
    assert legend.height() == pytest.approx(one_line)
