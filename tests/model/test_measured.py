"""Measured points against their predictions: the fraction of the predicted ceiling (its own
figure) and the verdict against T_predicted of the point's own machine and mode (0.8–1.2 ×
as predicted, > 2 × likely a bug, overhead-bound where launch and start-up outweigh the
work)."""

from __future__ import annotations

import math

import pytest

from workbench.io.presets import get_preset
from workbench.model.measured import VERDICTS, Measurement, judge, verdict_for
from workbench.model.measured_session import judge_session, measurement_problems
from workbench.model.operations import Operation
from workbench.model.roofline import evaluate
from workbench.model.session import HardwareEntry, OperationEntry, Session

H100_FP16 = 989.4e12
H100_HBM = 3.35e12

# seed 003's three shapes, fp16 on an H100 SXM: predicted lower-bound times by hand
FFN = (8192, 28672, 8192)
QK = (4096, 4096, 128)
GEMV = (1, 28672, 8192)


def t_lower(m: int, n: int, k: int) -> float:
    flops = 2 * m * n * k
    nbytes = (m * k + k * n + m * n) * 2
    return max(flops / H100_FP16, nbytes / H100_HBM)


def predicted(shape) -> tuple[Operation, object]:
    m, n, k = shape
    op = Operation("gemm", {"m": m, "n": n, "k": k, "dtype": "fp16"}, f"gemm {shape}")
    return op, evaluate(op, get_preset("h100-sxm"))


# ---------------------------------------------------------------------------------------------
# the bands


@pytest.mark.parametrize(("ratio", "key"), [
    (0.0, "re-measure"), (0.5, "re-measure"), (0.7999, "re-measure"),
    (0.8, "as-predicted"), (1.0, "as-predicted"), (1.2, "as-predicted"),
    (1.2001, "below-prediction"), (1.5, "below-prediction"), (2.0, "below-prediction"),
    (2.0001, "likely-bug"), (10.0, "likely-bug"),
])
def test_band_edges(ratio, key):
    """Measured time over T_predicted: 0.8 and 1.2 are as predicted, 2 still only slower."""
    assert verdict_for(ratio).key == key


def test_band_labels_say_what_to_do():
    labels = {v.key: v.label for v in VERDICTS}
    assert "re-measure" in labels["re-measure"] and "0.8" in labels["re-measure"]
    assert "as predicted" in labels["as-predicted"] and "1.2" in labels["as-predicted"]
    assert "bug" in labels["likely-bug"] and "2" in labels["likely-bug"]
    assert "room to improve" in labels["below-prediction"]
    assert "launch and start-up" in labels["overhead-bound"]


def test_a_ratio_a_rounding_error_past_an_edge_counts_as_the_edge():
    assert verdict_for(1.2 + 1e-13).key == "as-predicted"
    assert verdict_for(0.8 - 1e-13).key == "as-predicted"


def test_nan_fraction_is_refused():
    with pytest.raises(ValueError):
        verdict_for(float("nan"))


# ---------------------------------------------------------------------------------------------
# judging


@pytest.mark.parametrize(("shape", "ratio", "key"), [
    (FFN, 1.0, "as-predicted"),
    (QK, 2.5, "likely-bug"),
    (GEMV, 0.7, "re-measure"),
    (FFN, 1.15, "as-predicted"),
    (QK, 1.6, "below-prediction"),
])
def test_measured_time_against_the_prediction(shape, ratio, key):
    """The preset's derated prediction: T_predicted = T_lower / 0.78 (these shapes are far
    above the 8 µs launch floor); the verdict is the measured time over it, the fraction of
    the roof T_lower over the measured time."""
    op, result = predicted(shape)
    expected_bound = t_lower(*shape)
    measured = ratio * expected_bound / 0.78
    j = judge(Measurement("run", operation=op.name, time_s=measured), result)
    assert j.predicted_time_s == pytest.approx(expected_bound, rel=1e-12)
    assert j.t_predicted_s == pytest.approx(expected_bound / 0.78, rel=1e-12)
    assert j.vs_predicted == pytest.approx(ratio, rel=1e-12)
    assert j.fraction == pytest.approx(0.78 / ratio, rel=1e-12)
    assert j.verdict == key
    assert j.measured_time_s == measured
    flops = 2 * shape[0] * shape[1] * shape[2]
    assert j.achieved_flops == pytest.approx(flops / measured, rel=1e-12)
    # same FLOPs: the fraction is also achieved ÷ attainable
    assert j.achieved_flops / j.predicted_attainable_flops == pytest.approx(0.78 / ratio,
                                                                            rel=1e-9)


