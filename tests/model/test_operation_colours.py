"""Colours belong to operations: kept through reorder, delete, undo, model changes and a save
and reopen; new operations take one not in use; a model's kinds of operation differ."""

from __future__ import annotations

import pytest

from workbench.document import Document
from workbench.document.document import new_operation
from workbench.io.errors import InputError
from workbench.io.model_configs import read_model_config
from workbench.io.sessions import dumps_session, loads_session
from workbench.model.llm.architecture import Setup
from workbench.model.llm.session import ModelEntry
from workbench.model.session import MORE_COLORS, PALETTE, free_color

THREE = """\
schema_version: 2
hardware: [{preset: h100-sxm}]
operations:
  - {name: a, kind: gemm, m: 64, n: 64, k: 64}
  - {name: b, kind: gemm, m: 128, n: 128, k: 128}
  - {name: c, kind: gemm, m: 256, n: 256, k: 256}
"""


def colours(doc: Document) -> dict[str, str]:
    session = doc.session
    return {e.operation.name: session.color_of(e) for e in session.operations}


def kind_colours(doc: Document) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for e in doc.session.operations:
        out.setdefault(e.operation.kind, set()).add(doc.session.color_of(e))
    return out


def test_free_color_takes_the_first_unused_then_the_least_used():
    assert free_color([]) == PALETTE[0]
    assert free_color([PALETTE[0], PALETTE[2]]) == PALETTE[1]
    assert free_color([c.lower() for c in PALETTE[:3]]) == PALETTE[3]  # any case
    # the palette's seven colours taken: the more colours next, black (the first machine's
    # roofs are near-black) only after them
    seven = [c for c in PALETTE if c != "#000000"]
    assert free_color(seven) == MORE_COLORS[0]
    assert free_color([*seven, *MORE_COLORS[:2]]) == MORE_COLORS[2]
    assert free_color([*seven, *MORE_COLORS]) == "#000000"
    # every one taken: the least used
    every = [*PALETTE, *MORE_COLORS]
    assert free_color([*every, *every[:5]]) == every[5]


def test_a_file_without_colours_keeps_the_colours_of_its_places():
    doc = Document(loads_session(THREE))
    assert colours(doc) == {"a": PALETTE[0], "b": PALETTE[1], "c": PALETTE[2]}
    assert "color" not in dumps_session(doc.session)  # written exactly as before


def test_reorder_delete_and_undo_keep_every_colour_and_a_save_keeps_them():
    doc = Document(loads_session(THREE))
    first = colours(doc)
    a, b, _c = (e.id for e in doc.session.operations)
    doc.move_operation(a, 2)
    assert colours(doc) == first
    doc.remove_operations([b])
    assert colours(doc) == {"a": first["a"], "c": first["c"]}
    doc.undo()
    doc.undo()
    assert colours(doc) == first
    doc.redo()  # moved again
    reopened = Document(loads_session(dumps_session(doc.session)))
    assert [e.operation.name for e in reopened.session.operations] == ["b", "c", "a"]
    assert colours(reopened) == first


def test_a_new_operation_takes_a_colour_no_other_has():
    doc = Document(loads_session(THREE))
    b = doc.session.operations[1].id
    doc.remove_operations([b])  # its colour is free again
    new = doc.add_operation(new_operation("gemm"))
    assert doc.session.color_of(doc.operation(new)) == PALETTE[1]
    later = [doc.add_operation(new_operation("norm")) for _ in range(5)]
    shown = [doc.session.color_of(doc.operation(i)) for i in later]
    every = [doc.session.color_of(e) for e in doc.session.operations]
    assert len(set(every)) == len(every) == 8  # every colour once: no black, no repeat
    assert "#000000" not in every
    assert set(shown) == set(PALETTE[3:7]) | {MORE_COLORS[0]}
    # a duplicate is a new operation too
    copy = doc.duplicate_operation(new)
    assert doc.session.color_of(doc.operation(copy)) != PALETTE[1]


