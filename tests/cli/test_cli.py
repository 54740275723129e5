"""The command line, run as a user runs it: a subprocess, exit status, stdout and stderr.

Expected numbers are worked out here from the session and preset files (read with plain
``yaml.safe_load`` and a small SI reader) and the counting rules in the product notes, not
taken from the engine.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from conftest import HANG_GUARD_S

import workbench

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "workbench" / "examples").glob("*.yaml"))
PRESETS_DIR = REPO / "hardware_presets"
PRESET_IDS = sorted(p.stem for p in PRESETS_DIR.glob("*.yaml"))

REQUIRED_KEYS = {"operation", "hardware", "flops", "bytes", "intensity", "peak_flops",
                 "bandwidth", "ridge", "attainable_flops", "bound", "t_math_s", "t_mem_s",
                 "t_lower_s", "t_upper_s"}


# ---------------------------------------------------------------------------------------------
# running


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONSAFEPATH", None)
    return env


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *map(str, args)], cwd=REPO,
                          env=_env(), capture_output=True, text=True, timeout=HANG_GUARD_S)


def _common_invocations() -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [("--version",), ("presets",), ("presets", "--format", "json")]
    for path in EXAMPLES:
        out += [("analyze", str(path)), ("analyze", str(path), "--format", "json"),
                ("analyze", str(path), "--format", "csv")]
    return out


_CACHE: dict[tuple[str, ...], subprocess.CompletedProcess] = {}


def run_cached(*args: str) -> subprocess.CompletedProcess:
    """The invocations that several tests read run once, side by side, on first use."""
    if not _CACHE:
        wanted = _common_invocations()
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            _CACHE.update(zip(wanted, pool.map(lambda a: run(*a), wanted), strict=True))
    key = tuple(map(str, args))
    if key not in _CACHE:
        _CACHE[key] = run(*key)
    return _CACHE[key]


def analyze_json(path) -> dict:
    proc = run_cached("analyze", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return json.loads(proc.stdout)


def assert_bad_input(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert proc.stderr.endswith("\n")
    assert proc.stderr.count("\n") == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)
    return proc.stderr


# ---------------------------------------------------------------------------------------------
# an independent reading of the files

_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "m": 1e-3, "u": 1e-6, "µ": 1e-6, "n": 1e-9}
_QUANTITY = re.compile(r"^\s*([0-9.eE+-]+)\s*([kMGTPEmuµn]?)(FLOP/s|OP/s|FLOP|B/s|B|s)?\s*$")
SIZES = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1,
         "int4": 0.5, "fp4": 0.5}


def si(value) -> float:
    if isinstance(value, int | float):
        return float(value)
    match = _QUANTITY.match(value)
    assert match, f"not a quantity: {value!r}"
    return float(match.group(1)) * _PREFIX[match.group(2)]


@functools.cache
def preset_raw(preset_id: str) -> dict:
    return yaml.safe_load((PRESETS_DIR / f"{preset_id}.yaml").read_text(encoding="utf-8"))


def machine_from(item: dict) -> dict:
    """name, compute {precision: FLOP/s}, levels {name: B/s}, main, overhead (s or 0)."""
    base = preset_raw(item["preset"]) if "preset" in item else item
    compute = {k: si(v) for k, v in base["compute"].items()}
    vector = {k: si(v) for k, v in (base.get("vector_compute") or {}).items()}
    levels = {k: si(v) for k, v in base["memory"].items()}
    levels.update({k: si(v) for k, v in (base.get("interconnect") or {}).items()})
    main = base.get("main_memory") or next(iter(base["memory"]))
    overhead = item.get("launch_overhead", base.get("launch_overhead"))
    efficiency = item.get("efficiency", base.get("efficiency"))
    return {"name": item.get("name") or base["name"], "compute": compute, "vector": vector,
            "levels": levels, "main": main,
            "overhead": si(overhead) if overhead is not None else 0.0,
            "efficiency": efficiency or 1.0}


VECTOR_KINDS = ("elementwise", "norm", "softmax", "reduction")


def peak_for(machine: dict, precision: str, kind: str = "gemm") -> float | None:
    """The peak a computation in ``precision`` uses when the machine has that precision:
    vector kinds on the vector units where the machine lists them (None: not derived)."""
    table = machine["vector"] if kind in VECTOR_KINDS and machine["vector"] else \
        machine["compute"]
    return table.get(precision)


def expected_counts(op: dict) -> tuple[float | None, float | None, str]:
    """FLOPs, bytes and compute precision by the product notes' rules (None: not derived)."""
    kind = op["kind"]
    if kind == "gemm":
        b, m, n, k = op.get("batch", 1), op["m"], op["n"], op["k"]
        dtype = op.get("dtype", "bf16")
        sa, sb, sc = (op.get(f"{x}_dtype", dtype) for x in "abc")
        wider = sa if SIZES[sa] > SIZES[sb] else sb if SIZES[sb] > SIZES[sa] else (
            sb if sa.startswith("int") else sa)
        precision = op.get("compute") or wider
        flops = 2 * b * m * n * k
        nbytes = b * (m * k * SIZES[sa] + k * n * SIZES[sb] + m * n * SIZES[sc])
        return flops, nbytes, precision
    if kind == "attention":
        b, h, d, q = op.get("batch", 1), op["heads"], op["head_dim"], op["query_len"]
        hk, kv = op.get("kv_heads", h), op.get("kv_len", q)
        s = SIZES[op.get("dtype", "bf16")]
        flops = 4 * b * h * q * kv * d
        # a causal mask halves a square Flash kernel's FLOPs; a naive kernel computes them all
        if op.get("causal") and op.get("implementation", "flash") == "flash":
            flops = flops / 2 if q == kv else None
        nbytes = (2 * b * h * q * d + 2 * b * hk * kv * d) * s
        if op.get("implementation", "flash") == "naive":
            nbytes += op.get("score_passes", 4) * b * h * q * kv * s
        return flops, nbytes, op.get("compute", op.get("dtype", "bf16"))
    if kind == "elementwise":
        n, s = op["n"], SIZES[op.get("dtype", "fp32")]
        steps = op["steps"]
        extra_read = 1 if op.get("write_allocate") else 0
        if op.get("fused"):
            inputs = [op.get("input", "x")]
            for step in steps:
                inputs += [t for t in step.get("inputs", []) if t not in inputs]
            elements = len(inputs) + 1 + extra_read
        else:
            elements = sum(1 + len(step.get("inputs", [])) + 1 + extra_read for step in steps)
        per = {"fma": 2, "add": 1, "mul": 1}
        flops = n * sum(per[st["op"]] for st in steps) if all(
            st["op"] in per for st in steps) else None
        return flops, n * elements * s, op.get("compute", op.get("dtype", "fp32"))
    if kind == "custom":
        return si(op["flops"]), si(op["bytes"]), op.get("precision", "bf16")
    return None, None, op.get("compute", op.get("dtype", "bf16"))


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)