@pytest.mark.parametrize(("edge", "key"), [(0.8, "as-predicted"), (1.2, "as-predicted"),
                                           (2.0, "below-prediction")])
def test_band_edges_through_judge(edge, key):
    """A time typed as exactly the edge's multiple of T_predicted lands in the nearer band to
    the prediction."""
    op, result = predicted(FFN)
    j = judge(Measurement("edge", operation=op.name, time_s=result.t_predicted_s * edge),
              result)
    assert j.verdict == key
    past = edge - 0.001 if edge < 1 else edge + 0.001
    beyond = judge(Measurement("past", operation=op.name,
                               time_s=result.t_predicted_s * past), result)
    assert beyond.verdict != key


def test_achieved_rate_instead_of_time():
    op, result = predicted(FFN)
    flops = 2 * FFN[0] * FFN[1] * FFN[2]
    j = judge(Measurement("rate", operation=op.name, achieved_flops=0.78 * H100_FP16), result)
    assert j.measured_time_s == pytest.approx(flops / (0.78 * H100_FP16), rel=1e-12)
    assert j.fraction == pytest.approx(0.78, rel=1e-9)
    assert j.vs_predicted == pytest.approx(1.0, rel=1e-9)  # exactly the derated prediction
    assert j.verdict == "as-predicted"


def test_a_launch_bound_kernel_that_meets_its_prediction_is_overhead_bound_not_a_bug():
    """A 1024³ bf16 GEMM on the H100 SXM, calibrated, timed alone (the preset's figures:
    gemm 0.77, streaming 0.87, launch alone 3.83 µs, matrix start-up 3 µs):
    T_math = 2·1024³ / 989.4 TFLOP/s = 2.1705 µs, / 0.77 = 2.8188 µs; T_mem = 3·1024²·2 B /
    3.35 TB/s = 1.8779 µs, / 0.87 = 2.1585 µs; T_work = 2.8188 µs < T_fixed = 3.83 + 3 =
    6.83 µs: overhead-bound, T_predicted = 9.649 µs. Measured 9.09 µs (real_kernels_h100_h200,
    measured 2026-11-26) is 0.94 × that, and 24 % of the roof."""
    hw = get_preset("h100-sxm")
    hw.prediction, hw.launches = "calibrated", "kernel"
    op = Operation("gemm", {"m": 1024, "n": 1024, "k": 1024, "dtype": "bf16"}, "g_1024")
    result = evaluate(op, hw)
    t_math = 2 * 1024 ** 3 / 989.4e12
    assert result.bound == "overhead"
    assert result.t_predicted_s == pytest.approx(t_math / 0.77 + 6.83e-6, rel=1e-9)
    j = judge(Measurement("g_1024", operation="g_1024", time_s=9.09e-6), result)
    assert j.fraction == pytest.approx(t_math / 9.09e-6, rel=1e-9)  # 0.239: a "bug" by roof
    assert j.fraction < 0.25
    assert j.verdict == "overhead-bound"
    assert j.verdict_label == "overhead-bound: 6.83 µs of launch and start-up"
    # the same kernel three times slower than predicted is not excused by its regime
    slow = judge(Measurement("slow", operation="g_1024", time_s=3 * 9.649e-6), result)
    assert slow.verdict == "likely-bug"


