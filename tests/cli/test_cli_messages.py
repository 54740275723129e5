"""Messages of the command line: a misspelt command is named with the one meant, a user
preset left out is named with its reason when ``--hardware`` finds nothing, control
characters in a printed path are escaped, and bad input exits with 2 whatever happens to
standard error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

from workbench.io.user_presets import USER_PRESETS_VARIABLE

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    full = dict(os.environ, PYTHONPATH=str(REPO), QT_QPA_PLATFORM="offscreen", **env)
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                          text=True, env=full, cwd=REPO, timeout=HANG_GUARD_S)


def test_a_misspelt_command_is_named_with_the_one_meant(tmp_path):
    session = tmp_path / "s.yaml"
    session.write_text("schema_version: 2\n")
    done = _cli("analyse", str(session))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("roofline-workbench: unknown command 'analyse' "
                           "(did you mean analyze?)\n")


@pytest.mark.parametrize("redirect", ["2>&-", "2>/dev/full"])
def test_bad_input_exits_2_whatever_happens_to_standard_error(tmp_path, redirect):
    broken = tmp_path / "broken.yaml"
    broken.write_text("schema_version: 2\nunknown: 1\n")
    command = f"{sys.executable} -m workbench analyze {broken} {redirect}"
    done = subprocess.run(command, shell=True, capture_output=False, cwd=REPO, timeout=HANG_GUARD_S,
                          env=dict(os.environ, PYTHONPATH=str(REPO)),
                          stdout=subprocess.DEVNULL)
    assert done.returncode == 2


def test_a_user_preset_left_out_is_named_when_hardware_finds_nothing(tmp_path):
    folder = tmp_path / "presets"
    folder.mkdir()
    (folder / "lab-gpu.yaml").write_bytes(b"id: lab-gpu\nname: Lab \xff GPU\n")  # a bad byte
    done = _cli("model", "Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--hardware",
                "lab-gpu", **{USER_PRESETS_VARIABLE: str(folder)})
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "'lab-gpu' is neither a preset" in line
    assert "user presets left out:" in line and "lab-gpu.yaml" in line and "UTF-8" in line


def test_measure_output_path_with_an_escape_is_printed_escaped(tmp_path):
    bad = tmp_path / "nope\x1b[2J" / "m.yaml"
    done = _cli("measure", "--quick", "-o", str(bad))
    assert done.returncode == 2 and "does not exist" in done.stderr
    assert "\x1b" not in done.stderr and "\\x1b[2J" in done.stderr