def check_result(result: dict, op: dict, machine: dict) -> None:
    assert set(result) >= REQUIRED_KEYS, REQUIRED_KEYS - set(result)
    assert result["operation"] == op["name"]
    assert result["hardware"] == machine["name"]
    flops, nbytes, precision = expected_counts(op)
    if flops is not None:
        assert close(result["flops"], flops), (result["flops"], flops)
    if nbytes is not None:
        assert close(result["bytes"], nbytes), (result["bytes"], nbytes)
    peak = peak_for(machine, precision, op["kind"])
    if peak is not None:
        assert close(result["peak_flops"], peak), (precision, result["peak_flops"], peak)
    if op.get("memory_level") or op["kind"] in ("gemm", "attention", "elementwise", "custom"):
        bandwidth = machine["levels"][op.get("memory_level") or machine["main"]]
        assert close(result["bandwidth"], bandwidth)

    check_relations(result)
    t_lower = max(result["t_math_s"], result["t_mem_s"])
    if op["kind"] not in ("sharded_matmul", "all_reduce"):
        assert result["latency_s"] == 0
    kernels = len(op["steps"]) if op["kind"] == "elementwise" and not op.get("fused") else 1
    if machine["overhead"] and t_lower / machine["efficiency"] < kernels * machine["overhead"]:
        assert result["bound"] == "overhead"
    else:
        assert result["bound"] == ("compute" if result["t_math_s"] >= result["t_mem_s"]
                                   else "memory")


