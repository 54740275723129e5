"""A profiled run in the model: dispatches added up per kernel, the top-N rule, runs
compared, and a kernel's point at each memory level."""

from __future__ import annotations

import pytest

from workbench.io.presets import get_preset
from workbench.model.measured import Measurement
from workbench.model.profile import DispatchGroups, compare_runs, level_points, run_changes, top_kernels


def launch(name: str, time_us: float, flops: float = 1e6, nbytes: float = 1e4, **kw):
    return Measurement(name=name, time_s=time_us * 1e-6, flops=flops, bytes=nbytes,
                       precision="fp32", unit="vector", **kw)


def test_dispatch_groups_add_up_per_kernel_and_shape():
    groups = DispatchGroups()
    groups.add(launch("k", 10, 100, 10, levels={"dram": 10, "l2": 30}), "grid 1")
    groups.add(launch("k", 30, 300, 30, levels={"dram": 30, "l2": 50}), "grid 1")
    groups.add(launch("k", 5), "grid 2")
    groups.add_not_counted("hmma_kernel", 50e-6, "no tensor counters")
    k1, k2 = groups.measurements()
    # (10 + 30) / 2 µs, (100 + 300) / 2 FLOPs, L2 (30 + 50) / 2 B; named by shape
    assert (k1.name, k1.count, k1.flops) == ("k [grid 1]", 2, 200)
    assert k1.time_s == pytest.approx(20e-6)
    assert k1.levels == {"dram": 20, "l2": 40} and k2.name == "k [grid 2]"
    (left,) = groups.not_counted()
    assert (left.count, left.time_s) == (1, 50e-6)
    assert groups.dispatches == 4 and groups.gpu_time_s == pytest.approx(95e-6)
    small = DispatchGroups(limit=1)
    small.add(launch("a", 1))
    with pytest.raises(OverflowError, match="more than 1 distinct kernels"):
        small.add(launch("b", 1))


def test_a_long_kernel_name_with_its_shape_stays_a_name_a_session_can_hold():
    """C++ template kernels have names of hundreds of characters; with the launch shape
    after them, a point's name must stay within the 300 characters a session file holds
    (a real PyTorch trace's copy kernel made 310 and the import was refused), its shape
    kept whole, and many dispatches' sources within 2,000."""
    from workbench.model.limits import TEXT_LIMITS, text_problem

    long_name = "void at::native::unrolled_elementwise_kernel<" + "x" * 400 + ">"
    groups = DispatchGroups()
    for shape in ("[300,2048] int32", "[8,2048] int32"):
        for _ in range(3):
            groups.add(launch(long_name, 2, source="s" * 1990), shape)
    points = groups.measurements()
    assert len(points) == 2
    for m, shape in zip(points, ("[300,2048] int32", "[8,2048] int32"), strict=True):
        assert len(m.name) <= TEXT_LIMITS["measurement"] == 300
        assert m.name.startswith("void at::native::unrolled_elementwise_kernel<xxx")
        assert m.name.endswith(f"… [{shape}]")
        assert text_problem(m.name, "measurement") is None
        assert len(m.source) <= TEXT_LIMITS["source"]
        assert m.source.endswith(" and 2 more dispatches (means)")
    # two dispatches: the first's source and one more
    pair = DispatchGroups()
    for _ in range(2):
        pair.add(launch("k", 2, source="s"), "[8] fp32")
    (m,) = pair.measurements()
    assert m.source == "s and 1 more dispatch (means)"


def test_top_kernels_default_is_the_fewest_that_make_95_percent():
    points = [launch("a", 50), launch("b", 30, count=2), launch("c", 4), launch("d", 1)]
    # totals: a 50, b 60, c 4, d 1 = 115; b + a = 110 = 95.7 % ≥ 95 %
    shown, hidden = top_kernels(points)
    assert [m.name for m in shown] == ["b", "a"] and [m.name for m in hidden] == ["c", "d"]
    shown, hidden = top_kernels(points, 3)
    assert [m.name for m in shown] == ["b", "a", "c"]


