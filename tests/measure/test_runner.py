"""A real (tiny) measurement: provenance, progress, cancel, and the saved machine file."""

from __future__ import annotations

import datetime as dt
import sys
import time

import numpy as np
import pytest

from workbench.io.errors import InputError
from workbench.io.presets import get_preset, load_presets
from workbench.io.user_presets import (
    USER_PRESETS_VARIABLE,
    all_presets,
    find_preset,
    is_measured,
    load_machine_file,
    save_machine,
    user_preset_problems,
    user_presets_dir,
)
from workbench.measure import Cancelled, compare_to_datasheet, measure_machine, system
from workbench.measure.analysis import order_problems
from workbench.measure.runner import Profile, working_sets


@pytest.fixture(scope="module")
def tiny():
    progress = []
    measured = measure_machine("tiny", progress.append)
    return measured, progress


def test_provenance_names_the_machine_and_the_method(tiny):
    measured, _ = tiny
    prov = measured.provenance
    assert prov["cpu"] == system.cpu_model()
    assert prov["cores"] == system.core_count() >= 1
    assert prov["numpy"] == np.__version__
    when = dt.datetime.fromisoformat(prov["date"])
    assert abs((dt.datetime.now(dt.UTC) - when).total_seconds()) < 600
    assert "np.matmul" in prov["method"] and "copy" in prov["method"]
    caches, _ = system.cache_sizes()
    assert prov["caches"] == caches
    for kernel in ("read", "copy", "triad"):
        curve = prov["bandwidth"][kernel]
        sets = [row["working_set"] for row in curve]
        assert sets == sorted(sets) and len(sets) >= 5
        assert all(row["rate"] > 0 and row["runs"] >= 2 for row in curve)


def test_the_machine_is_built_from_its_curves(tiny):
    measured, _ = tiny
    hw, prov = measured.hardware, measured.provenance
    assert hw.kind == "cpu" and hw.id.startswith("measured-")
    assert set(hw.compute) >= {"fp64", "fp32"}
    for precision, rate in hw.compute.items():
        runs = prov["gemm"][precision]
        assert rate == max(r["rate"] for r in runs.values())
        for r in runs.values():  # the rate is the best of the runs at its size
            row = next(c for c in r["curve"] if c["n"] == r["n"])
            assert row["rate"] == r["rate"]
    copy = {row["working_set"]: row["rate"] for row in prov["bandwidth"]["copy"]}
    for name, rate in hw.memory.items():
        level = prov["levels"][name]
        inside = [r for ws, r in copy.items() if level["from"] <= ws <= level["to"]]
        assert min(inside) <= rate <= max(inside)
    assert order_problems(hw.memory) == []
    assert hw.main_memory in hw.memory
    assert hw.vector_compute == hw.compute  # fp64/fp32 GEMM runs on the vector units
    assert set(hw.measured) == ({f"compute.{p}" for p in hw.compute}
                                | {f"vector_compute.{p}" for p in hw.compute}
                                | {f"memory.{m}" for m in hw.memory})
    assert "measured" in hw.name and hw.notes.startswith("Measured on")


def test_progress_rises_to_the_end_with_an_estimate(tiny):
    _, progress = tiny
    fractions = [p.fraction for p in progress]
    assert fractions == sorted(fractions)
    assert fractions[-1] == pytest.approx(1.0, abs=0.35)  # planned, not exact
    assert all(p.remaining_s >= 0 and p.stage for p in progress)
    assert any(p.stage.startswith("GEMM fp64") for p in progress)


def test_cancel_during_bandwidth_stops_at_once():
    calls = []
    with pytest.raises(Cancelled):
        measure_machine("tiny", calls.append, cancelled=lambda: len(calls) >= 3)
    assert len(calls) == 3  # no step after the one that was cancelled


