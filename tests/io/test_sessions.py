"""Session files: every example loads, load → save → load is lossless, saving is atomic, and
errors say ``file:line: key.path: problem``."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.io.errors import InputError
from workbench.io.presets import get_preset
from workbench.io.sessions import (
    dumps_session,
    load_session,
    loads_session,
    save_session,
    session_to_data,
)
from workbench.io.yamlio import dump_yaml, plain_data
from workbench.model.hardware import Hardware
from workbench.model.measured import Measurement
from workbench.model.operations import Operation
from workbench.model.session import (
    MARKERS,
    THEMES,
    HardwareEntry,
    OperationEntry,
    Session,
    ViewSettings,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "workbench" / "examples").glob("*.yaml"))
PRESET_IDS = sorted(p.stem for p in (REPO / "hardware_presets").glob("*.yaml"))

# Written out here (not imported) so that the tests do not share a mistake with the code.
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int32", "int8", "int4")
PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int32", "int8",
              "int4")
BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
STEP_OPS = ("add", "sub", "mul", "div", "fma", "scale", "bias", "relu", "square", "sqrt", "exp",
            "tanh", "sigmoid", "silu", "gelu", "max", "copy", "custom")
DECIMAL = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
SMALL = {"": 1.0, "m": 1e-3, "µ": 1e-6, "n": 1e-9, "p": 1e-12}

HYPOTHESIS = settings(max_examples=60, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture,
                                             HealthCheck.too_slow])


def snapshot(session: Session) -> dict:
    """Everything a session file records, as plain comparable data (entry ids excluded)."""
    return {
        "title": session.title,
        "notes": session.notes,
        "operations": [
            {"kind": e.operation.kind, "params": e.operation.params, "name": e.operation.name,
             "memory_level": e.operation.memory_level, "color": e.color, "visible": e.visible,
             "label": e.label, "sweep": getattr(e, "sweep", None)}
            for e in session.operations
        ],
        "measurements": list(getattr(session, "measurements", [])),
        "hardware": [
            {"preset": e.preset, "visible": e.visible, "marker": e.marker,
             "machine": dataclasses.asdict(e.hardware)}
            for e in session.hardware
        ],
        "view": session.view.as_dict(),
    }


def assert_same(a: Session, b: Session) -> None:
    sa, sb = snapshot(a), snapshot(b)
    # field by field first, for a readable failure
    assert sa["title"] == sb["title"]
    assert sa["notes"] == sb["notes"]
    assert len(sa["operations"]) == len(sb["operations"])
    for x, y in zip(sa["operations"], sb["operations"], strict=True):
        assert x == y
    assert len(sa["hardware"]) == len(sb["hardware"])
    for x, y in zip(sa["hardware"], sb["hardware"], strict=True):
        assert x == y
    assert sa["measurements"] == sb["measurements"]
    assert sa["view"] == sb["view"]
    assert sa == sb


# ---------------------------------------------------------------------------------------------
# the examples


def test_there_are_examples():
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_loads_as_written(path):
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    session = load_session(path)
    assert session.title == raw["title"]
    # the session's own operations (a whole model's expansion is not written in the file)
    own = [e for e in session.operations if session.model_of(e.id) is None]
    written = raw.get("operations") or []
    assert [e.operation.name for e in own] == [o["name"] for o in written]
    assert [e.operation.kind for e in own] == [o["kind"] for o in written]
    assert [m.config for m in session.models] == [m["config"] for m in raw.get("models") or []]
    assert len(session.hardware) == len(raw["hardware"])
    for entry, item in zip(session.hardware, raw["hardware"], strict=True):
        if "preset" in item:
            assert entry.preset == item["preset"]
            preset_raw = yaml.safe_load(
                (REPO / "hardware_presets" / f"{item['preset']}.yaml").read_text("utf-8"))
            assert entry.hardware.name == item.get("name", preset_raw["name"])
            assert set(entry.hardware.compute) == set(preset_raw["compute"])
        else:
            assert entry.preset is None
            assert entry.hardware.name == item["name"]
            assert set(entry.hardware.compute) == set(item["compute"])
            assert set(entry.hardware.memory) == set(item["memory"])
    # integer shape parameters arrive as the integers written
    for entry, item in zip(own, written, strict=True):
        for key in ("m", "n", "k", "batch", "heads", "kv_heads", "head_dim", "query_len",
                    "kv_len", "rows", "cols", "hidden"):
            if key in item:
                assert entry.operation.params[key] == item[key]
                assert isinstance(entry.operation.params[key], int)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_round_trips_through_text_and_file(path, tmp_path):
    first = load_session(path)
    text = dumps_session(first)
    assert_same(first, loads_session(text, "dumped.yaml"))

    target = tmp_path / path.name
    save_session(first, target)
    second = load_session(target)
    assert_same(first, second)
    # saving what was loaded writes the same text again (a fixed point)
    assert dumps_session(second) == text
    assert target.read_text(encoding="utf-8") == text


# ---------------------------------------------------------------------------------------------
# generated sessions

names = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "S", "Zs"), max_codepoint=0x2FFF),
    min_size=1, max_size=30).filter(lambda s: s.strip() != "")
idents = st.from_regex(r"\A[A-Za-z][A-Za-z0-9_\-]{0,10}\Z")
prose = st.text(alphabet=st.sampled_from(list("abcXYZ019 .,:-#'\"\n")), max_size=80)
huge_ints = st.integers(min_value=1, max_value=2**40)
# products of several stay within the 1e30 FLOPs and bytes a session holds
big_ints = st.integers(min_value=1, max_value=2**24)
small_ints = st.integers(min_value=1, max_value=4096)


def si_value(prefixes: dict[str, float]):
    """A value someone would type with an SI prefix: 1 ≤ mantissa ≤ 999, up to 3 decimals."""
    return st.builds(lambda m, p: (m / 1000) * prefixes[p], st.integers(1000, 999_000),
                     st.sampled_from(sorted(prefixes)))


rates = si_value(DECIMAL)
times = si_value(SMALL)
fractions = st.floats(min_value=0.01, max_value=1.0)
amounts = st.just(0.0) | st.floats(min_value=1e-30, max_value=1e30)  # zero, or in range


def optional(required=None, **strategies):
    """Parameters: the ``required`` ones always (a file must give every dimension without a
    neutral value), the others or not."""
    return st.fixed_dictionaries(required or {}, optional=strategies)


gemm_params = optional(dict(m=big_ints, n=big_ints, k=big_ints), batch=small_ints,
                       dtype=st.sampled_from(DTYPES), a_dtype=st.sampled_from(DTYPES),
                       b_dtype=st.sampled_from(DTYPES), c_dtype=st.sampled_from(DTYPES),
                       compute=st.sampled_from(PRECISIONS))


@st.composite
def attention_params(draw):
    params = draw(optional(dict(head_dim=small_ints, query_len=big_ints, kv_len=big_ints),
                           implementation=st.sampled_from(("flash", "naive")), batch=small_ints,
                           causal=st.booleans(), dtype=st.sampled_from(DTYPES),
                           score_passes=st.integers(0, 8), score_dtype=st.sampled_from(DTYPES),
                           compute=st.sampled_from(PRECISIONS)))
    if params.get("causal"):  # a causal mask needs query_len ≤ kv_len
        q = params.get("query_len", 4096)
        if q > params.get("kv_len", q):
            params["kv_len"] = q
    heads = draw(st.integers(1, 128))
    params["heads"] = heads
    if draw(st.booleans()):
        params["kv_heads"] = draw(st.sampled_from([d for d in range(1, heads + 1)
                                                   if heads % d == 0]))
    return params


@st.composite
def steps(draw):
    out = []
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(STEP_OPS))
        step = {"op": op}
        if draw(st.booleans()):
            step["inputs"] = draw(st.lists(idents, max_size=3))
        if op == "custom" or draw(st.booleans()):
            step["flops"] = draw(st.just(0.0) | st.floats(1e-30, 1e20))  # per element
        out.append(step)
    return out


elementwise_params = optional(dict(n=big_ints, steps=steps()), dtype=st.sampled_from(DTYPES),
                              input=idents, output=idents, fused=st.booleans(),
                              write_allocate=st.booleans(), compute=st.sampled_from(PRECISIONS))
custom_params = optional(dict(flops=amounts, bytes=st.floats(min_value=1.0, max_value=1e30)),
                         unit=st.sampled_from(("matrix", "vector")), precision=st.sampled_from(PRECISIONS))
norm_params = optional(dict(rows=huge_ints, hidden=huge_ints),
                       variant=st.sampled_from(("layernorm", "rmsnorm")), dtype=st.sampled_from(DTYPES),
                       weight_dtype=st.sampled_from(DTYPES))
softmax_params = optional(dict(rows=huge_ints, cols=huge_ints), dtype=st.sampled_from(DTYPES))
reduction_params = optional(dict(n=huge_ints), op=st.sampled_from(("sum", "max", "dot")),
                            rows=huge_ints,
                            dtype=st.sampled_from(DTYPES))

operation_params = st.one_of(
    st.tuples(st.just("gemm"), gemm_params),
    st.tuples(st.just("attention"), attention_params()),
    st.tuples(st.just("elementwise"), elementwise_params),
    st.tuples(st.just("custom"), custom_params),
    st.tuples(st.just("norm"), norm_params),
    st.tuples(st.just("softmax"), softmax_params),
    st.tuples(st.just("reduction"), reduction_params),
)


@st.composite
def operation_entries(draw):
    kind, params = draw(operation_params)
    op = Operation(kind, params, draw(names), draw(st.none() | idents))
    return OperationEntry(op, color=draw(st.none() | st.sampled_from(("#0072B2", "#abcdef"))),
                          visible=draw(st.booleans()), label=draw(st.booleans()))


@st.composite
def inline_machines(draw):
    levels = draw(st.lists(idents, min_size=1, max_size=4, unique=True))
    n_memory = draw(st.integers(1, len(levels)))
    memory = {name: draw(rates) for name in levels[:n_memory]}
    interconnect = {name: draw(rates) for name in levels[n_memory:]}
    compute = {p: draw(rates) for p in draw(st.lists(st.sampled_from(PRECISIONS), min_size=1,
                                                     max_size=5, unique=True))}
    vector = {p: draw(rates) for p in draw(st.lists(st.sampled_from(PRECISIONS), max_size=4,
                                                    unique=True))}
    figures = ([f"memory.{k}" for k in memory] + [f"compute.{k}" for k in compute]
               + [f"vector_compute.{k}" for k in vector]
               + [f"interconnect.{k}" for k in interconnect])
    hw = Hardware(
        name=draw(names), compute=compute, memory=memory,
        main_memory=draw(st.sampled_from(sorted(memory))), interconnect=interconnect,
        id=draw(st.just("") | idents), vendor=draw(st.just("") | names),
        kind=draw(st.sampled_from(("custom", "gpu", "tpu", "cpu", "teaching"))),
        capacity=draw(st.none() | si_value(DECIMAL) | si_value(BINARY)),
        launch_overhead=draw(st.none() | times), vector_compute=vector,
        measured=draw(st.lists(st.sampled_from(figures), max_size=3, unique=True)),
        efficiency=draw(st.none() | fractions), sparse_halved=draw(st.booleans()),
        sources=draw(st.lists(st.from_regex(r"\Ahttps://[a-z]{1,10}\.com/[a-z0-9/]{0,20}\Z"),
                              max_size=3)),
        notes=draw(prose),
    )
    return HardwareEntry(hw, preset=None, visible=draw(st.booleans()),
                         marker=draw(st.none() | st.sampled_from(MARKERS)))


@st.composite
def preset_machines(draw):
    preset = draw(st.sampled_from(PRESET_IDS))
    hw = get_preset(preset)
    if draw(st.booleans()):
        hw.name = draw(names)
    if draw(st.booleans()):
        hw.efficiency = draw(fractions)
    overhead = draw(st.sampled_from(("keep", "none", "value")))
    if overhead == "none":
        hw.launch_overhead = None
    elif overhead == "value":
        hw.launch_overhead = draw(times)
    return HardwareEntry(hw, preset=preset, visible=draw(st.booleans()),
                         marker=draw(st.none() | st.sampled_from(MARKERS)))


@st.composite
def views(draw):
    view = ViewSettings(theme=draw(st.sampled_from(THEMES)), legend=draw(st.booleans()),
                        labels=draw(st.booleans()), regions=draw(st.booleans()),
                        derated=draw(st.booleans()), all_precisions=draw(st.booleans()))
    for key in ("x_range", "y_range"):
        if draw(st.booleans()):
            low, high = sorted(draw(st.lists(st.floats(1e-3, 1e18), min_size=2, max_size=2,
                                             unique=True)))
            setattr(view, key, (low, high))
    return view


@st.composite
def sessions(draw):
    return Session(
        title=draw(st.just("") | names),
        hardware=draw(st.lists(st.one_of(inline_machines(), preset_machines()), max_size=4)),
        operations=draw(st.lists(operation_entries(), max_size=5)),
        view=draw(views()),
        notes=draw(prose),
    )


@HYPOTHESIS
@given(sessions())
def test_generated_sessions_round_trip_exactly(session):
    text = dumps_session(session)
    again = loads_session(text, "generated.yaml")
    assert_same(session, again)
    assert dumps_session(again) == text
    # preset machines are written by reference, never copied inline
    data = yaml.safe_load(text)
    for entry, item in zip(session.hardware, data["hardware"], strict=True):
        if entry.preset:
            assert item["preset"] == entry.preset
            assert "compute" not in item and "memory" not in item


# ---------------------------------------------------------------------------------------------
# the text of long lists, as PyYAML writes it


class PyYamlDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    """How files were written before long lists got a writer of their own: PyYAML alone."""


PyYamlDumper.add_representer(
    str, lambda dumper, data: dumper.represent_scalar(
        "tag:yaml.org,2002:str", data, style="|" if "\n" in data else None))


def pyyaml_text(data) -> str:
    return yaml.dump(data, Dumper=PyYamlDumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=None, width=100)


#: texts that read as something else when plain, or that need quotes, breaks or escapes
AWKWARD = ("", " ", "yes", "No", "null", "~", "12", "-3", "0x1F", "1.5e3", ".inf", "1:30",
           "2026-11-26", "2026-11-26 10:00:00", "---", "...", "- a", "? b", ": c", "a: b",
           "a:b", "a #b", "a#b", "#c", "'q'", '"d"', "it's", "x ", " x", "a  b", "a\tb",
           "a\nb", "line\n", "\u2028", "\x85", "\ufeff", "😀", "µs", "2·M·N·K", "×", "@x",
           "`x", "%x", "!x", "&x", "*x", "|x", ">x", "[x]", "{x}", "x,y", "x?y", "=", "<<")
#: characters of kernel names, sources and units; now and then one that needs double quotes
#: or a line of its own
PLAIN_CHARS = "abcxyz_019 .,:-#'\"()<>[]{}*&!?|@`%/=~+µ·×é…日\xa0"
CHARS = st.sampled_from(list(PLAIN_CHARS) * 20 + list("\t\n😀\u2028\x85"))
texts = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(CHARS, max_size=40),
    # long texts of words, to wrap where the line is full
    st.lists(st.one_of(st.sampled_from(AWKWARD), st.text(CHARS, min_size=1, max_size=30),
                       st.from_regex(r"\A[a-z0-9_:<>,()]{1,60}\Z")),
             max_size=25).map(" ".join),
    st.lists(st.sampled_from(("ab", "c", "'", " ", "  ", ":", "#")), max_size=150).map("".join),
)
scalars = st.one_of(texts, st.integers(-10**12, 10**12), st.booleans(), st.floats(),
                    st.none())
keys = st.one_of(st.sampled_from(("name", "operation", "hardware", "time", "achieved", "flops",
                                  "bytes", "precision", "source", "unit", "count", "run")),
                 texts, st.integers(0, 9))
#: the keys and values of measured points, their texts long enough to wrap
points = st.dictionaries(
    st.sampled_from(("name", "operation", "hardware", "time", "source", "unit", "run")),
    st.lists(st.text(st.sampled_from(PLAIN_CHARS), min_size=1, max_size=30), min_size=1,
             max_size=12).map(" ".join)
    | st.integers(0, 10**6), min_size=3, max_size=7)
mappings = st.one_of(
    points,
    points.map(lambda point: {**point, "levels": {"l1": point.get("time", "1 GB"), "dram": "1 B"}}),
    st.dictionaries(keys, st.one_of(texts, st.integers(0, 10**6)), max_size=14),
    st.dictionaries(keys, st.one_of(texts, st.integers(0, 10**6), st.dictionaries(
        st.sampled_from(("l1", "l2", "dram")) | texts, texts | st.integers(), max_size=3)),
                    max_size=14),
    st.dictionaries(keys, st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=5),
)


@settings(max_examples=400, deadline=None, database=None)
@given(st.lists(mappings, max_size=8), st.lists(st.sampled_from(("title", "notes", "view")),
                                                    max_size=3, unique=True), st.data())
def test_long_lists_are_written_exactly_as_pyyaml_writes_them(listed, others, data):
    document = {"schema_version": 2}
    for key in others:
        document[key] = data.draw(texts | st.dictionaries(texts, scalars, max_size=3))
    document["measurements"] = listed
    document["operations"] = data.draw(st.lists(mappings | scalars, max_size=3))
    assert dump_yaml(document) == pyyaml_text(plain_data(document))


@pytest.mark.parametrize("text", ["\n\u2028", "a\n\u2029", "\n\x85", "a\n\n", "x\u2028\n"])
@pytest.mark.parametrize("after", [{"operations": []}, {"title": "t"}, {}])
def test_a_text_ending_in_a_line_break_of_its_own_is_written_as_pyyaml_writes_it(text, after):
    """A name that keeps its trailing line breaks (``|+``) leaves libyaml's document open
    (``...`` at its end), and where the text's last break is one of its own (U+2028, U+2029,
    U+0085) no "\\n" comes before that ``...``: the point was written with the ``...`` after
    it, in the middle of the file, where PyYAML writes it at the end."""
    document = {"schema_version": 2, "measurements": [{"name": 0}, {"name": text}], **after}
    written = dump_yaml(document)
    assert written == pyyaml_text(plain_data(document))
    assert yaml.safe_load(written) == document


def test_a_session_with_a_run_named_with_a_line_break_of_its_own_opens_again():
    """Saved before, a measured point whose last field (its run) was "before\\n\\u2028"
    ended the file's YAML document in the middle (``...`` after it), and the file could not
    be opened."""
    session = Session(title="breaks")
    session.measurements = [Measurement(name=f"k{i}", time_s=1e-6, flops=1e9, bytes=1e6,
                                        run=run)
                            for i, run in enumerate(("a", "before\n\u2028", "after\n\u2029"))]
    text = dumps_session(session)
    assert loads_session(text, "breaks.yaml").measurements == session.measurements


def test_profiled_points_are_written_exactly_as_pyyaml_writes_them():
    kernels = ["void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<"
               "c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<"
               "c10::BFloat16>, at::detail::Array<char*, 3>)", "flash_fwd_kernel",
               "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
               "Memcpy DtoD (Device -> Device)", "it's: #1"]
    session = Session(hardware=[HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")])
    for i in range(400):
        session.measurements.append(Measurement(
            name=f"{kernels[i % 5]} [{i}, 4096]", hardware="h100-sxm", time_s=1.234567e-6 * i + 1e-7,
            flops=2.0**i % 1e15, bytes=3.7e6 * i + 1, precision="bf16",
            source=f"step.pt.trace.json.gz: aten::addmm [{i}, 4096] × [4096, 4096]: 2·M·N·K",
            levels={"l1": 1.5e9 + i, "l2": 7.25e8 / (i + 1), "dram": 3.7e6 * i + 1} if i % 3 else None,
            unit="matrix", count=i % 7 + 1, run="before" if i % 2 else None))
    text = dumps_session(session)
    assert text == pyyaml_text(plain_data(session_to_data(session)))
    assert dumps_session(loads_session(text, "profiled.yaml")) == text


# ---------------------------------------------------------------------------------------------
# numbers and quantities


def test_numbers_written_as_strings_are_numbers():
    text = """\
