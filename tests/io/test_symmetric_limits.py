"""One set of limits for writing and reading: whatever can be entered saves and opens again;
what a file could not hold is refused at entry (editor, importers) with the message the
reader gives, and control characters or out-of-range numbers are refused at load."""

from __future__ import annotations

import contextlib
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.document import Document, NameInUse, new_operation
from workbench.io.errors import InputError
from workbench.io.measurements import parse_measurements_csv, parse_ncu_csv
from workbench.io.sessions import dumps_session, load_session, loads_session, save_session
from workbench.model.limits import TEXT_LIMITS, text_problem
from workbench.model.measured import Measurement
from workbench.model.operations import Operation
from workbench.model.session import OperationEntry, Session

HEAD = "schema_version: 2\nhardware: [{preset: h100-sxm}]\n"


def test_a_250_character_operation_name_saves_and_opens(tmp_path):
    session = Session()
    session.operations.append(OperationEntry(Operation("gemm", {"m": 1, "n": 2, "k": 3},
                                                       "n" * 250)))
    save_session(session, tmp_path / "s.yaml")
    assert load_session(tmp_path / "s.yaml").operations[0].operation.name == "n" * 250


def test_30001_gemms_save_and_open(tmp_path):
    session = Session()
    session.operations.extend(OperationEntry(Operation("gemm", {"m": i + 1, "n": 64, "k": 64},
                                                       f"g{i}"))
                              for i in range(30_001))
    save_session(session, tmp_path / "s.yaml")
    again = load_session(tmp_path / "s.yaml")
    assert len(again.operations) == 30_001
    assert again.operations[-1].operation.params["m"] == 30_001


@pytest.mark.parametrize("key, value, kind", [
    ("operations", "- {name: NAME, kind: gemm, m: 1, n: 1, k: 1}", "operation"),
    ("title", "NAME", "title")])
def test_a_name_over_its_limit_is_refused_at_load_with_the_entry_message(key, value, kind):
    name = "x" * (TEXT_LIMITS[kind] + 1)
    text = HEAD + f"{key}:\n  {value.replace('NAME', name)}\n" if key == "operations" else (
        HEAD + f"{key}: {name}\n")
    with pytest.raises(InputError) as caught:
        loads_session(text, "s.yaml")
    assert caught.value.message == text_problem(name, kind)
    assert f"is longer than {TEXT_LIMITS[kind]} characters" in str(caught.value)


@pytest.mark.parametrize("where", ["title: 'a\\x1b[2Jb'",
                                   "operations: [{name: \"a\\x07\", kind: gemm, m: 1, n: 1, "
                                   "k: 1}]",
                                   "operations: [{name: \"a\\uFFFE\", kind: gemm, m: 1, n: 1, "
                                   "k: 1}]"])
def test_control_characters_are_refused_at_load(where):
    text = HEAD + where.replace("'a\\x1b[2Jb'", '"a\\e[2Jb"') + "\n"
    with pytest.raises(InputError, match=r"holds the control character U\+(001B|0007|FFFE) at "
                                         r"position 2; remove it"):
        loads_session(text, "s.yaml")


def test_a_machine_name_with_a_control_character_is_refused_at_load():
    text = ("schema_version: 2\nhardware:\n  - name: \"GPU\\x1b\"\n    compute: {bf16: 1 TFLOP/s}"
            "\n    memory: {hbm: 1 TB/s}\n")
    with pytest.raises(InputError, match=r"hardware\[0\]\.name: holds the control character"):
        loads_session(text, "s.yaml")


@pytest.mark.parametrize("field", ["hbm: 1e-320", "hbm: 1e31"])
def test_out_of_range_bandwidths_are_refused_at_load(field):
    text = (f"schema_version: 2\nhardware:\n  - name: tiny\n    compute: {{bf16: 1 TFLOP/s}}\n"
            f"    memory: {{{field}}}\n")
    with pytest.raises(InputError, match=r"s.yaml:5: hardware\[0\]\.memory\.hbm: .* out of "
                                         r"range"):
        loads_session(text, "s.yaml")


@pytest.mark.parametrize("op", ["{name: c, kind: custom, flops: 1e308, bytes: 1}",
                                "{name: c, kind: custom, flops: 1, bytes: 5e-324}"])
def test_out_of_range_flops_and_bytes_are_refused_at_load(op):
    with pytest.raises(InputError, match="out of range"):
        loads_session(HEAD + f"operations: [{op}]\n", "s.yaml")


def test_an_out_of_range_efficiency_is_refused_at_load():
    with pytest.raises(InputError, match=r"hardware\[0\]\.efficiency: .*out of range"):
        loads_session("schema_version: 2\nhardware: [{preset: h100-sxm, efficiency: 1e-320}]\n",
                      "s.yaml")


# -- importers refuse at entry what a session could not hold


def test_a_csv_name_over_300_characters_is_refused_at_import():
    with pytest.raises(InputError) as caught:
        parse_measurements_csv("name,time_ms\n" + "k" * 301 + ",1\n", "m.csv")
    assert str(caught.value) == "m.csv:2: name: is longer than 300 characters (301)"


def test_a_csv_source_over_2000_characters_is_refused_at_import():
    with pytest.raises(InputError, match=r"m.csv:2: source: is longer than 2,000 characters"):
        parse_measurements_csv("name,time_ms,source\nk,1," + "s" * 2001 + "\n", "m.csv")


