"""Sweeps, exact ridge crossings and the sharded-matmul communication roof.

Expected values are solved here by hand from the counting rules (seed 004) and the machines'
published numbers, written out below, never read back from the engine.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io.presets import get_preset
from workbench.model.analysis import evaluate_pair
from workbench.model.hardware import Hardware, UnknownLevel
from workbench.model.operations import KINDS, Counts, Kind, Operation, Param, Term
from workbench.model.roofline import evaluate
from workbench.model.roofline import sweep as roofline_sweep
from workbench.model.session import HardwareEntry, OperationEntry
from workbench.model.sweeps import (
    SCAN_POINTS,
    Crossing,
    Range,
    Sweep,
    SweepError,
    crossings,
    crossings_on,
    evaluate_sweep,
    evaluate_sweep_on,
    linear,
    log,
    sweep_crossings,
    sweep_crossings_on,
)

# published figures (seed 004, the presets' sources)
TPU_V5E_BF16 = 197e12
TPU_V5E_HBM = 819e9
TPU_V5E_ICI = 45e9
H100_BF16 = 989.4e12
H100_HBM = 3.35e12


def gemm(m=64, n=8192, k=8192, **more) -> Operation:
    return Operation("gemm", {"m": m, "n": n, "k": k, "dtype": "bf16", **more}, "gemm")


def critical_batch(ridge: float, d: float, f: float, weight_bytes: float = 2.0) -> float:
    """Solve 2BDF / (2BD + s_w·DF + 2BF) = ridge for B (bf16 activations and output)."""
    # 2BDF = R(2BD + s_w DF + 2BF)  →  B (2DF − 2RD − 2RF) = R s_w DF
    return ridge * weight_bytes * d * f / (2 * d * f - 2 * ridge * (d + f))


# ---------------------------------------------------------------------------------------------
# expanding sweeps


def test_list_sweep_keeps_order_and_drops_duplicates():
    values = Sweep("m", [64, 1, 64, 8]).values_for(gemm())
    assert values.tolist() == [64, 1, 8]


def test_linear_and_log_ranges_include_both_ends():
    assert Sweep("m", linear(100, 500, 5)).values_for(gemm()).tolist() == [100, 200, 300, 400, 500]
    assert Sweep("m", log(1, 4096, 13)).values_for(gemm()).tolist() == [2**i for i in range(13)]


def test_whole_number_parameters_are_rounded_then_deduplicated():
    # 16^(i/8) = 1, 1.41, 2, 2.83, 4, 5.66, 8, 11.3, 16
    assert Sweep("m", log(1, 16, 9)).values_for(gemm()).tolist() == [1, 2, 3, 4, 6, 8, 11, 16]


def test_real_parameters_are_not_rounded():
    op = Operation("custom", {"flops": 1e12, "bytes": 1e9})
    assert Sweep("flops", [1.5, 2.25]).values_for(op).tolist() == [1.5, 2.25]


def test_descending_range():
    assert Sweep("k", linear(300, 100, 3)).values_for(gemm()).tolist() == [300, 200, 100]


@pytest.mark.parametrize(("sweep", "fragment"), [
    (Sweep("dtype", [1, 2]), "not a numeric parameter"),
    (Sweep("mm", [1, 2]), "no parameter 'mm'"),
    (Sweep("m", [0, 4]), "at least 1"),
    (Sweep("m", linear(-8, 8, 3)), "at least 1"),
])
def test_bad_sweeps_are_refused(sweep, fragment):
    with pytest.raises(SweepError, match=fragment):
        sweep.values_for(gemm())


@pytest.mark.parametrize(("make", "fragment"), [
    (lambda: log(0, 10, 3), "positive"),
    (lambda: linear(1, 10, 0), "num"),
    (lambda: linear(5, 5, 3), "equal"),
    (lambda: Range(1, 2, 3, "cubic"), "scale"),
    (lambda: Range(-1e308, 1e308, 3), "finite"),
    (lambda: Sweep("m", []), "at least one"),
    (lambda: Sweep("m", [1, float("nan")]), "finite"),
    (lambda: Sweep("m", "1,2"), "list"),
])
def test_bad_ranges_are_refused(make, fragment):
    with pytest.raises(SweepError, match=fragment):
        make()


def test_unknown_parameter_message_lists_numeric_parameters():
    with pytest.raises(SweepError) as info:
        Sweep("heads", [1]).values_for(gemm())
    for name in ("batch", "m", "n", "k"):
        assert name in str(info.value)
    assert "dtype" not in str(info.value).split("parameters:")[1]


# ---------------------------------------------------------------------------------------------
# evaluating sweeps


def test_sweep_results_follow_the_gemm_formulas():
    hw = get_preset("h100-sxm")
    result = evaluate_sweep(gemm(n=8192, k=6144), hw, Sweep("m", [1, 16, 256, 4096]))
    m = np.array([1, 16, 256, 4096], dtype=float)
    flops = 2 * m * 8192 * 6144
    nbytes = 2 * (m * 6144 + 6144 * 8192 + m * 8192)
    assert np.allclose(result["flops"], flops, rtol=1e-15)
    assert np.allclose(result["bytes"], nbytes, rtol=1e-15)
    assert np.allclose(result["t_math_s"], flops / H100_BF16, rtol=1e-12)
    assert np.allclose(result["t_mem_s"], nbytes / H100_HBM, rtol=1e-12)
    assert np.allclose(result["attainable_flops"],
                       np.minimum(H100_BF16, flops / nbytes * H100_HBM), rtol=1e-12)
    assert result.bounds == ["memory", "memory", "memory", "compute"]
    assert len(result) == 4 and result.param == "m" and result.is_int
    assert [result.value(i) for i in range(4)] == [1, 16, 256, 4096]
    assert all(isinstance(result.value(i), int) for i in range(4))
    assert result.level == "hbm" and result.precision_used == "bf16"


def test_each_sweep_row_equals_a_single_evaluation():
    hw = get_preset("tpu-v5e")
    op = Operation("attention", {"heads": 32, "kv_heads": 8, "head_dim": 128, "query_len": 1,
                                 "kv_len": 4096, "dtype": "bf16"}, "decode")
    swept = evaluate_sweep(op, hw, Sweep("kv_len", log(128, 131072, 11)))
    for i, row in enumerate(swept.rows()):
        single = Operation(op.kind, {**op.params, "kv_len": swept.value(i)}, op.name)
        expected = evaluate(single, hw).as_dict()
        for key, value in expected.items():
            if isinstance(value, float):
                assert row[key] == pytest.approx(value, rel=1e-12), key
            else:
                assert row[key] == value, key


def test_overhead_bound_values_in_a_sweep():
    hw = get_preset("h100-sxm")  # launch overhead 8 µs
    swept = evaluate_sweep(gemm(n=1024, k=1024), hw, Sweep("m", [1, 65536]))
    # m = 1: 2 MiB of weights at 3.35 TB/s is 0.63 µs, far below 8 µs
    assert swept.bounds[0] == "overhead"
    assert swept.bounds[1] == "compute"


# ---------------------------------------------------------------------------------------------
# crossings


def test_bf16_critical_batch_on_tpu_v5e_is_exact():
    ridge = TPU_V5E_BF16 / TPU_V5E_HBM  # ≈ 240.5
    expected = critical_batch(ridge, 8192, 8192)  # ≈ 255.5
    found = crossings(gemm(), get_preset("tpu-v5e"), "m", 1, 4096)
    assert len(found) == 1
    c = found[0]
    assert isinstance(c, Crossing)
    assert c.value == pytest.approx(expected, rel=1e-12)
    assert 255 < c.value < 256
    assert c.direction == "to_compute"
    assert c.integer == math.ceil(expected) == 256
    assert c.ridge == pytest.approx(ridge, rel=1e-12)
    assert c.param == "m" and c.level == "hbm"
    # the integer side: one below is memory-bound, the integer itself compute-bound
    hw = get_preset("tpu-v5e")
    assert evaluate(gemm(m=c.integer - 1), hw).bound == "memory"
    assert evaluate(gemm(m=c.integer), hw).bound == "compute"


def test_crossing_tends_to_the_ridge_for_large_d_and_f():
    # B ≪ D, F gives intensity ≈ B, so the crossing tends to the ridge itself (≈ 240.5)
    ridge = TPU_V5E_BF16 / TPU_V5E_HBM
    c = crossings(gemm(n=1 << 22, k=1 << 22), get_preset("tpu-v5e"), "m", 1, 4096)[0]
    assert c.value == pytest.approx(ridge, rel=2e-4)


def test_int8_weights_halve_the_critical_batch():
    """Seed 004, question 2: bf16[B, D] · int8[D, F] computing in bf16 turns compute-bound at
    half the bf16 batch (B > 120 instead of 240)."""
    hw = get_preset("tpu-v5e")
    bf16 = crossings(gemm(), hw, "m", 1, 4096)[0].value
    int8 = crossings(gemm(b_dtype="int8"), hw, "m", 1, 4096)[0].value
    ridge = TPU_V5E_BF16 / TPU_V5E_HBM
    assert int8 == pytest.approx(critical_batch(ridge, 8192, 8192, weight_bytes=1.0), rel=1e-12)
    assert int8 / bf16 == pytest.approx(0.5, rel=1e-12)
    # the book's rule of thumb with D, F ≫ B: B > 240 / 2 ≈ 120
    big = crossings(gemm(n=1 << 20, k=1 << 20, b_dtype="int8"), hw, "m", 1, 4096)[0].value
    assert 119 < big < 122


def test_h100_critical_batch():
    ridge = H100_BF16 / H100_HBM  # ≈ 295.3
    hw = get_preset("h100-sxm")
    exact = crossings(gemm(), hw, "m", 1, 4096)[0].value
    assert exact == pytest.approx(critical_batch(ridge, 8192, 8192), rel=1e-12)  # ≈ 318.3
    large = crossings(gemm(n=65536, k=65536), hw, "m", 1, 4096)[0].value
    assert 295 < large < 300


def test_no_crossing_in_range_gives_an_empty_list():
    hw = get_preset("tpu-v5e")
    assert crossings(gemm(), hw, "m", 1, 200) == []  # memory-bound throughout
    assert crossings(gemm(), hw, "m", 300, 4096) == []  # compute-bound throughout
    assert crossings(gemm(), hw, "n", 1, 1 << 20) == []  # B = 64 never reaches the ridge


def test_bad_crossing_intervals_are_refused():
    hw = get_preset("tpu-v5e")
    with pytest.raises(SweepError):
        crossings(gemm(), hw, "m", 10, 10)
    with pytest.raises(SweepError):
        crossings(gemm(), hw, "m", 1, float("inf"))
    with pytest.raises(SweepError):
        crossings(gemm(), hw, "dtype", 1, 10)


def test_sweep_crossings_use_the_span_of_the_sweep():
    hw = get_preset("tpu-v5e")
    assert len(sweep_crossings(gemm(), hw, Sweep("m", log(1, 4096, 13)))) == 1
    assert sweep_crossings(gemm(), hw, Sweep("m", [1, 2, 4])) == []
    assert sweep_crossings(gemm(), hw, Sweep("m", [512])) == []


@pytest.fixture
def hump_kind():
    """A kind whose intensity rises then falls: FLOPs = 1 + x·(100 − x), bytes = 1."""

    def count(p):
        x = p["x"]
        value = 1 + x * (100 - x)
        return Counts([Term("flop", "hump", "1 + x·(100 − x)", "", value)],
                      [Term("read", "one byte", "1", "1", 1.0 + 0 * x)], "fp32")

    kind = Kind("test_hump", "Hump", "test only",
                (Param("x", "int", 50, "x", "swept", minimum=1),), count, "Hump")
    KINDS[kind.kind] = kind
    yield kind
    del KINDS[kind.kind]


def test_non_monotonic_intensity_gives_every_crossing(hump_kind):
    hw = Hardware(name="unit", compute={"fp32": 1000.0}, memory={"mem": 1.0})
    op = Operation("test_hump", {"x": 50}, "hump")
    found = crossings(op, hw, "x", 1, 99)
    # 1 + x(100 − x) = 1000  →  x² − 100x + 999 = 0  →  x = 50 ± √1501
    root = math.sqrt(1501)
    assert [c.value for c in found] == [pytest.approx(50 - root, rel=1e-13),
                                        pytest.approx(50 + root, rel=1e-13)]
    assert [c.direction for c in found] == ["to_compute", "to_memory"]
    assert [c.integer for c in found] == [math.ceil(50 - root), math.floor(50 + root)]
    assert crossings(op, hw, "x", 20, 80) == []  # compute-bound all through


def compute_side(op: Operation, hw: Hardware, param: str, x: float) -> bool:
    """Whether ``op`` with ``param`` = x is compute-bound on ``hw`` (T_math ≥ T_mem)."""
    at = roofline_sweep(op, hw, **{param: np.asarray([x])})
    return bool(np.asarray(at["t_math_s"])[0] >= np.asarray(at["t_mem_s"])[0])


def bisection_crossings(op: Operation, hw: Hardware, param: str, lo: float, hi: float
                        ) -> list[float]:
    """The crossings as the documented search defines them, the slow way: the scan's grid
    brackets each change of side, and plain bisection, one float at a time, narrows each
    bracket until its ends are neighbouring floats; the compute-bound end is reported."""
    spaced = np.geomspace if lo > 0 and hi / lo > 10 else np.linspace
    grid = spaced(lo, hi, SCAN_POINTS)
    grid[0], grid[-1] = lo, hi
    at = roofline_sweep(op, hw, **{param: grid})
    sides = np.asarray(at["t_math_s"]) >= np.asarray(at["t_mem_s"])
    out = []
    for i in np.flatnonzero(sides[:-1] != sides[1:]).tolist():
        a, b, compute_at_a = float(grid[i]), float(grid[i + 1]), bool(sides[i])
        while a < 0.5 * (a + b) < b:
            mid = 0.5 * (a + b)
            if compute_side(op, hw, param, mid) == compute_at_a:
                a = mid
            else:
                b = mid
        out.append(a if compute_at_a else b)
    return out


def test_the_critical_batch_is_the_float_where_bisection_ends():
    """The crossing is where plain bisection of the scan's bracket ends, float for float,
    also where rounding puts a few floats about it on either side of the ridge (a GEMM
    with D = 8101 on the H100: the quick search's answer was 2 floats off)."""
    hw = get_preset("h100-sxm")
    for n in (8101, 8105, 8192):
        for b_dtype in ("bf16", "int8"):
            op = gemm(n=n, b_dtype=b_dtype)
            found = crossings(op, hw, "m", 1, 4096)
            assert [c.value for c in found] == bisection_crossings(op, hw, "m", 1, 4096)
            # bf16 at D = F = 8192, by hand: R = 989.4e12 / 3.35e12 = 295.34,
            # B = 2·R·D·F / (2DF − 2R(D + F)) = 318.294 (the example's "m* = 318.3")
            if (n, b_dtype) == (8192, "bf16"):
                assert found[0].value == pytest.approx(318.294, abs=5e-4)


#: dimensions of some kinds, each swept in turn
DIMENSIONS = {"gemm": ("m", "n", "k"), "attention": ("query_len", "head_dim", "batch"),
              "moe_gemm": ("tokens", "n", "k"), "mla_attention": ("kv_len", "kv_lora_rank"),
              "norm": ("rows", "hidden")}


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(DIMENSIONS)), scale=st.floats(-3, 3),
       machine=st.sampled_from(["h100-sxm", "tpu-v5e", "a100-80gb", "rtx-4090",
                                "apple-m4-max", "xeon-8480"]),
       which=st.integers(0, 2), lo=st.floats(-2, 6), decades=st.floats(0.2, 5))
