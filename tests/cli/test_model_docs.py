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


def test_output_len_json_keys():
    import json

    out = run("Llama-3.1-8B", "--phase", "decode", "--batch", "8", "--output-len", "256",
              "--hardware", "h100-sxm", "--format", "json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)["results"][0]
    # ⌊(0.9 · 85,520,809,984 − 2³⁰ − 16,060,522,496 − 536,870,912) / (2304 · 131,072)⌋
    assert r["max_batch"] == 196
    assert r["request_s"] == pytest.approx(r["ttft_s"] + r["decode_s"])
    assert r["output_tokens_per_s"] == pytest.approx(256 / r["request_s"])
    assert r["output_tokens_per_s_per_chip"] == pytest.approx(8 * 256 / r["request_s"])
    plain = json.loads(run("Llama-3.1-8B", "--phase", "decode", "--batch", "8",
                           "--format", "json").stdout)["results"][0]
    assert "request_s" not in plain and plain["max_batch"] > 196  # no output: room for more


def test_sweep_batch_json_and_table_agree():
    import json

    args = ("Llama-3.1-8B", "--phase", "decode", "--batch", "1", "--sweep-batch",
            "--hardware", "h100-sxm")
    data = json.loads(run(*args, "--format", "json").stdout)
    points = data["sweep"][0]["points"]
    assert points[-1]["batch"] == data["results"][0]["max_batch"]
    assert [p["batch"] for p in points[:-1]] == [2 ** i for i in range(len(points) - 1)]
    text = run(*args).stdout
    assert "batch sweep (decode; TPOT at kv_len 2048" in text
    assert f"{points[-1]['batch']:,}" in text.splitlines()[-1]


def test_cost_from_a_session_machine_price(tmp_path):
    import json

    session = tmp_path / "priced.yaml"
    session.write_text(
        "schema_version: 1\nhardware:\n  - name: Rented H100\n"
        "    compute: {bf16: 989.4 TFLOP/s}\n    memory: {hbm: 3.35 TB/s}\n"
        "    capacity: 80 GiB\n    price_per_hour: 2.5\noperations: []\n", encoding="utf-8")
    out = run("Llama-3.1-8B", "--phase", "decode", "--batch", "8", "--output-len", "256",
              "--hardware", session, "--format", "json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)["results"][0]
    assert r["cost_per_million_tokens"] == pytest.approx(
        2.5 / 3600 * r["request_s"] / (8 * 256) * 1e6, rel=1e-9)