def check_relations(result: dict) -> None:
    """The roofline relations between one result's own numbers."""
    assert set(result) >= REQUIRED_KEYS, REQUIRED_KEYS - set(result)
    f, b = result["flops"], result["bytes"]
    p, w = result["peak_flops"], result["bandwidth"]
    assert f > 0 and b > 0
    assert close(result["intensity"], f / b)
    assert close(result["ridge"], p / w)
    assert close(result["attainable_flops"], min(p, (f / b) * w))
    assert close(result["t_math_s"], f / p)
    assert close(result["t_mem_s"], b / w)
    latency = result["latency_s"]  # a collective's link latency (0 for other work)
    assert latency >= 0
    assert close(result["t_lower_s"], max(f / p, b / w) + latency)
    assert close(result["t_upper_s"], f / p + b / w + latency)
    assert result["bound"] in ("memory", "compute", "overhead")
    if result["bound"] != "overhead":
        assert result["bound"] == ("compute" if f / p >= b / w else "memory")


# ---------------------------------------------------------------------------------------------
# version and presets


def test_version():
    proc = run_cached("--version")
    assert proc.returncode == 0
    assert proc.stdout.split() == ["roofline-workbench", workbench.__version__]
    assert proc.stderr == ""


def test_presets_table_lists_every_preset():
    proc = run_cached("presets")
    assert proc.returncode == 0, proc.stderr
    first_words = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    for preset_id in PRESET_IDS:
        assert preset_id in first_words
        assert preset_raw(preset_id)["name"] in proc.stdout