def test_every_crossing_is_where_bisection_ends(kind, scale, machine, which, lo, decades):
    """Any kind, machine, swept dimension and span: the crossings are exactly bisection's,
    and each lies between two neighbouring floats on opposite sides of the ridge."""
    params = {p.name: p.default for p in KINDS[kind].params}
    dims = DIMENSIONS[kind]
    param = dims[which % len(dims)]
    for name in dims:  # every dimension scaled by the same factor, as a model's would be
        params[name] = max(1, round(params[name] * 2.0 ** scale))
    op = Operation(kind, params, kind)
    hw = get_preset(machine)
    start, stop = 10.0 ** lo, 10.0 ** (lo + decades)
    found = crossings(op, hw, param, start, stop)
    assert [c.value for c in found] == bisection_crossings(op, hw, param, start, stop)
    for c in found:
        before, after = np.nextafter(c.value, -np.inf), np.nextafter(c.value, np.inf)
        assert compute_side(op, hw, param, c.value)
        memory_side = before if c.direction == "to_compute" else after
        assert not compute_side(op, hw, param, float(memory_side))


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(sorted(DIMENSIONS)), scale=st.floats(-3, 3),
       machines=st.lists(st.sampled_from(["h100-sxm", "tpu-v5e", "a100-80gb", "rtx-4090",
                                          "apple-m4-max", "xeon-8480"]),
                         min_size=1, max_size=4),
       which=st.integers(0, 2), lo=st.floats(-2, 6), decades=st.floats(0.2, 5))
