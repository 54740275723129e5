"""Undo and redo give every state back: a rename made its measured points follow it by
changing them in place, so an earlier step of the history that kept them (an added
machine, a deletion) put back points already renamed; and a model added, undone and redone
made its operations anew, so a later step that deleted one of them failed on redo (the
entry it named was no longer in the session). Random walks of edits found both: undone to
the start and redone again, a measured point named an operation that no longer had that
name, and the redo stopped with an error."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.document import Document
from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.io.sessions import dumps_session, loads_session
from workbench.model.llm.architecture import Setup
from workbench.model.llm.session import ModelEntry

SESSION = """schema_version: 2
title: references through the history
hardware:
  - preset: h100-sxm
  - preset: h200
operations:
  - {name: a, kind: gemm, m: 64, n: 64, k: 64}
  - {name: b, kind: gemm, m: 128, n: 64, k: 64}
  - {name: c, kind: gemm, m: 256, n: 64, k: 64}
measurements:
  - {name: a on h100, operation: a, hardware: h100-sxm, time: 10 us}
  - {name: b on h200, operation: b, hardware: h200, time: 12 us}
comparisons:
  - {first: a, second: b}
"""

#: an edit: ("rename", operation, new name), ("machine", preset) added, ("unmachine",
#: machine) removed, ("remove", operation), ("duplicate", operation), ("model",) added,
#: ("batch", value) of the first model, ("unmodel",) the first removed, ("undo",)
EDITS = st.one_of(
    st.tuples(st.just("model")),
    st.tuples(st.just("batch"), st.sampled_from([2, 16])),
    st.tuples(st.just("unmodel")),
    st.tuples(st.just("rename"), st.integers(0, 5), st.sampled_from(["x", "y", "a", "b"])),
    st.tuples(st.just("machine"), st.sampled_from(["h100-sxm", "mi300x"])),
    st.tuples(st.just("unmachine"), st.integers(0, 3)),
    st.tuples(st.just("remove"), st.integers(0, 5)),
    st.tuples(st.just("duplicate"), st.integers(0, 5)),
    st.tuples(st.just("undo")),
)


def _apply(doc: Document, edit: tuple) -> None:
    ops, machines = doc.session.operations, doc.session.hardware
    if edit[0] == "rename" and ops:
        entry = ops[edit[1] % len(ops)]
        if doc.operation_name_problem(entry.id, edit[2]) is None:
            doc.set_operation_field(entry.id, "name", edit[2])
    elif edit[0] == "machine":
        doc.add_machine(get_preset(edit[1]), preset=edit[1])
    elif edit[0] == "unmachine" and len(machines) > 1:
        doc.remove_machine(machines[edit[1] % len(machines)].id)
    elif edit[0] == "remove" and len(ops) > 1:
        doc.remove_operations([ops[edit[1] % len(ops)].id])
    elif edit[0] == "duplicate" and ops:
        doc.duplicate_operation(ops[edit[1] % len(ops)].id)
    elif edit[0] == "model" and len(doc.session.models) < 2:
        doc.add_model(ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                                 Setup("decode", 1, 512, 512), view="layers"))
    elif edit[0] == "batch" and doc.session.models:
        doc.set_model(doc.session.models[0].id, batch=edit[1])
    elif edit[0] == "unmodel" and doc.session.models:
        doc.remove_model(doc.session.models[0].id)
    elif edit[0] == "undo" and doc.can_undo():
        doc.undo()
    doc.seal()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(edits=st.lists(EDITS, min_size=1, max_size=12))
def test_undo_to_the_start_and_redo_again_give_each_state_back(edits):
    doc = Document()
    doc.replace_session(loads_session(SESSION))
    start = dumps_session(doc.session)
    for edit in edits:
        _apply(doc, edit)
    end = dumps_session(doc.session)
    steps = 0
    while doc.can_undo():
        doc.undo()
        steps += 1
    assert dumps_session(doc.session) == start, edits
    for _ in range(steps):
        doc.redo()
    assert dumps_session(doc.session) == end, edits
