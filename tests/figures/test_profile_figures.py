"""Figures of real profiles name every kernel they draw: a figure cannot be hovered, so each
profiled kernel on it carries a tag ("K3") by its marker and a row of the key ("K3 — name"),
and a figure draws only as many kernels of a run as it can name that way (those with the
most GPU time), saying how many it hides and what share of the run's time they hold.

Read back from the exported PDF and SVG, as a reader sees them, on real files as their tools
wrote them (``tests/fixtures``): a sampled training step from PyTorch's profiler (333
counted kernels, no GPU named: drawn on an A100), an Nsight Compute details export from an
A100, and a PyTorch trace from an MI250."""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest
from figures.figcheck import check_figure, check_readability, read_figure, tick_labels
from figures.test_figure_quality import attribution_defects

from workbench.io.measurements import attach_measurements, import_measurements
from workbench.io.profiles import add_machines
from workbench.io.sessions import loads_session
from workbench.model.chart.profiled_kernels import kernel_key_name, trace_operator
from workbench.ui.figures.export import figure_bytes, last_figure_canvas, resolve_size

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TRACE = FIXTURES / "kineto" / "sampled_rank-0.json.gz"
NCU = FIXTURES / "ncu_details_a100_bert_flashattn.csv"
AMD = FIXTURES / "kineto" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"
REAL = [(TRACE, "a100-80gb", "dram"), (NCU, "a100-80gb", "dram"), (NCU, "a100-80gb", "l1"),
        (NCU, "a100-80gb", "all"), (AMD, "mi250x", "dram")]


def profiled(path: Path, preset: str, level: str = "dram"):
    """A session of one machine with the kernels of ``path`` imported as one run (as the
    app imports a profile: the run is named by the file), drawn at the memory ``level``."""
    session = loads_session(f"schema_version: 2\ntitle: step\nhardware:\n"
                            f"  - preset: {preset}\nview: {{level: {level}}}\n"
                            f"operations: []\n")
    result = import_measurements(path, preset, run=path.name)
    add_machines(session, result)
    attach_measurements(session, result.measurements, str(path))
    return session


def drawn_kernels(canvas) -> list:
    """``(mark, label)`` of each profiled kernel the figure's canvas drew."""
    return [(mark, label) for mark, _link, label in canvas.overlays.measured_texts]


