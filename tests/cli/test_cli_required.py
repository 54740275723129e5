"""A file never gets made-up numbers: a dimension without a neutral value is required.

Each kind's required dimensions are left out one at a time: `analyze` exits with 2 and one
line naming the file, the line, the key path and "missing". Neutral fields default and the
derivation lists them; files written before schema_version 2 keep loading as they did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

from workbench.cli import main

REPO = Path(__file__).resolve().parents[2]

#: A complete operation of each kind; every key listed second is required.
KINDS = {
    "gemm": ("{kind: gemm, m: 64, n: 4096, k: 4096, dtype: bf16}", ("m", "n", "k")),
    "attention": ("{kind: attention, heads: 32, head_dim: 128, query_len: 1, kv_len: 4096}",
                  ("heads", "head_dim", "query_len", "kv_len")),
    "elementwise": ("{kind: elementwise, n: 1024, steps: [{op: gelu}]}", ("n", "steps")),
    "norm": ("{kind: norm, rows: 8, hidden: 4096}", ("rows", "hidden")),
    "softmax": ("{kind: softmax, rows: 8, cols: 4096}", ("rows", "cols")),
    "reduction": ("{kind: reduction, n: 1024}", ("n",)),
    "custom": ("{kind: custom, flops: 1 TFLOP, bytes: 1 GB}", ("flops", "bytes")),
    "sharded_matmul": ("{kind: sharded_matmul, b: 256, d: 8192, f: 8192, chips: 4}",
                       ("b", "d", "f", "chips")),
    "moe_gemm": ("{kind: moe_gemm, tokens: 16, experts: 8, top_k: 2, n: 14336, k: 4096}",
                 ("tokens", "experts", "top_k", "n", "k")),
    "mla_attention": ("{kind: mla_attention, heads: 128, kv_lora_rank: 512, rope_dim: 64, "
                      "query_len: 1, kv_len: 4096}",
                      ("heads", "kv_lora_rank", "rope_dim", "query_len", "kv_len")),
    "all_reduce": ("{kind: all_reduce, hidden: 8192, chips: 8}", ("hidden", "chips")),
}


def session_text(operation: str, version: int = 2) -> str:
    return (f"schema_version: {version}\nhardware:\n  - preset: tpu-v5e\n"
            f"operations:\n  - name: op\n    {operation[1:-1].replace(', ', chr(10) + '    ')}\n")


CASES = [(kind, key) for kind, (_, keys) in KINDS.items() for key in keys]


def without(operation: str, key: str) -> str:
    parts = [p for p in operation[1:-1].split(", ") if not p.startswith(f"{key}:")]
    assert len(parts) < len(operation[1:-1].split(", ")), (operation, key)
    return "{" + ", ".join(parts) + "}"


@pytest.mark.parametrize("kind", KINDS)
def test_a_complete_operation_of_each_kind_loads(tmp_path, capsys, kind):
    path = tmp_path / "ok.yaml"
    path.write_text(session_text(KINDS[kind][0]), encoding="utf-8")
    assert main(["analyze", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["operations"][0]["kind"] == kind


@pytest.mark.parametrize("kind, key", CASES, ids=[f"{k}-{x}" for k, x in CASES])
def test_a_missing_dimension_is_one_line_naming_the_key(tmp_path, capsys, kind, key):
    path = tmp_path / "bad.yaml"
    path.write_text(session_text(without(KINDS[kind][0], key)), encoding="utf-8")
    assert main(["analyze", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, lines
    # file, line (the operation's first line: the key is not there), key path, "missing"
    assert f"{path}:5: operations[0].{key}: missing" in lines[0], lines[0]


def test_the_command_line_itself_exits_2(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("schema_version: 2\noperations:\n  - name: g\n    kind: gemm\n"
                    "    m: 64\n    n: 4096\n    dtype: bf16\n", encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "workbench", "analyze", str(path)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert proc.returncode == 2
    assert proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert f"{path}:3: operations[0].k: missing" in line
    assert "GEMM / GEMV needs m, n and k" in line


def test_neutral_fields_default_and_the_derivation_says_so(tmp_path, capsys):
    path = tmp_path / "ok.yaml"
    path.write_text(session_text(KINDS["attention"][0]), encoding="utf-8")
    assert main(["analyze", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    defaults = data["operations"][0]["defaults"]
    assert "batch = 1" in defaults
    assert "kv_heads = heads = 32" in defaults
    assert "causal = false" in defaults
    (result,) = data["results"]
    assert result["flops"] == 4 * 32 * 1 * 4096 * 128  # batch 1, not causal


def test_an_older_file_without_a_dimension_loads_as_it_always_did(tmp_path, capsys):
    path = tmp_path / "old.yaml"
    path.write_text(session_text(without(KINDS["gemm"][0], "k"), version=1), encoding="utf-8")
    assert main(["analyze", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (result,) = data["results"]
    assert result["flops"] == 2 * 64 * 4096 * 4096  # k = 4096, as version 1 assumed
    (k_default,) = [d for d in data["operations"][0]["defaults"] if d.startswith("k = ")]
    assert k_default.startswith("k = 4096 (an example value")


def test_every_example_and_fixture_loads_unchanged():
    from workbench.io.sessions import load_session

    files = sorted((REPO / "workbench" / "examples").glob("*.yaml")) + sorted(
        (REPO / "tests" / "fixtures").glob("*.yaml"))
    assert len(files) >= 9
    for path in files:
        session = load_session(path)
        assert session.operations, path


def test_a_saved_older_file_carries_every_dimension(tmp_path):
    from workbench.io.sessions import load_session, save_session

    old = tmp_path / "old.yaml"
    old.write_text(session_text(without(KINDS["attention"][0], "kv_len"), version=1),
                   encoding="utf-8")
    session = load_session(old)
    new = tmp_path / "new.yaml"
    save_session(session, new)
    text = new.read_text(encoding="utf-8")
    assert text.startswith("schema_version: 2\n")
    assert "query_len: 1, kv_len: 1}" in text  # kv_len followed query_len in version 1
    assert load_session(new).operations[0].operation.counts().flops == \
        session.operations[0].operation.counts().flops


@pytest.mark.parametrize("kind", KINDS)
def test_add_operation_still_starts_from_example_values_and_saves_whole(tmp_path, kind):
    from workbench.document import new_operation
    from workbench.io.sessions import load_session, save_session
    from workbench.model.session import OperationEntry, Session

    op = new_operation(kind)  # what Edit ▸ Add Operation creates
    session = Session(operations=[OperationEntry(op)])
    path = tmp_path / "new.yaml"
    save_session(session, path)
    again = load_session(path).operations[0].operation  # a version 2 file: nothing missing
    assert again.counts().flops == op.counts().flops
    assert again.counts().bytes == op.counts().bytes


@pytest.mark.parametrize("kind, key", CASES, ids=[f"{k}-{x}" for k, x in CASES])
def test_an_older_file_taking_an_example_value_is_warned_about(tmp_path, capsys, kind, key):
    path = tmp_path / "old.yaml"
    path.write_text(session_text(without(KINDS[kind][0], key), version=1), encoding="utf-8")
    assert main(["analyze", str(path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["operations"][0]["kind"] == kind  # output unchanged
    (line,) = captured.err.strip().splitlines()
    # file, line (the operation's first), key path, and the value taken
    expected = f"roofline-workbench: warning: {path}:5: operations[0].{key}: not given; {key} = "
    assert line.startswith(expected), line
    assert "assumed" in line


def test_the_warning_gives_the_value_counted(tmp_path, capsys):
    path = tmp_path / "old.yaml"
    path.write_text(session_text(without(KINDS["gemm"][0], "k"), version=1), encoding="utf-8")
    assert main(["analyze", str(path), "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert f"{path}:5: operations[0].k: not given; k = 4096 assumed" in captured.err
    assert captured.out.startswith("operation,")


def test_a_complete_older_file_and_a_current_one_load_without_warnings(tmp_path, capsys):
    for version in (1, 2):
        path = tmp_path / f"v{version}.yaml"
        path.write_text(session_text(KINDS["attention"][0], version=version), encoding="utf-8")
        assert main(["analyze", str(path)]) == 0
        assert capsys.readouterr().err == ""


def test_the_warning_from_the_command_line_itself(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text("schema_version: 1\nhardware: [{preset: h100-sxm}]\noperations:\n"
                    "  - name: g\n    kind: gemm\n    m: 64\n    n: 4096\n", encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "workbench", "analyze", str(path)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert proc.returncode == 0
    assert "g" in proc.stdout
    (line,) = proc.stderr.strip().splitlines()
    assert f"{path}:4: operations[0].k: not given; k = 4096 assumed" in line


def test_the_loader_lists_each_value_taken():
    from workbench.io.sessions import loads_session

    warnings: list[str] = []
    text = ("schema_version: 1\noperations:\n  - {name: a, kind: attention, heads: 8}\n"
            "  - {name: c, kind: custom, flops: 1 GFLOP}\n")
    session = loads_session(text, "old.yaml", warnings)
    assert [w.split(" assumed")[0] for w in warnings] == [
        "old.yaml:3: operations[0].head_dim: not given; head_dim = 128",
        "old.yaml:3: operations[0].query_len: not given; query_len = 4096",
        "old.yaml:3: operations[0].kv_len: not given; kv_len = 4096",
        "old.yaml:4: operations[1].bytes: not given; bytes = 1 GB",
    ]
    assert session.operations[1].operation.counts().bytes == 1e9
    assert loads_session(text, "old.yaml").operations  # no list asked for: loads the same


def test_render_warns_too_and_draws(tmp_path, capsys):
    path = tmp_path / "old.yaml"
    path.write_text(session_text(without(KINDS["softmax"][0], "cols"), version=1),
                    encoding="utf-8")
    figure = tmp_path / "old.svg"
    assert main(["render", str(path), "-o", str(figure)]) == 0
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert f"{path}:5: operations[0].cols: not given; cols = 4096 assumed" in line
    assert "<svg" in figure.read_text(encoding="utf-8")  # the figure is drawn as ever
