"""Every figure says what its points are: each operation is named beside its point or, where
its name has no clean place, by a short tag there and a row of the key ("3 — name"); each
machine's row in the legend shows its line and its marker shape (shape means machine),
wherever the legend sits."""

from __future__ import annotations

import re
import unicodedata

import pytest
import yaml
from conftest import EXAMPLES
from figures.example_figures import example_figure
from figures.figcheck import (
    MAX_LEGEND_SHARE,
    check_figure,
    check_readability,
    format_defects,
    legend_box,
    legend_share,
    read_figure,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from workbench.io.sessions import load_session, loads_session
from workbench.model.analysis import evaluate_session
from workbench.model.chart.scene import build_scene
from workbench.ui.figures.export import figure_bytes, resolve_size


def _example(stem: str):
    return load_session(next(p for p in EXAMPLES if p.stem == stem))


def _inside(box, outer, eps: float = 0.5) -> bool:
    return (box[0] >= outer[0] - eps and box[1] >= outer[1] - eps and box[2] <= outer[2] + eps
            and box[3] <= outer[3] + eps)


@pytest.mark.parametrize("size", ["single", "double"])
def test_the_legend_below_the_plot_shows_every_machines_marker(qapp, size):
    """Three machines (circle, square, triangle) with the legend below the plot: each row's
    sample has its marker, not just the first row's."""
    fig = example_figure("llama_ffn", size).figure()
    box = legend_box(fig)
    assert box is not None, "the legend sits below the plot at this size"
    rows = [t for t in fig.texts if _inside(t.bbox(), box)]
    machines = [t for t in rows if t.text.startswith(("NVIDIA", "Google"))]
    assert len(machines) == 3, [t.text for t in rows]
    # a marker is a small closed, filled shape left of its row's text, on its baseline
    markers = [s for s in fig.shapes if s.closed and s.filled and _inside(s.bbox, box)
               and max(s.bbox[2] - s.bbox[0], s.bbox[3] - s.bbox[1]) < 12]
    for row in machines:
        x0, y0, _x1, y1 = row.bbox()
        beside = [s for s in markers if s.bbox[2] <= x0 and s.bbox[1] < y1 and s.bbox[3] > y0]
        assert beside, f"no marker beside the legend row {row.text!r}"


# ---------------------------------------------------------------------------------------------
# every point named: on the chart, or by a tag and the key

SIZES = (None, "slide", "single", "double")


def _squeezed(text: str) -> str:
    """``text`` without spaces or line breaks, ligatures as their letters (a PDF's text
    may hold "ﬁ" for "fi", "ﬀ" for "ff")."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def _named_in(fig, name: str) -> bool:
    """Whether ``name`` is on the page: as a text (a label on the chart, a row of the key,
    wrapped or not), or, for a part of a whole model ("8B prefill: lm_head"), its group as a
    heading of the key and the part as a row of it ("A — 8B prefill" … "2 — lm_head")."""
    page = _squeezed("".join(t.text for t in fig.texts))
    if _squeezed(name) in page:
        return True
    group, _, part = name.partition(": ")
    return bool(part) and (f"—{_squeezed(group)}" in page or f"{_squeezed(group)}:" in page) \
        and f"—{_squeezed(part)}" in page


def _visible_names(session) -> list[str]:
    scene = build_scene(session, evaluate_session(session, visible_only=True))
    return list(dict.fromkeys(p.label for p in scene.points))


def _unnamed(session, size, theme) -> tuple[list[str], list[str], object]:
    """The visible operations of ``session`` its figure at ``size`` in ``theme`` does not
    name, its "and N more operations" lines, and the figure."""
    return _unnamed_in(session, read_figure(figure_bytes(
        session, "pdf", resolve_size(size, theme=theme), theme=theme)))


def _unnamed_example(stem, size, theme) -> tuple[list[str], list[str], object]:
    """:func:`_unnamed` of the example ``stem`` as it is shipped."""
    return _unnamed_in(_example(stem), example_figure(stem, size, theme).figure())


def _unnamed_in(session, fig) -> tuple[list[str], list[str], object]:
    texts = [t.text for t in fig.texts]
    more = [t for t in texts if t.startswith("and ") and t.endswith("more operations")]
    missing = [n for n in _visible_names(session) if not _named_in(fig, n)]
    return missing, more, fig


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: s or "default")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_operation_of_an_example_is_named_in_its_figure(qapp, path, size, theme):
    """Every visible operation's name is in the exported PDF's text: beside its point, or in
    the key its tag refers to (a whole model's parts under the model's name), at every size:
    a paper column grows taller rather than leave rows of its key out ("and 8 more" below
    the Llama-3.1-8B example before); and the figure stays clean."""
    missing, more, fig = _unnamed_example(path.stem, size, theme)
    assert not missing and not more, (size, theme, missing, more)
    defects = check_figure(fig) + check_readability(fig)
    assert not defects, format_defects(defects, f"{path.name} at {size}/{theme}")


def _tags_on_chart(fig) -> set[str]:
    """The tags said by the texts inside the plot: "7", "A3", a crowd's "A6, B6", or
    "A, B: 1, 3, 7" (the parts 1, 3 and 7 of the groups A and B) continued by lines of
    numbers under it ("9, 12")."""
    plot = fig.plot
    inside = sorted((t for t in fig.texts if _inside(t.bbox(), plot, 1.0)),
                    key=lambda t: (round(t.bbox()[0]), t.bbox()[1]))
    tags: set[str] = set()
    heads: dict[int, tuple[list[str], tuple]] = {}  # id(text) → its groups, its box
    for t in inside:
        text = t.text.strip()
        groups: list[str] = []
        if re.fullmatch(r"[A-Z]+(?:, [A-Z]+)*: \d+(?:, \d+)*", text):
            head, numbers = text.split(": ")
            groups = head.split(", ")
        elif re.fullmatch(r"\d+(?:, \d+)*", text):
            numbers = text
            x0, y0 = t.bbox()[0], t.bbox()[1]
            # a line under a crowd's first line, where it starts: its groups' numbers
            above = [(g, b) for g, b in heads.values()
                     if abs(b[0] - x0) < 1.5 and 0 <= y0 - b[3] < 0.6 * (b[3] - b[1])]
            groups = above[0][0] if above else [""]
        elif re.fullmatch(r"[A-Z]*\d+(?:, [A-Z]*\d+)*", text):
            tags.update(text.split(", "))
            continue
        else:
            continue
        heads[id(t)] = (groups, t.bbox())
        tags.update(f"{g}{n}" for g in groups for n in numbers.split(", "))
    return tags


def _keyed(fig) -> dict[str, str]:
    """The key's rows: tag number → the name it stands for ("3 — RoPE ×32")."""
    out = {}
    for t in fig.texts:
        m = re.match(r"^(\d+) — (.+)$", unicodedata.normalize("NFKC", t.text.strip()))
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _untagged(stem, size) -> list[str]:
    """The operations of the example ``stem`` whose points carry neither their name nor
    their tag in its figure at ``size`` (a key row names the operation, the chart must say
    which point is it)."""
    return _untagged_in(_example(stem), example_figure(stem, size).figure())


def _untagged_in(session, fig) -> list[str]:
    keyed = _keyed(fig)
    letters = {}
    for t in fig.texts:
        m = re.match(r"^([A-Z]+) — (.+)$", unicodedata.normalize("NFKC", t.text.strip()))
        if m:
            letters[m.group(2)] = m.group(1)
    tags = _tags_on_chart(fig)
    inside = _squeezed("".join(t.text for t in fig.texts if _inside(t.bbox(), fig.plot, 1.0)))
    out = []
    for name in _visible_names(session):
        if _squeezed(name) in inside:
            continue  # named beside its point
        group, sep, part = name.partition(": ")
        number = next((n for n, text in keyed.items() if text == (part if sep else name)),
                      None)
        letter = letters.get(group, "") if sep else ""
        if number is None or f"{letter}{number}" not in tags:
            out.append(name)
    return out


@pytest.mark.parametrize("size", SIZES, ids=lambda s: s or "default")
@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.stem != "real_kernels_h100_h200"],
                         ids=lambda p: p.stem)
