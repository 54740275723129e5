"""Measured points judged against their predictions, one operation compared across machines and
precisions, collectives and compared pairs: the edges of each rule, pinned by worked numbers."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.io.presets import get_preset
from workbench.model.analysis import evaluate_session
from workbench.model.comparison import across_machines
from workbench.model.dtypes import check_dtype
from workbench.model.llm.results import (
    RequestResult,
)
from workbench.model.measured import Measurement, judge
from workbench.model.measured_session import judge_session
from workbench.model.operations import Operation
from workbench.model.roofline import evaluate
from workbench.model.session import Comparison, HardwareEntry, OperationEntry, Session


def _gemm(dtype: str = "fp16", name: str = "mm") -> Operation:
    return Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": dtype}, name)




def test_measured_bytes_far_from_the_model_are_noted_as_a_ratio():
    op = _gemm()
    result = evaluate(op, get_preset("h100-sxm"))
    m = Measurement("k", operation="mm", time_s=1e-3, bytes=2 * result.bytes)
    notes = judge(m, result).notes
    # twice the model's bytes: the note gives the ratio to the ideal
    assert any("where 100.7 MB is the ideal: 2.00 ×" in n for n in notes), notes


def test_sizes_at_the_upper_limit_are_accepted():
    # (the largest number a session file holds: what is accepted saves and opens again)
    m = Measurement("k", time_s=1e9, flops=1e30, bytes=1e30, levels={"l1": 1e30, "l2": 0.0})
    assert m.problems() == []


def test_an_achieved_rate_with_flops_gives_the_time():
    m = Measurement("k", achieved_flops=1e12, flops=1e9, bytes=1e6)
    assert m.problems() == []


def test_a_yes_no_value_is_not_a_time():
    m = Measurement("k", time_s=True, flops=1e9, bytes=1e6)
    assert [key for key, _ in m.problems()] == ["time_s"]


def test_a_standalone_measurement_is_predicted_under_its_own_name():
    m = Measurement("my kernel", time_s=1e-3, flops=1e9, bytes=1e6, precision="fp32")
    op = m.as_operation()
    assert op.name == "my kernel"
    assert op.counts().flops == 1e9


def test_a_measurement_skipped_on_a_machine_keeps_its_operation():
    s = Session()
    s.hardware = [HardwareEntry(get_preset("tpu-v5e"), preset="tpu-v5e")]
    s.operations = [OperationEntry(_gemm("fp64"))]
    s.measurements = [Measurement("k", operation="mm", time_s=1e-3)]
    (point,) = judge_session(s)
    assert point.judgement is None and point.problem
    assert point.operation is s.operations[0]



def test_one_operation_across_machines_fastest_first():
    s = Session()
    s.hardware = [HardwareEntry(get_preset(p), preset=p) for p in ("l4", "h100-sxm", "a100-80gb")]
    s.operations = [OperationEntry(_gemm()), OperationEntry(_gemm(name="other"))]
    pairs = evaluate_session(s)
    results = across_machines(pairs, s.operations[0].id)
    assert len(results) == 3
    times = [r.t_predicted_s for r in results]
    assert times == sorted(times)
    assert results[0].t_predicted_s < results[-1].t_predicted_s


@pytest.mark.parametrize("name", ["fp17", "", "BF16"])
def test_an_unknown_dtype_name_is_refused(name):
    with pytest.raises(ValueError, match="unknown dtype"):
        check_dtype(name)


def test_derating_efficiency_is_a_rule_of_thumb_unless_measured():
    hw = get_preset("h100-sxm")
    assert hw.figure_status("efficiency") == hw.figure_status("launch_overhead") != "specified"



def test_measured_flops_far_from_the_model_are_noted_as_a_percentage():
    result = evaluate(_gemm(), get_preset("h100-sxm"))
    for ratio, shown in ((1.5, "+50 %"), (2.0, "+100 %"), (0.75, "-25 %")):
        m = Measurement("k", operation="mm", time_s=1e-3, flops=ratio * result.flops)
        assert f"measured FLOPs differ from the model's by {shown}" in judge(m, result).notes


def test_a_measurement_that_cannot_be_judged_keeps_its_place():
    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    send = Operation("all_reduce", {"rows": 16, "hidden": 64, "chips": 2, "dtype": "bf16",
                                    "collective": "send"}, "send")  # moves data: no FLOPs
    session.operations = [OperationEntry(send)]
    m = Measurement("k", operation="send", achieved_flops=1e12)
    session.measurements = [m]
    (point,) = judge_session(session)
    assert point.measurement is m and point.judgement is None
    assert "needs FLOPs" in point.problem


def test_a_reduce_scatter_takes_one_step_fewer_than_its_chips():
    op = Operation("sharded_matmul", {"b": 64, "d": 4096, "f": 4096, "chips": 8,
                                      "collective": "reduce_scatter"})
    counts = op.counts()
    assert counts.latency_steps == 7  # ring reduce-scatter: N−1 steps
    ring = Operation("sharded_matmul", {"b": 64, "d": 4096, "f": 4096, "chips": 8}).counts()
    assert ring.latency_steps == 14  # ring all-reduce: 2·(N−1)


def test_a_compared_pairs_data_gives_its_intensity_ratio():
    from workbench.model.comparison import compare_session

    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    small = Operation("gemm", {"m": 64, "n": 4096, "k": 4096, "dtype": "bf16"}, "small")
    big = Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16"}, "big")
    session.operations = [OperationEntry(small), OperationEntry(big)]
    session.comparisons = [Comparison("small", "big")]
    (pair,) = compare_session(session, evaluate_session(session))
    data = pair.as_dict()
    assert data["intensity_ratio"] == pytest.approx(
        pair.second_result.intensity / pair.first_result.intensity, rel=1e-12)
    assert data["intensity_ratio"] > 1  # the larger GEMM reuses each byte more


def test_a_calibrations_data_keeps_the_efficiency_table():
    from workbench.model.prediction import ASSUMED

    data = ASSUMED.as_data()
    assert data["efficiency"] == dict(ASSUMED.efficiency)
    assert data["startup"] == dict(ASSUMED.startup)


def test_a_collectives_link_latency_is_a_floor_added_to_every_sweep_point():
    from workbench.model.roofline import evaluate_arrays

    flops = np.array([1e9, 1e12])
    nbytes = np.array([1e9, 1e9])
    out = evaluate_arrays(flops, nbytes, 1e15, 1e12, latency=1e-5)
    # memory-bound: 1 GB at 1 TB/s = 1 ms; compute-bound: 1 TFLOP at 1 PFLOP/s = 1 ms
    np.testing.assert_allclose(out["t_lower_s"], [1e-3 + 1e-5, 1e-3 + 1e-5], rtol=1e-12)


def test_a_cache_named_as_main_memory_is_reported_for_that_machine():
    from workbench.model.advisories import machine_advisories

    hw = get_preset("h100-sxm").copy(memory={"l2": 12e12}, main_memory="l2")
    (advice,) = [a for a in machine_advisories(hw) if a.kind == "no-main-memory"]
    assert advice.subject == hw.label


def test_a_sparse_looking_integer_peak_is_given_in_operations_per_second():
    from workbench.model.advisories import machine_advisories

    hw = get_preset("h100-sxm").copy(compute={"bf16": 100e12, "int8": 400e12})
    (advice,) = [a for a in machine_advisories(hw) if a.kind == "sparse-figures"]
    assert "compute.int8 400 TOP/s" in advice.message


def test_a_link_written_with_a_dash_is_known_by_its_kind():
    from workbench.model.hardware import link_kind

    assert link_kind("Infinity-Fabric") == link_kind("infinity fabric") == "Infinity Fabric"


def test_a_compared_pair_and_a_requests_data_use_their_documented_keys():
    from workbench.model.comparison import compare_session

    session = Session(title="t")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    session.operations = [OperationEntry(_gemm(name="a")), OperationEntry(_gemm(name="b"))]
    session.comparisons = [Comparison("a", "b")]
    (pair,) = compare_session(session, evaluate_session(session))
    assert (pair.as_dict()["first"], pair.as_dict()["second"]) == ("a", "b")
    request = RequestResult("m", 100, ttft_s=0.1, decode_s=0.9)
    assert request.as_dict()["tpot_mean_s"] == pytest.approx(0.009, rel=1e-12)  # 0.9 s / 100
