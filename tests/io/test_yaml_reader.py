"""The session reader gives plain data exactly as ``yaml.safe_load`` does (types included),
with the line of every key and item; its messages and limits are specified in
test_malformed.py and test_file_safety.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io import yaml_parser, yamlio
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
    "a: 1\nb: -2\nc: +3\nd: 0\ne: -0\nj: 1_000\n",
    "a: 1.5\nb: -0.0\nc: .inf\nd: -.Inf\ne: .nan\nf: 1e12\ng: 1.0e+12\nh: 3.35e12\n",
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


def test_what_aliases_add_is_limited_not_what_the_file_holds():
    limit = yaml_parser.MAX_NODES
    with pytest.MonkeyPatch.context() as m:
        m.setattr(yaml_parser, "MAX_NODES", 50)
        # written out, 500 values are read: the file size bounds them
        assert len(read("list: [" + ", ".join(["x"] * 500) + "]\n").data["list"]) == 500
        # an alias of a 50-item list adds the list and its 50 items
        anchored = "a: &x [" + ", ".join(["x"] * 50) + "]\n"
        with pytest.raises(InputError, match=r"aliases .* expand the document by more than 50 "
                                             "values") as caught:
            read(anchored + "b: *x\n")
        assert "alias bomb" not in str(caught.value)
        assert len(read(anchored.replace(", x]", "]") + "b: *x\n").data["b"]) == 49
    assert limit == yaml_parser.MAX_NODES


def test_a_billion_laughs_is_still_refused():
    text = "a: &x [" + ", ".join(["x"] * 3000) + "]\nb: [" + ", ".join(["*x"] * 99) + "]\n"
    with pytest.raises(InputError, match="expand the document by more than 200,000 values"):
        read(text)


@pytest.mark.parametrize("text, shown", [
    ("010", "write 10 or 8"), ("-010", "write -10 or -8"), ("0x10", "write 16"),
    ("0b10", "write 2"), ("1:30", "write 90"), ("1:30.5", "write 90.5"), ("0o17", None)])
def test_integers_in_yaml_1_1_bases_are_refused_with_the_number_they_read_as(text, shown):
    from workbench.io.sessions import loads_session

    with pytest.raises(InputError) as caught:
        loads_session(f"schema_version: 2\noperations:\n- {{kind: gemm, m: {text}, n: 1, "
                      "k: 1}\n", "s.yaml")
    message = str(caught.value)
    assert message.startswith("s.yaml:3: operations[0].m: ")
    assert (shown or "write 15") in message


def test_quoted_and_decimal_forms_of_those_numbers_are_read():
    doc = read("a: '010'\nb: 10\nc: 1_000\nd: '1:30'\n")
    assert doc.data == {"a": "010", "b": 10, "c": 1000, "d": "1:30"}


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


@settings(max_examples=120, deadline=None)
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