def test_every_point_carries_its_name_or_its_tag(qapp, path, size):
    """A reader tells which point is which operation: each one's point carries its name or
    its tag ("A3"; a crowd of touching markers one text for all, "A, B: 1, 3, 7"), and the
    key says what the tag stands for. Measured before (tags placed one by one, none farther
    than beside its markers): the Llama-3.1-8B example told 11, 15, 4 and 10 of its 26
    operations at the default, slide, single- and double-column sizes."""
    assert not _untagged(path.stem, size)


def test_every_real_kernel_is_tagged_at_every_size(qapp):
    """The real-kernels example: 35 kernels, each on two machines with its measured point
    and its verdict: every one is told by name or tag at every size (before: 11, 10, 0 and
    8 at the default, slide, single and double sizes). At single-column size the column
    grows as far as it may for its key, and the view then takes a decade of room over its
    highest points (the row of compute-bound kernels under the roofs)."""
    for size in SIZES:
        untagged = _untagged("real_kernels_h100_h200", size)
        assert not untagged, (size, untagged)


def test_a_tag_with_no_place_joins_a_near_tag_that_has_room(qapp):
    """The real-kernels slide for a room (presentation theme): the tag of ffn_m256 found no
    place by its points, and the nearest placed tag ("14") had no room for "7, 14": the
    key listed 7 but nothing on the chart said it. A stray tag now joins the nearest of
    the placed tags within reach whose text still finds a place with it ("7, 17")."""
    session = _example("real_kernels_h100_h200")
    fig = example_figure("real_kernels_h100_h200", "slide", "presentation").figure()
    assert "ffn_m256" in _keyed(fig).values()
    assert not _untagged_in(session, fig)


