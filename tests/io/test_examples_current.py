"""The shipped examples are written in the current schema, give every required dimension,
and analyze to the numbers of the documented formulas.

A user copies an example to start a session: it must not teach an old format, nor lean on
a default that a current file may not take. The expected numbers below are computed from
the counting conventions (README, docs/user-guide.md) and the machines' preset files, read
here with plain YAML, not from the engine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES

from workbench.cli import main
from workbench.io.sessions import SCHEMA_VERSION, load_session
from workbench.model.operations import KINDS

PRESETS = Path(__file__).resolve().parents[2] / "hardware_presets"
#: The session behind the user guide's measured-machine figure.
DOC_SESSION = Path(__file__).resolve().parents[2] / "docs" / "measured-vs-datasheet.yaml"
SIZE = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1,
        "int4": 0.5}
_PREFIX = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_SI = re.compile(r"^\s*([0-9.eE+-]+)\s*([kMGTP]?)(?:FLOP/s|FLOP|B/s|B)?\s*$")


def si(value) -> float:
    if isinstance(value, int | float):
        return float(value)
    match = _SI.match(value)
    assert match, value
    return float(match.group(1)) * _PREFIX[match.group(2)]


def test_every_example_is_in_the_current_schema_and_gives_every_required_key():
    assert len(EXAMPLES) >= 9
    for path in [*EXAMPLES, DOC_SESSION]:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert raw["schema_version"] == SCHEMA_VERSION, path.name
        for i, op in enumerate(raw.get("operations") or []):
            missing = [k for k in KINDS[op["kind"]].required if k not in op]
            assert not missing, (path.name, i, missing)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_no_example_takes_an_assumed_value(path, capsys):
    warnings: list[str] = []
    load_session(path, warnings)
    assert warnings == []
    assert main(["analyze", str(path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert json.loads(captured.out)["results"]


def _expected(op: dict) -> tuple[float, float] | None:
    """(FLOPs, bytes) of one operation of an example by the documented formulas."""
    kind = op["kind"]
    if kind == "gemm":
        batch, m, n, k = op.get("batch", 1), op["m"], op["n"], op["k"]
        dt = op.get("dtype", "bf16")
        sa, sb, sc = (SIZE[op.get(f"{x}_dtype", dt)] for x in "abc")
        return 2 * batch * m * n * k, batch * (m * k * sa + k * n * sb + m * n * sc)
    if kind == "attention":
        b, h, d = op.get("batch", 1), op["heads"], op["head_dim"]
        q, k = op["query_len"], op["kv_len"]
        hk = op.get("kv_heads", h)
        s = SIZE[op.get("dtype", "bf16")]
        naive = op.get("implementation", "flash") == "naive"
        flops = 4 * b * h * q * k * d
        if op.get("causal") and not naive:  # Flash skips the masked half of a square mask
            assert q == k
            flops /= 2
        nbytes = 2 * b * h * q * d * s + 2 * b * hk * k * d * s
        if naive:
            nbytes += op.get("score_passes", 4) * b * h * q * k * s
        return flops, nbytes
    if kind == "elementwise":  # bytes only: FLOPs per step are the step table's
        n, s = op["n"], SIZE[op.get("dtype", "fp32")]
        steps = op["steps"]
        stores = 1 if op.get("fused") else len(steps)
        if op.get("fused"):
            extra = {name for step in steps for name in step.get("inputs", [])}
            reads = 1 + len(extra)
        else:
            reads = sum(1 + len(step.get("inputs", [])) for step in steps)
        if op.get("write_allocate"):
            reads += stores
        return None, (reads + stores) * n * s
    if kind == "custom":
        return si(op["flops"]), si(op["bytes"])
    if kind == "sharded_matmul":
        b, d, f, chips = op["b"], op["d"], op["f"], op["chips"]
        s = SIZE[op.get("dtype", "bf16")]
        return 2 * b * d * f / chips, 2 * (chips - 1) / chips * b * f * s
    return None


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_analyze_to_the_documented_formulas(path, capsys):
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert main(["analyze", str(path), "--format", "json"]) == 0
    results = [r for r in json.loads(capsys.readouterr().out)["results"] if "sweep" not in r]
    checked = 0
    for op in raw.get("operations") or []:
        expected = _expected(op)
        rows = [r for r in results if r["operation"] == op["name"]]
        assert rows, op["name"]
        for row in rows:
            # the roofline itself, from the figures the result reports
            peak, bandwidth = row["peak_flops"], row["bandwidth"]
            intensity = row["flops"] / row["bytes"]
            assert row["attainable_flops"] == pytest.approx(min(peak, intensity * bandwidth),
                                                            rel=1e-12)
            # (plus a collective's link latency: its steps × the link's latency)
            assert row["t_lower_s"] == pytest.approx(
                max(row["flops"] / peak, row["bytes"] / bandwidth) + row["latency_s"],
                rel=1e-12)
            if expected is None:
                continue
            flops, nbytes = expected
            if flops is not None:
                assert row["flops"] == pytest.approx(flops, rel=1e-12), op["name"]
            assert row["bytes"] == pytest.approx(nbytes, rel=1e-12), op["name"]
            checked += 1
    if any(_expected(op) is not None for op in raw.get("operations") or []):
        assert checked


def test_a_preset_machine_gives_the_reported_ceiling(capsys):
    """The llama_ffn example's peaks and bandwidths are the preset files' figures."""
    path = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")
    assert main(["analyze", str(path), "--format", "json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    for preset_id in ("h100-sxm", "a100-80gb", "tpu-v5e"):
        figures = yaml.safe_load((PRESETS / f"{preset_id}.yaml").read_text(encoding="utf-8"))
        rows = [r for r in results if r["hardware"] == figures["name"]]
        assert len(rows) == 4, preset_id
        for row in rows:
            assert row["peak_flops"] == si(figures["compute"]["bf16"])
            main_level = figures.get("main_memory") or next(iter(figures["memory"]))
            assert row["bandwidth"] == si(figures["memory"][main_level])