def test_the_crossings_on_several_machines_are_each_machines_own(kind, scale, machines, which,
                                                                 lo, decades):
    """Searched on several machines at once (one count of the FLOPs and bytes per step for
    all), each machine's crossings are exactly bisection's on that machine alone, in the
    machines' order (a machine may come twice)."""
    params = {p.name: p.default for p in KINDS[kind].params}
    dims = DIMENSIONS[kind]
    param = dims[which % len(dims)]
    for name in dims:
        params[name] = max(1, round(params[name] * 2.0 ** scale))
    op = Operation(kind, params, kind)
    hws = [get_preset(m) for m in machines]
    start, stop = 10.0 ** lo, 10.0 ** (lo + decades)
    found = crossings_on(op, hws, param, start, stop)
    assert len(found) == len(hws)
    for hw, each in zip(hws, found, strict=True):
        assert [c.value for c in each] == bisection_crossings(op, hw, param, start, stop)
        assert each == crossings(op, hw, param, start, stop)
        assert all(c.hardware == hw.label for c in each)


def test_the_critical_batch_example_on_both_machines_at_once():
    """The example's two machines searched together give each its own critical batch
    (318.3 on the H100, 255.5 on the TPU v5e: the ridges differ, so a crossing taken from
    the other machine's bracket would show) and each sweep row its own machine's numbers."""
    hws = [get_preset("tpu-v5e"), get_preset("h100-sxm")]
    sweep = Sweep("m", log(1, 4096, 13))
    op = gemm(m=128)
    found = sweep_crossings_on(op, hws, sweep)
    assert [len(each) for each in found] == [1, 1]
    assert found[0][0].value == pytest.approx(critical_batch(TPU_V5E_BF16 / TPU_V5E_HBM, 8192,
                                                             8192), rel=1e-9)
    assert found[1][0].value == pytest.approx(critical_batch(H100_BF16 / H100_HBM, 8192, 8192),
                                              rel=1e-9)
    results = evaluate_sweep_on(op, hws, sweep)
    for hw, each, result in zip(hws, found, results, strict=True):
        assert each == sweep_crossings(op, hw, sweep)
        alone = evaluate_sweep(op, hw, sweep)
        assert result.hardware == hw.label == alone.hardware
        np.testing.assert_array_equal(result.values, alone.values)
        assert set(result.arrays) == set(alone.arrays)
        for key, array in alone.arrays.items():
            np.testing.assert_array_equal(result.arrays[key], array, key)
        assert (result.level, result.precision_used, result.unit) == (
            alone.level, alone.precision_used, alone.unit)
    # each result's values are its own
    assert results[0].values is not results[1].values