def test_llama_ffn_at_single_column_names_all_four_points(qapp):
    """Measured before: one of its four points named at single-column size."""
    missing, more, fig = _unnamed_example("llama_ffn", "single", "light")
    assert not missing and not more
    texts = [t.text for t in fig.texts]
    # the ones without room beside their points: a tag on the chart, "n — name" in the key
    tags = re.findall(r"(?:^|\s)(\d+) — ", " ".join(texts))
    assert tags
    for tag in tags:
        assert tag in texts, (tag, texts)


def test_a_whole_model_is_keyed_by_its_parts_not_counted(qapp):
    """The Llama-3.1-8B example: a heading per model and one row per kind of operation (QKV
    projection, attention, FFN …), not "12 operations not listed"; below a single-column
    figure the key stays within its third of the page."""
    missing, more, fig = _unnamed_example("llama31_8b_inference", "double", "light")
    assert not missing and not more, (missing, more)
    page = _squeezed(" ".join(t.text for t in fig.texts))
    assert "A—8Bprefill" in page and "B—8Bdecode" in page
    assert page.count("—QKVprojection×32") == 1
    # at single-column size, all of it: the page grows taller (3.5 in wide, as a column
    # is), the key stays within its share of the page and the plot keeps its room
    missing, more, fig = _unnamed_example("llama31_8b_inference", "single", "light")
    page = _squeezed(" ".join(t.text for t in fig.texts))
    assert "—QKVprojection×32" in page and "notlisted" not in page
    assert not missing and not more, (missing, more)
    assert legend_share(fig) <= MAX_LEGEND_SHARE
    width_in = (fig.page[2] - fig.page[0]) / 72.0
    height_in = (fig.page[3] - fig.page[1]) / 72.0
    assert width_in == pytest.approx(3.5, abs=0.01)
    assert 2.6 < height_in <= 2.6 * 1.8 + 0.01
    # the chart (all but the key's band) keeps at least 45 % of the page
    assert 1.0 - legend_share(fig) >= 0.45


