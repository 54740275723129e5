"""Exported figures need no touching up: every example session, and generated sessions with
many operations, long names and clustered intensities, exported to PDF at every size and
theme, read back from the file, have no text over text, no text over data, nothing
truncated and no text off the page; every name, tag, roof value, ridge and sweep text
names what a reader pairs it with (the nearest marker or line is its own, or a leader
joins them); and they read at their size: no text under 6 pt, axis
titles at least 7 pt and 0.8 × their tick labels, a plot taking its share of the page, a
legend beside or below it taking at most about a third, the decades of the y axis labelled."""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES
from figures.example_figures import example_figure
from figures.figcheck import (
    MAX_LEGEND_SHARE,
    canvas_attribution,
    check_attribution,
    check_figure,
    check_readability,
    format_defects,
    legend_share,
    pdf_attribution,
    read_figure,
    read_svg,
    tick_labels,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from workbench.io.sessions import load_session, loads_session
from workbench.model.analysis import evaluate_session
from workbench.model.chart.scene import build_scene
from workbench.ui.figures.export import (
    figure_bytes,
    figure_svg_sized,
    last_figure_canvas,
    resolve_size,
    svg_to_pdf,
)

SIZES = (None, "slide", "single", "double")
THEMES = ("light", "dark", "presentation")
PRESETS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "hardware_presets").glob("*.yaml"))


def figures_of(session, size: str | None, theme: str):
    """The PDF page and the SVG file of one export, read back."""
    svg, size_ = figure_svg_sized(session, resolve_size(size, theme=theme), theme=theme)
    fig = read_figure(svg_to_pdf(svg, size_, session.title))
    # the words are in the file as text (not outlines), so the checker can see every label
    assert any("intensity" in t.text.lower() for t in fig.texts), [t.text for t in fig.texts]
    return fig, read_svg(svg)


def defects_of(session, size: str | None, theme: str) -> list:
    fig, svg = figures_of(session, size, theme)
    return (check_figure(fig) + check_readability(fig) + attribution_defects(fig)
            + check_attribution(*pdf_attribution(svg, last_figure_canvas())))


def attribution_defects(fig) -> list:
    """Texts that name the wrong thing: as the figure's canvas placed them, and as the
    file has them."""
    canvas = last_figure_canvas()
    return (check_attribution(*canvas_attribution(canvas))
            + check_attribution(*pdf_attribution(fig, canvas)))


def y_decades(session) -> float:
    """How many decades of FLOP/s the chart's y axis spans at least (the scene's range; a
    figure may show a little more)."""
    lo, hi = build_scene(session, evaluate_session(session)).y_range
    return math.log10(hi / lo)


def _flat(text: str) -> str:
    """``text`` with no-break spaces as spaces and without word joiners."""
    return unicodedata.normalize("NFKC", text).replace("\u2060", "")


def _name(size: str | None, theme: str) -> str:
    return f"{size or 'default'}/{theme}"


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: s or "default")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_figures_are_clean(qapp, path, size, theme):
    session = load_session(path)
    exported = example_figure(path.stem, size, theme)
    fig = exported.figure()
    # the words are in the file as text (not outlines), so the checker can see every label
    assert any("intensity" in t.text.lower() for t in fig.texts), [t.text for t in fig.texts]
    defects = check_figure(fig) + check_readability(fig) + list(exported.attribution)
    if defects:
        pytest.fail(format_defects(defects, f"{path.name} at {_name(size, theme)}"), pytrace=False)
    # a ridge is said once at most: by its diamond, or in the key after its machine's name
    said = _flat(" ".join(t.text for t in fig.texts))
    ridges = Counter(r.label.split(": ", 1)[-1]
                     for r in build_scene(session, evaluate_session(session)).ridges)
    for words, count in ridges.items():
        assert said.count(words) <= count, (_name(size, theme), words, said)
    # a y axis over three decades or more names at least three of them
    ticks = [t.text for t in tick_labels(fig, "left")]
    if y_decades(session) >= 3:
        assert len(ticks) >= 3, (f"{path.name} at {_name(size, theme)}: y tick labels {ticks}")


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: s or "default")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_svg_exports_name_what_they_mean(qapp, path, size, theme):
    """The SVG file of each example, read as XML (each text element a line), names what a
    reader pairs it with, as its PDF does; and the reader finds every line of the PDF page
    and every name the PDF check paired with its point."""
    exported = example_figure(path.stem, size, theme)
    assert not exported.svg_unread, (_name(size, theme), exported.svg_unread)
    defects = list(exported.svg_attribution)
    if defects:
        pytest.fail(format_defects(defects, f"{path.stem}.svg at {_name(size, theme)}"),
                    pytrace=False)


# ---------------------------------------------------------------------------------------------
# generated sessions