def test_both_machines_are_searched_in_as_many_evaluations_as_one(monkeypatch):
    """Each step of the search evaluates every machine's points together: the two machines
    of the example take the evaluations one takes (a scan, a step of regula falsi, a check
    of the bisection's replay), not twice as many, and not bisection's fifty."""
    import workbench.model.sweeps as sweeps_module

    calls = []
    real = sweeps_module.sweep_times

    def counted(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(sweeps_module, "sweep_times", counted)
    hws = [get_preset("tpu-v5e"), get_preset("h100-sxm")]
    sweep = Sweep("m", log(1, 4096, 13))
    alone = []
    for hw in hws:
        calls.clear()
        sweep_crossings(gemm(m=128), hw, sweep)
        alone.append(len(calls))
    calls.clear()
    sweep_crossings_on(gemm(m=128), hws, sweep)
    assert len(calls) == max(alone) <= 4
    assert all(machines == hws for machines in calls)


# ---------------------------------------------------------------------------------------------
# sharded matmul: the communication roof


def seed_machine() -> Hardware:
    """The scaling book's chip: 1.97e14 FLOP/s, 4.5e10 B/s each way between two chips."""
    return Hardware(name="two TPUs", compute={"bf16": 1.97e14}, memory={"hbm": 8.2e11},
                    interconnect={"ici": 4.5e10})


def sharded(**params) -> Operation:
    return Operation("sharded_matmul", {"b": 512, "d": 8192, "f": 16384, **params}, "sharded")


def test_two_chip_counts_match_the_seed():
    b, d, f = 512, 8192, 16384
    counts = sharded().counts()
    assert counts.flops == 2 * b * d * f / 2  # T_math = BDF / 1.97e14 per chip
    assert counts.bytes == 2 * b * f  # T_comms = 2BF / 4.5e10
    assert counts.precision == "bf16"
    assert all(t.kind == "write" for t in counts.byte_terms)


@pytest.mark.parametrize("chips", [2, 3, 4, 8, 64])
def test_ring_all_reduce_and_reduce_scatter_bytes(chips):
    b, f = 512, 16384
    ring = sharded(chips=chips).counts()
    assert ring.bytes == pytest.approx(2 * (chips - 1) / chips * b * f * 2, rel=1e-15)
    assert ring.flops == pytest.approx(2 * b * 8192 * f / chips, rel=1e-15)
    scatter = sharded(chips=chips, collective="reduce_scatter").counts()
    assert scatter.bytes == pytest.approx((chips - 1) / chips * b * f * 2, rel=1e-15)
    fp32_sums = sharded(chips=chips, sum_dtype="fp32").counts()
    assert fp32_sums.bytes == pytest.approx(2 * ring.bytes, rel=1e-15)


def test_sharded_matmul_is_measured_against_the_first_interconnect():
    hw = seed_machine()
    result = evaluate(sharded(), hw)
    assert result.level == "ici"
    assert result.bandwidth == 4.5e10
    assert result.ridge == pytest.approx(1.97e14 / 4.5e10, rel=1e-15)
    # an explicit level still wins
    assert evaluate(Operation("sharded_matmul", {}, "x", memory_level="hbm"), hw).level == "hbm"


def test_critical_d_is_8755_and_independent_of_b():
    """Seed 004: D/2 > 1.97e14 / 4.5e10 = 4377  ⇔  D > 8755."""
    hw = seed_machine()
    expected = 2 * 1.97e14 / 4.5e10  # 8755.6
    for b in (16, 512, 8192):
        found = crossings(sharded(b=b), hw, "d", 128, 1 << 20)
        assert len(found) == 1
        assert found[0].value == pytest.approx(expected, rel=1e-12)
        assert found[0].integer == 8756
        assert found[0].level == "ici"
    assert evaluate(sharded(d=8755), hw).bound == "memory"
    assert evaluate(sharded(d=8756), hw).bound == "compute"


def test_critical_d_on_the_tpu_v5e_preset_and_on_four_chips():
    hw = get_preset("tpu-v5e")
    ridge = TPU_V5E_BF16 / TPU_V5E_ICI
    two = crossings(sharded(), hw, "d", 128, 1 << 20)[0].value
    assert two == pytest.approx(2 * ridge, rel=1e-12)
    # N chips: intensity = D / ((N − 1)·s) with s = 2 bytes
    four = crossings(sharded(chips=4), hw, "d", 128, 1 << 20)[0].value
    assert four == pytest.approx(3 * 2 * ridge, rel=1e-12)


def test_sharded_matmul_on_a_machine_without_interconnect_is_skipped():
    hw = Hardware(name="lonely", compute={"bf16": 1e14}, memory={"hbm": 1e12})
    with pytest.raises(UnknownLevel):
        sharded().level_on(hw)
    pair = evaluate_pair(OperationEntry(sharded()), HardwareEntry(hw))
    assert pair.result is None
    assert "interconnect" in pair.skipped.reason
    # a memory-level operation is unaffected
    assert gemm().level_on(hw) is None


def test_sweep_over_chips_lowers_intensity():
    hw = seed_machine()
    swept = evaluate_sweep(sharded(), hw, Sweep("chips", [2, 4, 8]))
    d, s = 8192, 2
    assert np.allclose(swept["intensity"], [d / ((n - 1) * s) for n in (2, 4, 8)], rtol=1e-15)


def test_sweeping_several_machines_at_once_is_sweeping_each():
    """``sweep_machines`` counts once and shares the intensity; every number must be what a
    sweep on each machine alone gives."""
    import numpy as np

    from workbench.io.presets import get_preset
    from workbench.model.operations import Operation
    from workbench.model.roofline import sweep, sweep_machines

    machines = [get_preset(p) for p in ("h100-sxm", "a100-80gb", "tpu-v5e")]
    op = Operation("gemm", {"n": 8192, "k": 8192, "dtype": "bf16"})
    m = np.array([1, 7, 64, 255, 256, 4096, 10**6])
    together = sweep_machines(op, machines, m=m)
    for hw, got in zip(machines, together, strict=True):
        alone = sweep(op, hw, m=m)
        assert set(got) == set(alone)
        for key in alone:
            np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(alone[key]), key)
        # and each point is the single-shape evaluation of that shape
        for i, mi in enumerate(m):
            one = evaluate(Operation("gemm", {"m": int(mi), "n": 8192, "k": 8192,
                                              "dtype": "bf16"}), hw)
            assert float(got["attainable_flops"][i]) == pytest.approx(one.attainable_flops,
                                                                      rel=1e-12)
            assert float(got["t_predicted_s"][i]) == pytest.approx(one.t_predicted_s, rel=1e-12)
            assert int(got["bound"][i]) == ["memory", "compute", "overhead"].index(one.bound)