def test_a_figure_of_few_points_keeps_its_column_height(qapp):
    """A key that fits leaves a paper column's figure at its preset size, 3.5 × 2.6 in, but
    for the rows of the ridges its chart has no room for: the three machines' ridges, their
    bf16 peaks over their HBM (H100 989.4 TFLOP/s / 3.35 TB/s = 295, A100 312 / 2.039 =
    153, TPU v5e 197 / 0.819 = 241 FLOP/byte), said after their names, a row more."""
    fig = example_figure("llama_ffn", "single").figure()
    assert (fig.page[2] - fig.page[0]) / 72.0 == pytest.approx(3.5, abs=0.01)
    assert 2.6 - 0.01 <= (fig.page[3] - fig.page[1]) / 72.0 <= 2.6 + 0.12
    said = unicodedata.normalize("NFKC", " ".join(t.text for t in fig.texts))
    for ridge in ("ridge 295 FLOP/B", "ridge 153 FLOP/B", "ridge 241 FLOP/B"):
        assert said.count(ridge) == 1, (ridge, said)


WORDS = ["GEMM", "attention", "decode", "prefill", "FFN", "up-projection", "softmax", "RMSNorm",
         "fused", "int4 weights", "QKᵀ", "batch=64", "(M=8192)", "layer 12", "KV cache"]
PRESETS = ["h100-sxm", "a100-80gb", "mi300x", "tpu-v5e", "rtx-4090", "l4"]


@st.composite
def sessions(draw):
    machines = draw(st.lists(st.sampled_from(PRESETS), min_size=1, max_size=4, unique=True))
    count = draw(st.integers(1, 40))
    centres = draw(st.lists(st.floats(-1.0, 4.0), min_size=1, max_size=3))
    operations = []
    for i in range(count):
        centre = centres[draw(st.integers(0, len(centres) - 1))]
        intensity = 10 ** (centre + draw(st.floats(-0.08, 0.08)))
        moved = 10 ** draw(st.floats(6.0, 12.0))
        n = draw(st.integers(1, 6))
        name = (" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=n, max_size=n)))
                if draw(st.booleans()) else f"kernel {i}")
        operations.append({"name": f"{name} #{i}", "kind": "custom",
                           "flops": float(f"{intensity * moved:.6g}"),
                           "bytes": float(f"{moved:.6g}"), "precision": "bf16"})
    data = {"schema_version": 1, "title": "Kernels",
            "hardware": [{"preset": m} for m in machines], "operations": operations}
    return (yaml.safe_dump(data, allow_unicode=True, sort_keys=False),
            draw(st.sampled_from(SIZES)), draw(st.sampled_from(["light", "dark"])))


@settings(max_examples=10, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=sessions())
def test_generated_figures_name_every_point(qapp, case):
    """1–40 operations with names of up to six words on 1–4 machines, at every size and
    theme: each operation is named on the chart or in the key (a paper column grows up to a
    journal page's 9 in for it). Every machine is in the legend; the figure is clean."""
    text, size, theme = case
    session = loads_session(text, "generated.yaml")
    missing, more, fig = _unnamed(session, size, theme)
    assert not missing and not more, (size, theme, missing, more)
    texts = [t.text for t in fig.texts]
    for entry in session.hardware:  # (its row may say its compute roofs after its name)
        label = entry.hardware.label
        assert any(t == label or t.startswith(f"{label}:") for t in texts), (label, texts)
    defects = check_figure(fig) + check_readability(fig)
    assert not defects, format_defects(defects, f"{size}/{theme}") + "\n" + text


