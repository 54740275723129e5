"""Sweeps and measurements in session files: readable YAML, lossless round trips, backward
compatibility within schema_version 1, and errors with key paths and lines."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from workbench.io.errors import InputError
from workbench.io.presets import get_preset
from workbench.io.sessions import dumps_session, load_session, loads_session, save_session
from workbench.model.analysis import evaluate_session
from workbench.model.measured import Measurement
from workbench.model.measured_session import judge_session
from workbench.model.operations import Operation
from workbench.model.session import HardwareEntry, OperationEntry, Session
from workbench.model.sweeps import Sweep, linear, log

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "workbench" / "examples"


def _session() -> Session:
    s = Session(title="analysis round trip")
    s.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm"),
                  HardwareEntry(get_preset("tpu-v5e"), preset="tpu-v5e")]
    s.operations = [
        OperationEntry(Operation("gemm", {"m": 64, "n": 8192, "k": 8192, "dtype": "bf16"},
                                 "batch sweep"), sweep=Sweep("m", log(1, 4096, 13))),
        OperationEntry(Operation("gemm", {"m": 64, "n": 8192, "k": 8192, "dtype": "bf16",
                                          "b_dtype": "int8"}, "int8 weights"),
                       sweep=Sweep("m", [16, 128, 1024])),
        OperationEntry(Operation("attention", {"heads": 32, "head_dim": 128, "query_len": 1,
                                               "kv_len": 4096}, "decode"),
                       sweep=Sweep("kv_len", linear(1024, 8192, 8))),
        OperationEntry(Operation("sharded_matmul", {"b": 512, "d": 8192, "f": 8192, "chips": 2},
                                 "two chips", memory_level="ici"),
                       sweep=Sweep("d", log(1024, 65536, 7))),
        OperationEntry(Operation("custom", {"flops": 1e12, "bytes": 1e9}, "typed in"),
                       sweep=Sweep("flops", [1.5e11, 2.5e12])),
        OperationEntry(Operation("gemm", {"m": 1, "n": 4096, "k": 4096}, "no sweep")),
    ]
    s.measurements = [
        Measurement("cuBLAS", operation="batch sweep", hardware="h100-sxm", time_s=52.5e-6),
        Measurement("rate only", operation="int8 weights", hardware="tpu-v5e",
                    achieved_flops=150e12, bytes=71.5e6),
        Measurement("softmax", hardware="NVIDIA H100 SXM5 80GB", time_s=11.84e-6,
                    flops=20_971_520, bytes=33_557_220, precision="fp32",
                    source="ncu_raw.csv ID 2"),
        Measurement("on every machine", operation="no sweep", time_s=3e-5),
    ]
    return s


def _comparable(session: Session) -> dict:
    return {
        "operations": [(e.operation.name, e.operation.kind, e.operation.params,
                        e.operation.memory_level, e.sweep) for e in session.operations],
        "measurements": [m.__dict__ for m in session.measurements],
    }


def test_sweeps_and_measurements_round_trip(tmp_path):
    first = _session()
    text = dumps_session(first)
    second = loads_session(text, "dumped.yaml")
    a, b = _comparable(first), _comparable(second)
    assert [op[:4] for op in a["operations"]] == [op[:4] for op in b["operations"]]
    for x, y in zip(a["operations"], b["operations"], strict=True):
        assert x[4] == y[4], (x[4], y[4])
    for x, y in zip(a["measurements"], b["measurements"], strict=True):
        for key in x:
            if isinstance(x[key], float):
                assert y[key] == pytest.approx(x[key], rel=1e-11), key
            else:
                assert y[key] == x[key], key
    # a fixed point: saving what was loaded writes the same text
    path = tmp_path / "s.yaml"
    save_session(second, path)
    assert path.read_text(encoding="utf-8") == text
    assert dumps_session(load_session(path)) == text


def test_the_yaml_is_readable():
    data = yaml.safe_load(dumps_session(_session()))
    assert data["schema_version"] == 2
    ops = data["operations"]
    assert ops[0]["sweep"] == {"param": "m", "start": 1, "stop": 4096, "num": 13,
                               "scale": "log"}
    assert ops[1]["sweep"] == {"param": "m", "values": [16, 128, 1024]}
    assert ops[4]["sweep"] == {"param": "flops", "values": [1.5e11, 2.5e12]}
    assert "sweep" not in ops[5]
    first, second, third, fourth = data["measurements"]
    assert first == {"name": "cuBLAS", "operation": "batch sweep", "hardware": "h100-sxm",
                     "time": "52.5 µs"}
    assert second["achieved"] == "150 TFLOP/s" and second["bytes"] == "71.5 MB"
    assert "operation" not in third and third["flops"] == "20.97152 MFLOP"
    assert third["precision"] == "fp32" and third["source"] == "ncu_raw.csv ID 2"
    assert "hardware" not in fourth


def test_files_without_the_new_keys_load_and_write_as_before(tmp_path):
    text = textwrap.dedent("""\
        schema_version: 1
        title: old file
        hardware:
          - preset: h100-sxm
        operations:
          - name: g
            kind: gemm
            m: 64
            n: 4096
            k: 4096
            dtype: bf16
        """)
    session = loads_session(text, "old.yaml")
    assert session.measurements == []
    assert all(e.sweep is None for e in session.operations)
    written = dumps_session(session)
    assert "sweep" not in written and "measurements" not in written
    # saved as the current version, otherwise as written
    assert yaml.safe_load(written) == {**yaml.safe_load(text), "schema_version": 2}
    frozen = REPO / "tests" / "fixtures" / "session_v1_frozen.yaml"
    if frozen.exists():
        assert load_session(frozen).measurements == []


def test_loaded_session_evaluates_sweeps_and_measurements():
    session = loads_session(dumps_session(_session()), "s.yaml")
    pairs = evaluate_session(session)
    skipped = [(p.operation.operation.name, p.hardware.preset) for p in pairs if p.result is None]
    assert skipped == [("two chips", "h100-sxm")]  # memory_level ici: a TPU link
    sharded = [p for p in pairs if p.operation.operation.kind == "sharded_matmul" and p.result]
    assert [(p.result.level, p.result.bandwidth) for p in sharded] == [("ici", 45e9)]
    points = judge_session(session)
    # the last measurement names no machine: one point per machine
    assert [p.measurement.name for p in points] == ["cuBLAS", "rate only", "softmax",
                                                    "on every machine", "on every machine"]
    assert all(p.judgement is not None for p in points)


def test_measurement_may_refer_to_a_machine_by_name(tmp_path):
    text = _file(measurements="""\
        measurements:
          - name: m
            operation: g
            hardware: Toy accelerator
            time: 1 ms
        """)
    session = loads_session(text, "s.yaml")
    point = judge_session(session)[0]
    assert point.hardware.hardware.name == "Toy accelerator"


def _file(ops_extra: str = "", measurements: str = "") -> str:
    base = textwrap.dedent("""\
        schema_version: 1
        hardware:
          - preset: h100-sxm
          - name: Toy accelerator
            compute: {bf16: 100 TFLOP/s}
            memory: {hbm: 1 TB/s}
        operations:
          - name: g
            kind: gemm
            m: 64
            n: 4096
            k: 4096
            dtype: bf16
        """)
    if ops_extra:
        base += textwrap.indent(textwrap.dedent(ops_extra), "    ")
    if measurements:
        base += textwrap.dedent(measurements)
    return base


@pytest.mark.parametrize(("ops_extra", "path", "line", "fragment"), [
    ("sweep: {param: mm, values: [1, 2]}\n", "operations[0].sweep.param", 14,
     "numeric parameter"),
    ("sweep: {param: dtype, values: [1, 2]}\n", "operations[0].sweep.param", 14,
     "one of batch, m, n, k"),
    ("sweep: {values: [1, 2]}\n", "operations[0].sweep", 14, "needs param"),
    ("sweep: {param: m, values: [1, 0]}\n", "operations[0].sweep.values[1]", 14,
     "positive integer"),
    ("sweep: {param: m, values: [1, 2.5]}\n", "operations[0].sweep.values[1]", 14,
     "positive integer"),
    ("sweep: {param: m, values: []}\n", "operations[0].sweep.values", 14, "at least one"),
    ("sweep: {param: m, values: 4}\n", "operations[0].sweep.values", 14, "list"),
    ("sweep: {param: m, values: [1], start: 1}\n", "operations[0].sweep.start", 14,
     "not both"),
    ("sweep: {param: m, start: 1, stop: 8}\n", "operations[0].sweep", 14, "num"),
    ("sweep: {param: m, start: 1, stop: 8, num: 0}\n", "operations[0].sweep.num", 14,
     "whole number"),
    ("sweep: {param: m, start: 1, stop: 8, num: 2.5}\n", "operations[0].sweep.num", 14,
     "whole number"),
    ("sweep: {param: m, start: 0, stop: 8, num: 4, scale: log}\n", "operations[0].sweep", 14,
     "positive"),
    ("sweep: {param: m, start: 1, stop: 8, num: 4, scale: cubic}\n",
     "operations[0].sweep.scale", 14, "linear, log"),
    ("sweep: {param: m, start: 0, stop: 8, num: 4}\n", "operations[0].sweep", 14,
     "at least 1"),
    ("sweep: {param: m, start: 1 TB/s, stop: 8, num: 4}\n", "operations[0].sweep.start", 14,
     "plain number"),
    ("sweep: {param: m, stpo: 8}\n", "operations[0].sweep.stpo", 14, "did you mean 'stop'"),
    ("sweep: [1, 2]\n", "operations[0].sweep", 14, "mapping"),
])
def test_bad_sweeps_name_the_key_path_and_line(ops_extra, path, line, fragment):
    with pytest.raises(InputError) as info:
        loads_session(_file(ops_extra), "s.yaml")
    message = str(info.value)
    assert message.startswith(f"s.yaml:{line}: {path}: "), message
    assert fragment in message, message


@pytest.mark.parametrize(("block", "path", "fragment"), [
    ("  - name: m\n    operation: h\n    time: 1 ms\n", "measurements[0].operation",
     "no operation named 'h'"),
    ("  - name: m\n    operation: g\n    hardware: tpu-v5e\n    time: 1 ms\n",
     "measurements[0].hardware", "no machine 'tpu-v5e'"),
    ("  - name: m\n    operation: g\n", "measurements[0]", "time"),
    ("  - name: m\n    operation: g\n    time: -1 ms\n", "measurements[0].time", "positive"),
    ("  - name: m\n    operation: g\n    time: 1 TB/s\n", "measurements[0].time", "s"),
    ("  - name: m\n    operation: g\n    tme: 1 ms\n", "measurements[0].tme",
     "did you mean 'time'"),
    ("  - name: m\n    time: 1 ms\n    flops: 1 GFLOP\n", "measurements[0]", "bytes"),
    ("  - name: m\n    time: 1 ms\n    flops: 1 GFLOP\n    bytes: 1 MB\n    precision: fp12\n",
     "measurements[0].precision", "fp12"),
    ("  - operation: g\n    time: 1 ms\n", "measurements[0]", "needs a name"),
    ("  - name: m\n    operation: g\n    achieved: 0 TFLOP/s\n", "measurements[0].achieved",
     "positive"),
    ("  - name: m\n    operation: g\n    time: 1 ms\n    bytes: -5\n",
     "measurements[0].bytes", "at least 0"),
])
def test_bad_measurements_name_the_key_path(block, path, fragment):
    with pytest.raises(InputError) as info:
        loads_session(_file(measurements="measurements:\n" + block), "s.yaml")
    message = str(info.value)
    assert f": {path}: " in message, message
    assert fragment in message, message
    assert message.startswith("s.yaml:") and info.value.line is not None


def test_measurements_must_be_a_list():
    with pytest.raises(InputError) as info:
        loads_session(_file(measurements="measurements: false\n"), "s.yaml")
    assert "measurements: must be a list" in str(info.value)


def test_ambiguous_operation_name_is_refused():
    text = _file(measurements="measurements:\n  - name: m\n    operation: g\n    time: 1 ms\n")
    text = text.replace("operations:\n", "operations:\n  - {name: g, kind: gemm}\n", 1)
    with pytest.raises(InputError) as info:
        loads_session(text, "s.yaml")
    assert "measurements[0].operation" in str(info.value) and "2 operations" in str(info.value)


@pytest.mark.parametrize("name", ["critical_batch_sweep.yaml", "sharded_matmul.yaml",
                                  "predicted_vs_measured.yaml"])
def test_analysis_examples_load_and_round_trip(name):
    path = EXAMPLES / name
    session = load_session(path)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    sweeps = [op.get("sweep") for op in raw["operations"]]
    assert [e.sweep is not None for e in session.operations] == [s is not None for s in sweeps]
    assert len(session.measurements) == len(raw.get("measurements") or [])
    text = dumps_session(session)
    assert dumps_session(loads_session(text, name)) == text


def test_named_intensities_in_the_examples_are_the_intensities_computed():
    """Operations named "I = x" mark a regime on purpose: their FLOPs and bytes must give
    exactly that intensity (the teaching example once read 250 GFLOP over 1 GB as 0.25)."""
    import re

    from conftest import EXAMPLES

    from workbench.io.sessions import load_session

    checked = 0
    for path in EXAMPLES:
        for entry in load_session(path).operations:
            match = re.fullmatch(r"I = ([0-9.]+)", entry.operation.name)
            if match:
                counts = entry.operation.counts()
                assert counts.flops / counts.bytes == pytest.approx(float(match.group(1))), path
                checked += 1
    assert checked >= 3
