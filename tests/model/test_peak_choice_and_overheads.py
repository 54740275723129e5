"""Which peak an operation meets, which precision stands in, and when it is overhead-bound,
each rule pinned by hand-computed numbers.

* vector work (elementwise, norm, softmax, reduction) meets the vector peak, matrix work
  (GEMM, attention) the matrix peak, and the chart draws the roof that was used;
* a precision falls back only to a wider one (int32 never to the int8 tensor peak; fp8 to
  bf16 before fp16), or the pair is refused with the reason;
* naive causal attention executes every FLOP; Flash skips the masked blocks;
* one rule for "overhead-bound" and the predicted time; an unfused chain pays a launch per
  step, and so does its speed-up against the fused chain;
* swept points are checked like typed ones.
"""

from __future__ import annotations

import pytest

from workbench.model.analysis import evaluate_session
from workbench.model.chart.scene import build_scene
from workbench.model.comparison import compare_session
from workbench.model.hardware import Hardware, UnsupportedPrecision
from workbench.model.operations import Operation
from workbench.model.roofline import evaluate
from workbench.model.session import Comparison, HardwareEntry, OperationEntry, Session
from workbench.model.sweeps import Sweep, SweepError, evaluate_sweep

TB = 1e12


def h100(**more) -> Hardware:
    """H100 SXM5 as the Hopper whitepaper prints it: tensor-core (matrix) peaks dense, and
    the non-tensor (vector) peaks beside them."""
    return Hardware(
        "H100", compute={"fp64": 67 * TB, "fp32": 67 * TB, "tf32": 494.7 * TB,
                         "bf16": 989.4 * TB, "fp16": 989.4 * TB, "fp8": 1979 * TB,
                         "int8": 1979 * TB},
        vector_compute={"fp64": 33.5 * TB, "fp32": 66.9 * TB, "bf16": 133.8 * TB,
                        "fp16": 133.8 * TB, "int32": 33.5 * TB},
        memory={"hbm": 3.35 * TB}, **more)


GELU = Operation("elementwise", {"n": 1 << 24, "dtype": "bf16", "input": "x", "output": "y",
                                 "steps": [{"op": "gelu"}], "fused": True}, "gelu")
VECTOR_OPS = [
    GELU,
    Operation("norm", {"variant": "rmsnorm", "rows": 4096, "hidden": 8192, "dtype": "bf16"}),
    Operation("softmax", {"rows": 4096, "cols": 4096, "dtype": "bf16"}),
    Operation("reduction", {"op": "sum", "n": 1 << 24, "rows": 1, "dtype": "bf16"}),
]
MATRIX_OPS = [
    Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16"}),
    Operation("attention", {"heads": 32, "head_dim": 128, "query_len": 4096, "kv_len": 4096,
                            "dtype": "bf16"}),
]


# ---------------------------------------------------------------------------------------------
# vector work gets the vector peak


@pytest.mark.parametrize("op", VECTOR_OPS, ids=lambda o: o.kind)
def test_vector_kinds_meet_the_vector_peak(op):
    r = evaluate(op, h100())
    assert r.unit == "vector"
    assert r.peak_flops == 133.8 * TB  # not the 989.4 TFLOP/s of the tensor cores
    assert r.ridge == pytest.approx(133.8 / 3.35)  # 39.9 FLOP/B, not 295


@pytest.mark.parametrize("op", MATRIX_OPS, ids=lambda o: o.kind)
def test_matrix_kinds_meet_the_matrix_peak(op):
    r = evaluate(op, h100())
    assert r.unit == "matrix"
    assert r.peak_flops == 989.4 * TB
    assert r.ridge == pytest.approx(989.4 / 3.35)


def test_a_bf16_gelu_on_an_h100():
    r = evaluate(GELU, h100())
    # 9 FLOPs per element, 2 + 2 bytes per element: I = 2.25 FLOP/B, memory-bound either way
    assert r.intensity == 2.25
    assert r.ridge == pytest.approx(39.940, abs=1e-3)
    assert r.attainable_flops == pytest.approx(2.25 * 3.35 * TB)


def test_fp8_vector_work_runs_at_the_wider_vector_peak():
    op = Operation("elementwise", {**GELU.params, "dtype": "fp8"})
    r = evaluate(op, h100())
    assert (r.unit, r.precision_used, r.peak_flops) == ("vector", "bf16", 133.8 * TB)
    assert "fp8 runs at the bf16 peak" in r.ceiling_note


def test_a_machine_without_vector_peaks_says_the_matrix_peak_stands_in():
    bare = Hardware("bare", compute={"bf16": 100 * TB}, memory={"hbm": TB})
    r = evaluate(GELU, bare)
    assert (r.unit, r.peak_flops) == ("matrix", 100 * TB)
    assert "no vector peaks" in r.ceiling_note