# ---------------------------------------------------------------------------------------------
# texts that belong to one machine say which


def test_ridges_crossings_and_pairs_name_their_machine_on_a_chart_of_several(qapp):
    """Two machines: each ridge label and sweep crossing names its machine; a compared pair
    whose figures differ between the machines says them once, a line per machine; one with
    the same figures on both (MHA → GQA) is annotated once, for both."""
    sweep = _example("critical_batch_sweep")
    scene = build_scene(sweep, evaluate_session(sweep, visible_only=True))
    assert sorted(r.label.split(": ")[0] for r in scene.ridges) == ["H100 SXM5 80GB", "TPU v5e"]
    crossings = [c.label for p in scene.sweeps for c in p.crossings]
    assert crossings and all(c.startswith(("H100 SXM5 80GB: m* = ", "TPU v5e: m* = "))
                             for c in crossings)

    attention = _example("attention")
    for entry in attention.hardware:  # derated: MHA → GQA is the bytes ratio on both
        entry.hardware.prediction = "derated"
    fig = read_figure(figure_bytes(attention, "pdf", resolve_size("slide")))
    texts = [t.text.strip() for t in fig.texts]
    assert "−805 MB, 4× faster" in texts  # MHA → GQA, drawn once for both machines
    assert any(t.startswith("H100 SXM5 80GB: −4.29 GB") for t in texts), texts
    assert any(t.startswith("H200 SXM 141GB: −4.29 GB") for t in texts), texts
    # each ridge said names its machine (the H100's, 989.4 TFLOP/s / 3.35 TB/s = 295
    # FLOP/byte, by its diamond). The H200's (989.4 / 4.8 = 206) is said in the key, after
    # the machine's name: its only free place by its diamond was left of it at its compute
    # roof's height, led there along the 1 PFLOP/s line, which read as that roof going on
    # past the ridge (tests/ui/test_ridge_leaders.py)
    ridges = [unicodedata.normalize("NFKC", t) for t in texts if "ridge" in t]
    assert sorted(ridges) == ["H100 SXM5 80GB: ridge 295 FLOP/B",
                              "NVIDIA H200 SXM 141GB: ridge 206 FLOP/B"], ridges


def test_one_machine_keeps_its_texts_short(qapp):
    """One machine: nothing to tell apart, no machine names in ridge or crossing labels."""
    session = _example("fusion")
    scene = build_scene(session, evaluate_session(session, visible_only=True))
    assert len(scene.machines) == 1
    assert all(r.label.startswith("ridge ") for r in scene.ridges)


# ---------------------------------------------------------------------------------------------
# View ▸ All Memory Roofs

CPU = """\
schema_version: 1
title: CPU caches
hardware:
  - name: Test CPU
    compute: {fp32: 3 TFLOP/s}
    memory: {ddr5: 200 GB/s, l3: 1.2 TB/s, l2: 3 TB/s, l1: 8 TB/s}
    main_memory: ddr5
operations:
  - {name: stream triad, kind: custom, flops: 2.0e9, bytes: 2.4e10, precision: fp32}
  - {name: small GEMM, kind: custom, flops: 2.0e11, bytes: 4.0e9, precision: fp32}
  - {name: stencil, kind: custom, flops: 1.0e10, bytes: 2.0e10, precision: fp32}
view:
  all_levels: true
"""


@pytest.mark.parametrize("size", SIZES, ids=lambda s: s or "default")
def test_all_memory_roofs_of_a_cpu_are_each_named(qapp, size):
    """A CPU's L1, L2, L3 and DRAM roofs, parallel and close: each value is on the chart
    by its line or, where there is no clean place for it there, in the key, the machine's
    memory roofs named left to right; every operation stays named."""
    session = loads_session(CPU, "cpu.yaml")
    missing, more, fig = _unnamed(session, size, "light")
    assert not missing and not more, (missing, more)
    page = _squeezed("".join(t.text for t in fig.texts))
    for level in ("l18TB/s", "l23TB/s", "l31.2TB/s", "ddr5200GB/s"):
        assert level in page, (size, level, [t.text for t in fig.texts])
    defects = check_figure(fig) + check_readability(fig)
    assert not defects, format_defects(defects, f"cpu at {size}")


