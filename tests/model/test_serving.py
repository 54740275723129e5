"""Numbers a serving engineer can act on: the calibrated prediction by default (a whole model
replayed from a CUDA graph), held against the lean Llama-3.1-8B runs on an H100 SXM and an
H200 SXM (calibration/gpu-measurements, measured 2026-11-26, PyTorch 2.11.0+cu130, CUDA 13.0,
driver 580.159)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.model.llm.architecture import Setup
from workbench.model.llm.results import model_result
from workbench.model.prediction import DEFAULT_LAUNCHES, DEFAULT_PREDICTION

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "calibration" / "gpu-measurements"
LLAMA = read_model_config("Llama-3.1-8B")
MS = 1e-3


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "workbench", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def default_machine(gpu: str):
    hw = get_preset(gpu)
    hw.prediction, hw.launches = DEFAULT_PREDICTION, DEFAULT_LAUNCHES
    return hw


# ---------------------------------------------------------------------------------------------
# the default prediction


def test_the_default_is_calibrated_with_a_cuda_graph_for_whole_models():
    assert (DEFAULT_PREDICTION, DEFAULT_LAUNCHES) == ("calibrated", "auto")


def test_model_decode_batch_1_with_no_flags_prints_the_measured_tpot():
    """The lean CUDA-graph run of Llama-3.1-8B decode at batch 1 on an H100 SXM took 6.565 ms
    (h100-sxm.json, lean llama8b_decode_b1, graph median); the command with no flags prints
    a TPOT within 10 % of 6.6 ms."""
    proc = run_cli("model", "Llama-3.1-8B", "--phase", "decode", "--batch", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("hardware"))
    columns = lines[at].split()
    assert columns[:3] == ["hardware", "T_lower", "TPOT"]
    cells = [c.strip() for c in lines[at + 1].split("  ") if c.strip()]
    number, unit = cells[columns.index("TPOT")].split()
    assert unit == "ms"
    assert abs(float(number) * MS / 6.6e-3 - 1) <= 0.10


@pytest.mark.parametrize("gpu", ["h100-sxm", "h200"])
def test_the_lean_runs_in_the_default_mode_within_15_percent(gpu):
    """Every lean case (prefill at batch 1 and 4 of 2048 tokens, decode at batch 1, 16 and 64
    against 2048 cached positions), predicted as ``model`` predicts with no flags."""
    lean = json.loads((DATA / f"{gpu}.json").read_text(encoding="utf-8"))["lean"]
    hw = default_machine(gpu)
    ratios = {}
    for case, runs in lean.items():
        _model, phase, batch = case.split("_")
        b = int(batch.removeprefix("b"))
        setup = Setup(phase, b, 2048, 2048)
        ratios[case] = runs["graph"]["median_s"] / model_result(LLAMA, setup, hw).t_predicted_s
    assert len(ratios) == 5
    assert {k: round(v, 3) for k, v in ratios.items() if abs(v - 1) > 0.15} == {}