schema_version: 1
hardware:
  - name: Strings
    compute: {bf16: 1e14, fp32: "2.5e13"}
    memory: {hbm: 1e12}
    launch_overhead: 5e-6
    capacity: 8e10
operations:
  - name: g
    kind: gemm
    m: 1e3
    n: "2e3"
    k: 4_096
  - name: c
    kind: custom
    flops: 1e12
    bytes: 2.5e9
"""
    raw = yaml.safe_load(text)
    # the premise: PyYAML (YAML 1.1) reads these as strings, not numbers
    assert raw["operations"][0]["m"] == "1e3"
    assert raw["hardware"][0]["memory"]["hbm"] == "1e12"
    assert raw["operations"][1]["bytes"] == "2.5e9"

    session = loads_session(text, "strings.yaml")
    hw = session.hardware[0].hardware
    assert hw.compute == {"bf16": 1e14, "fp32": 2.5e13}
    assert hw.memory == {"hbm": 1e12}
    assert hw.launch_overhead == 5e-6
    assert hw.capacity == 8e10
    gemm = session.operations[0].operation.params
    assert (gemm["m"], gemm["n"], gemm["k"]) == (1000, 2000, 4096)
    assert all(isinstance(gemm[k], int) for k in ("m", "n", "k"))
    custom = session.operations[1].operation.params
    assert custom["flops"] == 1e12 and custom["bytes"] == 2.5e9


@pytest.mark.parametrize(
    ("typed", "unit_value"),
    [
        ("8111 TB/s", 8111e12),          # saved with another prefix
        ("3350 GB/s", 3.35e12),
        ("0.005 PB/s", 5e12),
        ("1234.56789012345 GB/s", 1234.56789012345e9),   # more than 12 significant digits
        ("3.3512345678901 TB/s", 3.3512345678901e12),
    ],
)
def test_memory_rates_survive_save_and_load_exactly(typed, unit_value):
    text = ("schema_version: 1\nhardware:\n  - name: M\n    compute: {bf16: 1 TFLOP/s}\n"
            f"    memory: {{hbm: {typed}}}\n")
    first = loads_session(text, "typed.yaml")
    value = first.hardware[0].hardware.memory["hbm"]
    assert value == pytest.approx(unit_value, rel=1e-15)
    again = loads_session(dumps_session(first), "saved.yaml")
    assert again.hardware[0].hardware.memory["hbm"] == value


# ---------------------------------------------------------------------------------------------
# preset machines


def test_preset_overrides_round_trip_in_preset_form():
    text = """\
