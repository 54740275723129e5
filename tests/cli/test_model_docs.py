"""The ``model`` commands shown in the README and the user guide print what the tool prints
today: each shown output line is a line of the real output."""

from __future__ import annotations

import re
import shlex

import pytest
from cli.test_model_cli import REPO, run

DOCS = ("README.md", "docs/user-guide.md")


def _examples() -> list[tuple[str, str, list[str]]]:
    out = []
    for doc in DOCS:
        text = (REPO / doc).read_text(encoding="utf-8")
        for block in re.findall(r"```\n(\$ roofline-workbench model [^\n]+\n.*?)```", text,
                                re.S):
            command, *shown = block.rstrip("\n").split("\n")
            out.append((doc, command[2:], shown))
    return out


EXAMPLES = _examples()


def test_the_docs_show_model_examples():
    docs = {doc for doc, _, _ in EXAMPLES}
    assert docs == set(DOCS), docs
    assert all(shown for _, _, shown in EXAMPLES)


@pytest.mark.parametrize("doc, command, shown", EXAMPLES,
                         ids=[f"{d}:{c[len('roofline-workbench model '):][:40]}"
                              for d, c, _ in EXAMPLES])
def test_shown_output_is_what_the_tool_prints(doc, command, shown):
    args = shlex.split(command)[2:]
    result = run(*args)
    assert result.returncode == 0, result.stderr
    printed = [line.rstrip() for line in result.stdout.splitlines()]
    for line in shown:
        assert line.rstrip() in printed, f"{doc}: {line!r} is not printed by {command}:\n" \
                                         + result.stdout
