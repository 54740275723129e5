"""``analyze`` with compared pairs, run as a user runs it (a subprocess).

The expected numbers come from the counting rules by hand: an elementwise chain
w = gelu(a·x + b) + r over n fp32 elements moves 28 bytes per element unfused (each of the
three steps reads its inputs and writes its output) and 12 fused (x and r read once, w
written once); the FLOPs are the same, both are far left of either ridge, so the predicted
speed-up is 28 / 12 on every machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

REPO = Path(__file__).resolve().parents[2]
N = 16_777_216

SESSION = f"""\
schema_version: 1
title: fused vs unfused
hardware:
  - preset: h100-sxm
  - preset: teaching-machine
operations:
  - name: chain, unfused
    kind: elementwise
    n: {N}
    dtype: fp32
    input: x
    output: w
    steps:
      - {{op: fma}}
      - {{op: gelu}}
      - {{op: add, inputs: [r]}}
    fused: false
  - name: chain, fused
    kind: elementwise
    n: {N}
    dtype: fp32
    input: x
    output: w
    steps:
      - {{op: fma}}
      - {{op: gelu}}
      - {{op: add, inputs: [r]}}
    fused: true
comparisons:
  - {{first: "chain, unfused", second: "chain, fused"}}
"""


def run(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "workbench", *map(str, args)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)


@pytest.fixture
def session(tmp_path) -> Path:
    path = tmp_path / "pair.yaml"
    path.write_text(SESSION, encoding="utf-8")
    return path


def test_json_has_one_comparison_per_machine(session):
    proc = run("analyze", session, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    compared = data["comparisons"]
    assert [c["hardware"] for c in compared] == ["NVIDIA H100 SXM5 80GB",
                                                 "Teaching machine (round numbers)"]
    for c in compared:
        assert (c["first"], c["second"]) == ("chain, unfused", "chain, fused")
        assert c["bytes_saved"] == (28 - 12) * N
        assert c["flops_added"] == 0
        assert c["speedup"] == pytest.approx(28 / 12, rel=1e-12)
        assert c["t_first_s"] / c["t_second_s"] == pytest.approx(28 / 12, rel=1e-12)
    results = {(r["operation"], r["hardware"]): r for r in data["results"]}
    h100 = compared[0]
    # the times compared are the predicted ones the results show (derated at 78 %)
    assert h100["t_first_s"] == pytest.approx(
        results[("chain, unfused", h100["hardware"])]["t_predicted_s"], rel=1e-15)
    assert h100["t_first_s"] == pytest.approx(28 * N / 3.35e12 / 0.78, rel=1e-12)


def test_table_has_a_line_per_pair(session):
    proc = run("analyze", session)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("pair: ")]
    assert len(lines) == 2
    assert lines[0].startswith("pair: chain, unfused -> chain, fused on NVIDIA H100 SXM5 80GB: "
                               "2.33x predicted speed-up")
    assert "bytes saved 268 MB" in lines[0]  # 16 B × 16 Mi elements = 268,435,456 B


def test_no_pairs_gives_an_empty_list(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text(SESSION.split("comparisons:")[0], encoding="utf-8")
    proc = run("analyze", path, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["comparisons"] == []
    assert "pair: " not in run("analyze", path).stdout