def test_a_tiny_add_says_how_much_launch_it_pays():
    """A 1 K-element bf16 add alone: 3·1024·2 B = 6 KiB, T_mem = 1.83 ns, / 0.87 = 2.1 ns of
    work; elementwise kernels have no start-up, so T_fixed = 3.83 µs of launch."""
    hw = get_preset("h100-sxm")
    hw.prediction, hw.launches = "calibrated", "kernel"
    op = Operation("elementwise", {"n": 1024, "dtype": "bf16", "steps": [
        {"op": "add", "inputs": ["b"]}]}, "add")
    result = evaluate(op, hw)
    assert result.t_predicted_s == pytest.approx(3.83e-6 + 3 * 1024 * 2 / 3.35e12 / 0.87,
                                                 rel=1e-6)
    j = judge(Measurement("add", operation="add", time_s=3.84e-6), result)
    assert j.verdict_label == "overhead-bound: 3.83 µs of launch and start-up"


def test_measured_bytes_place_the_point_and_are_noted():
    op, result = predicted(GEMV)
    j = judge(Measurement("gemv", operation=op.name, time_s=200e-6, bytes=300e6), result)
    flops = 2 * GEMV[0] * GEMV[1] * GEMV[2]
    assert j.measured_intensity == pytest.approx(flops / 300e6, rel=1e-12)
    assert j.achieved_bandwidth == pytest.approx(300e6 / 200e-6, rel=1e-12)
    assert j.predicted_intensity == pytest.approx(result.intensity, rel=1e-15)
    assert any("bytes" in n and "cache" in n for n in j.notes)
    # the fraction still compares against the predicted bound
    assert j.fraction == pytest.approx(t_lower(*GEMV) / 200e-6, rel=1e-12)


def test_faster_than_the_roof_is_flagged():
    op, result = predicted(QK)
    j = judge(Measurement("too fast", operation=op.name, time_s=t_lower(*QK) / 1.5), result)
    assert j.fraction == pytest.approx(1.5, rel=1e-12)
    assert j.verdict == "re-measure"  # 0.78 / 1.5 = 0.52 × T_predicted
    assert any("above its roof: check the counting or the peak" in n for n in j.notes)
    assert j.above_roof


def test_overhead_bound_prediction_is_flagged():
    op = Operation("gemm", {"m": 1, "n": 1024, "k": 1024, "dtype": "fp16"}, "tiny")
    result = evaluate(op, get_preset("h100-sxm"))
    assert result.bound == "overhead"
    j = judge(Measurement("tiny", operation="tiny", time_s=5e-6), result)
    assert j.predicted_bound == "overhead"
    assert any("overhead" in n for n in j.notes)
    assert j.fraction == pytest.approx(result.t_lower_s / 5e-6, rel=1e-12)


def test_standalone_measurement_is_predicted_from_its_own_counts():
    m = Measurement("softmax", flops=20_971_520, bytes=33_557_220, time_s=11.84e-6,
                    precision="fp32")
    assert m.standalone and m.problems() == []
    result = evaluate(m.as_operation(), get_preset("h100-sxm"))
    j = judge(m, result)
    expected = max(20_971_520 / 67e12, 33_557_220 / H100_HBM)
    assert j.predicted_time_s == pytest.approx(expected, rel=1e-12)
    assert j.fraction == pytest.approx(expected / 11.84e-6, rel=1e-12)
    # derated: T_predicted = max(T_lower / 0.78, 8 µs) = 12.84 µs; 11.84 / 12.84 = 0.92
    assert j.t_predicted_s == pytest.approx(max(expected / 0.78, 8e-6), rel=1e-12)
    assert j.verdict == "as-predicted"
    assert result.precision_used == "fp32"


