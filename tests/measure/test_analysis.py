"""The measurement logic on synthetic timings: best-of, plateaus, level naming and order."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.measure.analysis import (
    best_of,
    find_plateaus,
    level_ranges,
    leveled_off,
    name_levels,
    order_problems,
)

KB, MB = 1024, 1024**2


def test_best_of_is_the_fastest_run_with_the_median_as_spread():
    timing = best_of([1.2, 1.0, 1.1, 5.0], work=10.0)
    assert timing.rate == 10.0  # 10 units in the best second
    assert timing.runs == 4
    assert timing.spread == pytest.approx(0.15)  # median (1.1 + 1.2) / 2 over best 1.0


def test_best_of_ignores_broken_runs_and_rejects_no_runs():
    assert best_of([0.0, 2.0, float("nan")], 4.0).rate == 2.0
    with pytest.raises(ValueError, match="no valid timing"):
        best_of([0.0, -1.0], 4.0)
    with pytest.raises(ValueError, match="positive"):
        best_of([1.0], 0.0)


def _curve(levels, noise=0.04, seed=1, points_per_octave=2):
    """Working sets 4 KiB … and rates: ``levels`` is [(up to bytes, rate)], the last one up
    to infinity; one transition point between neighbours; multiplicative noise."""
    rng = np.random.default_rng(seed)
    sizes, rates = [], []
    top = levels[-1][0]
    k = 0
    while (ws := round(4 * KB * 2 ** (k / points_per_octave))) <= top:
        k += 1
        for i, (limit, rate) in enumerate(levels):
            if ws <= limit:
                if i and ws <= levels[i - 1][0] * 1.45:  # just past a cache: half-way
                    rate = math.sqrt(rate * levels[i - 1][1])
                break
        sizes.append(ws)
        rates.append(rate * (1 + rng.uniform(-noise, noise)))
    return sizes, rates


FOUR_LEVELS = [(32 * KB, 200e9), (1 * MB, 100e9), (16 * MB, 50e9), (512 * MB, 12e9)]
CACHES = {"L1": 32 * KB, "L2": 1 * MB, "L3": 16 * MB}


def test_plateaus_of_a_noisy_four_level_curve():
    sizes, rates = _curve(FOUR_LEVELS)
    plateaus = find_plateaus(sizes, rates, tol=0.15)
    assert [round(p.rate / 1e9) for p in plateaus] == pytest.approx([200, 100, 50, 12], rel=0.05)
    assert plateaus[0].first_size == 4 * KB
    assert plateaus[1].first_size > 32 * KB and plateaus[1].last_size <= 1 * MB
    assert plateaus[-1].last_size == sizes[-1]
    for p in plateaus:
        assert p.spread <= 0.09  # ±4 % noise


def test_transition_points_belong_to_no_plateau():
    sizes, rates = _curve(FOUR_LEVELS, noise=0.0)
    on = {i for p in find_plateaus(sizes, rates) for i in p.indices}
    between = [i for i, s in enumerate(sizes) if 32 * KB < s <= 32 * KB * 1.45]
    assert between and not set(between) & on


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1.6, 4.0), min_size=1, max_size=3), st.floats(1e9, 1e12),
       st.floats(0.0, 0.05), st.integers(0, 1000))
def test_plateaus_found_whatever_the_levels(ratios, slowest, noise, seed):
    rates_down = [slowest]
    for r in ratios:
        rates_down.append(rates_down[-1] * r)
    rates_down.reverse()  # fastest first
    limits = [32 * KB * 16**i for i in range(len(rates_down))]
    sizes, rates = _curve(list(zip(limits, rates_down, strict=True)), noise=noise, seed=seed)
    found = find_plateaus(sizes, rates, tol=0.15)
    assert len(found) == len(rates_down)
    for p, true in zip(found, rates_down, strict=True):
        assert p.rate == pytest.approx(true, rel=0.06)


def test_levels_named_with_the_cache_sizes_the_os_reports():
    sizes, rates = _curve(FOUR_LEVELS)
    levels = name_levels(sizes, rates, CACHES)
    assert [lv.name for lv in levels] == ["L1", "L2", "L3", "DRAM"]
    assert [lv.rate / 1e9 for lv in levels] == pytest.approx([200, 100, 50, 12], rel=0.05)
    assert levels[0].cache_size == 32 * KB and levels[-1].cache_size is None
    assert levels[-1].first_size > 2 * 16 * MB  # DRAM from twice the last-level cache
    assert all(lv.on_plateau for lv in levels)


def test_a_cache_smaller_than_reported_takes_its_first_plateau():
    # a virtual machine's share of a shared L3: reported 256 MiB, holds 16 MiB
    sizes, rates = _curve(FOUR_LEVELS + [(2048 * MB, 12e9)])
    levels = name_levels(sizes, rates, {"L1": 32 * KB, "L2": 1 * MB, "L3": 256 * MB})
    byname = {lv.name: lv.rate / 1e9 for lv in levels}
    assert byname["L3"] == pytest.approx(50, rel=0.05)
    assert byname["DRAM"] == pytest.approx(12, rel=0.05)


def test_a_level_slower_than_the_next_is_dropped_and_said_why():
    # numpy's per-call overhead holds the smallest working sets below L2
    levels_in = [(32 * KB, 60e9), (1 * MB, 100e9), (16 * MB, 50e9), (512 * MB, 12e9)]
    sizes, rates = _curve(levels_in)
    levels = name_levels(sizes, rates, CACHES)
    assert [lv.name for lv in levels] == ["L2", "L3", "DRAM"]
    assert any("L1 dropped" in note for note in levels[0].notes)
    assert order_problems({lv.name: lv.rate for lv in levels}) == []


def test_levels_named_by_order_without_cache_sizes():
    sizes, rates = _curve(FOUR_LEVELS[1:])
    levels = name_levels(sizes, rates, {})
    assert [lv.name for lv in levels] == ["L1", "L2", "DRAM"]
    assert levels[-1].rate == pytest.approx(12e9, rel=0.05)
    assert "reported no cache sizes" in levels[0].notes[0]


def test_level_ranges_and_dram_fallback():
    ranges = level_ranges(CACHES, largest=512 * MB)
    assert ranges["L1"] == (0, 24 * KB)
    assert ranges["L2"] == (48 * KB, 768 * KB)
    assert ranges["DRAM"] == (32 * MB, math.inf)
    # the measurement stopped below twice the LLC: DRAM starts right above it
    assert level_ranges(CACHES, largest=20 * MB)["DRAM"] == (16 * MB, math.inf)


def test_order_problems():
    assert order_problems({"L1": 3.0, "L2": 2.0, "DRAM": 1.0}) == []
    problems = order_problems({"L1": 3.0, "L2": 4.0, "DRAM": 1.0})
    assert problems == ["L1 (3 B/s) is below L2 (4 B/s)"]
    assert "not a positive bandwidth" in order_problems({"DRAM": 0.0})[0]


def test_levelled_off():
    assert not leveled_off([10.0])
    assert not leveled_off([10.0, 20.0])  # still doubling
    assert leveled_off([10.0, 20.0, 21.0])  # +5 %
    assert leveled_off([10.0, 20.0, 15.0])  # fell back
