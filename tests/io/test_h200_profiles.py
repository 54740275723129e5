"""Profiles of one H200 as Nsight Compute and PyTorch's profiler wrote them
(tests/fixtures/h200/, recorded by this project: see the README there), of programs whose
sizes are known, so every number is worked out here by hand: tensor FLOPs per type on Hopper,
CUDA-core FLOPs, the traffic at each level, and what each tool counts that the other does not
(tiles run beyond the matrix, the tiles a causal mask skips)."""

from __future__ import annotations

import csv
import gzip
import io
import re
from pathlib import Path

import pytest

from workbench.io.kineto import read_kineto_trace
from workbench.io.ncu import import_ncu, import_ncu_text
from workbench.io.profiles import import_profile

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "h200"
RAW_HOPPER = HERE / "ncu_ops_raw_hopper.csv"
RAW_OLD_LIST = HERE / "ncu_ops_raw.csv"
DETAILS = HERE / "ncu_ops_details.csv"
LLAMA_RAW = HERE / "ncu_llama_raw.csv"
OPS_TRACE = HERE / "kineto_ops.json.gz"
LLAMA_TRACE = HERE / "kineto_llama.json.gz"


def _points(result) -> dict[str, object]:
    """The points by a short handle of their kernel's name."""
    handles = {"tst_256x128_64x4_1x2_h_bz_coopA_NNT": "mm", "bias_TNN": "linear",
               "hsh_256x128": "bmm", "simt_sgemm": "sgemm", "CUDAFunctor_add<float>": "add",
               "Gelu": "gelu", "SoftMax": "softmax", "layer_norm": "layer_norm",
               "sdpa": "attention"}
    out = {}
    for m in result.measurements:
        handle = next((h for key, h in handles.items() if key in m.name), None)
        if handle is not None:
            assert handle not in out, f"two points for {handle}"
            out[handle] = m
    return out


# -- Nsight Compute, raw page, with Hopper's counters


def test_hopper_tensor_counters_count_each_product_by_hand():
    points = _points(import_ncu(RAW_HOPPER))
    mm = points["mm"]  # bf16 4096 × 4096 × 4096 on tensor cores, nothing on CUDA cores
    assert mm.flops == 2 * 4096**3 == 137_438_953_472
    assert (mm.precision, mm.unit) == ("bf16", "matrix")
    assert mm.time_s == pytest.approx(175_840e-9)  # gpu__time_duration.sum in ns
    # 782 TFLOP/s: under the H200's 989.4 bf16 peak, and near what cuBLAS reaches
    assert 700e12 < mm.flops / mm.time_s < 989.4e12
    # fp16 batched product: Hopper counts fp16 in sm__ops_path_tensor_src_fp16.sum
    bmm = points["bmm"]
    assert bmm.flops == 2 * 32 * 1024 * 1024 * 128 == 8_589_934_592
    assert (bmm.precision, bmm.unit) == ("fp16", "matrix")