def test_a_large_sweep_on_several_machines_equals_each_machine_alone(monkeypatch):
    """Above PARALLEL_MIN_SHAPES the machines are evaluated in threads; the numbers are the
    ones a serial evaluation gives, machine by machine and in the machines' order."""
    import numpy as np

    from workbench.io.presets import get_preset
    from workbench.model import roofline
    from workbench.model.operations import Operation

    machines = [get_preset(p) for p in ("h100-sxm", "a100-80gb", "tpu-v5e", "teaching-machine")]
    op = Operation("gemm", {"n": 4096, "k": 4096, "dtype": "bf16"})
    m = np.arange(1, roofline.PARALLEL_MIN_SHAPES + 2)
    threaded = roofline.sweep_machines(op, machines, m=m)
    monkeypatch.setattr(roofline, "PARALLEL_MIN_SHAPES", 10**12)  # serial
    serial = roofline.sweep_machines(op, machines, m=m)
    assert len(threaded) == len(serial) == len(machines)
    for got, want in zip(threaded, serial, strict=True):
        assert set(got) == set(want)
        for key in want:
            np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(want[key]), key)
    peaks = [float(np.asarray(r["peak_flops"]).flat[0]) for r in threaded]
    assert peaks == [float(np.asarray(r["peak_flops"]).flat[0]) for r in serial]
    assert len(set(peaks)) > 1  # the machines differ, so a shuffled order would show


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_process_can_run_a_large_sweep_after_its_parent_did():
    """A process forked after a large sweep (multiprocessing's default on Linux, a test
    runner's worker) has none of the parent's sweep threads: its own large sweep must still
    finish, not wait forever on threads that are not there."""
    import os
    import signal

    from conftest import HANG_GUARD_S

    from workbench.model import roofline

    machines = [get_preset("h100-sxm"), get_preset("a100-80gb")]
    op = Operation("gemm", {"n": 4096, "k": 4096, "dtype": "bf16"})
    m = np.arange(1, roofline.PARALLEL_MIN_SHAPES + 2)
    roofline.sweep_machines(op, machines, m=m)  # the parent's threads now exist
    pid = os.fork()
    if pid == 0:  # the child: exit 0 if its sweep finishes and agrees with the parent's rule
        code = 1
        try:
            signal.alarm(HANG_GUARD_S)  # a child that hangs ends itself (the defect)
            got = roofline.sweep_machines(op, machines, m=m)
            code = 0 if len(got) == len(machines) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, (
        "the forked process's sweep never finished" if os.WIFSIGNALED(status) else status)


