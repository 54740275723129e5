"""The document's result cache shares the counting of operations with equal parameters
(a model's layers) without letting one operation's name, or a machine's old figures, show
in another's results."""

from __future__ import annotations

from dataclasses import replace

import pytest

from workbench.document import Document, new_operation
from workbench.document.results import ResultCache
from workbench.io.presets import get_preset
from workbench.model.analysis import evaluate_pair


def _fresh(doc, op_id, hw_id):
    entry = doc.operation(op_id)
    return evaluate_pair(entry, doc.machine(hw_id), entry.operation.counts()).result


def test_equal_operations_get_their_own_names_and_follow_edits_and_machines():
    doc = Document()
    hw = doc.add_machine(get_preset("h100-sxm"), "h100-sxm")
    ids = []
    for i in range(3):  # the same GEMM in three layers, elementwise steps beside it
        ids.append(doc.add_operation(new_operation("gemm", f"layer {i} up")))
        ids.append(doc.add_operation(new_operation("elementwise", f"layer {i} act")))
    cache = ResultCache(doc)
    for op_id in ids:
        got = cache.pair(op_id, hw).result
        assert got == _fresh(doc, op_id, hw)
        assert got.operation == doc.operation(op_id).operation.name
    # one layer's GEMM grows: only it moves, the others keep their results
    before = cache.pair(ids[2], hw).result
    doc.set_param(ids[0], "m", 8192)
    assert cache.pair(ids[0], hw).result == _fresh(doc, ids[0], hw)
    assert cache.pair(ids[0], hw).result.flops != before.flops
    assert cache.pair(ids[2], hw).result == before
    # the same value typed as a float counts as the float does (not the int's result)
    doc.set_param(ids[4], "m", 8192.0)
    assert cache.pair(ids[4], hw).result == _fresh(doc, ids[4], hw)
    # a machine edit: every result follows the new peaks
    hardware = doc.machine(hw).hardware
    doc.set_machine(hw, replace(hardware, compute={k: v / 4 for k, v in
                                                   hardware.compute.items()}))
    for op_id in ids:
        assert cache.pair(op_id, hw).result == _fresh(doc, op_id, hw)
    # asked for many operations at once (a model's edit), operations of equal counts share
    # one row: the first one's pairs, whose figures are each operation's own
    other = doc.add_machine(get_preset("rtx-4090"), "rtx-4090")
    rows = cache.shared_rows([doc.operation(i) for i in ids], [hw, other])
    for op_id in ids:
        fresh = [_fresh(doc, op_id, h) for h in (hw, other)]
        renamed = [replace(p.result, operation=f.operation)
                   for p, f in zip(rows[op_id], fresh, strict=True)]
        assert renamed == fresh
        assert [p.hardware.id for p in rows[op_id]] == [hw, other]
    assert rows[ids[1]] is rows[ids[3]] is rows[ids[5]]  # the three equal elementwise steps
    assert rows[ids[1]][0].operation.id == ids[1]
    # layer 0's GEMM (m = 8192) and layer 2's (m = 8192.0) do not share; layer 1's is apart
    assert len({id(rows[i]) for i in ids[0::2]}) == 3
    # pairs asked one by one afterwards carry their own names
    for op_id in ids:
        for h in (hw, other):
            assert cache.pair(op_id, h).result == _fresh(doc, op_id, h)


def test_an_operation_that_cannot_be_counted_has_skipped_pairs_saying_why():
    doc = Document()
    hw = doc.add_machine(get_preset("h100-sxm"), "h100-sxm")
    good = doc.add_operation(new_operation("gemm", "good"))
    bad = doc.add_operation(new_operation("gemm", "bad"))
    doc.set_param(bad, "m", "four")
    cache = ResultCache(doc)
    rows = cache.shared_rows([doc.operation(good), doc.operation(bad)], [hw])
    (skipped,) = rows[bad]
    assert skipped.result is None
    assert skipped.skipped.operation == "bad"
    assert skipped.skipped.reason.startswith("cannot be counted: ")
    assert "four" in skipped.skipped.reason or "m" in skipped.skipped.reason
    assert rows[good][0].result == _fresh(doc, good, hw)
    # asked one by one, the same; the counting error itself is still raised for the
    # derivation, and an unknown operation is a KeyError, not a skipped pair
    assert cache.pair(bad, hw).skipped == skipped.skipped
    with pytest.raises(TypeError):
        cache.counts(bad)
    with pytest.raises(KeyError):
        cache.pair(10**9, hw)