def test_a_csv_name_with_an_escape_sequence_is_refused_at_import():
    with pytest.raises(InputError, match=r"m.csv:2: name: holds the control character U\+001B"):
        parse_measurements_csv("name,time_ms\nk\x1b[2J,1\n", "m.csv")


def test_a_long_ncu_kernel_name_is_shortened_to_what_a_session_holds():
    header = ('"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum",'
              '"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"\n'
              '"","","nsecond","byte","inst"\n')
    rows = f'"0","{"k" * 5000}","1000","1000","1000"\n'
    (m,) = parse_ncu_csv(header + rows, "n.csv")
    assert len(m.name) <= TEXT_LIMITS["measurement"]
    assert m.problems() == []


# -- the document API: what it is given within the limits round-trips

names = st.text(min_size=1, max_size=TEXT_LIMITS["operation"] + 40).filter(
    lambda s: s.strip() and text_problem(s, "operation") is None)
amounts = st.just(0.0) | st.floats(1e-30, 1e30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(st.tuples(names, st.integers(1, 2**53), amounts, amounts), min_size=1,
                    max_size=5),
       title=st.text(max_size=TEXT_LIMITS["title"]).filter(
           lambda s: text_problem(s, "title") is None),
       point=st.tuples(names, st.text(max_size=TEXT_LIMITS["source"]).filter(
           lambda s: text_problem(s, "source") is None), st.floats(1e-12, 1e9)))
def test_what_the_document_api_accepts_round_trips_through_save_and_open(ops, title, point):
    document = Document(Session())
    document.set_title(title)
    for name, m, flops, nbytes in ops:
        gemm = document.add_operation(new_operation("gemm"))
        with contextlib.suppress(NameInUse):  # (a name in use is refused: names stay unique)
            document.set_operation_field(gemm, "name", name)
        document.set_param(gemm, "m", m)
        custom = document.add_operation(new_operation("custom"))
        document.set_param(custom, "flops", flops)
        document.set_param(custom, "bytes", max(1.0, nbytes))  # (at least one byte)
    name, source, seconds = point
    document.set_measurements([Measurement(name=name.strip() or "p", time_s=seconds, flops=1.0,
                                           bytes=1.0, source=source)])
    text = dumps_session(document.session)
    again = loads_session(text, "s.yaml")
    assert again.title == (title if title else "")
    assert [e.operation.name for e in again.operations] == [
        e.operation.name for e in document.session.operations]
    assert [e.operation.params for e in again.operations] == [
        dict(e.operation.params) for e in document.session.operations]
    (m,) = again.measurements
    assert (m.name, m.source, m.time_s) == (name.strip() or "p", source, seconds)
    assert all(math.isfinite(v) for e in again.operations
               for v in e.operation.params.values() if isinstance(v, float))


sizes = st.just(0.0) | st.floats(1e-300, 1e300)


@settings(max_examples=200, deadline=None)
@given(flops=sizes, nbytes=sizes, levels=st.dictionaries(st.sampled_from(["l1", "l2", "dram"]),
                                                         sizes, min_size=1))
def test_a_measured_point_the_checks_accept_saves_and_opens_again(flops, nbytes, levels):
    """The importers and the measurements table accept a point by its checks, and Open
    reads it back by the same numbers: nothing accepted is refused when the file reopens."""
    m = Measurement("k", time_s=1e-3, flops=flops, bytes=nbytes, levels=levels)
    if m.problems():
        return
    (again,) = loads_session(dumps_session(Session(measurements=[m])), "s.yaml").measurements
    assert (again.flops, again.bytes, again.levels) == (flops, nbytes, levels)


def test_an_operation_whose_flops_exceed_1e30_is_refused_at_load():
    big = 2**53
    with pytest.raises(InputError) as caught:
        loads_session(HEAD + f"operations: [{{name: g, kind: gemm, m: {big}, n: {big}, "
                             f"k: {big}}}]\n", "s.yaml")
    assert str(caught.value).startswith("s.yaml:3: operations[0].")
    assert "makes FLOPs 1.46e48, beyond the 1e30 a session can hold" in str(caught.value)


def test_the_editor_checks_refuse_the_same_operation():
    from workbench.io.schema import kind_checks

    big = 2**53
    ((_, problem),) = kind_checks("gemm", {"m": big, "n": big, "k": big})
    assert problem == "makes FLOPs 1.46e48, beyond the 1e30 a session can hold"
    assert kind_checks("gemm", {"m": big, "n": 8192, "k": 8192}) == []


def test_a_chain_of_more_steps_than_a_session_holds_is_refused_saying_where():
    steps = "".join(f"      - {{op: add, inputs: [r{i}]}}\n" for i in range(129))
    text = (f"{HEAD}operations:\n  - name: chain\n    kind: elementwise\n    n: 1024\n"
            f"    steps:\n{steps}")
    with pytest.raises(InputError) as caught:
        loads_session(text, "s.yaml")
    said = str(caught.value)
    assert said.startswith("s.yaml") and "operations[0].steps" in said
    assert "has 129 steps; at most 128" in said and "\n" not in said
    assert len(loads_session(text.replace("      - {op: add, inputs: [r128]}\n", ""))
               .operations[0].operation.params["steps"]) == 128
