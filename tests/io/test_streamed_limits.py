"""Limits hold before the parse: a large session with an unknown key, a list past its limit
or nesting too deep is refused as its text streams by, before the YAML node tree (whose size
grows with the document) is built. (How fast: benchmarks/refusals.py.)"""

from __future__ import annotations

import pytest

from workbench.io import yaml_parser
from workbench.io.errors import InputError
from workbench.io.sessions import loads_session

FILLER = "# " + "x" * 1_000_000 + "\n"  # (past SHAPE_CHECK_CHARS: the streamed check runs)


@pytest.fixture
def no_tree(monkeypatch):
    """Building the node tree fails the test: the refusal must come before it."""
    def refuse(_self):
        raise AssertionError("the node tree was built")
    monkeypatch.setattr(yaml_parser._Loader, "get_single_node", refuse)


def _refused(text: str) -> str:
    with pytest.raises(InputError) as caught:
        loads_session((FILLER + text).encode(), "big.yaml")
    return str(caught.value)


def test_an_unknown_key_of_a_long_list_is_refused_before_the_tree(no_tree):
    message = _refused("schema_version: 2\nextra:\n" + "- 1\n" * 200_000)
    assert message.startswith("big.yaml:3: extra: unknown key 'extra'")


def test_100001_operations_are_refused_before_the_tree(no_tree):
    ops = "- {name: g, kind: gemm, m: 1, n: 1, k: 1}\n" * 100_001
    message = _refused("schema_version: 2\noperations:\n" + ops)
    # the header takes lines 1-3; operation 100,001 is on line 3 + 100,001
    assert message == ("big.yaml:100004: operations: has more than 100,000 operations; "
                       "at most 100,000")


def test_a_long_list_in_flow_style_is_refused_by_the_event_pass(no_tree):
    points = ", ".join(["{name: p, time: 1 ms, flops: 1, bytes: 1}"] * 100_001)
    message = _refused(f"schema_version: 2\nmeasurements: [{points}]\n")
    assert "measurements: has more than 100,000 measurements; at most 100,000" in message


def test_an_unknown_key_deep_in_an_operation_is_refused_before_the_tree(no_tree):
    message = _refused("schema_version: 2\noperations:\n- {name: g, kind: gemm, m: 1, n: 1, "
                       "k: 1, sweep: {param: m, valuez: [1, 2]}}\n")
    assert message.startswith("big.yaml:4: operations[0].sweep.valuez: unknown key 'valuez' "
                              "(did you mean 'values'?)")


def test_nesting_too_deep_is_refused_before_the_tree(no_tree):
    message = _refused("schema_version: 2\nnotes: " + "[" * 70 + "]" * 70 + "\n")
    assert "nested more than 64 levels deep" in message


def test_a_large_session_within_its_limits_opens():
    ops = "".join(f"- {{name: g{i}, kind: gemm, m: 1, n: 1, k: 1}}\n" for i in range(3000))
    session = loads_session((FILLER + "schema_version: 2\noperations:\n" + ops).encode(),
                            "big.yaml")
    assert len(session.operations) == 3000