def test_a_raw_export_names_its_gpu_and_its_points_are_judged_on_that_preset():
    # the raw page says "NVIDIA H200" (device__attribute_display_name) on every row; its
    # points were judged on every machine of a session, an A100's and a TPU's too (a bf16
    # product "210 % of the A100's peak · re-measure")
    from workbench.io.measurements import attach_measurements, import_measurements
    from workbench.io.presets import get_preset
    from workbench.io.profiles import add_machines
    from workbench.model.session import HardwareEntry, Session

    with open(RAW_HOPPER, encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = next(i for i, r in enumerate(rows) if r[:1] == ["ID"])
    column = rows[header].index("device__attribute_display_name")
    assert {r[column] for r in rows[header + 2:]} == {"NVIDIA H200"}
    session = Session(hardware=[HardwareEntry(get_preset(p), preset=p)
                                for p in ("a100-80gb", "tpu-v5e")])
    result = import_measurements(RAW_HOPPER)
    assert result.gpu == "NVIDIA H200"
    assert "GPU 'NVIDIA H200': judged on the h200 preset" in result.notes
    added = add_machines(session, result)
    assert [e.preset for e in added] == ["h200"]
    attach_measurements(session, result.measurements, str(RAW_HOPPER))
    assert {m.hardware for m in session.measurements} == {"h200"}
    # a machine named for the points still takes them
    named = import_measurements(RAW_HOPPER, "a100-80gb")
    assert {m.hardware for m in named.measurements} == {"a100-80gb"} and not named.machines


def test_ncu_counts_the_tiles_a_product_ran_not_its_size():
    # linear: m 1024, n 11008, k 4096 with bias. The kernel's tiles are 168 columns wide and
    # 66 of them (11,088 columns) cover n: the tensor cores did 2·1024·4096·11088, and the
    # epilogue added the bias to each of the 1024·11088 elements (FADD)
    linear = _points(import_ncu(RAW_HOPPER))["linear"]
    assert linear.flops == 2 * 1024 * 4096 * 11088 + 1024 * 11088 == 93_024_239_616
    assert linear.flops > 2 * 1024 * 11008 * 4096  # the useful work, which the trace counts
    assert (linear.precision, linear.unit) == ("bf16", "matrix")


def test_cuda_core_products_and_elementwise_kernels_by_hand():
    points = _points(import_ncu(RAW_HOPPER))
    # fp32 2048³ with TF32 off runs on CUDA cores: 2048³ FFMAs (2 FLOPs each) and one FMUL
    # per element of C (α·acc)
    sgemm = points["sgemm"]
    assert sgemm.flops == 2 * 2048**3 + 2048**2 == 17_184_063_488
    assert (sgemm.precision, sgemm.unit) == ("fp32", "vector")
    # u + v over 2²⁶ fp32: PyTorch's add computes u + α·v, one FFMA per element, which ncu's
    # convention counts as 2 FLOPs: twice the one add per element a reader would count
    add = points["add"]
    assert add.flops == 2 * 2**26
    # through L1: u and v read and the sum written, 4 bytes each, exactly
    assert add.levels["l1"] == 3 * 4 * 2**26 == 805_306_368
    # DRAM is main memory: a little under the L1 bytes (some of the inputs were still in
    # the 60 MB L2 from the kernel before)
    assert add.bytes == add.levels["dram"]
    assert 0.95 * 805_306_368 < add.bytes <= 805_306_368
    # gelu and softmax read and write 2²⁶ elements (bf16: 2 bytes each way; fp32: 4)
    assert points["gelu"].levels["l1"] == 2 * 2 * 8192 * 8192
    assert points["softmax"].levels["l1"] == 2 * 4 * 4096 * 8192
    assert {points[k].unit for k in ("add", "gelu", "softmax", "layer_norm")} == {"vector"}


def test_attention_counts_its_two_products():
    # QKᵀ and P·V, not causal: 4·b·h·s²·d on tensor cores, plus the softmax's CUDA-core work
    attention = _points(import_ncu(RAW_HOPPER))["attention"]
    tensor = 4 * 4 * 32 * 2048**2 * 128
    assert tensor == 274_877_906_944
    assert tensor < attention.flops < 1.01 * tensor
    assert (attention.precision, attention.unit) == ("bf16", "matrix")


def test_every_kernel_is_counted_and_the_details_page_agrees():
    raw, details = import_ncu(RAW_HOPPER), import_ncu(DETAILS)
    assert raw.not_counted == [] and raw.dispatches == 9
    # the details page (--set roofline, one row per metric) of another run of one step:
    # the same FLOPs where they do not depend on timing, and the fp16 product left out (its
    # list had no Hopper fp16 counter)
    by_kernel = _points(details)
    for handle, m in _points(raw).items():
        if handle == "bmm":
            assert handle not in by_kernel
            continue
        assert by_kernel[handle].flops == m.flops, handle
        assert by_kernel[handle].time_s == pytest.approx(m.time_s, rel=0.05), handle


# -- Nsight Compute, without Hopper's fp16 counter


def test_a_product_whose_type_has_no_counter_is_listed_not_drawn_at_nothing():
    # the command line that named only Ampere's …_src_fp16_dst_fp32: ncu left it out
    # silently; the fp16 product ran 131,072 tensor instructions, which no column counts
    result = import_ncu(RAW_OLD_LIST)
    names = [m.name for m in result.measurements]
    assert not any("hsh_256x128" in n for n in names)
    (left,) = result.not_counted
    assert "hsh_256x128" in left.name and left.count == 2
    assert "131,072 tensor instructions" in left.reason
    assert "sm__ops_path_tensor_src_fp16.sum" in left.reason
    # the other eight kernels, two steps each, are counted as in the full export
    assert result.dispatches == 18 and len(result.measurements) == 8
    mm = _points(result)["mm"]
    assert mm.count == 2 and mm.flops == 2 * 4096**3


def _without(path: Path, dropped) -> str:
    """A real raw export with some metric columns taken out (as if not collected)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(io.StringIO("".join(lines[start:]))))
    keep = [j for j, h in enumerate(rows[0]) if not dropped(h)]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in rows:
        writer.writerow([row[j] for j in keep])
    return "".join(lines[:start]) + out.getvalue()


def test_tensor_instructions_give_no_flops_on_hopper():
    # the same export with only sm__inst_executed_pipe_tensor.sum for tensor cores. On
    # compute capability 9.0 an instruction's FLOPs depend on its shape (here 65,536 in the
    # 4096³ product: 137,438,953,472 / 2,097,152), and gelu ran 524,288 of them without a
    # matrix product: no FLOPs are made of them
    text = _without(RAW_HOPPER, lambda h: h.startswith("sm__ops_path_tensor"))
    result = import_ncu_text(text, "derived.csv")
    left = {n.name: n.reason for n in result.not_counted}
    assert len(left) == 4  # the three products on tensor cores and the attention
    assert all("compute capability 9.0" in reason for reason in left.values())
    points = _points(result)
    assert set(points) == {"sgemm", "add", "gelu", "softmax", "layer_norm"}
    full = _points(import_ncu(RAW_HOPPER))
    for handle, m in points.items():  # CUDA-core FLOPs, nothing made of tensor instructions
        assert m.flops == full[handle].flops and m.unit == "vector", handle


def test_a_type_counted_twice_is_read_once():
    # a counter of a type in all (…_src_fp16) beside its counters by accumulator
    # (…_src_fp16_dst_fp32) would count the same work twice: the by-accumulator ones are read
    header = ['"ID"', '"Kernel Name"', '"gpu__time_duration.sum"', '"dram__bytes.sum"',
              '"sm__ops_path_tensor_src_fp16.sum"', '"sm__ops_path_tensor_src_fp16_dst_fp32.sum"']
    text = "\n".join([",".join(header), '"","","nsecond","byte","",""',
                      '"0","hgemm","1,000","1,000,000","2,000","2,000"']) + "\n"
    (m,) = import_ncu_text(text, "hand.csv").measurements
    assert m.flops == 2000 and m.precision == "fp16"


# -- the Llama pass


def test_causal_attention_runs_five_eighths_of_its_tiles():
    # s = 512 in 64-row, 128-column tiles: row block i needs ceil((i+1)·64/128) column
    # blocks, 1+1+2+2+3+3+4+4 = 20 of 8·4 = 32. ncu counts the tiles run; the trace (its
    # is_causal recorded true) counts the scores the mask keeps, as the attention kind
    # counts a Flash kernel: c = 1 − 512/(2·512) = ½ of the whole product
    ncu = import_ncu(LLAMA_RAW)
    assert ncu.not_counted == [] and ncu.dispatches == 182
    (attention,) = [m for m in ncu.measurements if "sdpa" in m.name]
    dense = 4 * 4 * 16 * 512**2 * 128
    ran = dense * 20 // 32
    assert ran == 5_368_709_120
    assert attention.count == 4  # one a layer
    assert ran < attention.flops < 1.01 * ran
    traced = [m for m in read_kineto_trace(LLAMA_TRACE).measurements if "attention" in m.source]
    assert len(traced) == 4 and {m.flops for m in traced} == {dense // 2}
    assert all("causal" in m.source and "= 0.5" in m.source for m in traced)
    # the tiles on the diagonal run whole: between the scores kept and the whole product
    assert dense // 2 < ran < dense


# -- PyTorch profiler traces of the same programs


def test_trace_counts_every_kernel_of_the_known_operators():
    trace = read_kineto_trace(OPS_TRACE)
    assert trace.gpu == "NVIDIA H200" and trace.preset == "h200"
    assert trace.kernels == 18
    assert trace.notes[0].startswith("counted 100 % of GPU time (18 of 18 kernels")
    first = {}
    for m in trace.measurements:
        first.setdefault(m.source.split(": ", 1)[1].split(" ", 1)[0], m)
    mm = first["aten::mm"]  # the bf16 product comes first in each step
    assert mm.flops == 2 * 4096**3 and mm.bytes == 3 * 4096 * 4096 * 2
    linear = first["aten::addmm"]  # the useful work, not the tiles run
    assert linear.flops == 2 * 1024 * 11008 * 4096 == 92_341_796_864
    assert linear.bytes == (1024 * 4096 + 4096 * 11008 + 1024 * 11008 + 11008) * 2
    bmm = first["aten::bmm"]
    assert bmm.flops == 2 * 32 * 1024 * 1024 * 128 and bmm.precision == "fp16"
    add = first["aten::add"]  # one add per element (ncu counts the FFMA as 2)
    assert add.flops == 2**26 and add.bytes == 3 * 4 * 2**26
    norm = first["aten::native_layer_norm"]  # 8 per element; x, γ, β and y
    assert norm.flops == 8 * 8192 * 4096
    assert norm.bytes == (2 * 8192 * 4096 + 2 * 4096) * 2
    attention = first["aten::_scaled_dot_product_cudnn_attention"]
    assert attention.flops == 4 * 4 * 32 * 2048**2 * 128
    assert attention.bytes == 4 * (4 * 32 * 2048 * 128) * 2  # Q, K, V read and O written


def test_two_profilers_time_the_same_kernels_alike():
    # the trace's kernel durations and ncu's gpu__time_duration (clocks not locked) of the
    # same program, in separate runs: within 10 % for every kernel over 20 µs
    ncu = {m.name: m.time_s for m in import_ncu(RAW_HOPPER).measurements}
    compared = 0
    for m in read_kineto_trace(OPS_TRACE).measurements:
        if m.name in ncu:  # (library kernels: ncu spells templates apart, as T1, T2)
            assert m.time_s == pytest.approx(ncu[m.name], rel=0.10), m.name
            compared += 1
    assert compared == 8  # three products on tensor cores and the attention, in both steps


def test_rms_norm_pieces_of_the_llama_pass_are_counted():
    # Hugging Face's Llama writes RMSNorm as x.pow(2).mean(-1, keepdim=True): fp32
    # [4, 512, 2048], x·x per element, then 2048 sums of 2048
    trace = read_kineto_trace(LLAMA_TRACE)
    pows = [m for m in trace.measurements if "aten::pow" in m.source]
    means = [m for m in trace.measurements if "aten::mean" in m.source]
    assert len(pows) == len(means) == 9  # two a layer and the final norm
    n = 4 * 512 * 2048
    assert {(m.flops, m.bytes) for m in pows} == {(n, 2 * 4 * n)}
    assert {(m.flops, m.bytes) for m in means} == {(n, 4 * n + 4 * 4 * 512)}
    # RoPE's tables: cos and sin of fp32 [1, 512, 128], one FLOP an element (as exp and tanh)
    trig = [m for m in trace.measurements if re.search(r"aten::(cos|sin) ", m.source)]
    assert len(trig) == 2 and {(m.flops, m.bytes) for m in trig} == {(65536, 2 * 4 * 65536)}
    # the position ids: arange(0, 512, 1) into an int64 tensor, 512 values written
    (ids,) = [m for m in trace.measurements if "aten::arange" in m.source]
    assert (ids.flops, ids.bytes) == (0, 512 * 8)
    # nothing is left out
    assert trace.kernels == 182 and trace.not_counted == []


def test_concatenations_take_their_element_size_from_their_kernel():
    # PyTorch records aten::cat's inputs as one TensorList: shapes, no element type. Its CUDA
    # kernel names the size (CatArrayBatchedCopy<OpaqueType<2u>, …>). A copy: 0 FLOPs; each
    # input read once and the output, as large, written once.
    trace = read_kineto_trace(LLAMA_TRACE)
    cats = [m for m in trace.measurements if "aten::cat" in m.source]
    assert len(cats) == 17  # rotate_half of q and k in 4 layers, the KV cache's k and v, RoPE
    assert {m.flops for m in cats} == {0}
    by_bytes = sorted(m.bytes for m in cats)
    # q: two halves [4, 16, 512, 64] of bf16 → 2 · (2 · 4·16·512·64) · 2 bytes
    assert by_bytes.count(2 * (2 * 4 * 16 * 512 * 64) * 2) == 4 == 16_777_216 // 4_194_304
    # k (4 KV heads) and the cache's cat([0], [4, 4, 512, 128]): 2 · 4·4·512·128 · 2 each
    assert by_bytes.count(2 * (4 * 4 * 512 * 128) * 2) == 12
    # the fp32 RoPE table cat(freqs, freqs) of [1, 512, 64]: OpaqueType<4u>
    (table,) = [m for m in cats if m.precision == "fp32"]
    assert table.bytes == 2 * (2 * 512 * 64) * 4 and "OpaqueType<4u>" in table.source
    # so all of the pass is counted (99.6 % before sin, cos, the gather and arange were)
    assert trace.notes[0].startswith("counted 100 % of GPU time (182 of 182 kernels")


def test_the_import_line_names_each_kernel_left_out_apart(tmp_path):
    # the sine and cosine kernels differ only in their functor, far into their names, after
    # "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous
    # namespace)::": the line leaves the namespaces out so that, cut short, they read apart.
    # (sin and cos are counted now: their operators are renamed here to ones without a rule,
    # the kernels kept as the profiler wrote them)
    text = gzip.decompress(LLAMA_TRACE.read_bytes()).decode()
    text = text.replace('"aten::cos"', '"aten::erfinv"').replace('"aten::sin"', '"aten::lgamma"')
    renamed = tmp_path / "llama_renamed.json"
    renamed.write_text(text, encoding="utf-8")
    line = import_profile(renamed, "kineto").summary()
    assert " 2 kernels not counted (" in line
    listed = line.split("not counted (", 1)[1].rstrip(")").split(", …")[0]
    names = [n.strip() for n in re.split(r"…, |…$", listed) if n.strip()]
    trig = [n for n in names if n.startswith("vectorized_elementwise_kernel<4, ")]
    assert len(trig) == 2 and trig[0] != trig[1]
    assert {n.split(", ")[1][:3] for n in trig} == {"sin", "cos"}
    assert not any(n.startswith("void ") or "namespace)::" in n for n in names)


def test_graph_replays_and_generated_kernels_are_listed_with_their_reason():
    # graphs.py: one MLP block (256 × 4096 → 11008 → 4096, bf16) run eagerly, replayed from a
    # CUDA graph and compiled, two steps each: 3 kernels a step
    trace = read_kineto_trace(HERE / "kineto_graphs.json.gz")
    assert trace.kernels == 18
    # eager: addmm, gelu, addmm; compiled: its two GEMMs are extern aten::addmm calls
    linear = 2 * 256 * 11008 * 4096
    products = [m for m in trace.measurements if "aten::addmm" in m.source]
    assert len(products) == 8 and {m.flops for m in products} == {linear}
    gelus = [m for m in trace.measurements if "aten::gelu" in m.source]
    assert len(gelus) == 2 and {m.flops for m in gelus} == {9 * 256 * 11008}
    # the graph's 6 kernels and the compiled step's 2 Triton GELUs, each said why
    reasons = {what: n for what, n, _s in trace.not_counted}
    assert reasons == {
        "replayed from a CUDA graph (cudaGraphLaunch): its operators were recorded when the "
        "graph was captured, not in this trace": 6,
        "a kernel torch.compile generated (Triton): the operations it fuses are not in the "
        "trace": 2}
    # the graph replays the eager step's three kernels
    graph_kernels = {name[:80] for name, _s, why in trace.uncounted if "CUDA graph" in why}
    assert graph_kernels == {m.name[:80] for m in trace.measurements[:3]}


def test_a_training_step_counts_its_loss_forward_and_backward():
    # train.py: the loss's log-softmax over [2048 tokens, 32,000 words] in fp32, 4 bytes
    trace = read_kineto_trace(HERE / "kineto_train.json.gz")
    n = 2048 * 32000
    (forward,) = [m for m in trace.measurements if "aten::_log_softmax " in m.source]
    assert (forward.flops, forward.bytes) == (5 * n, 2 * 4 * n)  # x read, y written
    (backward,) = [m for m in trace.measurements
                   if "aten::_log_softmax_backward_data" in m.source]
    assert (backward.flops, backward.bytes) == (4 * n, 3 * 4 * n)  # dy, y read; dx written
    assert backward.precision == "fp32" and backward.unit == "vector"
    # the fused AdamW step: its tensor lists carry no element type; its kernel names it
    # (FusedAdamMathFunctor<c10::BFloat16, …>). train.py's parameters, by hand: the embedding
    # and the untied lm_head 32000·1024 each; a layer's q and o 1024², k and v 256·1024, gate,
    # up and down 2816·1024, two norms 1024; two layers and the final norm
    layer = 2 * 1024**2 + 2 * 256 * 1024 + 3 * 2816 * 1024 + 2 * 1024
    n = 2 * 32000 * 1024 + 2 * layer + 1024
    assert n == 88_085_504
    (adamw,) = [m for m in trace.measurements if "aten::_fused_adamw_" in m.source]
    # weight decay 0.01 (AdamW's default): 2 + m 3 + v 4 + denominator 3 + step 3 = 15 an
    # element; p, g, m, v read and p, m, v written: 7 bf16 values an element
    assert (adamw.flops, adamw.bytes, adamw.precision) == (15 * n, 7 * 2 * n, "bf16")
    assert "(+4 kernels)" in adamw.name  # its five launches, one point
    # all of the step's GPU time is counted (96 % before the embedding's backward, silu's
    # backward, the loss, sin, cos, x³, the position ids and the step counters were; 81 %
    # before the optimizer, 79 % before its nine concatenations, 66 % before the loss's two
    # kernels), said as 100 %, not as a sum of its kernels in another order (99.99999 %)
    assert trace.notes[0].startswith("counted 100 % of GPU time (295 of 295 kernels")
    assert trace.not_counted == []


def test_a_training_step_counts_its_embedding_loss_and_activation_backward():
    trace = read_kineto_trace(HERE / "kineto_train.json.gz")

    def only(operator):
        (m,) = [m for m in trace.measurements if f"{operator} " in m.source]
        return m

    tokens, hidden = 4 * 512, 1024  # train.py: batch 4 × 512 tokens, hidden size 1,024
    # the embedding's weight gradient: each of the 2,048 rows of dy (bf16 [4, 512, 1024])
    # added into its word's row of dW: one add an element; the int64 indices, dy, and the
    # rows of dW read and written (the 32,000-row dW zeroed by a fill kernel of its own)
    emb = only("aten::embedding_dense_backward")
    assert emb.flops == tokens * hidden == 2_097_152
    assert emb.bytes == tokens * 8 + 3 * tokens * hidden * 2 == 12_599_296
    assert emb.time_s == pytest.approx(92.832e-6)  # 136 GB/s: far under the H200's roof
    # silu's backward over the MLP's [4, 512, 2816] bf16: 9 FLOPs an element, dy and x read,
    # dx written; two layers, one point each
    silus = [m for m in trace.measurements if "aten::silu_backward " in m.source]
    n = tokens * 2816
    assert len(silus) == 2 and {(m.flops, m.bytes) for m in silus} == {(9 * n, 3 * 2 * n)}
    # the loss: nll_loss over fp32 [2048, 32000], a mean; forward: one add a row, the 2,048
    # targets (int64) and the scores they pick read, the loss and the total weight written
    forward = only("aten::nll_loss_forward")
    assert (forward.flops, forward.bytes) == (tokens, tokens * (8 + 4) + 2 * 4)
    # backward: −dy/total_weight at each row's target: 2 a row; targets, dy (one fp32) read,
    # the 2,048 elements written (the 2048 × 32000 dx zeroed by a fill of its own)
    backward = only("aten::nll_loss_backward")
    assert (backward.flops, backward.bytes) == (2 * tokens, tokens * (8 + 4) + 4)
    # the embedding's lookup (aten::embedding → index_select → gather): 2,048 rows × 1,024
    # bf16 elements of the [32000, 1024] table. The index is recorded as [2048, 1024], but
    # its kernel, vectorized_gather_kernel, is PyTorch's for an index expanded along its
    # last dimension: 2,048 int64 indices in memory, not 2,097,152. Counted as 2,097,152
    # the bytes (25.2 MB) would take 5.24 µs at the H200's 4.8 TB/s, more than the 3.9 µs
    # the kernel took
    gather = only("aten::gather")
    assert (gather.flops, gather.bytes) == (0, tokens * 8 + 2 * tokens * hidden * 2)
    assert gather.time_s == pytest.approx(3.904e-6)
    assert gather.bytes / 4.8e12 < gather.time_s
    # the step counters: _foreach_add_(21 fp32 scalars, 1), typed by its kernel's
    # BinaryOpScalarFunctor<float, …>: one add each, read and written
    steps = only("aten::_foreach_add_")
    assert (steps.flops, steps.bytes, steps.precision) == (21, 2 * 21 * 4, "fp32")
    # RMSNorm's rsqrt backward (−½·dy·y³) takes y³ of fp32 [4, 512, 1], five norms: x·x·x,
    # 2 FLOPs an element
    cubes = [m for m in trace.measurements if "aten::pow [4,512,1] fp32 ^ 3" in m.source]
    assert len(cubes) == 5 and {(m.flops, m.bytes) for m in cubes} == {(2 * 2048, 2 * 4 * 2048)}