def test_presets_json():
    proc = run_cached("presets", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    by_id = {p["id"]: p for p in data["presets"]}
    assert sorted(by_id) == PRESET_IDS
    for preset_id, entry in by_id.items():
        assert entry["name"] == preset_raw(preset_id)["name"]
    assert by_id["h100-sxm"]["compute_flops"]["bf16"] == pytest.approx(989.4e12, rel=1e-12)
    assert by_id["h100-sxm"]["memory_bandwidth"]["hbm"] == pytest.approx(3.35e12, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# analyze


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_analyze_json(path):
    data = analyze_json(path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    machines = [machine_from(item) for item in raw["hardware"]]
    ops = raw.get("operations") or []
    # a whole model's operations (named "<model>: …") follow the session's own; they are
    # counted from the model's config (tests/model/test_llm.py), not from this file
    prefixes = tuple(f"{m.get('name') or m['config']}: " for m in raw.get("models") or ())
    expanded = [r for r in data["results"] if prefixes and r["operation"].startswith(prefixes)]
    assert len(expanded) == len([o for o in data["operations"]
                                 if prefixes and o["name"].startswith(prefixes)]) * len(machines)
    data["results"] = [r for r in data["results"] if r not in expanded]
    # every pair in the examples is supported: one result each, operations outermost;
    # rows of sweeps (marked with "sweep") follow them
    assert data["skipped"] == []
    results = [r for r in data["results"] if "sweep" not in r]
    sweep_rows = [r for r in data["results"] if "sweep" in r]
    assert data["results"][: len(results)] == results
    assert len(results) == len(ops) * len(machines)
    pairs = iter(results)
    for op in ops:
        for machine in machines:
            check_result(next(pairs), op, machine)
    # a sweep gives at most ``num`` (or len(values)) rows per pair (whole-number parameters
    # may merge neighbouring points), in pair order, each at a value inside the sweep's span
    remaining = iter(sweep_rows)
    row = next(remaining, None)
    for op in ops:
        sweep = op.get("sweep")
        for machine in machines:
            count = 0
            while row is not None and (row["operation"], row["hardware"]) == (
                    op["name"], machine["name"]):
                count += 1
                assert sweep is not None
                assert row["sweep"]["param"] == sweep["param"]
                value = row["sweep"]["value"]
                if "values" in sweep:
                    assert value in [si(v) for v in sweep["values"]]
                else:
                    low, high = sorted((si(sweep["start"]), si(sweep["stop"])))
                    assert low <= value <= high
                check_result(row, {**op, sweep["param"]: value}, machine)
                row = next(remaining, None)
            if sweep is None:
                assert count == 0
            else:
                limit = len(sweep["values"]) if "values" in sweep else sweep["num"]
                assert 1 <= count <= limit
    assert row is None, f"unexpected sweep row {row}"
    assert data["title"] == raw["title"]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_analyze_csv(path):
    proc = run_cached("analyze", str(path), "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    header = next(csv.reader(io.StringIO(proc.stdout)))
    for column in ("peak_flops [FLOP/s]", "bandwidth [B/s]", "flops [FLOP]", "bytes [B]",
                   "intensity [FLOP/B]", "attainable_flops [FLOP/s]", "t_lower [s]"):
        assert column in header
    assert "operation" in header and "hardware" in header and "bound" in header
    results = analyze_json(path)["results"]
    assert len(rows) == len(results)
    for row, result in zip(rows, results, strict=True):
        assert row["operation"] == result["operation"]
        assert row["hardware"] == result["hardware"]
        assert row["bound"] == result["bound"]
        assert float(row["flops [FLOP]"]) == result["flops"]
        assert float(row["peak_flops [FLOP/s]"]) == result["peak_flops"]
        assert float(row["t_upper [s]"]) == result["t_upper_s"]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_analyze_table(path):
    proc = run_cached("analyze", str(path))
    assert proc.returncode == 0, proc.stderr
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    for op in raw.get("operations") or []:
        assert op["name"] in proc.stdout
    for model in raw.get("models") or []:
        assert f"{model.get('name') or model['config']}: " in proc.stdout
    for item in raw["hardware"]:
        assert machine_from(item)["name"] in proc.stdout
    assert "bound" in proc.stdout.splitlines()[1 if raw.get("title") else 0]


def test_table_is_the_default_format():
    explicit = run("analyze", str(EXAMPLES[0]), "--format", "table")
    assert explicit.returncode == 0
    assert explicit.stdout == run_cached("analyze", str(EXAMPLES[0])).stdout


def test_analyze_one_gemm_on_every_preset(tmp_path):
    session = {"schema_version": 1, "title": "every preset",
               "hardware": [{"preset": p} for p in PRESET_IDS],
               "operations": [{"name": "square bf16 GEMM", "kind": "gemm", "m": 4096,
                               "n": 4096, "k": 4096, "dtype": "bf16"}]}
    path = tmp_path / "every_preset.yaml"
    path.write_text(yaml.safe_dump(session, sort_keys=False), encoding="utf-8")
    data = analyze_json(path)
    assert data["skipped"] == []
    assert len(data["results"]) == len(PRESET_IDS)
    for result, preset_id in zip(data["results"], PRESET_IDS, strict=True):
        machine = machine_from({"preset": preset_id})
        check_result(result, session["operations"][0], machine)
        assert result["flops"] == 2 * 4096**3
        # a machine without bf16 (Apple GPUs, Grace) runs it at the next wider precision it
        # has, bf16 -> fp32 -> fp64, never at fp16
        wider = next(p for p in ("bf16", "fp32", "fp64") if p in machine["compute"])
        assert result["peak_flops"] == pytest.approx(machine["compute"][wider], rel=1e-12)


def test_analyze_reports_unsupported_pairs_as_skipped(tmp_path):
    path = tmp_path / "skips.yaml"
    path.write_text("""\
schema_version: 1
hardware:
  - preset: h100-sxm
  - preset: tpu-v5e
operations:
  - name: over nvlink
    kind: custom
    flops: 1 TFLOP
    bytes: 1 GB
    precision: bf16
    memory_level: nvlink
  - name: fp64 gemm
    kind: gemm
    m: 256
    n: 256
    k: 256
    dtype: fp64
""", encoding="utf-8")
    data = analyze_json(path)
    pairs = [(r["operation"], r["hardware"]) for r in data["results"]]
    h100, tpu = preset_raw("h100-sxm")["name"], preset_raw("tpu-v5e")["name"]
    assert pairs == [("over nvlink", h100), ("fp64 gemm", h100)]
    assert data["results"][0]["bandwidth"] == pytest.approx(450e9, rel=1e-12)
    skipped = {(s["operation"], s["hardware"]) for s in data["skipped"]}
    assert skipped == {("over nvlink", tpu), ("fp64 gemm", tpu)}


def test_analyze_json_with_zero_bytes_is_valid_json(tmp_path):
    """A custom operation may move 0 bytes (the loader accepts it); the JSON output must still
    be standard JSON (no NaN/Infinity) and the command must not crash."""
    path = tmp_path / "zero.yaml"
    path.write_text("""\
schema_version: 1
hardware:
  - preset: h100-sxm
operations:
  - name: all on chip
    kind: custom
    flops: 1 TFLOP
    bytes: 0
  - name: nothing at all
    kind: custom
    flops: 0
    bytes: 0
""", encoding="utf-8")
    proc = run("analyze", str(path), "--format", "json")
    assert "Traceback" not in proc.stderr
    if proc.returncode == 2:  # refusing the input is also acceptable, with one line
        assert_bad_input(proc, str(path))
        return
    assert proc.returncode == 0, proc.stderr

    def refuse(constant):
        raise AssertionError(f"non-standard JSON constant {constant}")

    json.loads(proc.stdout, parse_constant=refuse)


# ---------------------------------------------------------------------------------------------
# bad input


def _gemm(line: str) -> str:
    return ("schema_version: 1\nhardware:\n  - preset: h100-sxm\noperations:\n"
            f"  - name: first\n    kind: gemm\n  - name: second\n    kind: gemm\n    {line}\n")


BAD = [
    ("negative-m", _gemm("m: -5"), ("operations[1].m", "positive integer", ":9:")),
    ("kind-typo", _gemm("m: 5").replace("kind: gemm\n    m", "kind: gemn\n    m"),
     ("operations[1].kind", "gemm")),
    ("unknown-preset", "schema_version: 1\nhardware:\n  - preset: h100-sxn\n",
     ("hardware[0].preset", "h100-sxn", ":3:")),
    ("newer-schema", "schema_version: 7\n", ("schema_version", "7", "1")),
    ("no-schema", "title: x\n", ("schema_version",)),
    ("empty", "", ("empty",)),
    ("top-level-list", "- 1\n- 2\n", ("mapping",)),
    ("binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", ("NUL",)),
    ("invalid-utf8", b"schema_version: 1\ntitle: \xc3\x28\n", ("UTF-8",)),
    ("control-character", b"schema_version: 1\ntitle: a\x1bb\n", ()),
    ("alias-bomb", "schema_version: 1\n" + "l0: &l0 lol\n" + "".join(
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10)), ("alias",)),
    ("duplicate-key", "schema_version: 1\ntitle: a\ntitle: b\n", ("twice", ":3:")),
    ("syntax-error", "schema_version: 1\ntitle: ok\nbroken: a: b\n", ("YAML", ":3:")),
    ("lowercase-unit", "schema_version: 1\nhardware:\n  - name: M\n    compute: {bf16: 1 TFLOP/s}\n"
                       "    memory: {hbm: 3.35 tb/s}\n", ("hardware[0].memory.hbm", "TB/s")),
    ("wrong-unit", "schema_version: 1\nhardware:\n  - name: M\n    compute: {bf16: 1 TFLOP/s}\n"
                   "    memory: {hbm: 3 GB}\n", ("hardware[0].memory.hbm", "B/s")),
    ("kind-list", "schema_version: 1\noperations:\n  - kind: [gemm]\n", ("operations[0].kind",)),
    ("kv-heads", "schema_version: 1\noperations:\n  - kind: attention\n    heads: 32\n"
                 "    kv_heads: 5\n", ("operations[0].kv_heads", "divide")),
    ("deep-nesting", "schema_version: 1\ntitle: " + "[" * 1000 + "]" * 1000 + "\n", ()),
]


@pytest.mark.parametrize(("content", "fragments", "fmt"),
                         [(*b[1:], ("json", "table", "csv")[i % 3]) for i, b in enumerate(BAD)],
                         ids=[b[0] for b in BAD])
def test_bad_session_exits_2_with_one_line(tmp_path, content, fragments, fmt):
    path = tmp_path / "bad session.yaml"  # a space in the name, as people have
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    proc = run("analyze", str(path), "--format", fmt)
    assert_bad_input(proc, str(path), *fragments)


def test_python_tag_is_not_executed(tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / "tag.yaml"
    path.write_text(f'!!python/object/apply:os.system ["echo hi > {marker}"]\n', encoding="utf-8")
    proc = run("analyze", str(path))
    assert_bad_input(proc, str(path), "tag")
    assert not marker.exists()


def test_huge_file(tmp_path):
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as handle:
        handle.write(b"schema_version: 1\n")
        handle.truncate(50 * 1024 * 1024)
    assert_bad_input(run("analyze", str(path)), str(path), "MB")


def test_missing_file(tmp_path):
    path = tmp_path / "missing.yaml"
    assert_bad_input(run("analyze", str(path), "--format", "json"), str(path), "no such file")


def test_directory(tmp_path):
    assert_bad_input(run("analyze", str(tmp_path)), str(tmp_path), "folder")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("analyze", "{example}", "--bogus"), "--bogus"),
        (("analyze", "{example}", "--format", "xml"), "xml"),
        (("analyze",), "session"),
        (("presets", "--format", "csv"), "csv"),
        (("--bogus",), "--bogus"),
    ],
    ids=["unknown-option", "unknown-format", "no-session", "presets-format", "top-level-option"],
)
def test_bad_options_exit_2_with_one_line(args, fragment):
    args = [a.format(example=EXAMPLES[0]) for a in args]
    assert_bad_input(run(*args), fragment)
