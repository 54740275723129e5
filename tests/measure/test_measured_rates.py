"""The figures ``measure`` writes are the bytes and FLOPs of the work, counted as a plain
numpy program counts them, over the time the work took: checked on a machine whose speed is
known exactly, with no clock of the real machine involved.

The fake machine keeps its own time. Each numpy call a measured kernel makes (the copy,
read and triad ufuncs, and ``np.matmul`` in the GEMM child) advances that time by the bytes
it moves at the rate of the level its working set fits in, or by its 2·n³ FLOPs at the GEMM
rate of its thread count. The measurement must then find exactly those rates: every level
for every bandwidth kernel (8, 16 and 40 bytes per element), DRAM as main memory, and the
fp64 and fp32 peaks on all cores and on one. (How close a real measurement comes to a plain
numpy program on a real machine is a benchmark's question: ``benchmarks/measure_vs_numpy.py``.)
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from workbench.measure import gemm_child, kernels, runner, system
from workbench.measure.runner import Profile, measure_machine

KIB, MIB = 1024, 1024**2
CACHES = {"L1": 32 * KIB, "L2": 1 * MIB, "L3": 4 * MIB}
#: the fake machine's bandwidth (bytes/s) for a working set up to each size
LEVEL_RATES = {"L1": 400e9, "L2": 150e9, "L3": 60e9, "DRAM": 20e9}
#: its GEMM rates (FLOP/s) by numpy type and BLAS threads
CORES = 4
GEMM_RATES = {("float64", CORES): 80e9, ("float64", 1): 50e9,
              ("float32", CORES): 160e9, ("float32", 1): 100e9,
              ("float16", CORES): 1e9, ("float16", 1): 1e9}
#: what reading the clock costs: small enough not to show in the rates
TICK = 1e-12


def level_rate(working_set: float) -> float:
    for name, size in CACHES.items():
        if working_set <= size:
            return LEVEL_RATES[name]
    return LEVEL_RATES["DRAM"]


class FakeClock:
    """``time`` for the kernels and the GEMM child: fake seconds that pass only as the fake
    machine works (and a tick per reading)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += TICK
        return self.now

    def work(self, seconds: float) -> None:
        self.now += seconds


class FakeUfunc:
    """``np.add`` or ``np.multiply`` on the fake machine: the time its bytes take at the rate
    of the working set of ``arrays`` arrays of the last axis's length (the arithmetic itself
    is left out: only its cost is of interest here)."""

    def __init__(self, ufunc, clock: FakeClock, arrays: int, bytes_per_element: float) -> None:
        self.ufunc, self.clock = ufunc, clock
        self.arrays, self.per_element = arrays, bytes_per_element

    def _charge(self, array) -> None:
        n = array.shape[-1]
        self.clock.work(self.per_element * array.size / level_rate(self.arrays * 8 * n))

    def __call__(self, x, y, out):
        self._charge(out)

    def reduce(self, x, axis, out):
        self.clock.work(8 * x.size / level_rate(8 * x.shape[-1]))  # read: one array, 8 B
        return out


class FakeNumpy:
    """numpy as the measured kernels see it on the fake machine: the triad's multiply is its
    first pass (load b, store c: 16 B per element of 3 arrays), its add the second (load c
    and a, store c: 24 B); a copy loads and stores (16 B per element of 2 arrays); a matmul
    takes 2·n³ FLOPs at the rate for its type and the thread count the child runs with."""

    def __init__(self, clock: FakeClock, threads: int = CORES) -> None:
        self.clock, self.threads = clock, threads
        self.add = FakeUfunc(np.add, clock, 3, 24.0)
        self.multiply = FakeUfunc(np.multiply, clock, 3, 16.0)

    def __getattr__(self, name):
        return getattr(np, name)

    def copyto(self, dst, src) -> None:
        self.clock.work(16 * dst.size / level_rate(2 * 8 * dst.shape[-1]))

    def matmul(self, a, b, out) -> None:
        n = a.shape[0]
        self.clock.work(2 * n**3 / GEMM_RATES[(a.dtype.name, self.threads)])