def test_array_results_are_read_only_and_leave_the_callers_arrays_alone():
    """A sweep's arrays may share memory (t_predicted is t_lower when nothing derates it, the
    intensity is shared by every machine): they are read-only, so no caller can change one
    through another. Arrays the caller passed in stay writable."""
    from workbench.model.roofline import evaluate_arrays

    flops = np.array([1e9, 2e12, 5e14])
    nbytes = np.array([1e9, 1e9, 1e9])
    intensity = flops / nbytes
    plain = evaluate_arrays(flops, nbytes, 1e15, 3e12, intensity=intensity)
    assert plain["t_predicted_s"] is plain["t_lower_s"]
    derated = evaluate_arrays(flops, nbytes, 1e15, 3e12, 5e-6, 0.5, intensity=intensity)
    np.testing.assert_array_equal(derated["t_predicted_s"],
                                  np.maximum(derated["t_lower_s"] / 0.5, 5e-6))
    assert derated["t_predicted_s"] is not derated["t_lower_s"]
    for results in (plain, derated):
        for key, array in results.items():
            if key == "intensity":
                continue
            with pytest.raises(ValueError, match="read-only"):
                array[0] = 0
        np.testing.assert_array_equal(results["attainable_flops"],
                                      np.minimum(1e15, intensity * 3e12))
    assert flops.flags.writeable and nbytes.flags.writeable and intensity.flags.writeable

    shared = sweep_machines_intensities()
    assert shared[0] is shared[1] and not shared[0].flags.writeable


