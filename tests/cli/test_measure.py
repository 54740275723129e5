"""``roofline-workbench measure`` from the command line: the machine file and preset it writes,
the profile its flags choose, and bad arguments refused before measuring."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

from workbench.io.user_presets import USER_PRESETS_VARIABLE, load_machine_file
from workbench.measure.analysis import LEVEL_ORDER, order_problems
from workbench.measure.runner import PROFILE_VARIABLE, PROFILES

REPO = Path(__file__).resolve().parents[2]


def _env(**extra) -> dict[str, str]:
    env = dict(os.environ)
    env.pop(PROFILE_VARIABLE, None)
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def _cli(args, **env):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          text=True, env=_env(**env), cwd=REPO, timeout=HANG_GUARD_S)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """``measure --quick`` as a user runs it, on the tiny profile (``$ROOFLINE_WORKBENCH_MEASURE_PROFILE``):
    what the command writes and says is the same whatever the profile, in seconds instead of
    minutes. (How close the quick profile's figures come to a plain numpy program on a real
    machine is measured by ``benchmarks/measure_vs_numpy.py``; that the figures are the bytes
    and FLOPs over the kernels' time is checked on a fake machine in
    ``tests/measure/test_measured_rates.py``.)"""
    folder = tmp_path_factory.mktemp("measure")
    out = folder / "this-machine.yaml"
    done = _cli(["measure", "--quick", "-o", str(out)],
                **{USER_PRESETS_VARIABLE: str(folder / "presets"), PROFILE_VARIABLE: "tiny"})
    return done, out, folder


@pytest.mark.parametrize(("flags", "profile"), [(["--quick"], "quick"), ([], "full")])
def test_quick_chooses_the_quick_profile_and_no_flag_the_full_one(flags, profile, monkeypatch,
                                                                  capsys):
    import workbench.measure
    from workbench.cli import main

    chosen = []

    def measure_machine(chosen_profile, progress=None, cancelled=None):
        chosen.append(chosen_profile)
        raise workbench.measure.Cancelled

    monkeypatch.delenv(PROFILE_VARIABLE, raising=False)
    monkeypatch.setattr(workbench.measure, "measure_machine", measure_machine)
    assert main(["measure", *flags]) == 130
    assert chosen == [PROFILES[profile]]
    assert "measurement cancelled; nothing was saved" in capsys.readouterr().err


def test_quick_measurement_writes_a_machine_with_ordered_roofs(quick):
    done, out, folder = quick
    assert done.returncode == 0, done.stderr
    hw, prov = load_machine_file(out)
    assert {"fp64", "fp32"} <= set(hw.compute)
    assert all(v > 0 for v in [*hw.compute.values(), *hw.memory.values()])
    assert order_problems(hw.memory) == []
    named = [n for n in LEVEL_ORDER if n in hw.memory]
    assert named == list(hw.memory) and hw.main_memory == named[-1]
    assert prov["profile"] == "tiny"  # (as the environment asked)
    assert prov["duration_s"] > 0  # (how long it takes is the benchmarks' to say)
    saved = list((folder / "presets").glob("measured-*.yaml"))
    assert len(saved) == 1 and saved[0].stem == hw.id
    assert f"saved as preset {hw.id}" in done.stdout
    assert f"{hw.compute['fp64'] / 1e9:.3g} GFLOP/s" in done.stdout


def test_measured_machine_is_listed_with_the_presets(quick):
    _, out, folder = quick
    hw, _ = load_machine_file(out)
    listed = _cli(["presets", "--format", "json"],
                  **{USER_PRESETS_VARIABLE: str(folder / "presets")})
    assert listed.returncode == 0, listed.stderr
    rows = {p["id"]: p for p in json.loads(listed.stdout)["presets"]}
    assert rows[hw.id]["measured"] is True and rows["h100-sxm"]["measured"] is False
    table = _cli(["presets"], **{USER_PRESETS_VARIABLE: str(folder / "presets")})
    assert f"{hw.name} [measured]" in table.stdout


def test_bad_output_or_datasheet_fails_before_measuring(tmp_path):
    bad = _cli(["measure", "--quick", "-o", str(tmp_path / "machine.txt")])
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().endswith("the machine file must end in .yaml or .yml")
    assert len(bad.stderr.strip().splitlines()) == 1
    missing = _cli(["measure", "--quick", "-o", str(tmp_path / "nope" / "m.yaml")])
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    unknown = _cli(["measure", "--quick", "--compare", "h100-sxn"])
    assert unknown.returncode == 2 and "unknown preset 'h100-sxn'" in unknown.stderr