def test_all_memory_roofs_keep_a_models_operations_named(qapp):
    session = _example("llama31_8b_inference")
    session.view.all_levels = True
    for size in ("slide", "double"):
        missing, more, _fig = _unnamed(session, size, "light")
        assert not missing and not more, (size, missing, more)


def test_the_apps_export_names_every_point_at_single_column_size(qtbot, tmp_path):
    """File ▸ Export at single-column size, the chart as shown on screen: every operation of
    the Llama FFN example is named in the PDF (none were, before: the screen's view left
    them no place)."""
    from PySide6.QtWidgets import QMessageBox

    from workbench.ui.figures.export_dialog import FigureOptions
    from workbench.ui.window.app import create_app
    from workbench.ui.window.main_window import MainWindow

    create_app()
    win = MainWindow()
    win.settings.clear()
    win.open_path(next(p for p in EXAMPLES if p.stem == "llama_ffn"))
    win.show()
    qtbot.waitExposed(win)
    try:
        target = tmp_path / "ffn.pdf"
        assert win.export_figure(target, FigureOptions(size="single", dpi=300))
        fig = read_figure(target)
        missing = [n for n in _visible_names(win.document.session) if not _named_in(fig, n)]
        assert not missing, (missing, [t.text for t in fig.texts])
        assert not check_figure(fig)
    finally:
        win.ask_save_changes = lambda: QMessageBox.Discard
        win.close()
        win.deleteLater()


def test_a_column_grows_for_tags_that_found_no_place(qapp):
    """Double column, the real-kernels example: its key fits the preset's 3.6 in, but some
    tags found no place by their points (2 of 35 before): the page grows (at most 1.8 ×) until
    every kernel is told, the width staying 7.16 in."""
    fig = example_figure("real_kernels_h100_h200", "double").figure()
    assert (fig.page[2] - fig.page[0]) / 72.0 == pytest.approx(7.16, abs=0.01)
    assert 3.6 < (fig.page[3] - fig.page[1]) / 72.0 <= 3.6 * 1.8 + 0.01
    assert not _untagged("real_kernels_h100_h200", "double")


def _long_names(count: int, words: int, machines=("h100-sxm", "a100-80gb", "mi300x", "tpu-v5e")):
    """``count`` operations named by ``words`` words each, in three clusters of points."""
    operations = []
    for i in range(count):
        name = " ".join(WORDS[(7 * i + 3 * j) % len(WORDS)] for j in range(words))
        intensity = 10 ** ((-0.5, 1.5, 3.5)[i % 3] + 0.01 * (i % 7))
        moved = 10 ** (6 + (i * 0.37) % 6)
        operations.append({"name": f"{name} #{i}", "kind": "custom",
                           "flops": float(f"{intensity * moved:.6g}"),
                           "bytes": float(f"{moved:.6g}"), "precision": "bf16"})
    data = {"schema_version": 1, "title": "Kernels",
            "hardware": [{"preset": m} for m in machines], "operations": operations}
    return loads_session(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "long.yaml")


@pytest.mark.parametrize("size", ["single", "double"])
def test_forty_six_word_names_on_a_paper_column_are_all_in_its_key(qapp, size):
    """Forty six-word names below a 3.5-in column: once more than a 1.8 × taller page could
    list (20 of 40 were counted in one line), now every one, the page no taller than a
    journal's 9 in and the chart keeping at least 45 % of it."""
    missing, more, fig = _unnamed(_long_names(40, 6), size, "light")
    assert not missing and not more, (missing, more)
    width_in, height_in = (fig.page[2] - fig.page[0]) / 72.0, (fig.page[3] - fig.page[1]) / 72.0
    assert width_in == pytest.approx(3.5 if size == "single" else 7.16, abs=0.02)
    assert height_in <= 9.0 + 0.01
    assert 1.0 - legend_share(fig) >= 0.45
    assert not check_figure(fig) + check_readability(fig)