WORDS = ["GEMM", "attention", "decode", "prefill", "FFN", "up-projection", "down", "softmax",
         "RMSNorm", "fused", "int4 weights", "QKᵀ", "batch=64", "(M=8192)", "layer 12", "KV cache",
         "all-reduce", "warp-specialised", "split-K", "persistent", "tile 128×256", "epilogue"]


#: names as a profiler reports them
KERNELS = ["sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute",
           "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>",
           "flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>, true>"]


@st.composite
def names(draw) -> str:
    """Kernel names as people write them (a few words, sometimes nine) or as a profiler
    reports them (a hundred characters)."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from(KERNELS))
    n = draw(st.integers(1, 9))
    return " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=n, max_size=n)))


@st.composite
def sessions(draw) -> tuple[str, str | None, str]:
    """A session file's text with 1–40 operations on 1–4 preset machines, and a size and
    theme to export it at."""
    machines = draw(st.lists(st.sampled_from(PRESETS), min_size=1, max_size=4, unique=True))
    count = draw(st.integers(1, 40))
    # intensities in a few tight clusters (log10 FLOP/byte), the way kernels of one model sit
    centres = draw(st.lists(st.floats(-1.0, 4.0), min_size=1, max_size=3))
    operations = []
    for i in range(count):
        centre = centres[draw(st.integers(0, len(centres) - 1))]
        intensity = 10 ** (centre + draw(st.floats(-0.08, 0.08)))
        moved = 10 ** draw(st.floats(6.0, 12.0))
        operations.append({"name": draw(names()) if draw(st.booleans()) else f"kernel {i}",
                           "kind": "custom", "flops": float(f"{intensity * moved:.6g}"),
                           "bytes": float(f"{moved:.6g}"), "precision": "bf16"})
    title = draw(st.sampled_from([
        "Kernels",
        "Decoder layer on three GPUs — prefill and decode, all kernels, bf16",
        "A very long figure title that names the model, the batch size, the sequence length, "
        "the precision and every machine it was measured on",
    ]))
    data = {"schema_version": 1, "title": title,
            "hardware": [{"preset": m} for m in machines], "operations": operations}
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    return text, draw(st.sampled_from(SIZES)), draw(st.sampled_from(THEMES))


# A fixed set of examples (derandomised) and no shrinking: a failure reports the session it
# found, in full, in bounded time; each export takes a few tenths of a second.
@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=sessions())
def test_generated_figures_are_clean(qapp, case):
    text, size, theme = case
    session = loads_session(text, "generated.yaml")
    defects = defects_of(session, size, theme)
    ops = len(session.operations)
    if defects:
        pytest.fail(format_defects(
            defects, f"{ops} operations on {len(session.hardware)} machines at {_name(size, theme)}")
            + f"\nsession:\n{text}", pytrace=False)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: s or "default")
def test_a_long_legend_leaves_the_plot_its_room(qapp, size):
    """Fourteen unlabelled points of a whole model: a legend listing them all below a
    single-column figure squeezed the plot to a strip. The figure lists fewer operations
    (counting the rest in one line) until the legend takes at most about a third of the
    figure."""
    session = load_session(next(p for p in EXAMPLES if p.stem == "llama31_8b_inference"))
    session.view.legend = True
    size_ = resolve_size(size)
    fig = read_figure(figure_bytes(session, "pdf", size_))
    page_height = fig.page[3] - fig.page[1]
    plot_height = fig.plot[3] - fig.plot[1]
    assert plot_height >= 0.3 * page_height, (size, plot_height, page_height)
    assert legend_share(fig) <= MAX_LEGEND_SHARE, (size, legend_share(fig))
    texts = [t.text for t in fig.texts]
    assert any(t.startswith("NVIDIA H100") for t in texts), texts  # the machines stay named


def _edited(stem: str, params: dict, memory: dict):
    """An example with some operations' parameters (by name) and machines' memory levels
    (by machine name, bytes/s) set as a user might have set them."""
    session = load_session(next(p for p in EXAMPLES if p.stem == stem))
    for entry in session.operations:
        entry.operation.params.update(params.get(entry.operation.name, {}))
    for entry in session.hardware:
        entry.hardware.memory.update(memory.get(entry.hardware.name, {}))
    return session


def test_an_axis_keeps_room_for_the_tick_labels_of_the_plot_as_laid_out():
    """The real-kernels example edited to span 100 MFLOP/s to 1 EFLOP/s, exported at double
    column in the presentation theme: placing the texts moved the legend below the plot,
    and the shorter plot labelled other decades ("100 MFLOP/s", wider than those measured
    before), drawn over the y axis title by 3.6 pt. The axes are measured again once the
    texts are placed."""
    session = _edited("real_kernels_h100_h200", {
        "g_4096": {"k": 2048}, "ffn_m64": {"n": 16}, "ffn_m4096": {"m": 30000},
        "g_tf32_8192": {"n": 30000}, "bmm_qk": {"k": 2048},
        "fa_prefill_causal": {"heads": 2048, "kv_len": 30000},
        "naive_prefill": {"batch": 8192}, "softmax_small": {"cols": 3}},
        {"NVIDIA H100 SXM5 80GB": {"hbm": 6.7e12, "l2": 19.6e12},
         "NVIDIA H200 SXM 141GB": {"hbm": 19.2e12, "l1": 16.45e12}})
    fig, _svg = figures_of(session, "double", "presentation")
    ticks = [t.text for t in tick_labels(fig, "left")]
    assert "100 MFLOP/s" in ticks, ticks
    defects = check_figure(fig)
    assert not defects, format_defects(defects, "the edited real-kernels example")


def test_a_roofs_value_is_led_to_its_line_where_no_point_sits():
    """The Llama 8B example with the H100's memory twice as fast, at single column: the
    MI300X's memory roof, in view only where the points sit on it, had its value "hbm
    5.3 TB/s" led to the middle of that part, onto a marker (read as that point's). Its
    leader now runs to a spot between the points, or the value is not said."""
    session = _edited("llama31_8b_inference", {}, {"NVIDIA H100 SXM5 80GB": {"hbm": 6.7e12}})
    fig, _svg = figures_of(session, "single", "light")
    defects = attribution_defects(fig)
    assert not defects, format_defects(defects, "the Llama 8B example, H100 memory x 2")
    assert any(t.text == "hbm 5.3 TB/s" for t in fig.texts), "the MI300X's memory is said"


def test_a_leader_does_not_end_beside_another_text():
    """The teaching machine with the exercise machine's memory halved and two GEMMs
    reshaped, at 800 × 600 px and 200 dpi: the roof value "hbm 1 TB/s" was led down to its
    line from 4 pt beside the name "I = 20" (the file read back gave "I = 20" that leader).
    Each leader now ends clear of the other texts."""
    session = _edited("teaching_machine", {
        "GEMM N=128 fp16": {"m": 100, "k": 1}, "GEMM N=1024 fp16": {"k": 1000}},
        {"Exercise machine (20 TFLOP/s, 800 GB/s)": {"dram": 400e9}})
    size = resolve_size(None, 800, 600, 200.0, "light")
    svg, size_ = figure_svg_sized(session, size, theme="light")
    fig = read_figure(svg_to_pdf(svg, size_, session.title))
    defects = attribution_defects(fig)
    assert not defects, format_defects(defects, "the edited teaching machine at 800 x 600")
    assert any(t.text == "I = 20" for t in fig.texts)


def test_a_figure_without_a_title_after_one_with_a_title_stays_on_its_page(qapp):
    """The Llama FFN example (titled) exported, then the fusion example without its title
    as a single column: the second figure's plot kept the width of the first one's title
    and ran 149 pt past the page's right edge, roofs' values and ridges with it."""
    first = load_session(next(p for p in EXAMPLES if p.stem == "llama_ffn"))
    assert first.title
    figure_bytes(first, "pdf", resolve_size("double", theme="presentation"),
                 theme="presentation")
    second = load_session(next(p for p in EXAMPLES if p.stem == "fusion"))
    second.title = None
    fig = read_figure(figure_bytes(second, "pdf", resolve_size("single")))
    assert fig.plot[2] <= fig.page[2]
    defects = check_figure(fig)
    assert not defects, format_defects(defects, "the fusion example after a titled figure")


def test_no_two_leaders_cross_in_the_real_kernels_double_column(qapp, monkeypatch):
    """The real-kernels example in a double column: two kernels' leaders crossed just past
    their markers, each text then nearest the other's marker along its line. The leaders
    drawn (those of the figure's last placing) are checked pairwise, as segments."""
    from workbench.model.chart import placement

    placings: list[dict] = []
    place_all = placement.TextLayout.place_all

    def kept(self, *args, **kwargs):
        out = place_all(self, *args, **kwargs)
        placings.append(dict(self.placed))
        return out

    monkeypatch.setattr(placement.TextLayout, "place_all", kept)
    session = load_session(next(p for p in EXAMPLES if p.stem == "real_kernels_h100_h200"))
    figure_bytes(session, "svg", resolve_size("double"))
    leaders = [p.leader for p in placings[-1].values() if p.leader is not None]
    assert len(leaders) > 10

    def side(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    crossing = [(p, q) for i, p in enumerate(leaders) for q in leaders[i + 1:]
                if side(q[:2], q[2:], p[:2]) * side(q[:2], q[2:], p[2:]) < 0
                and side(p[:2], p[2:], q[:2]) * side(p[:2], p[2:], q[2:]) < 0]
    assert not crossing
