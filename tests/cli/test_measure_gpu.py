"""``roofline-workbench measure --device cuda|mps``: without a GPU library, with the replayed
H100 (tests/fake_gpu.py), and bad input."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S
from fake_gpu import ReplayGpu, reference

from workbench.cli import main
from workbench.io.user_presets import USER_PRESETS_VARIABLE, load_machine_file
from workbench.measure import Cancelled, gpu_backend
from workbench.measure.runner import PROFILE_VARIABLE

REPO = Path(__file__).resolve().parents[2]
HAVE_GPU_LIBRARY = any(importlib.util.find_spec(m) is not None for m in ("torch", "cupy"))


@pytest.fixture
def presets(tmp_path, monkeypatch):
    folder = tmp_path / "presets"
    monkeypatch.setenv(USER_PRESETS_VARIABLE, str(folder))
    monkeypatch.setenv(PROFILE_VARIABLE, "tiny")
    return folder


def _with(monkeypatch, backend):
    monkeypatch.setattr(gpu_backend, "load_backend", lambda device, name=None: backend)


@pytest.mark.skipif(HAVE_GPU_LIBRARY, reason="PyTorch or CuPy is installed here")
@pytest.mark.parametrize("device", ["cuda", "mps"])
def test_without_pytorch_or_cupy_one_line_says_what_to_install(device, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO), **{USER_PRESETS_VARIABLE: str(tmp_path)})
    out = subprocess.run([sys.executable, "-m", "workbench", "measure", "--device", device],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=HANG_GUARD_S)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and 'pip install ".[gpu]"' in lines[0]
    assert not any(tmp_path.iterdir())


def test_a_missing_library_is_one_line_in_process_too(monkeypatch, presets, capsys):
    monkeypatch.setattr(gpu_backend, "_installed", lambda module: False)
    assert main(["measure", "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PyTorch" in err and 'pip install ".[gpu]"' in err


@pytest.mark.parametrize("device", ["tpu", "cuda:x", "mps:1", "gpu", ""])  # ("": not the CPU)
def test_an_unknown_device_is_one_line_and_exit_2(device, presets, capsys):
    assert main(["measure", "--device", device]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--device" in err and repr(device) in err


def test_a_device_index_beyond_those_found(monkeypatch, presets, capsys):
    _with(monkeypatch, ReplayGpu("h100-sxm"))
    assert main(["measure", "--device", "cuda:2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no cuda:2" in err and "H100" in err
    assert not presets.exists()


def test_no_device_found(monkeypatch, presets, capsys):
    def none(device, name=None):
        raise gpu_backend.NoDevice("torch finds no cuda device on this computer")

    monkeypatch.setattr(gpu_backend, "load_backend", none)
    assert main(["measure", "--device", "cuda"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_cancelled_run_saves_nothing(monkeypatch, presets, capsys):
    fake = ReplayGpu("h100-sxm")

    def interrupted(*args, **kw):
        raise KeyboardInterrupt

    fake.time_stream = interrupted
    _with(monkeypatch, fake)
    assert main(["measure", "--device", "cuda", "--quick"]) == 2
    out = capsys.readouterr()
    assert out.err.strip().endswith("the measurement was cancelled; nothing was saved")
    assert out.err.strip().count("\n") == 0 and out.out == ""
    assert not presets.exists() or not any(presets.iterdir())
    assert fake.released

    fake = ReplayGpu("h100-sxm")
    fake.time_launch = lambda *a, **k: (_ for _ in ()).throw(Cancelled())
    _with(monkeypatch, fake)
    assert main(["measure", "--device", "cuda", "--quick"]) == 2


def test_measure_the_replayed_h100_and_save_it_beside_its_datasheet(monkeypatch, presets,
                                                                    capsys, tmp_path):
    fake = ReplayGpu("h100-sxm")
    _with(monkeypatch, fake)
    out_file = tmp_path / "gpu.yaml"
    assert main(["measure", "--device", "cuda", "--quick", "-o", str(out_file)]) == 0
    out = capsys.readouterr().out
    data = reference("h100-sxm")
    bf16 = 2 * 8192**3 / data["ops"]["g_8192"]["torch"]["median_s"]
    saved = list(presets.glob("measured-h100-sxm-*.yaml"))
    assert len(saved) == 1 and f"saved as preset {saved[0].stem}" in out
    hw, prov = load_machine_file(saved[0])
    assert hw.compute["bf16"] == pytest.approx(bf16, rel=1e-12)
    assert prov["compared_to"] == "h100-sxm"
    # the comparison table, with the datasheet's 989.4 TFLOP/s and 3.35 TB/s
    table = [line for line in out.splitlines() if line.strip().startswith("bf16 peak")]
    assert len(table) == 1
    assert "989 TFLOP/s" in table[0] and f"{bf16 / 989.4e12:.2f}×" in table[0]
    hbm = next(line for line in out.splitlines() if line.strip().startswith("hbm bandwidth"))
    assert "3.35 TB/s" in hbm
    assert load_machine_file(out_file)[0].compute == hw.compute
    assert fake.released


def test_compare_names_another_datasheet(monkeypatch, presets, capsys):
    _with(monkeypatch, ReplayGpu("h200"))
    assert main(["measure", "--device", "cuda", "--quick", "--compare", "h100-sxm"]) == 0
    out = capsys.readouterr().out
    assert "compared with the datasheet preset h100-sxm" in out
    assert list(presets.glob("measured-h200-*.yaml"))  # named by the GPU measured


def test_a_measurement_that_cannot_be_saved_still_prints_its_figures(monkeypatch, presets,
                                                                    capsys):
    """Minutes of measuring are not lost to a save that fails on something other than the
    disk (a value YAML cannot hold): the figures are printed, then one line, exit 2."""
    import workbench.io.user_presets as user_presets

    _with(monkeypatch, ReplayGpu("h100-sxm"))

    def unrepresentable(*args, **kw):
        raise ValueError("cannot represent an object: TorchVersion('2.11.0')")

    monkeypatch.setattr(user_presets, "save_machine", unrepresentable)
    assert main(["measure", "--device", "cuda", "--quick"]) == 2
    out = capsys.readouterr()
    assert "TFLOP/s" in out.out and "TB/s" in out.out  # the figures came first
    assert "saved as preset" not in out.out
    assert out.err.count("\n") == 1 and "could not be saved" in out.err
    assert "TorchVersion" in out.err
    assert not presets.exists() or not any(presets.iterdir())