schema_version: 1
hardware:
  - preset: h100-sxm
    name: My H100
    efficiency: 0.7
    launch_overhead: 5 us
    marker: s
  - preset: a100-80gb
    launch_overhead: null
  - preset: tpu-v5e
"""
    session = loads_session(text, "overrides.yaml")
    h100, a100, tpu = (e.hardware for e in session.hardware)
    assert (h100.name, h100.efficiency) == ("My H100", 0.7)
    assert h100.launch_overhead == pytest.approx(5e-6, rel=1e-12)
    assert a100.launch_overhead is None
    assert a100.efficiency == 0.78  # the preset's own value, untouched
    # the preset as it is, with the default prediction a session without one takes
    assert tpu == get_preset("tpu-v5e").copy(prediction="calibrated", launches="auto")

    saved = dumps_session(session)
    assert "preset: h100-sxm" in saved
    data = yaml.safe_load(saved)["hardware"]
    assert data[0]["preset"] == "h100-sxm"
    assert set(data[0]) == {"preset", "name", "efficiency", "launch_overhead", "marker"}
    assert data[1] == {"preset": "a100-80gb", "launch_overhead": None}
    assert data[2] == {"preset": "tpu-v5e"}
    assert_same(session, loads_session(saved, "saved.yaml"))


def test_preset_with_efficiency_removed_round_trips():
    hw = get_preset("h100-sxm")
    assert hw.efficiency is not None
    hw.efficiency = None  # "no derating" for this machine
    session = Session(hardware=[HardwareEntry(hw, preset="h100-sxm")])
    again = loads_session(dumps_session(session), "saved.yaml")
    assert again.hardware[0].hardware.efficiency is None


def test_a_launch_overhead_of_zero_saves_the_same_every_time():
    # 0 s of launch overhead reads as none; it was written as 0.0, read back as none, then
    # written as null: each save of an unchanged session gave another file
    hw = get_preset("h100-sxm")
    assert hw.launch_overhead
    hw.launch_overhead = 0.0
    first = dumps_session(Session(hardware=[HardwareEntry(hw, preset="h100-sxm")]))
    second = dumps_session(loads_session(first, "saved.yaml"))
    assert second == first
    assert loads_session(second, "saved.yaml").hardware[0].hardware.launch_overhead is None


def test_preset_with_changed_compute_is_saved_inline_with_based_on():
    hw = get_preset("h100-sxm")
    hw.compute["bf16"] = 1.2e15
    session = Session(hardware=[HardwareEntry(hw, preset="h100-sxm")])
    saved = dumps_session(session)
    item = yaml.safe_load(saved)["hardware"][0]
    assert "preset" not in item
    assert item["based_on"] == "h100-sxm"
    assert "compute" in item and "memory" in item
    again = loads_session(saved, "saved.yaml")
    loaded = again.hardware[0].hardware
    assert loaded.compute["bf16"] == 1.2e15
    assert loaded.compute["fp16"] == get_preset("h100-sxm").compute["fp16"]
    assert loaded.memory == get_preset("h100-sxm").memory
    assert loaded.name == hw.name


def test_based_on_survives_a_second_save():
    hw = get_preset("h100-sxm")
    hw.compute["bf16"] = 1.2e15
    session = Session(hardware=[HardwareEntry(hw, preset="h100-sxm")])
    once = loads_session(dumps_session(session), "once.yaml")
    twice = yaml.safe_load(dumps_session(once))["hardware"][0]
    assert twice.get("based_on") == "h100-sxm"


def test_empty_names_save_into_a_loadable_file():
    """The model allows empty names (Hardware.label falls back to the id); saving such a
    session must not write a file that loading then refuses."""
    hw = get_preset("h100-sxm")
    hw.name = ""
    op = Operation("gemm", {"m": 8}, "")
    session = Session(hardware=[HardwareEntry(hw, preset="h100-sxm")],
                      operations=[OperationEntry(op)])
    loads_session(dumps_session(session), "saved.yaml")


# ---------------------------------------------------------------------------------------------
# atomic save


def _session(title: str) -> Session:
    return Session(title=title, hardware=[HardwareEntry(get_preset("l4"), preset="l4")],
                   operations=[OperationEntry(Operation("gemm", {"m": 64}, "g"))])


def test_save_keeps_a_backup_and_no_temporary_files(tmp_path):
    target = tmp_path / "work.yaml"
    save_session(_session("first"), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work.yaml"]  # nothing to back up yet
    first_text = target.read_text(encoding="utf-8")
    assert load_session(target).title == "first"

    save_session(_session("second"), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work.yaml", "work.yaml.bak"]
    assert (tmp_path / "work.yaml.bak").read_text(encoding="utf-8") == first_text
    assert load_session(target).title == "second"

    save_session(_session("third"), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work.yaml", "work.yaml.bak"]
    assert load_session(tmp_path / "work.yaml.bak").title == "second"
    assert load_session(target).title == "third"


def test_save_without_backup(tmp_path):
    target = tmp_path / "work.yaml"
    save_session(_session("first"), target, backup=False)
    save_session(_session("second"), target, backup=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work.yaml"]
    assert load_session(target).title == "second"


def test_failed_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "work.yaml"
    save_session(_session("first"), target)
    before = target.read_bytes()

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        save_session(_session("second"), target)
    monkeypatch.undo()
    assert target.read_bytes() == before
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("work.yaml", "work.yaml.bak")]
    assert leftovers == []


# ---------------------------------------------------------------------------------------------
# error messages


def _line_of(text: str, needle: str) -> int:
    matches = [i for i, line in enumerate(text.splitlines(), 1) if line.strip() == needle]
    assert len(matches) == 1, needle
    return matches[0]


BAD_M = """\
schema_version: 1
title: bad m
hardware:
  - preset: h100-sxm
