"""Measured points against their predictions: fraction of the predicted ceiling and the
verdict bands of seed 003 (≥ 90 % re-measure, 65–85 % production, < 50 % likely a bug)."""

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


@pytest.mark.parametrize(("fraction", "key"), [
    (2.0, "re-measure"), (1.0, "re-measure"), (0.90, "re-measure"),
    (0.8999, "excellent"), (0.87, "excellent"), (0.85, "excellent"),
    (0.8499, "production"), (0.78, "production"), (0.65, "production"),
    (0.6499, "below-production"), (0.55, "below-production"), (0.50, "below-production"),
    (0.4999, "likely-bug"), (0.22, "likely-bug"), (0.0, "likely-bug"),
])
def test_band_edges(fraction, key):
    assert verdict_for(fraction).key == key


def test_band_labels_say_what_to_do():
    labels = {v.key: v.label for v in VERDICTS}
    assert "re-measure" in labels["re-measure"] and "90" in labels["re-measure"]
    assert "production" in labels["production"] and "65" in labels["production"]
    assert "bug" in labels["likely-bug"] and "50" in labels["likely-bug"]
    assert "excellent" in labels["excellent"]
    assert "room to improve" in labels["below-production"]


def test_a_fraction_a_rounding_error_below_an_edge_counts_as_the_edge():
    assert verdict_for(0.9 - 1e-13).key == "re-measure"
    assert verdict_for(0.65 - 1e-13).key == "production"


def test_nan_fraction_is_refused():
    with pytest.raises(ValueError):
        verdict_for(float("nan"))


# ---------------------------------------------------------------------------------------------
# judging


@pytest.mark.parametrize(("shape", "fraction", "key"), [
    (FFN, 0.80, "production"),
    (QK, 0.30, "likely-bug"),
    (GEMV, 0.95, "re-measure"),
    (FFN, 0.87, "excellent"),
    (QK, 0.58, "below-production"),
])
def test_measured_time_against_the_prediction(shape, fraction, key):
    op, result = predicted(shape)
    expected_bound = t_lower(*shape)
    measured = expected_bound / fraction
    j = judge(Measurement("run", operation=op.name, time_s=measured), result)
    assert j.predicted_time_s == pytest.approx(expected_bound, rel=1e-12)
    assert j.fraction == pytest.approx(fraction, rel=1e-12)
    assert j.verdict == key
    assert j.measured_time_s == measured
    flops = 2 * shape[0] * shape[1] * shape[2]
    assert j.achieved_flops == pytest.approx(flops / measured, rel=1e-12)
    # same FLOPs: the fraction is also achieved ÷ attainable
    assert j.achieved_flops / j.predicted_attainable_flops == pytest.approx(fraction, rel=1e-9)


@pytest.mark.parametrize(("edge", "key"), [(0.90, "re-measure"), (0.85, "excellent"),
                                           (0.65, "production"), (0.50, "below-production")])
def test_band_edges_through_judge(edge, key):
    """A time typed as exactly the edge's share of the bound lands in the band above."""
    op, result = predicted(FFN)
    j = judge(Measurement("edge", operation=op.name, time_s=result.t_lower_s / edge), result)
    assert j.verdict == key
    below = judge(Measurement("below", operation=op.name,
                              time_s=result.t_lower_s / (edge - 0.001)), result)
    assert below.verdict != key


def test_achieved_rate_instead_of_time():
    op, result = predicted(FFN)
    flops = 2 * FFN[0] * FFN[1] * FFN[2]
    j = judge(Measurement("rate", operation=op.name, achieved_flops=0.78 * H100_FP16), result)
    assert j.measured_time_s == pytest.approx(flops / (0.78 * H100_FP16), rel=1e-12)
    assert j.fraction == pytest.approx(0.78, rel=1e-9)
    assert j.verdict == "production"


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
    assert j.verdict == "re-measure"
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
    assert j.verdict == "production"
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
    assert first.judgement.verdict == "production"
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
