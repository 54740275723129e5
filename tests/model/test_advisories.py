"""Warnings that ask for a check: a measured point above its roof, sparse-looking figures,
a hand-made machine without a main-memory level; in the model and in `analyze`."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.model.advisories import machine_advisories, session_advisories
from workbench.model.hardware import Hardware
from workbench.model.measured import Measurement
from workbench.model.operations import Operation
from workbench.model.session import HardwareEntry, OperationEntry, Session

TB = 1e12


def kinds(advisories) -> list[str]:
    return [a.kind for a in advisories]


def test_dense_figures_raise_nothing():
    hw = Hardware("dense", compute={"bf16": 989.4 * TB, "fp8": 1979 * TB, "int8": 1979 * TB},
                  memory={"hbm": 3.35 * TB})
    assert machine_advisories(hw) == []


def test_sparse_looking_int8_is_named():
    hw = Hardware("sparse", compute={"bf16": 989.4 * TB, "int8": 3958 * TB},
                  memory={"hbm": 3.35 * TB})
    (advisory,) = machine_advisories(hw)
    assert advisory.kind == "sparse-figures"
    assert "compute.int8" in advisory.message and "4.00× compute.bf16" in advisory.message
    assert "sparse" in advisory.message


def test_sparse_looking_fp8_against_fp16_when_there_is_no_bf16():
    hw = Hardware("x", compute={"fp16": 100 * TB, "fp8": 250 * TB}, memory={"hbm": TB})
    assert kinds(machine_advisories(hw)) == ["sparse-figures"]


@pytest.mark.parametrize("memory, main, flagged", [
    ({"hbm": TB}, "hbm", False),
    ({"dram": TB, "l2": 5 * TB}, "dram", False),
    ({"l2": 5 * TB}, "l2", True),
    ({"smem": 20 * TB, "l1": 30 * TB}, "smem", True),
    ({"hbm": TB, "l2": 5 * TB}, "l2", True),  # the cache made main memory
])
def test_a_cache_as_main_memory_is_named(memory, main, flagged):
    hw = Hardware("m", compute={"bf16": TB}, memory=memory, main_memory=main)
    assert ("no-main-memory" in kinds(machine_advisories(hw))) == flagged


def test_a_machine_with_no_levels_is_named():
    hw = Hardware("m", compute={"bf16": TB}, memory={"hbm": TB})
    hw.memory.clear()  # what an editor can leave behind
    assert kinds(machine_advisories(hw)) == ["no-main-memory"]


def teaching() -> Hardware:
    return Hardware("teach", compute={"bf16": 100 * TB}, memory={"hbm": TB})


def session_with(measurement: Measurement) -> Session:
    op = Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16"}, "g")
    return Session(hardware=[HardwareEntry(teaching(), preset="teaching")],
                   operations=[OperationEntry(op)], measurements=[measurement])


def test_a_measured_point_above_its_roof_is_named():
    # 2·4096³ = 137.4 GFLOP; the roof is 100 TFLOP/s: 1.374 ms at best; 1 ms beats it
    (advisory,) = session_advisories(session_with(Measurement("fast", "g", time_s=1e-3)))
    assert advisory.kind == "measured-above-roof"
    assert "'fast'" in advisory.message and "check the counting or the peak" in advisory.message


def test_a_measured_point_below_its_roof_is_not():
    assert session_advisories(session_with(Measurement("ok", "g", time_s=2e-3))) == []


def test_measured_bytes_set_the_roof_the_point_is_held_to():
    # few bytes measured: a high intensity, so the compute roof applies (100 TFLOP/s);
    # 137.4 GFLOP in 1.5 ms is 91.6 TFLOP/s: under it, though the model's own bytes would
    # allow less
    m = Measurement("cached", "g", time_s=1.5e-3, bytes=1e6)
    assert session_advisories(session_with(m)) == []
    # many bytes measured: memory-bound at 1 TB/s; 1e11 B take 100 ms at the very least
    m = Measurement("too fast for its bytes", "g", time_s=50e-3, bytes=1e11)
    assert kinds(session_advisories(session_with(m))) == ["measured-above-roof"]


SESSION = """\
schema_version: 2
hardware:
  - preset: h100-sxm
  - name: Hand-made
    compute: {bf16: 100 TFLOP/s, int8: 400 TOP/s}
    memory: {l2: 5 TB/s}
operations:
  - {name: g, kind: gemm, m: 4096, n: 4096, k: 4096, dtype: bf16}
measurements:
  - {name: too fast, operation: g, hardware: Hand-made, time: 1 us}
"""


def test_analyze_lists_the_warnings_in_json(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(SESSION, encoding="utf-8")
    assert main(["analyze", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(w["kind"] for w in data["warnings"]) == [
        "measured-above-roof", "no-main-memory", "sparse-figures"]
    assert all(w["subject"] != "NVIDIA H100 SXM5 80GB" for w in data["warnings"])


def test_analyze_prints_the_warnings_on_stderr(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(SESSION, encoding="utf-8")
    assert main(["analyze", str(path)]) == 0
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 3
    assert all(line.startswith("roofline-workbench: warning: ") for line in lines)
    assert any("check the counting or the peak" in line for line in lines)
    assert "warning" not in captured.out
