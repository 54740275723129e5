"""The README's set-up commands are the ones CI runs."""

import re

from conftest import ROOT


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
