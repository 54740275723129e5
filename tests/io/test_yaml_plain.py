"""The one-pass reader of plain-data YAML gives exactly what the full reader gives: the same
data (types included), the same lines; and it leaves every other document to the full reader,
whose messages and limits are the spec (test_malformed.py, test_file_safety.py)."""

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


def outcome(text):
    try:
        doc = yamlio.parse_yaml(text, "f.yaml")
    except InputError as exc:
        return ("error", str(exc), exc.line, exc.path)
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        return ("exception", type(exc).__name__, str(exc))
    return ("data", typed(doc.data), sorted(doc.lines.items(), key=repr))


def full_outcome(text, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(yamlio, "_read_plain", lambda text: None)
        return outcome(text)


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
NOT_PLAIN = [
    "",
    "# only a comment\n",
    "a: &x {m: 1}\nb: *x\n",
    "a: &x 1\n",
    "a: !!str 5\n",
    "a: !foo bar\n",
    "a: ! x\n",
    "a: !!python/object:os.system {}\n",
    "a: 2024-01-01\n",
    "a: !!binary aGk=\n",
    "a: =\n",
    "=: 1\n",
    "<<: {a: 1}\n",
    "'<<': 1\n",
    "a: 1\na: 2\n",
    "a: 1\n'a': 2\n",
    "? [1]\n: x\n",
    "? {a: 1}\n: x\n",
    "--- 1\n--- 2\n",
    "a: " + "1" * 401 + "\n",
    "a: " + "[" * 65 + "]" * 65 + "\n",
    "a: b: c\n",
    "a: 1\n\tb: 2\n",
    "a: [1, 2\n",
    "a: !!int abc\n",
    "a: !!bool maybe\n",
    "a: !!timestamp nope\n",
]


@pytest.mark.parametrize("text", PLAIN + [p.read_text(encoding="utf-8") for p in FILES]
                         + [session_text(40)])
def test_plain_documents_are_read_in_one_pass_exactly_as_in_full(text, monkeypatch):
    assert yamlio._read_plain(text.removeprefix("\ufeff")) is not None
    assert outcome(text) == full_outcome(text, monkeypatch)


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_other_documents_go_to_the_full_reader(text, monkeypatch):
    assert yamlio._read_plain(text) is None
    assert outcome(text) == full_outcome(text, monkeypatch)


def test_too_many_values_go_to_the_full_reader(monkeypatch):
    monkeypatch.setattr(yamlio, "MAX_NODES", 50)
    text = "list: [" + ", ".join(["x"] * 49) + "]\n"  # the mapping, the list and 49 items
    assert yamlio._read_plain(text) is None
    with pytest.raises(InputError, match="more than 50 values"):
        yamlio.parse_yaml(text)
    assert yamlio._read_plain("list: [" + ", ".join(["x"] * 48) + "]\n") is not None


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
def test_generated_documents_read_the_same_both_ways(data, flow):
    try:
        text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True)
    except yaml.YAMLError:
        return
    with pytest.MonkeyPatch.context() as m:
        fast = outcome(text)
        m.setattr(yamlio, "_read_plain", lambda text: None)
        full = outcome(text)
    assert fast == full


def test_lines_of_a_plain_document_are_found_when_asked_for():
    text = "schema_version: 1\noperations:\n  - kind: gemm\n    m: 0\n"
    doc = yamlio.parse_yaml(text, "s.yaml")
    assert doc._unread == text  # not read for lines yet
    assert doc.line(("operations", 0, "m")) == 4
    assert doc._unread is None
    assert doc.lines == {(): 1, ("schema_version",): 1, ("operations",): 2,
                         ("operations", 0): 3, ("operations", 0, "kind"): 3,
                         ("operations", 0, "m"): 4}
    doc = yamlio.parse_yaml(text, "s.yaml")
    doc.lines = {(): 7}  # given lines replace the ones still to be found
    assert doc.line(("operations", 0)) == 7
    assert doc == yamlio.YamlDocument(doc.data, "s.yaml", {(): 7})