def sweep_machines_intensities():
    from workbench.model.roofline import sweep_machines

    machines = [get_preset(p) for p in ("h100-sxm", "a100-80gb")]
    op = Operation("gemm", {"n": 8192, "k": 8192, "dtype": "bf16"})
    return [r["intensity"] for r in sweep_machines(op, machines, m=np.array([1, 64, 4096]))]


def test_a_sliding_window_can_be_swept():
    # attention with a sliding window, swept over the window itself: each point counts as
    # the operation with that window typed in (below the kv length the window shrinks the
    # work; from the kv length on it is no window at all, plain causal attention)
    op = Operation("attention", {"batch": 1, "heads": 8, "kv_heads": 8, "head_dim": 128,
                                 "query_len": 4096, "kv_len": 4096, "causal": True,
                                 "window": 1024})
    h100 = get_preset("h100-sxm")
    values = [256, 1024, 4096, 8192]
    swept = evaluate_sweep(op, h100, Sweep("window", values))
    for i, w in enumerate(values):
        one = evaluate(Operation("attention", {**op.params, "window": w}), h100)
        assert swept.arrays["flops"][i] == pytest.approx(one.flops, rel=1e-12)
        assert swept.arrays["bytes"][i] == pytest.approx(one.bytes, rel=1e-12)
    # by hand: w = 1024 over q = k = 4096 sees the banded area w²/2 + (k − w)·w of q·k
    # = (1024²/2 + 3072·1024) / 4096² = 0.21875 of the 4·b·h·q·k·d FLOPs
    assert swept.arrays["flops"][1] == pytest.approx(4 * 8 * 4096 * 4096 * 128 * 0.21875)
    # a window as long as the kv length is no window: the causal half (1 − 4096/8192)
    assert swept.arrays["flops"][2] == pytest.approx(4 * 8 * 4096 * 4096 * 128 * 0.5)


