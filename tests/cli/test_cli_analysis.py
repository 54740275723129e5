"""``analyze`` with sweeps, crossings and measured points, run as a user runs it (a subprocess).

Expected numbers come from the session and preset files read here with ``yaml.safe_load`` and
a small SI reader, and from the counting rules solved by hand, not from the engine.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import HANG_GUARD_S

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "workbench" / "examples"
PRESETS = REPO / "hardware_presets"
CRITICAL = EXAMPLES / "critical_batch_sweep.yaml"
SHARDED = EXAMPLES / "sharded_matmul.yaml"
MEASURED = EXAMPLES / "predicted_vs_measured.yaml"

_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "m": 1e-3, "u": 1e-6, "µ": 1e-6,
           "n": 1e-9}
_QUANTITY = re.compile(r"^\s*([0-9.eE+-]+)\s*([kMGTmuµn]?)(FLOP/s|OP/s|FLOP|B/s|B|s)?\s*$")


def si(value) -> float:
    if isinstance(value, int | float):
        return float(value)
    match = _QUANTITY.match(value)
    assert match, value
    return float(match.group(1)) * _PREFIX[match.group(2)]


def preset(preset_id: str) -> dict:
    raw = yaml.safe_load((PRESETS / f"{preset_id}.yaml").read_text(encoding="utf-8"))
    return {"name": raw["name"], "compute": {k: si(v) for k, v in raw["compute"].items()},
            "memory": {k: si(v) for k, v in raw["memory"].items()},
            "interconnect": {k: si(v) for k, v in (raw.get("interconnect") or {}).items()},
            "overhead": si(raw["launch_overhead"]) if raw.get("launch_overhead") else 0.0}


def run(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "workbench", *map(str, args)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)


def analyze(path, fmt="json"):
    proc = run("analyze", path, "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return json.loads(proc.stdout) if fmt == "json" else proc.stdout


def critical_batch(ridge: float, d: float, f: float, weight_bytes: float) -> float:
    """2BDF / (2BD + s_w·DF + 2BF) = ridge, solved for B."""
    return ridge * weight_bytes * d * f / (2 * d * f - 2 * ridge * (d + f))


# ---------------------------------------------------------------------------------------------
# critical batch


def test_critical_batch_crossings_are_exact():
    data = analyze(CRITICAL)
    raw = yaml.safe_load(CRITICAL.read_text(encoding="utf-8"))
    machines = [preset(item["preset"]) for item in raw["hardware"]]
    expected = {}
    for op in raw["operations"]:
        weight = 1.0 if op.get("b_dtype") == "int8" else 2.0
        for machine in machines:
            ridge = machine["compute"]["bf16"] / machine["memory"]["hbm"]
            expected[(op["name"], machine["name"])] = critical_batch(ridge, op["k"], op["n"],
                                                                     weight)
    found = {(c["operation"], c["hardware"]): c for c in data["crossings"]}
    assert set(found) == set(expected)
    for key, value in expected.items():
        c = found[key]
        assert c["param"] == "m"
        assert c["value"] == pytest.approx(value, rel=1e-12), key
        assert c["integer"] == math.ceil(value)
        assert c["direction"] == "to_compute"
    tpu, h100 = (m["name"] for m in machines)
    bf16, int8 = (op["name"] for op in raw["operations"])
    assert 255 < found[(bf16, tpu)]["value"] < 256
    assert 318 < found[(bf16, h100)]["value"] < 319
    for machine in (tpu, h100):  # int8 weights: exactly half
        assert found[(int8, machine)]["value"] == pytest.approx(
            found[(bf16, machine)]["value"] / 2, rel=1e-12)


def test_one_result_per_sweep_value():
    data = analyze(CRITICAL)
    raw = yaml.safe_load(CRITICAL.read_text(encoding="utf-8"))
    machines = [preset(item["preset"]) for item in raw["hardware"]]
    ops = raw["operations"]
    base = [r for r in data["results"] if "sweep" not in r]
    swept = [r for r in data["results"] if "sweep" in r]
    assert len(base) == len(ops) * len(machines)
    assert data["results"][:len(base)] == base  # the operations' own rows come first
    assert len(swept) == len(ops) * len(machines) * 13
    crossing = {(c["operation"], c["hardware"]): c["value"] for c in data["crossings"]}
    i = 0
    for op in ops:
        for machine in machines:
            rows = swept[i:i + 13]
            i += 13
            assert [r["sweep"] for r in rows] == [{"param": "m", "value": 2**j}
                                                  for j in range(13)]
            sb = 1 if op.get("b_dtype") == "int8" else 2
            for row in rows:
                m, n, k = row["sweep"]["value"], op["n"], op["k"]
                assert isinstance(m, int)
                assert (row["operation"], row["hardware"]) == (op["name"], machine["name"])
                flops = 2 * m * n * k
                nbytes = 2 * m * k + sb * k * n + 2 * m * n
                assert row["flops"] == pytest.approx(flops, rel=1e-15)
                assert row["bytes"] == pytest.approx(nbytes, rel=1e-15)
                peak, bw = machine["compute"]["bf16"], machine["memory"]["hbm"]
                assert row["t_lower_s"] == pytest.approx(max(flops / peak, nbytes / bw),
                                                         rel=1e-12)
                lower = max(flops / peak, nbytes / bw)
                if lower < machine["overhead"]:
                    assert row["bound"] == "overhead"
                else:
                    side = "compute" if m > crossing[(op["name"], machine["name"])] else "memory"
                    assert row["bound"] == side, (op["name"], machine["name"], m)


def test_results_of_operations_without_a_sweep_are_unchanged(tmp_path):
    raw = yaml.safe_load(CRITICAL.read_text(encoding="utf-8"))
    plain = dict(raw, operations=[{k: v for k, v in op.items() if k != "sweep"}
                                  for op in raw["operations"]])
    mixed = dict(raw, operations=[plain["operations"][0], raw["operations"][1]])
    paths = {}
    for name, doc in (("plain", plain), ("mixed", mixed)):
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True),
                               encoding="utf-8")
    a, b = analyze(paths["plain"]), analyze(paths["mixed"])
    assert a["crossings"] == [] and a["measurements"] == []
    assert all("sweep" not in r for r in a["results"])
    # the unswept operation's rows are identical, and every base row stays where it was
    assert [r for r in b["results"] if "sweep" not in r] == a["results"]
    assert {c["operation"] for c in b["crossings"]} == {raw["operations"][1]["name"]}
    for key in ("session", "title", "results", "skipped", "operations"):
        assert key in a


# ---------------------------------------------------------------------------------------------
# communication roof


def test_sharded_matmul_critical_d():
    data = analyze(SHARDED)
    raw = yaml.safe_load(SHARDED.read_text(encoding="utf-8"))
    tpu = preset("tpu-v5e")
    ridge = tpu["compute"]["bf16"] / tpu["interconnect"]["ici"]  # 1.97e14 / 4.5e10
    found = {c["operation"]: c for c in data["crossings"]}
    for op in raw["operations"]:
        chips = op["chips"]
        # per chip 2BDF/N FLOPs over 2(N−1)/N·B·F·2 bytes: intensity D / (2(N−1))
        expected = ridge * 2 * (chips - 1)
        c = found[op["name"]]
        assert c["param"] == "d" and c["level"] == "ici"
        assert c["value"] == pytest.approx(expected, rel=1e-12)
    two = found[raw["operations"][0]["name"]]
    assert two["integer"] == 8756  # the book: D > 8755
    base = [r for r in data["results"] if "sweep" not in r]
    for row, op in zip(base, raw["operations"], strict=True):
        b, d, f, n = op["b"], op["d"], op["f"], op["chips"]
        assert row["flops"] == pytest.approx(2 * b * d * f / n, rel=1e-15)
        assert row["bytes"] == pytest.approx(2 * (n - 1) / n * b * f * 2, rel=1e-15)
        assert row["bandwidth"] == tpu["interconnect"]["ici"]
        assert row["level"] == "ici"


def test_sharded_matmul_defaults_to_the_first_interconnect(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "schema_version": 1,
        "hardware": [{"preset": "tpu-v5e"}, {"preset": "h100-sxm"}, {"preset": "xeon-8480"}],
        "operations": [{"name": "two chips", "kind": "sharded_matmul", "b": 256, "d": 16384,
                        "f": 8192, "chips": 2}],
    }), encoding="utf-8")
    data = analyze(path)
    by_machine = {r["hardware"]: r for r in data["results"]}
    tpu, h100 = preset("tpu-v5e"), preset("h100-sxm")
    assert by_machine[tpu["name"]]["level"] == "ici"
    assert by_machine[h100["name"]]["level"] == "nvlink"
    assert by_machine[h100["name"]]["bandwidth"] == h100["interconnect"]["nvlink"]
    cpu = yaml.safe_load((PRESETS / "xeon-8480.yaml").read_text(encoding="utf-8"))
    if cpu.get("interconnect"):
        assert len(data["results"]) == 3
    else:
        assert [s["hardware"] for s in data["skipped"]] == [cpu["name"]]


# ---------------------------------------------------------------------------------------------
# predict, then verify


def test_measured_points_fractions_and_verdicts():
    data = analyze(MEASURED)
    raw = yaml.safe_load(MEASURED.read_text(encoding="utf-8"))
    h100 = preset("h100-sxm")
    peak, bw = h100["compute"]["fp16"], h100["memory"]["hbm"]
    ops = {op["name"]: op for op in raw["operations"]}
    assert data["crossings"] == []
    assert [m["name"] for m in data["measurements"]] == [m["name"] for m in raw["measurements"]]
    verdicts = []
    for item, measured in zip(raw["measurements"], data["measurements"], strict=True):
        time = si(item["time"])
        if "operation" in item:
            op = ops[item["operation"]]
            m, n, k = op["m"], op["n"], op["k"]
            flops, nbytes = 2 * m * n * k, (m * k + k * n + m * n) * 2
            lower = max(flops / peak, nbytes / bw)
        else:
            flops, nbytes = si(item["flops"]), si(item["bytes"])
            lower = max(flops / h100["compute"]["fp32"], nbytes / bw)
        assert measured["hardware"] == h100["name"]
        assert measured["measured_time_s"] == pytest.approx(time, rel=1e-12)
        assert measured["predicted_time_s"] == pytest.approx(lower, rel=1e-12)
        assert measured["fraction"] == pytest.approx(lower / time, rel=1e-12)
        assert measured["achieved_flops"] == pytest.approx(flops / time, rel=1e-12)
        verdicts.append(measured["verdict"])
    fractions = [round(m["fraction"], 2) for m in data["measurements"][:3]]
    assert fractions == [0.80, 0.30, 0.95]
    assert verdicts[:3] == ["production", "likely-bug", "re-measure"]
    assert "where production kernels land" in data["measurements"][0]["verdict_label"]
    assert "likely a bug" in data["measurements"][1]["verdict_label"]
    assert "re-measure" in data["measurements"][2]["verdict_label"]


def test_table_shows_crossings_and_verdicts():
    text = analyze(CRITICAL, "table")
    assert "crossing: bf16 matmul, D = F = 8192 on Google Cloud TPU v5e (per chip): m = 255.544" \
        in text
    text = analyze(MEASURED, "table")
    assert "likely a bug" in text and "re-measure" in text


def test_csv_carries_the_sweep_rows():
    text = analyze(SHARDED, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    data = analyze(SHARDED)
    assert len(rows) == len(data["results"])
    swept = [r for r in rows if r["sweep_param"]]
    assert [int(r["sweep_value"]) for r in swept] == [r["sweep"]["value"] for r in
                                                      data["results"] if "sweep" in r]
    assert {r["sweep_param"] for r in swept} == {"d"}
    # a session without sweeps keeps its old columns
    plain = analyze(MEASURED, "csv")
    assert "sweep_param" not in plain.splitlines()[0]


def test_bad_sweep_exits_2_with_one_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("schema_version: 1\nhardware:\n  - preset: h100-sxm\noperations:\n"
                    "  - name: g\n    kind: gemm\n    sweep: {param: dtype, values: [1]}\n",
                    encoding="utf-8")
    proc = run("analyze", path, "--format", "json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert f"{path}:7: operations[0].sweep.param:" in proc.stderr


def test_bad_measurement_exits_2_with_one_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("schema_version: 1\nhardware:\n  - preset: h100-sxm\noperations:\n"
                    "  - name: g\n    kind: gemm\nmeasurements:\n  - name: run\n"
                    "    operation: G\n    time: 1 ms\n", encoding="utf-8")
    proc = run("analyze", path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert f"{path}:9: measurements[0].operation: no operation named 'G'" in proc.stderr
