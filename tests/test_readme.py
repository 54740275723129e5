"""The README's set-up commands are the ones CI runs."""

import re

from conftest import HANG_GUARD_S, ROOT


def _commands(readme: str) -> list[str]:
    return re.findall(r"```sh\n(python3 -m venv[^\n]+)\n```", readme)


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = _commands(readme)
    assert len(commands) == 2, commands
    app_command, test_command = commands
    assert app_command.endswith("roofline-workbench")
    assert "pytest" in test_command
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci_lines


def test_the_readme_model_examples_show_the_default_prediction_as_the_tool_prints_it():
    """Each ``$ roofline-workbench model`` block of the README is run, and every line it
    shows is printed; the first shows the default prediction: Llama-3.1-8B decode at batch 1
    on an H100 SXM within 10 % of the 6.6 ms a lean CUDA-graph run measured, with no flags."""
    import os
    import shlex
    import subprocess
    import sys

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```\n\$ (roofline-workbench model [^\n]+)\n(.*?)```", readme, re.S)
    assert len(blocks) >= 4
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for command, shown in blocks:
        assert "--prediction" not in command and "--launches" not in command
        proc = subprocess.run([sys.executable, "-m", "workbench", *shlex.split(command)[1:]],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
        assert proc.returncode == 0, proc.stderr
        printed = [line.rstrip() for line in proc.stdout.splitlines()]
        assert all(line.rstrip() in printed for line in shown.splitlines()), command
    first = blocks[0][1].splitlines()
    header = first[0].split()
    h100 = next(line for line in first if line.startswith("NVIDIA H100"))
    tpot = h100.split("NVIDIA H100 SXM5 80GB")[1].split()[2:4]
    assert header[2] == "TPOT" and tpot[1] == "ms"
    assert abs(float(tpot[0]) / 6.6 - 1) <= 0.10