def page_text(pdf: bytes) -> str:
    """The words of the page, one space apart (the font's ligatures as their letters)."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        text = " ".join(" ".join(page.get_text().split()) for page in doc)
    return text.replace("\ufb01", "fi").replace("\ufb02", "fl")


@pytest.mark.parametrize(("path", "preset", "level"), REAL,
                         ids=lambda v: getattr(v, "name", v))
def test_a_single_column_figure_names_every_kernel_it_draws(path, preset, level):
    session = profiled(path, preset, level)
    pdf = figure_bytes(session, "pdf", resolve_size("single"))
    canvas = last_figure_canvas()
    drawn = drawn_kernels(canvas)
    assert drawn, "no kernel drawn"
    fig = read_figure(pdf)
    in_plot = [t.text.strip() for t in fig.texts
               if fig.plot[0] <= t.centre[0] <= fig.plot[2]
               and fig.plot[1] <= t.centre[1] <= fig.plot[3]]
    text = page_text(pdf)
    tags = {}
    for mark, label in drawn:
        # every marker carries its tag (placed: shown), and the key names the kernel
        assert re.fullmatch(r"K\d+", mark.tag), mark.name
        assert label.isVisible() and label.toPlainText() == mark.tag, mark.name
        tags[mark.tag] = mark.name
    for tag, name in tags.items():
        assert tag in in_plot, (tag, in_plot)
        assert f"{tag} — {kernel_key_name(name)}" in text, (tag, name)
    # as many tags in the plot as kernels drawn, and no key row for a kernel not drawn
    assert sorted(t for t in in_plot if re.fullmatch(r"K\d+", t)) == sorted(
        mark.tag for mark, _label in drawn)
    assert set(re.findall(r"\b(K\d+) —", text)) == set(tags)
    # the tags with their leaders mislead no reader: each text by its own marker
    assert check_figure(fig) + check_readability(fig) + attribution_defects(fig) == []
    if level == "l1":  # the kernels at their L1 intensity, under the A100's L1 roof
        assert "l1 19.1 TB/s" in text
        assert ("memory", "l1") in [(kind, name) for _hw, kind, name, _x, _y
                                    in canvas.roof_items()]


def test_a_kernel_drawn_on_every_machine_at_one_spot_is_tagged_once():
    """An Nsight Compute export names no machine: each kernel is judged on both machines of
    the session and drawn at one spot (its measured intensity and FLOP/s), twice. Its tag is
    said once there, not once per machine (two "K1" around one cross), and the figure names
    as many kernels as it would on one machine."""
    session = loads_session("schema_version: 2\ntitle: step\nhardware:\n"
                            "  - preset: a100-80gb\n  - preset: h100-sxm\noperations: []\n")
    result = import_measurements(NCU, None, run=NCU.name)
    attach_measurements(session, result.measurements, str(NCU))
    pdf = figure_bytes(session, "pdf", resolve_size("single"))
    drawn = drawn_kernels(last_figure_canvas())
    machines = {}
    for mark, _label in drawn:
        machines.setdefault(mark.tag, set()).add(mark.hw_id)
    assert machines and all(len(ids) == 2 for ids in machines.values()), machines
    shown = [label.toPlainText() for _mark, label in drawn if label.isVisible()]
    assert sorted(shown) == sorted(machines)  # each tag once
    fig = read_figure(pdf)
    in_plot = [t.text.strip() for t in fig.texts if fig.plot[0] <= t.centre[0] <= fig.plot[2]
               and fig.plot[1] <= t.centre[1] <= fig.plot[3]]
    assert sorted(t for t in in_plot if re.fullmatch(r"K\d+", t)) == sorted(machines)
    assert check_figure(fig) + check_readability(fig) + attribution_defects(fig) == []
    # as many kernels named as on a chart of one machine (the tag said once is not a tag
    # that found no place, which would draw fewer kernels)
    figure_bytes(profiled(NCU, "a100-80gb"), "pdf", resolve_size("single"))
    assert len(machines) == len(drawn_kernels(last_figure_canvas())) >= 5


def test_a_figure_draws_the_kernels_with_most_time_and_says_what_it_hides():
    session = profiled(TRACE, "a100-80gb")
    single = resolve_size("single")
    pdf = figure_bytes(session, "pdf", single)
    drawn = {mark.name for mark, _label in drawn_kernels(last_figure_canvas())}
    # one run: the trace's 372 counted kernels (311 before its 38 sums and 8 means, 21
    # distinct kernels, were counted as reductions, and its 2 softmax backwards, 1 kernel;
    # 333 before its sigmoid backwards, 7 kernels by shape, and tanh backwards, 2; 342 before
    # its layer norm backwards, 8, comparisons 6, logs 2, where and masked_fill_ 1 each; 360
    # before "long" was read as int64: 2 gathers and 2 scatter_add_, 2 index_select, 2
    # cumsum and 4 small adds, subs and fills of int64 tensors)
    # 402 since FBGEMM's operators and a few more are counted: 20 FBGEMM kernels by shape
    # (4 bounds checks, 4 permutations of sparse features and 2 of 2-D sparse data, 4
    # running sums, the pooled embeddings' permutation and its backward, 4 quantizations)
    # and 10 of aten (5 nan_to_num, logit and its backward, logical_and, scatter_,
    # linalg_vector_norm)
    kernels = session.measurements
    assert len(kernels) == 402
    # a 3.5-inch column cannot name 148 kernels (the 95 % rule): it draws fewer, each tagged
    assert 3 <= len(drawn) <= 20
    # those with the most GPU time (count × mean time) among the kernels with FLOPs (a copy
    # or a fill has no place on a log chart: said apart)
    empty = [m for m in kernels if not m.flops]
    ranked = sorted((m for m in kernels if m.flops), key=lambda m: -m.count * m.time_s)
    assert drawn == {m.name for m in ranked[:len(drawn)]}
    hidden = ranked[len(drawn):]
    total = sum(m.count * m.time_s for m in kernels)
    share = sum(m.count * m.time_s for m in hidden) / total
    assert (f"{TRACE.name}: the {len(drawn)} with the most GPU time drawn (as many as the "
            f"figure names); {len(hidden)} kernels hidden ({100 * share:.1f} % of the time); "
            f"{len(empty)} without FLOPs not drawn "
            f"({100 * sum(m.count * m.time_s for m in empty) / total:.1f} % of the time)"
            ) in page_text(pdf)
    # a double column has room to name more
    figure_bytes(session, "pdf", resolve_size("double"))
    assert len(drawn_kernels(last_figure_canvas())) > len(drawn)


def test_a_trace_figure_names_the_operator_each_kernel_ran_for():
    """A library kernel's name says its tile, not its work (cuDNN's attention ends
    "4x1x1_cga1x1x1_kernel0_0"): a trace's key row adds the operator and the shapes it was
    counted by, and two kernels of one operator and shape are told apart by element type.
    The H200 Llama pass (tests/fixtures/h200/llama.py: batch 4 × 512 tokens, hidden 2048,
    16 heads of 128, MLP 5632, vocabulary 32000)."""
    session = profiled(FIXTURES / "h200" / "kineto_llama.json.gz", "h200")
    pdf = figure_bytes(session, "pdf", resolve_size("single"))
    fig = read_figure(pdf)
    rows = dict(re.findall(r"\b(K\d+) — (.+?)(?= K\d+ — |$)", page_text(pdf)))
    drawn = {mark.tag for mark, _label in drawn_kernels(last_figure_canvas())}
    assert set(rows) == drawn and len(drawn) >= 8
    said = " | ".join(rows.values())
    # attention: q [4, 16, 512, 128] through PyTorch's cuDNN path
    assert "kernel0_0 (sdpa_cudnn_attention 4×16×512×128)" in said
    # the projections, A [tokens, hidden] · B: gate/up 2048 → 5632, the head 2048 → 32000
    assert "(mm 2048×2048, 2048×5632)" in said and "(mm 2048×2048, 2048×32000)" in said
    # the RMS norm's x·rsqrt(mean x²) in fp32 and its γ·x in bf16: one functor, one shape
    assert "MulFunctor (mul 4×512×2048 fp32)" in said
    assert "MulFunctor (mul 4×512×2048 bf16)" in said
    assert not re.search(r"#\d", said)  # (numbered only where nothing tells them apart)
    assert check_figure(fig) + check_readability(fig) + attribution_defects(fig) == []


@pytest.mark.parametrize(("width", "height"), [(1400, 300), (900, 500)])
def test_a_page_that_cannot_grow_still_names_every_kernel_it_draws(width, height):
    """A size in pixels keeps its page (a paper column grows for its key): the figure draws
    fewer kernels instead, each tagged by its marker and listed in the key."""
    session = profiled(TRACE, "a100-80gb")
    size = resolve_size(None, width, height, 96)
    pdf = figure_bytes(session, "pdf", size)
    drawn = drawn_kernels(last_figure_canvas())
    assert len(drawn) >= 3
    assert all(label.isVisible() and label.toPlainText() == mark.tag for mark, label in drawn)
    text = page_text(pdf)
    assert set(re.findall(r"\b(K\d+) —", text)) == {mark.tag for mark, _label in drawn}
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:  # the page as asked
        assert doc[0].rect.width == pytest.approx(width * 72 / 96, abs=1)
        assert doc[0].rect.height == pytest.approx(height * 72 / 96, abs=1)


@pytest.mark.parametrize(("width", "height"), [(700, 300), (1000, 260)])
def test_a_page_that_cannot_grow_lists_every_kernel_it_draws_on_two_machines(width, height):
    """The same on a chart of two machines, the trace's kernels judged on both (drawn on
    each at one spot): the kernels drawn are counted once each against the key's rows, not
    once per machine (at 700 × 300 the figure drew 10 kernels, tagged, and its key listed 3:
    K4 … K10 named nothing)."""
    session = loads_session("schema_version: 2\ntitle: step\nhardware:\n"
                            "  - preset: a100-80gb\n  - preset: h100-sxm\noperations: []\n")
    result = import_measurements(TRACE, None, run=TRACE.name)
    for m in result.measurements:
        m.hardware = None  # (the trace names an A100: judged on both machines instead)
    attach_measurements(session, result.measurements, str(TRACE))
    pdf = figure_bytes(session, "pdf", resolve_size(None, width, height, 96))
    canvas = last_figure_canvas()
    drawn = drawn_kernels(canvas)
    tags = {mark.tag for mark, _label in drawn}
    assert len(tags) >= 2 and {m.hw_id for m, _label in drawn} == {
        e.id for e in session.hardware}
    assert {label.toPlainText() for _mark, label in drawn if label.isVisible()} == tags
    assert set(re.findall(r"\b(K\d+) —", page_text(pdf))) == tags
    assert canvas.legend_item.dropped == 0


def test_the_svg_export_carries_the_same_tags_as_text():
    session = profiled(NCU, "a100-80gb")
    svg = figure_bytes(session, "svg", resolve_size("single")).decode("utf-8")
    tags = {mark.tag for mark, _label in drawn_kernels(last_figure_canvas())}
    texts = [re.sub(r"\s+", " ", t).strip()
             for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)]
    for tag in tags:
        assert tag in texts
        assert any(t.startswith(f"{tag} — ") for t in texts), tag


def test_the_live_chart_keeps_names_on_its_kernels(qtbot, open_window, tmp_path):
    """On screen, where a tooltip names every point, the chart draws the run's kernels by
    the View's rule and labels each with its name, not a figure's tag."""
    path = tmp_path / "a100.yaml"
    path.write_text("schema_version: 2\ntitle: step\nhardware:\n  - preset: a100-80gb\n"
                    "operations: []\n", encoding="utf-8")
    window = open_window(path)
    assert window.import_measurements(NCU)
    labels = [label.toPlainText() for _mark, _link, label in
              window.canvas.overlays.measured_texts]
    assert len(labels) == 8  # the 8 of the 10 kernels that make 95 % of the time
    assert not any(re.fullmatch(r"K\d+", t) for t in labels)
    assert any(t.startswith("fmha_fwd_loop_kernel: ") for t in labels), labels


def test_the_live_chart_says_each_kernel_once_naming_its_machines(qtbot, open_window,
                                                                  tmp_path):
    """On screen, a kernel of an Nsight Compute export (no machine named) on a chart of two
    machines is drawn at one spot twice: the text there is one, a line per machine, so a
    reader knows which verdict is whose."""
    path = tmp_path / "two.yaml"
    path.write_text("schema_version: 2\ntitle: step\nhardware:\n  - preset: a100-80gb\n"
                    "  - preset: h100-sxm\noperations: []\n", encoding="utf-8")
    window = open_window(path, size=(1600, 1000))
    assert window.import_measurements(NCU)
    window.canvas.flush_layout()
    spots: dict[tuple[float, float], list] = {}
    for mark, _link, label in window.canvas.overlays.measured_texts:
        spots.setdefault((mark.x, mark.y), []).append(label)
    assert spots and all(len(labels) == 2 for labels in spots.values())
    shown = [[label.toPlainText() for label in labels if label.isVisible()]
             for labels in spots.values()]
    assert all(len(texts) <= 1 for texts in shown), shown
    said = [texts[0].split("\n") for texts in shown if texts]
    assert said, "no kernel named"
    for lines in said:
        assert len(lines) == 3, lines
        assert lines[1].startswith("A100 SXM4 80GB: ") and lines[2].startswith("H100 SXM5 80GB: ")


@pytest.mark.parametrize(("name", "key"), [
    # a CUTLASS kernel grouped by its operator's shapes: the end of its name (its tile), the
    # operator and its inputs' shapes, no dtype
    ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align4>(cutlass_80_"
     "tensorop_s1688gemm_64x64_32x4_nn_align4::Params) [aten::bmm [2048,606,160]·[2048,160,20] "
     "fp32: 2·2048·606·20·160 FLOPs; bytes A + B + C]",
     "s1688gemm_64x64_32x4_nn_align4 (bmm 2048×606×160, 2048×160×20)"),
    # PyTorch's generic elementwise kernel is named by its functor
    ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
     "BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> > >"
     "(at::TensorIteratorBase&, at::native::BinaryFunctor<flo…", "DivFunctor"),
    # a name the profiler cut ("..."): its first parts, whole
    ("Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1...",
     "Cijk_Alik_Bljk_SB_Bias_AS_SAV"),
    ("fmha_fwd_loop_kernel", "fmha_fwd_loop_kernel"),
    # an Nsight Compute kernel grouped by its launch shape: its 43-character stem keeps its
    # last parts within 32 characters
    ("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float,"
     " 4>(long, at::PhiloxCudaState, T3, T4) [grid 768 block 256]",
     "elementwise_grid_stride_kernel (grid 768 block 256)"),
])
def test_key_names_are_whole_words(name, key):
    assert kernel_key_name(name) == key


def test_a_trace_count_gives_a_key_name_its_operator():
    kernel = "void fmha_kernel_64x128_4x1x1_cga1x1x1_kernel0_0(Params)"
    source = ("llama.json.gz: aten::_scaled_dot_product_flash_attention q [4,16,512,128] bf16:"
              " 2·4·16·512·512·(128 + 128) FLOPs")
    operator = trace_operator(source)
    assert operator == "aten::_scaled_dot_product_flash_attention q [4,16,512,128] bf16"
    assert kernel_key_name(kernel, operator=operator) == (
        "64x128_4x1x1_cga1x1x1_kernel0_0 (sdpa_flash_attention 4×16×512×128)")
    assert kernel_key_name(kernel, operator=operator, typed=True).endswith("4×16×512×128 bf16)")
    # a concatenation's inputs, joined by "+": the first two
    cat = trace_operator("t.json: aten::cat [4,4,512,64] + [4,4,512,64] + [1,1,1,1], 16-bit")
    assert kernel_key_name("CatArrayBatchedCopy", operator=cat) == (
        "CatArrayBatchedCopy (cat 4×4×512×64, 4×4×512×64)")
    # an operator counted without shapes in its head (an optimizer's tensor lists): its name
    adam = trace_operator("t.json: aten::_fused_adamw_ (AdamW) over 21 tensors, 88085504 "
                          "elements of c10::BFloat16: 15·88085504 FLOPs")
    assert kernel_key_name("multi_tensor_apply_kernel", operator=adam) == (
        "multi_tensor_apply_kernel (fused_adamw)")
    # a source that is not a trace's count (an Nsight Compute file) gives nothing
    assert trace_operator("ncu.csv: sm__inst_executed_pipe_tensor × 512 FLOPs") == ""
    # operators of other namespaces than aten (FBGEMM's), and an autograd function's backward
    # node, are named as aten's (they were left out: "bounds_check_indices_kernel" alone)
    bounds = trace_operator("t.json: fbgemm::bounds_check_indices indices [30111429] offsets "
                            "[2359297] int32 (2359296 bags): 0 ≤ index")
    assert kernel_key_name("bounds_check_indices_kernel", operator=bounds) == (
        "bounds_check_indices_kernel (bounds_check_indices 30111429, 2359297)")
    node = trace_operator("t.json: torch::autograd::CppNode<fbgemm_gpu::PermutePooledEmbs"
                          "Function<&fbgemm_gpu::permute_pooled_embs_gpu> > [2048,186588] fp32:"
                          " each table's columns")
    assert kernel_key_name("permute_pooled_embs_kernel", operator=node) == (
        "permute_pooled_embs_kernel (PermutePooledEmbsFunction backward 2048×186588)")


def test_a_slides_key_reads_at_half_its_tick_labels_size():
    """A slide is read from the back of a room: the key below its plot may shrink to give the
    chart its height, but not below 0.55 × the tick labels (it read 6.3 pt beside 16 pt
    ticks, the paper floor of 6 pt)."""
    session = profiled(FIXTURES / "h200" / "kineto_train.json.gz", "h200")
    slide = resolve_size("slide", theme="presentation")
    fig = read_figure(figure_bytes(session, "pdf", slide, theme="presentation"))
    ticks = [t.size for side in ("left", "bottom") for t in tick_labels(fig, side)]
    assert len(ticks) >= 8
    tick = sorted(ticks)[len(ticks) // 2]
    rows = [t for t in fig.texts if re.match(r"K\d+ — ", t.text.strip())]
    assert len(rows) >= 8  # (the key lists the kernels drawn, with their operators)
    assert tick > 14  # (a slide's tick labels in the presentation theme: about 16 pt)
    assert min(t.size for t in rows) >= 0.55 * tick - 0.1, (min(t.size for t in rows), tick)
    assert check_readability(fig) == []
