"""The session reader gives plain data exactly as ``yaml.safe_load`` does (types included),
with the line of every key and item; its messages and limits are specified in
test_malformed.py and test_file_safety.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io import yamlio
from workbench.io.errors import InputError
from workbench.io.sessions import dumps_session
from workbench.model.operations import Operation
from workbench.model.session import OperationEntry, Session

REPO = Path(__file__).resolve().parents[2]
FILES = sorted((REPO / "workbench" / "examples").glob("*.yaml")) + sorted(
    (REPO / "hardware_presets").glob("*.yaml")) + sorted((REPO / "tests" / "fixtures").glob("*.yaml"))


def typed(value):
    """``value`` with the type of every part spelled out (1 ≠ 1.0 ≠ True; nan equals nan)."""
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    return (type(value).__name__, repr(value))


def read(text):
    return yamlio.parse_yaml(text, "f.yaml")


def session_text(n: int) -> str:
    session = Session(title="plain")
    for i in range(n):
        session.operations.append(OperationEntry(Operation(
            "attention" if i % 2 else "gemm",
            {"m": 1 + i, "dtype": "bf16"} if i % 2 == 0 else {"heads": 32, "causal": True},
            f"op {i}")))
    return dumps_session(session)


PLAIN = [
    "a: 1\nb: -2\nc: +3\nd: 0\ne: -0\nf: 00\ng: 017\nh: 0x1F\ni: 0b101\nj: 1_000\nk: 190:20:30\n",
    "a: 1.5\nb: -0.0\nc: .inf\nd: -.Inf\ne: .nan\nf: 1e12\ng: 1.0e+12\nh: 3.35e12\ni: 1:30.5\n",
    "a: yes\nb: No\nc: on\nd: OFF\ne: true\nf: FALSE\ng: y\nh: n\ni: ~\nj: null\nk:\nl: ''\n",
    "1: a\n01: b\n0x1: c\ntrue: d\n~: e\n1.5: f\n",
    "a: |\n  block\n  text\nb: >\n  folded\n  text\nc: 'it''s'\nd: \"\\u00e9\\t\"\n",
    "[a, [b, [c, {d: e}]], {}, []]\n",
    "- 1\n- - 2\n  - {x: [3, {y: z}]}\n",
    "just text\n",
    "42\n",
    "'quoted'\n",
    "%YAML 1.1\n---\na: 1\n...\n",
    "\ufeffa: 1\n",
    "a: 1  # comment\n# another\nb:\n  - x\n  -\n  - 'y'\n",
    "a: " + "1" * 400 + "\n",
    "a: " + "[" * 64 + "]" * 64 + "\n",
]


@pytest.mark.parametrize("text", PLAIN + [p.read_text(encoding="utf-8") for p in FILES]
                         + [session_text(40)])
def test_documents_read_as_safe_load_reads_them(text):
    assert typed(read(text).data) == typed(yaml.safe_load(text.removeprefix("\ufeff")))


def test_anchors_and_aliases_within_the_limit_are_read():
    text = "a: &x {m: 1}\nb: *x\nc: !!str 5\n"
    assert read(text).data == {"a": {"m": 1}, "b": {"m": 1}, "c": "5"}


def test_too_many_values_are_refused():
    limit = yamlio.MAX_NODES
    with pytest.MonkeyPatch.context() as m:
        m.setattr(yamlio, "MAX_NODES", 50)
        text = "list: [" + ", ".join(["x"] * 49) + "]\n"  # the mapping, the list and 49 items
        with pytest.raises(InputError, match="more than 50 values"):
            read(text)
        assert len(read("list: [" + ", ".join(["x"] * 48) + "]\n").data["list"]) == 48
    assert limit == yamlio.MAX_NODES


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["1e12", "yes", "No", "~", "null", "0x1F", "017", "1_000", "1:30", ".inf",
                     "-.NaN", "3.35 TB/s", "bf16", "+12", "-0", "2024-01-01", "=", "<<", "*a",
                     "&a", "!x", "a: b", "- x", "#c", "", " ", "'", '"']),
)
keys = st.one_of(st.text(max_size=8), st.integers(), st.sampled_from(["1e3", "yes", "~", "0"]))
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(keys, inner, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(data=documents, flow=st.sampled_from([None, True, False]))
def test_generated_documents_read_as_safe_load_reads_them(data, flow):
    try:
        text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True)
    except yaml.YAMLError:
        return
    assert typed(read(text).data) == typed(yaml.safe_load(text))


@pytest.mark.parametrize("text", ["'0': a\n0: b\n", "'1.5': a\n1.5: b\n",
                                  "'yes': a\nyes: b\n", "'~': a\n~: b\n"])
def test_a_quoted_key_and_a_number_of_the_same_text_are_two_keys(text):
    """As YAML reads them (found by the property test below: '0' and 0 were refused as one
    key given twice)."""
    assert typed(read(text).data) == typed(yaml.safe_load(text))
    assert len(read(text).data) == 2


def test_every_key_and_item_has_its_line():
    text = "schema_version: 1\noperations:\n  - kind: gemm\n    m: 0\n"
    doc = read(text)
    assert doc.line(("operations", 0, "m")) == 4
    assert doc.line(("operations", 0, "n")) == 3  # not there: its nearest ancestor's
    assert doc.lines == {(): 1, ("schema_version",): 1, ("operations",): 2,
                         ("operations", 0): 3, ("operations", 0, "kind"): 3,
                         ("operations", 0, "m"): 4}



def test_a_limit_is_reported_before_a_value_that_cannot_be_read():
    deep = "[" * 70 + "]" * 70
    with pytest.raises(InputError, match="nested more than 64 levels") as caught:
        read(f"a: !!bool maybe\nb: {deep}\n")
    assert caught.value.line == 2
    with pytest.raises(InputError, match="'maybe' is not a valid !!bool value") as caught:
        read("a: 1\nb: !!bool maybe\n")
    assert caught.value.line == 2