def test_the_charts_top_n_note_counts_what_it_hides_and_what_has_no_flops():
    """A copy has no FLOPs: no place on a log chart. The rule ranks the kernels with FLOPs,
    the note says both what the rule hides and what cannot be drawn, each with its share of
    the run's GPU time; a figure (``most``) draws at most that many."""
    from workbench.model.chart.profiled_kernels import top_hidden
    from workbench.model.session import Session

    session = Session(measurements=[
        launch("a", 50, run="r"), launch("b", 30, count=2, run="r"), launch("c", 4, run="r"),
        launch("d", 1, run="r"), launch("copy", 15, flops=0, run="r")])
    # times 50 + 60 + 4 + 1 (with FLOPs: 115) + 15 (copy) = 130; b + a = 110 ≥ 95 % of 115
    hidden, note = top_hidden(session)
    assert {session.measurements[i].name for i in range(5)
            if id(session.measurements[i]) in hidden} == {"c", "d"}
    assert note == ("r: the 2 that make 95 % of GPU time drawn; 2 kernels hidden (3.8 % of the "
                    "time); 1 without FLOPs not drawn (11.5 % of the time)")  # 5/130, 15/130
    _hidden, note = top_hidden(session, most=1)  # a figure with room for one: b (60 µs)
    assert note.startswith("r: the 1 with the most GPU time drawn (as many as the figure "
                           "names); 3 kernels hidden (42.3 % of the time)")  # 55/130


def test_runs_are_compared_by_kernel_name():
    before = [launch("a", 40, run="r1"), launch("b", 10, run="r1")]
    after = [launch("b", 5, run="r2"), launch("c", 1, run="r2")]
    (change,) = compare_runs(before, after)
    assert change.name == "b" and change.speedup == pytest.approx(10 / 5)
    assert [c.name for c in run_changes(before + after)] == ["b"]
    assert run_changes(before) == []


def test_level_points_use_each_level_roof():
    h100 = get_preset("h100-sxm")
    m = launch("k", 10, flops=2e8, nbytes=40e6, levels={"dram": 40e6, "l2": 80e6, "l1": 1e8})
    l1, l2, dram = level_points(m, h100)
    assert (l1.level, l2.level, dram.level) == ("l1", "l2", "dram")
    # L2: I = 2e8 / 8e7 = 2.5 FLOP/B; roof min(67e12 fp32 vector, 2.5 × 9.8e12) = 24.5e12
    assert l2.intensity == pytest.approx(2.5) and l2.roof == pytest.approx(24.5e12)
    # DRAM: I = 5; roof min(67e12, 5 × 3.35e12) = 16.75e12; achieved 2e8 / 10 µs = 2e13
    assert dram.roof == pytest.approx(16.75e12)
    assert dram.fraction == pytest.approx(2e13 / 16.75e12)
    # L1: I = 2e8 / 1e8 = 2 FLOP/B; roof min(67e12, 2 × 32.9e12 L1) = 65.8e12
    assert l1.intensity == pytest.approx(2.0) and l1.bandwidth == pytest.approx(32.9e12)
    assert l1.roof == pytest.approx(65.8e12) and l1.problem is None
    assert l1.fraction == pytest.approx(2e13 / 65.8e12)
    # a machine whose preset gives no L1 bandwidth: that level's point has no roof, and says so
    l1, _l2, _dram = level_points(m, get_preset("mi300x"))
    assert l1.roof is None and "no l1 bandwidth" in l1.problem


@pytest.mark.parametrize(("name", "label"), [
    ("void cutlass::Kernel<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8>"
     "(T1::Params)", "cutlass_80_wmma_tensorop_f16_s1…"),
    ("void splitKreduce_kernel<(int)32, (int)16, int, __half, __half, float, __half, (bool)1, "
     "(bool)1, (bool)0>(cublasSplitKParams<T6>, const T4 *, const T5 *)", "splitKreduce_kernel"),
    ("void <unnamed>::elementwise_kernel_with_index<int, at::native::arange_cuda_out(const "
     "c10::Scalar &)>(int, T2, T1::type)", "elementwise_kernel_with_index"),
    ("softmax_warp_forward", "softmax_warp_forward"),
])
def test_kernel_names_on_the_chart_drop_signatures(name, label):
    from workbench.model.chart.profiled_kernels import short_kernel_name

    assert short_kernel_name(name) == label