def _llama(**setup) -> ModelEntry:
    return ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                      Setup(phase="decode", batch=1, kv_len=4096, **setup))


def test_a_models_kinds_differ_and_keep_their_colours_through_set_up_changes():
    doc = Document(loads_session(THREE))
    ordinary = set(colours(doc).values())
    model_id = doc.add_model(_llama())
    kinds = kind_colours(doc)
    model_kinds = {k: v for k, v in kinds.items() if k != "gemm"}  # (gemm: a, b, c too)
    assert all(len(v) == 1 for v in model_kinds.values())
    model = doc.session.models[0]
    assert len(set(model.colors.values())) == len(model.colors)  # no two kinds share one
    assert not ordinary & set(model.colors.values())  # nor with the other operations
    before = dict(model.colors)
    named = colours(doc)
    doc.set_model(model_id, tp=8)  # a new layout: all-reduces join
    assert "all_reduce" in model.colors
    assert {k: model.colors[k] for k in before} == before
    after = colours(doc)
    assert {n: after[n] for n in named} == named
    assert len(set(model.colors.values())) == len(model.colors)
    doc.set_model(model_id, phase="prefill", batch=4, prompt_len=512)
    assert {n: c for n, c in colours(doc).items() if n in named} == named
    doc.undo()
    doc.undo()
    assert colours(doc) == named
    # a GEMM added now does not take a colour the model uses
    new = doc.add_operation(new_operation("gemm"))
    # (every palette colour is in use: it takes one of the least used)
    assert doc.session.color_of(doc.operation(new)) not in set(model.colors.values())


def test_model_kind_colours_are_saved_and_read_back():
    doc = Document(loads_session(THREE))
    doc.add_model(_llama(tp=2))
    text = dumps_session(doc.session)
    assert "colors:" in text
    again = Document(loads_session(text))
    assert again.session.models[0].colors == doc.session.models[0].colors
    assert colours(again) == colours(doc)


def test_two_models_share_the_colour_of_each_kind():
    doc = Document(loads_session(THREE))
    doc.add_model(_llama())
    doc.add_model(_llama(tp=4))
    first, second = doc.session.models
    assert {k: second.colors[k] for k in first.colors} == first.colors


@pytest.mark.parametrize("colors, problem", [
    ("{gemm: red}", "colour like '#0072B2'"),
    ("{spline: '#000000'}", "unknown operation kind 'spline'"),
    ("[1, 2]", "models[0].colors"),
])
def test_bad_model_colours_are_refused_with_the_place(colors, problem):
    text = f"schema_version: 2\nmodels:\n  - config: Llama-3.1-8B\n    colors: {colors}\n"
    with pytest.raises(InputError) as info:
        loads_session(text, "s.yaml")
    assert problem in str(info.value)


def test_default_colour_after_reopening_gives_a_colour_no_other_has():
    doc = Document(loads_session(THREE.replace("name: c,", "name: c, color: '#123456',")))
    c = doc.session.operations[2].id
    doc.set_operation_field(c, "color", None)  # Operations ▸ Default Colour
    shown = colours(doc)
    assert len(set(shown.values())) == 3 and shown["c"] != "#123456"
    a = doc.session.operations[0].id
    doc.move_operation(a, 2)
    assert colours(doc) == shown


def test_a_models_kinds_differ_when_other_operations_use_the_whole_palette():
    # the first colour once, every other three times
    given = [PALETTE[0], *(c for c in PALETTE[1:] for _ in range(3))]
    ops = "".join(f"  - {{name: op{i}, kind: gemm, m: 64, n: 64, k: 64, color: '{c}'}}\n"
                  for i, c in enumerate(given))
    doc = Document(loads_session(THREE.split("operations:")[0] + "operations:\n" + ops))
    doc.add_model(_llama(tp=8))
    model = doc.session.models[0]
    assert len(model.colors) >= 5
    assert len(set(model.colors.values())) == len(model.colors)