def test_custom_operations_choose_their_unit():
    op = Operation("custom", {"flops": 1e12, "bytes": 1e9, "precision": "fp64",
                              "unit": "vector"})
    assert evaluate(op, h100()).peak_flops == 33.5 * TB  # a stencil on the FP64 vector units
    op.params["unit"] = "matrix"
    assert evaluate(op, h100()).peak_flops == 67 * TB


def session_of(machines, ops) -> Session:
    return Session(hardware=[HardwareEntry(hw) for hw in machines],
                   operations=[OperationEntry(op) for op in ops])


def test_the_chart_draws_the_roof_that_was_used():
    session = session_of([h100()], [GELU])
    scene = build_scene(session, evaluate_session(session))
    flat = {r.name: r.value for r in scene.roofs if r.kind == "compute" and not r.derated}
    assert flat == {"bf16 vector": 133.8 * TB}
    (ridge,) = scene.ridges
    assert ridge.x == pytest.approx(133.8 / 3.35)
    (point,) = scene.points
    assert point.y == pytest.approx(2.25 * 3.35 * TB)
    # with a GEMM beside it, both roofs are drawn
    session = session_of([h100()], [GELU, MATRIX_OPS[0]])
    scene = build_scene(session, evaluate_session(session))
    flat = {r.name: r.value for r in scene.roofs if r.kind == "compute" and not r.derated}
    assert flat == {"bf16": 989.4 * TB, "bf16 vector": 133.8 * TB}


# ---------------------------------------------------------------------------------------------
# precision fallback: only to a wider precision


def test_int32_never_falls_back_to_the_int8_tensor_peak():
    op = Operation("reduction", {"op": "sum", "n": 1 << 24, "dtype": "int32"})
    r = evaluate(op, h100())
    assert (r.precision_used, r.peak_flops) == ("int32", 33.5 * TB)
    # on the matrix units (a GEMM) there is no int32 peak: fp64 holds every int32 value
    gemm = Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": "int32"})
    r = evaluate(gemm, h100())
    assert (r.precision_used, r.peak_flops) == ("fp64", 67 * TB)
    # and a machine without anything wide enough refuses
    narrow = Hardware("int8 only", compute={"int8": 100 * TB, "bf16": 50 * TB},
                      memory={"hbm": TB})
    with pytest.raises(UnsupportedPrecision, match="no int32 peak"):
        evaluate(gemm, narrow)


def xeon() -> Hardware:
    """Xeon 8480 as preset: AVX-512 fp64/fp32/fp16, AMX bf16/int8."""
    return Hardware("Xeon", compute={"fp64": 3.584 * TB, "fp32": 7.168 * TB,
                                     "fp16": 14.34 * TB, "bf16": 114.7 * TB,
                                     "int8": 229.4 * TB}, memory={"ddr5": 307.2e9})


def test_fp8_gemm_on_a_xeon_gets_amx_bf16_not_avx512_fp16():
    op = Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": "fp8"})
    r = evaluate(op, xeon())
    assert (r.precision_used, r.peak_flops) == ("bf16", 114.7 * TB)


@pytest.mark.parametrize("precision, peaks", [
    ("fp16", {"bf16": 197 * TB, "int8": 394 * TB}),  # a TPU has no fp16 peak
    ("fp32", {"tf32": 156 * TB, "bf16": 312 * TB}),  # tf32 does not hold fp32's values
    ("int8", {"fp8": 100 * TB}),  # fp8 holds no int8 values exactly
])
def test_no_fallback_to_a_narrower_precision(precision, peaks):
    hw = Hardware("narrow", compute=peaks, memory={"hbm": TB})
    op = Operation("custom", {"flops": 1e12, "bytes": 1e9, "precision": precision})
    with pytest.raises(UnsupportedPrecision, match=f"no {precision} peak"):
        evaluate(op, hw)


def test_an_unsupported_pair_is_skipped_with_the_reason():
    session = session_of([Hardware("TPU-like", compute={"bf16": 197 * TB},
                                   memory={"hbm": 819e9})],
                         [Operation("gemm", {"m": 64, "n": 64, "k": 64, "dtype": "fp16"})])
    (pair,) = evaluate_session(session)
    assert pair.result is None
    assert "has no fp16 peak" in pair.skipped.reason


# ---------------------------------------------------------------------------------------------
# causal attention


def attention(implementation: str) -> Operation:
    return Operation("attention", {"implementation": implementation, "batch": 2, "heads": 8,
                                   "head_dim": 64, "query_len": 1024, "kv_len": 1024,
                                   "causal": True, "dtype": "bf16"})