@pytest.mark.parametrize(("measurement", "field"), [
    (Measurement("no time", operation="x"), "time_s"),
    (Measurement("", operation="x", time_s=1.0), "name"),
    (Measurement("neg", operation="x", time_s=-1.0), "time_s"),
    (Measurement("zero rate", operation="x", achieved_flops=0.0), "achieved_flops"),
    (Measurement("alone", time_s=1.0, bytes=10.0), "flops"),
    (Measurement("alone", time_s=1.0, flops=10.0), "bytes"),
    (Measurement("inf", operation="x", time_s=1.0, bytes=math.inf), "bytes"),
    (Measurement("p", time_s=1.0, flops=1.0, bytes=1.0, precision="fp12"), "precision"),
    (Measurement("femto", operation="x", time_s=1e-15), "time_s"),
    (Measurement("sub-byte", operation="x", time_s=1.0, bytes=1e-300), "bytes"),
    (Measurement("exa-exa", operation="x", achieved_flops=1e40), "achieved_flops"),
    # (beyond the numbers a session file holds, 1e-30 … 1e30)
    (Measurement("huge", time_s=1.0, flops=1e35, bytes=1.0), "flops"),
    (Measurement("huge", time_s=1.0, flops=1.0, bytes=1e35), "bytes"),
    (Measurement("huge l1", operation="x", time_s=1.0, levels={"l1": 1e35}), "levels"),
    (Measurement("sub-byte l2", operation="x", time_s=1.0, levels={"l2": 1e-300}), "levels"),
])
def test_measurement_problems(measurement, field):
    assert field in [f for f, _ in measurement.problems()]
    _, result = predicted(FFN)
    with pytest.raises(ValueError):
        judge(measurement, result)


# ---------------------------------------------------------------------------------------------
# a session's measurements


def _session() -> Session:
    s = Session()
    s.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm"),
                  HardwareEntry(get_preset("a100-80gb"), preset="a100-80gb")]
    m, n, k = FFN
    s.operations = [OperationEntry(Operation("gemm", {"m": m, "n": n, "k": k, "dtype": "fp16"},
                                             "FFN up"))]
    return s


def test_judge_session_links_points_to_operations_and_machines():
    s = _session()
    s.measurements = [
        Measurement("cuBLAS", operation="FFN up", hardware="h100-sxm",
                    time_s=t_lower(*FFN) / 0.8),
        Measurement("everywhere", operation="FFN up", time_s=10e-3),
        Measurement("by name", operation="FFN up", hardware="NVIDIA H100 SXM5 80GB",
                    time_s=5e-3),
    ]
    points = judge_session(s)
    assert [p.measurement.name for p in points] == ["cuBLAS", "everywhere", "everywhere",
                                                    "by name"]
    first = points[0]
    assert first.operation is s.operations[0]
    assert first.hardware is s.hardware[0]
    assert first.judgement.verdict == "as-predicted"  # 0.78 / 0.8 = 0.975 × T_predicted
    assert first.judgement.fraction == pytest.approx(0.8, rel=1e-12)
    # no machine named: judged on each machine of the session
    assert [p.hardware.preset for p in points[1:3]] == ["h100-sxm", "a100-80gb"]
    assert points[1].judgement.fraction != points[2].judgement.fraction
    assert points[3].hardware is s.hardware[0]


def test_dangling_references_are_problems_not_crashes():
    s = _session()
    s.measurements = [Measurement("ghost", operation="FFN down", time_s=1e-3),
                      Measurement("where", operation="FFN up", hardware="tpu-v9", time_s=1e-3)]
    problems = [measurement_problems(s, m) for m in s.measurements]
    assert problems[0][0][0] == "operation" and "FFN down" in problems[0][0][1]
    assert problems[1][0][0] == "hardware" and "tpu-v9" in problems[1][0][1]
    points = judge_session(s)
    assert [p.judgement for p in points] == [None, None]
    assert "FFN down" in points[0].problem and "tpu-v9" in points[1].problem


def test_ambiguous_references_are_problems():
    s = _session()
    s.operations.append(OperationEntry(s.operations[0].operation.copy()))
    s.hardware.append(HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm"))
    m = Measurement("which", operation="FFN up", hardware="h100-sxm", time_s=1e-3)
    fields = [f for f, _ in measurement_problems(s, m)]
    assert fields == ["operation", "hardware"]