def test_cancel_during_gemm_kills_the_child(monkeypatch):
    # little bandwidth, then one long GEMM (several seconds): cancelled 0.3 s into it; the
    # child is killed, not waited for (it ends by a signal, before its 5 × 3000³ products)
    from workbench.measure import kernels

    children = []
    popen = kernels.subprocess.Popen

    def recorded(*args, **kwargs):
        children.append(popen(*args, **kwargs))
        return children[-1]

    monkeypatch.setattr(kernels.subprocess, "Popen", recorded)
    profile = Profile("test", 1, 8 * 1024, 64 * 1024, 0.001, 2, (3000,), 30.0, 5, 5, 3000)
    bandwidth_steps = 1 + 3 * len(working_sets(profile, system.cache_sizes()[0]))
    seen, cancel_at = [], []

    def cancelled():
        if len(seen) >= bandwidth_steps and not cancel_at:
            cancel_at.append(time.perf_counter() + 0.3)
        return bool(cancel_at) and time.perf_counter() >= cancel_at[0]

    with pytest.raises(Cancelled):
        measure_machine(profile, seen.append, cancelled=cancelled)
    assert children and all(child.returncode is not None for child in children)
    assert children[-1].returncode < 0  # killed by a signal, not finished
    assert not any(p.stage.startswith("GEMM") for p in seen)


def test_saved_machine_is_a_preset_listed_as_measured(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv(USER_PRESETS_VARIABLE, str(tmp_path / "presets"))
    measured, _ = tiny
    path = save_machine(measured.hardware, measured.provenance)
    assert path.parent == user_presets_dir() == tmp_path / "presets"
    hw, prov = load_machine_file(path)
    assert hw.compute == pytest.approx(measured.hardware.compute, rel=1e-12)
    assert hw.memory == pytest.approx(measured.hardware.memory, rel=1e-12)
    assert hw.measured == measured.hardware.measured
    assert prov["bandwidth"]["copy"][0]["rate"] == measured.provenance["bandwidth"]["copy"][0][
        "rate"]
    assert hw.id in all_presets()
    assert hw.id not in load_presets()
    assert find_preset(hw.id).memory == hw.memory
    with pytest.raises(KeyError):  # sessions name built-in presets only
        get_preset(hw.id)
    assert is_measured(hw.id) and not is_measured("h100-sxm")


def test_a_bad_user_preset_is_left_out_and_named(tmp_path, monkeypatch):
    monkeypatch.setenv(USER_PRESETS_VARIABLE, str(tmp_path))
    (tmp_path / "broken.yaml").write_text("id: broken\nname: B\ncompute: {fp64: -1}\n"
                                          "memory: {DRAM: 1 GB/s}\n")
    (tmp_path / "h100-sxm.yaml").write_text("id: h100-sxm\nname: Mine\ncompute: {fp64: 1e12}\n"
                                            "memory: {DRAM: 1 GB/s}\n")
    listed = all_presets()
    assert "broken" not in listed and listed["h100-sxm"].name != "Mine"
    problems = user_preset_problems()
    assert any("broken.yaml:3: compute.fp64: must be positive" in p for p in problems)
    assert any("h100-sxm.yaml" in p and "built-in" in p for p in problems)
    with pytest.raises(InputError, match=r"broken\.yaml"):
        load_machine_file(tmp_path / "broken.yaml")


def test_user_presets_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(USER_PRESETS_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    folder = user_presets_dir()
    assert folder.parts[-2:] == ("roofline-workbench", "presets")
    if sys.platform not in ("darwin", "win32"):
        assert folder == tmp_path / "roofline-workbench" / "presets"


def test_gap_to_a_datasheet_is_a_fraction_in_the_name(tiny):
    measured, _ = tiny
    copy = type(measured)(measured.hardware.copy(), dict(measured.provenance))
    datasheet = get_preset("xeon-8480")
    compare_to_datasheet(copy, datasheet, "xeon-8480")
    main = copy.hardware.main_memory
    gap = copy.provenance["gap"]
    assert gap[main] == pytest.approx(copy.hardware.bandwidth() / 307.2e9)
    assert gap["fp64"] == pytest.approx(copy.hardware.compute["fp64"] / 3.584e12)
    assert f"{main} {gap[main]:.2f}×" in copy.hardware.name
    assert copy.hardware.name.endswith("datasheet")
    assert "xeon-8480" in copy.hardware.notes