def test_a_key_no_column_can_hold_lists_what_fits_and_counts_the_rest(qapp):
    """Forty nine-word names wrap to two lines each in 3.5 in: with type no smaller than 6 pt
    no 9-in page holds them and a chart. The page is 9 in, the key lists what fits, and one
    line counts exactly the operations it leaves out."""
    missing, more, fig = _unnamed(_long_names(40, 9), "single", "light")
    assert len(more) == 1 and int(more[0].split()[1]) == len(missing) > 0
    assert (fig.page[3] - fig.page[1]) / 72.0 == pytest.approx(9.0, abs=0.01)
    assert 1.0 - legend_share(fig) >= 0.45


def _closest_on_a_line(fig) -> tuple[float, str, str]:
    """Of the texts in the plot that share a line, the two nearest side by side: their gap
    in ems of the smaller type, and their texts."""
    x0, y0, x1, y1 = fig.plot
    texts = [t for t in fig.texts if x0 <= t.centre[0] <= x1 and y0 <= t.centre[1] <= y1]
    best = (float("inf"), "", "")
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a.bbox(), b.bbox()
            if min(ay1, by1) - max(ay0, by0) > 0.5 * min(ay1 - ay0, by1 - by0):
                gap = max(bx0 - ax1, ax0 - bx1) / min(a.size, b.size)
                best = min(best, (gap, a.text, b.text))
    return best


@pytest.mark.parametrize(("size", "theme"), [(None, "light"), ("slide", "presentation"),
                                             ("single", "light"), ("double", "dark")])
@pytest.mark.parametrize("stem", ["real_kernels_h100_h200", "llama31_8b_inference"])
def test_two_names_side_by_side_do_not_read_as_one(qapp, stem, size, theme):
    """Texts on one line in the plot are at least half an em apart: "g_512" and "g_1024"
    were a third of an em apart on the slide, a space's width, and read as one name."""
    fig = example_figure(stem, size, theme).figure()
    gap, a, b = _closest_on_a_line(fig)
    assert gap >= 0.5, (a, b, gap)


KEY_ROW = re.compile(r"^(\d+) — (.+)$")


def _key_numbers(pdf: bytes) -> dict[int, str]:
    """The key's rows as the page has them: number → the part or operation it names."""
    out = {}
    for t in read_figure(pdf).texts:
        found = KEY_ROW.match(t.text.strip())
        if found:
            out[int(found.group(1))] = found.group(2)
    return out


def test_a_models_parts_keep_their_numbers_at_every_size(qapp):
    """The Llama 3.1 8B example's parts are tagged by number at every size; a part's number
    is its place in the model (attention norm, QKV projection, RoPE, …), whichever names
    found a place: 2 is the QKV projection on a slide and on a paper column alike (it was
    RoPE on the slide, where the QKV projection's name found a place at first)."""
    keys = {size: _key_numbers(example_figure("llama31_8b_inference", size).pdf)
            for size in ("slide", "single", "double", None)}
    for size, numbers in keys.items():
        assert numbers, f"no key rows at {size}"
        for n, part in numbers.items():
            for other, theirs in keys.items():
                if n in theirs:
                    assert theirs[n] == part, (n, size, part, other, theirs[n])
    # the model's order: a layer's norm, then its QKV projection, then RoPE
    merged = {n: part for numbers in keys.values() for n, part in numbers.items()}
    assert merged[1] == "attention norm ×32"
    assert merged[2] == "QKV projection ×32"
    assert merged[3] == "RoPE ×32"