operations:
  - name: first
    kind: gemm
    m: 5
  - name: second
    kind: softmax
    rows: 4
  - name: third
    kind: gemm
    n: 10
    m: -5
    k: 3
"""


def test_error_names_file_line_key_path_and_problem(tmp_path):
    path = tmp_path / "session.yaml"
    path.write_text(BAD_M, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_session(path)
    message = str(info.value)
    line = _line_of(BAD_M, "m: -5")
    assert line == 15
    assert message.startswith(f"{path}:{line}: operations[2].m: ")
    assert "positive integer" in message
    assert "\n" not in message
    assert info.value.file == str(path)
    assert info.value.line == line
    assert info.value.path == ("operations", 2, "m")


NESTED = """\
schema_version: 1
hardware:
  - preset: h100-sxm
  - name: Mine
    compute: {bf16: 10 TFLOP/s}
    memory:
      hbm: 1 TB/s
      dram: 3 GB
operations:
  - name: chain
    kind: elementwise
    steps:
      - op: fma
      - op: gelu
      - op: gleu
view:
  theme: light
  x_range: [10, 1]
"""


@pytest.mark.parametrize(
    ("needle", "key_path", "problem", "fix"),
    [
        ("dram: 3 GB", "hardware[1].memory.dram", "B/s", None),
        ("- op: gleu", "operations[0].steps[2].op", "gelu", "dram: 3 GB"),
        ("x_range: [10, 1]", "view.x_range", "low must be below high", "- op: gleu"),
    ],
)
def test_nested_errors_have_the_right_line(tmp_path, needle, key_path, problem, fix):
    text = NESTED
    # fix the earlier problems so that the one under test is reported first
    if fix == "dram: 3 GB":
        text = text.replace("dram: 3 GB", "dram: 3 GB/s")
    if fix == "- op: gleu":
        text = text.replace("dram: 3 GB", "dram: 3 GB/s").replace("- op: gleu", "- op: add")
    path = tmp_path / "nested.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_session(path)
    message = str(info.value)
    line = _line_of(text, needle)
    assert message.startswith(f"{path}:{line}: {key_path}: "), message
    assert problem in message


def test_reading_a_session_pauses_the_cycle_collector_and_gives_it_back():
    # (a session of 10⁵ measured points holds millions of nodes while it is read: with the
    # collector running, each collection walked them all again; it must run after, even
    # when the file is refused)
    import gc

    from workbench.io import sessions as reader

    seen = []
    build = reader.session_from_document

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return build(*args, **kwargs)

    reader.session_from_document = watched
    try:
        loads_session("schema_version: 2\ntitle: t\n", "ok.yaml")
        with pytest.raises(InputError):
            loads_session("schema_version: 2\ntitle: [\n", "bad.yaml")
    finally:
        reader.session_from_document = build
    assert seen == [False] and gc.isenabled()