def on_the_fake_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """``measure_machine`` on the fake machine: its caches and cores, its clock in the
    kernels, and the GEMM child run in this process on that clock."""
    clock = FakeClock()
    monkeypatch.setattr(system, "cache_sizes", lambda: (dict(CACHES), "fake machine"))
    monkeypatch.setattr(system, "core_count", lambda: CORES)
    monkeypatch.setattr(system, "available_memory", lambda: 64 * 1024**3)
    monkeypatch.setattr(kernels, "time", clock)
    monkeypatch.setattr(kernels, "np", FakeNumpy(clock))
    monkeypatch.setattr(gemm_child, "time", clock)

    def gemm_in_process(dtype, threads, sizes, budget_s, min_runs, max_runs, min_n, tol,
                        on_size=lambda row: None, cancelled=lambda: False,
                        peak_budget_s=None, sample_s=0.0):
        config = {"dtype": dtype, "sizes": sizes, "budget_s": budget_s, "min_runs": min_runs,
                  "max_runs": max_runs, "min_n": min_n, "tol": tol,
                  "peak_budget_s": budget_s if peak_budget_s is None else peak_budget_s,
                  "sample_s": sample_s}
        monkeypatch.setattr(gemm_child, "np", FakeNumpy(clock, threads))
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert gemm_child.main([json.dumps(config)]) == 0
        rows = [json.loads(line) for line in printed.getvalue().splitlines()]
        for row in rows:
            on_size(row)
        return rows

    monkeypatch.setattr(runner, "run_gemm_child", gemm_in_process)


#: two points an octave from 8 KiB to 16 MiB: several working sets in each level
PROFILE = Profile("fake", 2, 8 * KIB, 16 * MIB, 0.002, 2, (64, 96, 128), 0.005, 2, 4, 96,
                  dram_budget_s=0.01, gemm_peak_budget_s=0.005)


@pytest.fixture(scope="module")
def measured():
    with pytest.MonkeyPatch.context() as monkeypatch:
        on_the_fake_machine(monkeypatch)
        return measure_machine(PROFILE)


def test_each_bandwidth_kernel_finds_each_level_at_the_rate_it_moves_bytes(measured):
    prov = measured.provenance
    assert measured.hardware.main_memory == "DRAM"
    assert measured.hardware.memory == pytest.approx(LEVEL_RATES, rel=1e-6)
    for kernel in ("read", "copy", "triad"):
        assert prov["levels_by_kernel"][kernel] == pytest.approx(LEVEL_RATES, rel=1e-6), kernel
    largest = prov["bandwidth"]["copy"][-1]
    assert largest["working_set"] == 16 * MIB and largest["rate"] == pytest.approx(20e9, rel=1e-6)


def test_each_peak_is_two_n_cubed_over_the_fastest_product(measured):
    hw, gemm = measured.hardware, measured.provenance["gemm"]
    for precision, dtype in (("fp64", "float64"), ("fp32", "float32")):
        assert gemm[precision]["all_cores"]["threads"] == CORES
        assert gemm[precision]["all_cores"]["rate"] == pytest.approx(
            GEMM_RATES[(dtype, CORES)], rel=1e-6)
        assert gemm[precision]["one_core"]["threads"] == 1
        assert gemm[precision]["one_core"]["rate"] == pytest.approx(
            GEMM_RATES[(dtype, 1)], rel=1e-6)
        # the peak: the better of the two thread settings
        assert hw.compute[precision] == pytest.approx(GEMM_RATES[(dtype, CORES)], rel=1e-6)


def test_a_faster_single_core_is_the_peak_and_said_so(monkeypatch):
    on_the_fake_machine(monkeypatch)
    monkeypatch.setitem(GEMM_RATES, ("float64", 1), 120e9)  # other work took the cores
    measured = measure_machine(PROFILE)
    assert measured.hardware.compute["fp64"] == pytest.approx(120e9, rel=1e-6)
    assert any(note.startswith("fp64: one core measured faster than all 4")
               for note in measured.provenance["notes"])
