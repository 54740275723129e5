"""Whatever the user does through the document's edits, the session saves and reopens equal.

Measured points and compared pairs name their operation and machine; the edits that could
leave a name pointing at nothing, or at two entries, are refused in place (a rename to a
name in use) or carry the references along (a rename, a second machine of a preset, a
deletion). The property test drives random sequences of edits, undo and redo; each step's
session is written and read back.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.document.document import Document, NameInUse, new_operation
from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.io.sessions import dumps_session, loads_session
from workbench.model.llm.session import ModelEntry
from workbench.model.measured import Measurement
from workbench.model.session import Comparison
from workbench.model.sweeps import Sweep

NAMES = ("x", "y", "GEMM")  # operations' (few, so that renames meet names in use)
MACHINE_NAMES = ("NVIDIA H100 SXM5 80GB", "h100-sxm", "NVIDIA A100 SXM4 80GB")
KINDS = ("gemm", "elementwise")
PRESETS = ("h100-sxm", "a100-80gb")
ARCH = read_model_config("Qwen3-8B")


def _apply(doc: Document, action: str, a: int, b: int) -> None:
    ops, machines = doc.session.operations, doc.session.hardware
    op = ops[a % len(ops)] if ops else None
    hw = machines[a % len(machines)] if machines else None
    if action == "add_op":
        doc.add_operation(new_operation(KINDS[b % len(KINDS)], NAMES[a % len(NAMES)]))
    elif action == "rename_op" and op is not None:
        with contextlib.suppress(NameInUse):  # (refused in place, the document unchanged)
            doc.set_operation_field(op.id, "name", NAMES[b % len(NAMES)])
    elif action == "duplicate_op" and op is not None:
        doc.duplicate_operation(op.id)
    elif action == "delete_op" and op is not None:
        doc.remove_operations([op.id])
    elif action == "sweep" and op is not None and op.operation.kind == "gemm":
        doc.set_sweep(op.id, Sweep("m", [1, 2, 4 + b % 5]))
    elif action == "add_machine":
        preset = PRESETS[b % len(PRESETS)]
        doc.add_machine(get_preset(preset), preset=preset)
    elif action == "rename_machine" and hw is not None:
        with contextlib.suppress(NameInUse):
            doc.set_machine(hw.id, hw.hardware.copy(name=MACHINE_NAMES[b % 3]), "Edit name")
    elif action == "delete_machine" and hw is not None:
        doc.remove_machine(hw.id)
    elif action == "measure" and op is not None:
        machine = machines[b % len(machines)] if machines else None
        m = Measurement(name="measured", operation=op.operation.name,
                        hardware=doc.session.machine_ref(machine) if machine else None,
                        time_s=1e-3)
        doc.set_measurements([*doc.session.measurements, m], "Add measurement")
    elif action == "compare" and len(ops) > 1:
        other = ops[b % len(ops)]
        if other.id != op.id:
            pair = Comparison(op.operation.name, other.operation.name)
            doc.set_comparisons([*doc.session.comparisons, pair], "Compare")
    elif action == "add_model" and len(doc.session.models) < 2:
        doc.add_model(ModelEntry("Qwen3-8B", ARCH, view="layers", name=NAMES[b % len(NAMES)]))
    elif action == "rename_model" and doc.session.models:
        model = doc.session.models[a % len(doc.session.models)]
        with contextlib.suppress(NameInUse):
            doc.set_model(model.id, name=NAMES[b % len(NAMES)])
    elif action == "delete_model" and doc.session.models:
        doc.remove_model(doc.session.models[a % len(doc.session.models)].id)
    elif action == "undo":
        doc.undo()
    elif action == "redo":
        doc.redo()
    doc.seal()


ACTIONS = ("add_op", "rename_op", "duplicate_op", "delete_op", "sweep", "add_machine",
           "rename_machine", "delete_machine", "measure", "compare", "add_model",
           "rename_model", "delete_model", "undo", "redo")
EDITS = st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, 2), st.integers(0, 2)),
                 max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS)
def test_any_edits_save_and_reopen_equal(edits):
    doc = Document()
    for step in edits:
        _apply(doc, *step)
        text = dumps_session(doc.session)
        assert dumps_session(loads_session(text, "edited.yaml")) == text, step


def test_undoing_a_model_edit_puts_back_the_operations_it_had():
    """One of a model's operations deleted on its own, then the model renamed (its
    operations made anew), then both undone: the undone rename gives back the very
    operations the model had, so that the undone deletion puts its operation back among
    them, not beside a new copy (saved as an operation of its own with the model's tensor
    names, "table rows", which the file cannot hold)."""
    doc = Document()
    model_id = doc.add_model(ModelEntry("Qwen3-8B", ARCH, view="layers", name="x"))
    doc.seal()
    start = [(e.id, e.operation.name) for e in doc.session.operations]
    doc.remove_operations([start[0][0]])
    doc.seal()
    doc.set_model(model_id, name="y")
    doc.seal()
    renamed = [(e.id, e.operation.name) for e in doc.session.operations]
    doc.undo()
    assert [(e.id, e.operation.name) for e in doc.session.operations] == start[1:]
    doc.undo()
    assert [(e.id, e.operation.name) for e in doc.session.operations] == start
    text = dumps_session(doc.session)
    assert dumps_session(loads_session(text, "edited.yaml")) == text
    assert "table rows" not in text
    doc.redo()
    doc.redo()
    assert [(e.id, e.operation.name) for e in doc.session.operations] == renamed


def _two_operations_one_measured() -> tuple[Document, int, int]:
    doc = Document()
    x = doc.add_operation(new_operation("gemm", "x"))
    y = doc.add_operation(new_operation("gemm", "y"))
    doc.set_measurements([Measurement(name="run", operation="x", time_s=1e-3)])
    return doc, x, y


def test_renaming_an_operation_to_a_name_in_use_is_refused_with_the_reason():
    doc, _x, y = _two_operations_one_measured()
    with pytest.raises(NameInUse, match="another operation is named 'x'"):
        doc.set_operation_field(y, "name", "x")
    assert [e.operation.name for e in doc.session.operations] == ["x", "y"]
    assert loads_session(dumps_session(doc.session)).measurements[0].operation == "x"


def test_a_compared_pair_survives_the_refused_rename():
    doc, _x, y = _two_operations_one_measured()
    doc.set_comparisons([Comparison("x", "y")])
    with pytest.raises(NameInUse):
        doc.set_operation_field(y, "name", "x")
    reopened = loads_session(dumps_session(doc.session))
    assert (reopened.comparisons[0].first, reopened.comparisons[0].second) == ("x", "y")


def test_a_machine_renamed_to_a_measured_machines_name_is_refused():
    doc = Document()
    doc.add_operation(new_operation("gemm", "x"))
    first = doc.add_machine(get_preset("h100-sxm"), preset="h100-sxm")
    second = doc.add_machine(get_preset("a100-80gb"), preset="a100-80gb")
    name = doc.machine(first).hardware.name
    doc.set_measurements([Measurement(name="run", operation="x", hardware=name, time_s=1e-3)])
    with pytest.raises(NameInUse, match=f"another machine is named {name!r}"):
        doc.set_machine(second, doc.machine(second).hardware.copy(name=name))
    assert loads_session(dumps_session(doc.session)).measurements[0].hardware == name


def test_a_measured_machine_renamed_takes_its_points_along():
    doc = Document()
    doc.add_operation(new_operation("gemm", "x"))
    hw = doc.add_machine(get_preset("a100-80gb"))
    old = doc.machine(hw).hardware.name
    doc.set_measurements([Measurement(name="run", operation="x", hardware=old, time_s=1e-3)])
    doc.set_machine(hw, doc.machine(hw).hardware.copy(name="Lab A100"))
    assert doc.session.measurements[0].hardware == "Lab A100"
    doc.undo()
    assert doc.session.measurements[0].hardware == old
    assert loads_session(dumps_session(doc.session)).measurements[0].hardware == old


def test_a_second_machine_of_a_preset_keeps_the_first_ones_points():
    doc = Document()
    doc.add_operation(new_operation("gemm", "x"))
    first = doc.add_machine(get_preset("h100-sxm"), preset="h100-sxm")
    doc.set_measurements([Measurement(name="run", operation="x", hardware="h100-sxm",
                                      time_s=1e-3)])
    second = doc.add_machine(get_preset("h100-sxm"), preset="h100-sxm")
    names = [doc.machine(first).hardware.name, doc.machine(second).hardware.name]
    assert names[0] != names[1]
    assert doc.session.measurements[0].hardware == names[0]
    reopened = loads_session(dumps_session(doc.session))
    assert [e.hardware.name for e in reopened.machines_matching(
        reopened.measurements[0].hardware)] == [names[0]]


def test_one_machine_object_added_twice_makes_two_machines():
    """A caller that adds the same Hardware twice (a script keeping one preset) gets two
    machines: the second's number is its own, not written into the first through the shared
    object (both were then named "… 2" and the first one's measured point named a machine
    the saved session no longer had)."""
    doc = Document()
    doc.add_operation(new_operation("gemm", "x"))
    h100 = get_preset("h100-sxm")
    first = doc.add_machine(h100, preset="h100-sxm")
    doc.set_measurements([Measurement(name="run", operation="x", hardware="h100-sxm",
                                      time_s=1e-3)])
    second = doc.add_machine(h100, preset="h100-sxm")
    a, b = doc.machine(first).hardware, doc.machine(second).hardware
    assert a is not b and a.name == "NVIDIA H100 SXM5 80GB" != b.name
    assert doc.session.measurements[0].hardware == a.name
    reopened = loads_session(dumps_session(doc.session))
    assert [e.hardware.name for e in reopened.machines_matching(
        reopened.measurements[0].hardware)] == [a.name]


def test_a_models_operation_is_renamed_through_its_model_only():
    doc = Document()
    model = doc.add_model(ModelEntry("Qwen3-8B", ARCH, view="layers", name="q"))
    first = doc.session.operations[0]
    with pytest.raises(NameInUse, match="named by the model; rename the model"):
        doc.set_operation_field(first.id, "name", "mine")
    doc.set_measurements([Measurement(name="run", operation=first.operation.name,
                                      time_s=1e-3)])
    doc.set_model(model, name="renamed")
    assert doc.session.measurements[0].operation == doc.operation(first.id).operation.name
    assert doc.session.measurements[0].operation.startswith("renamed: ")
    text = dumps_session(doc.session)
    assert dumps_session(loads_session(text)) == text


def test_a_second_model_of_one_name_gets_a_number_and_a_copy_of_its_operation_opens():
    doc = Document()
    doc.add_model(ModelEntry("Qwen3-8B", ARCH, name="q"))
    doc.add_model(ModelEntry("Qwen3-8B", ARCH, name="q"))
    assert [m.label for m in doc.session.models] == ["q", "q 2"]
    names = [e.operation.name for e in doc.session.operations]
    assert len(names) == len(set(names))
    rope = next(e for e in doc.session.operations if e.operation.name.endswith("RoPE ×36"))
    copy = doc.operation(doc.duplicate_operation(rope.id)).operation
    assert copy.params["input"] == "q_k"  # (the model's "q, k", as a file holds it)
    text = dumps_session(doc.session)
    assert dumps_session(loads_session(text)) == text