def _numeric_params():
    return [(kind, p.name) for kind, spec in KINDS.items() for p in spec.params if p.numeric]


@pytest.mark.parametrize(("kind", "param"), _numeric_params())
def test_every_numeric_parameter_sweeps_as_typed(kind, param):
    # every numeric parameter of every kind can be swept, and each point of the sweep is
    # the operation with that value typed in: also where counting branches on the value
    # (an all-reduce's algorithm by message size, a norm's layers, an MoE's experts), which
    # stopped the sweep with "the truth value of an array is ambiguous"
    op = Operation(kind, {})
    spec = op.spec.param(param)
    base = op.params.get(param) or 1
    values = sorted({max(spec.minimum, 1), base, base * 2 + 1, base * 4})
    h100 = get_preset("h100-sxm")
    try:
        swept = evaluate_sweep(op, h100, Sweep(param, values))
    except SweepError:  # (a value the kind refuses, said as for a typed one)
        return
    sweep_crossings(op, h100, Sweep(param, values))
    for i, value in enumerate(swept.values):
        typed = int(value) if spec.type == "int" else float(value)
        one = evaluate(Operation(kind, {**op.params, param: typed}), h100)
        assert swept.arrays["t_predicted_s"][i] == pytest.approx(one.t_predicted_s, rel=1e-9)
        assert swept.arrays["flops"][i] == pytest.approx(one.flops, rel=1e-12)
        assert swept.arrays["bytes"][i] == pytest.approx(one.bytes, rel=1e-12)
