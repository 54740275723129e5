"""Derivation terms: texts written on first read behave like texts given up front."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from workbench.model.operations import KINDS, Term, counts_for


def gemm_flops() -> Term:
    return counts_for("gemm", m=8, n=16, k=32, dtype="bf16").flop_terms[0]


def test_texts_name_symbols_and_values():
    t = gemm_flops()
    assert t.formula == "2·batch·M·N·K"
    assert t.substituted == "2·1·8·16·32"
    assert t.value == 2 * 8 * 16 * 32
    a = counts_for("gemm", m=8, n=16, k=32, dtype="bf16", b_dtype="fp8").byte_terms[1]
    assert (a.formula, a.substituted) == ("batch·K·N·1 B [fp8]", "1·32·16·1 B [fp8]")


def test_a_counted_term_equals_one_built_with_its_texts():
    t = gemm_flops()
    given = Term("flop", t.name, "2·batch·M·N·K", "2·1·8·16·32", t.value)
    assert t == given and given == t
    assert hash(t) == hash(given)
    assert t != Term("flop", t.name, "2·batch·M·N·K", "2·1·8·16·33", t.value)
    assert gemm_flops() == gemm_flops()  # neither text read yet
    assert repr(t) == repr(given) == (
        f"Term(kind='flop', name={t.name!r}, formula='2·batch·M·N·K', "
        f"substituted='2·1·8·16·32', value={t.value!r}, tensor='', elements=None, "
        "element_bytes=None, dtype='')")


def test_terms_are_immutable():
    t = gemm_flops()
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.formula = "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.value = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        del t.name


def test_terms_copy_and_pickle():
    t = counts_for("attention", implementation="naive", causal=True).byte_terms[-1]
    for other in (copy.copy(t), copy.deepcopy(t), pickle.loads(pickle.dumps(t))):
        assert other == t
        assert other.formula == t.formula and other.substituted == t.substituted


def test_texts_show_the_values_that_were_counted():
    params = KINDS["gemm"].resolve({"m": 8, "n": 16, "k": 32})
    counts = KINDS["gemm"].count(params)
    params["m"] = 1000  # a later change to the caller's dict does not rewrite the derivation
    assert counts.flop_terms[0].substituted == "2·1·8·16·32"


def test_param_names_are_kept():
    kind = KINDS["gemm"]
    assert kind.param_names is kind.param_names
    assert kind.param_names == tuple(p.name for p in kind.params)