def test_naive_causal_attention_counts_every_executed_flop():
    counts = attention("naive").counts()
    assert counts.flops == 4 * 2 * 8 * 1024 * 1024 * 64  # 4.29e9: the mask is applied after
    assert any("every score is computed" in note for note in counts.notes)


def test_flash_causal_attention_skips_the_masked_blocks():
    counts = attention("flash").counts()
    assert counts.flops == 4 * 2 * 8 * 1024 * 1024 * 64 / 2
    assert any("masked blocks are skipped" in note for note in counts.notes)


# ---------------------------------------------------------------------------------------------
# launch overhead: one rule


def machine(overhead=8e-6, efficiency=0.8) -> Hardware:
    return Hardware("m", compute={"bf16": 100 * TB, "fp32": 50 * TB}, memory={"hbm": TB},
                    launch_overhead=overhead, efficiency=efficiency)


def custom_with_t_lower(seconds: float) -> Operation:
    return Operation("custom", {"flops": 1.0, "bytes": seconds * TB, "precision": "bf16"})


def test_an_operation_predicted_above_the_overhead_is_not_overhead_bound():
    r = evaluate(custom_with_t_lower(7e-6), machine())
    assert r.t_lower_s == pytest.approx(7e-6)
    assert r.t_predicted_s == pytest.approx(8.75e-6)  # 7 µs / 0.8
    assert r.bound == "memory"  # the prediction is not the launch floor


def test_an_operation_predicted_below_the_overhead_is_overhead_bound():
    r = evaluate(custom_with_t_lower(6e-6), machine())
    assert r.t_predicted_s == 8e-6  # 6 µs / 0.8 = 7.5 µs < 8 µs
    assert r.bound == "overhead"


def chain(fused: bool, n: int = 4096) -> Operation:
    return Operation("elementwise", {
        "n": n, "dtype": "fp32", "input": "x", "output": "w", "fused": fused,
        "steps": [{"op": "fma"}, {"op": "gelu"}, {"op": "add", "inputs": ["r"]}]},
        "fused" if fused else "unfused")


def test_an_unfused_chain_pays_one_launch_per_step():
    r = evaluate(chain(False), machine())
    assert r.kernels == 3
    assert r.t_predicted_s == pytest.approx(24e-6)
    assert r.bound == "overhead"
    fused = evaluate(chain(True), machine())
    assert fused.kernels == 1 and fused.t_predicted_s == 8e-6


def test_the_fused_speedup_includes_the_launches_saved():
    session = session_of([machine()], [chain(False), chain(True)])
    session.comparisons.append(Comparison("unfused", "fused"))
    (compared,) = compare_session(session, evaluate_session(session))
    assert compared.speedup == pytest.approx(3.0)  # 24 µs → 8 µs; bytes alone say 28/12
    # a large chain is memory-bound: the launches are hidden, the bytes decide
    big = session_of([machine()], [chain(False, 1 << 26), chain(True, 1 << 26)])
    big.comparisons.append(Comparison("unfused", "fused"))
    (compared,) = compare_session(big, evaluate_session(big))
    assert compared.speedup == pytest.approx(28 / 12)


# ---------------------------------------------------------------------------------------------
# sweeps


GQA = Operation("attention", {"heads": 32, "kv_heads": 8, "head_dim": 128, "query_len": 1,
                              "kv_len": 4096, "dtype": "bf16"}, "decode")


def test_a_swept_kv_heads_that_does_not_divide_heads_is_refused():
    with pytest.raises(SweepError, match=r"kv_heads: must divide heads \(32\).*got 6"):
        evaluate_sweep(GQA, h100(), Sweep("kv_heads", [1, 2, 4, 6, 8]))
    with pytest.raises(SweepError, match=r"must not exceed heads \(32\).*got 64"):
        evaluate_sweep(GQA, h100(), Sweep("kv_heads", [8, 64]))
    assert len(evaluate_sweep(GQA, h100(), Sweep("kv_heads", [1, 2, 4, 8, 16, 32]))) == 6


def test_a_causal_sweep_past_the_kv_length_is_refused():
    causal = Operation("attention", {**GQA.params, "causal": True})
    with pytest.raises(SweepError, match=r"query_len ≤ kv_len \(4096\), got 8192"):
        evaluate_sweep(causal, h100(), Sweep("query_len", [1, 4096, 8192]))
    prefill = Operation("attention", {**causal.params, "query_len": 4096})
    with pytest.raises(SweepError, match=r"query_len ≤ kv_len \(1024\), got 4096"):
        evaluate_sweep(prefill, h100(), Sweep("kv_len", [8192, 1024]))
