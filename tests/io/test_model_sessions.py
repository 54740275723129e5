"""Models in session files and as undoable document edits."""

from __future__ import annotations

import pytest

from workbench.document import Document
from workbench.io.errors import InputError
from workbench.io.model_configs import read_model_config
from workbench.io.sessions import dumps_session, load_session, loads_session, save_session
from workbench.model.llm.session import ModelEntry

SESSION = """schema_version: 1
title: two models
hardware:
  - preset: h100-sxm
operations:
  - {name: my gemm, kind: gemm, m: 64, n: 64, k: 64}
models:
  - config: Llama-3.1-8B
    name: 8B decode
    phase: decode
    batch: 4
    kv_len: 4096
    kv_cache: fp8
    view: layers
  - config: Mixtral-8x7B
    phase: prefill
    batch: 1
    prompt_len: 512
    tp: 2
    view: all
"""


def test_models_expand_into_named_operations_and_round_trip(tmp_path):
    session = loads_session(SESSION, "s.yaml")
    assert [m.label for m in session.models] == ["8B decode", "Mixtral-8x7B"]
    names = [e.operation.name for e in session.operations]
    assert names[0] == "my gemm"
    assert "8B decode: QKV projection ×32" in names
    assert "Mixtral-8x7B: L31 experts down" in names
    decode_attn = next(e.operation for e in session.operations
                       if e.operation.name == "8B decode: attention ×32")
    # 32 layers × batch 4 sequences, one query each, against 4096 cached fp8 positions
    assert decode_attn.params["batch"] == 32 * 4 and decode_attn.params["query_len"] == 1
    assert decode_attn.params["kv_len"] == 4096 and decode_attn.params["kv_dtype"] == "fp8"
    path = tmp_path / "s.yaml"
    save_session(session, path)
    text = path.read_text()
    assert "my gemm" in text and "QKV projection" not in text  # expansions are not written
    again = load_session(path)
    assert [e.operation.name for e in again.operations] == names
    assert [e.operation.params for e in again.operations] == \
        [e.operation.params for e in session.operations]
    assert dumps_session(again) == dumps_session(session)


@pytest.mark.parametrize("entry, where, what", [
    ("{config: Llama-3.1-8B, batch: 0}", "models[0].batch", "positive integer"),
    ("{config: Llama-3.1-8B, phase: train}", "models[0].phase", "prefill"),
    ("{config: Llama-3.1-8B, weights: int3}", "models[0].weights", "int4"),
    ("{config: Llama-3.1-8B, view: some}", "models[0].view", "layers"),
    ("{config: Llama-3.1-8B, bacth: 4}", "models[0].bacth", "batch"),
    ("{config: no-such-model}", "models[0].config", "shipped"),
    ("{phase: decode}", "models[0].config", "missing"),
    ("{config: Llama-3.1-8B, memory_utilization: 1.5}", "models[0].memory_utilization",
     "a fraction above 0 and at most 1"),
    ("{config: Llama-3.1-8B, memory_utilization: yes}", "models[0].memory_utilization",
     "a fraction"),
    ("{config: Llama-3.1-8B, imbalance: 0.5}", "models[0].imbalance", "from 1"),
    ("{config: Llama-3.1-8B, acceptance: 1}", "models[0].acceptance", "0.999"),
    ("{config: Llama-3.1-8B, draft_tokens: 99}", "models[0].draft_tokens", "0 to 16"),
    ("{config: Llama-3.1-8B, kv_block: 0}", "models[0].kv_block", "positive integer"),
    ("{config: Llama-3.1-8B, all_reduce: star}", "models[0].all_reduce", "one_shot"),
    # set-ups this model cannot take (32 layers, 32 query heads, no experts)
    ("{config: Llama-3.1-8B, tp: 3}", "models[0].tp", "3 does not divide Llama-3.1-8B's 32 "
                                                      "attention heads"),
    ("{config: Llama-3.1-8B, pp: 64}", "models[0].pp", "64 stages for 32 layers"),
    ("{config: Llama-3.1-8B, ep: 2}", "models[0].ep", "no routed experts"),
])
def test_malformed_model_entries_name_line_and_key(entry, where, what):
    text = f"schema_version: 1\nmodels:\n  - {entry}\n"
    with pytest.raises(InputError) as err:
        loads_session(text, "bad.yaml")
    message = str(err.value)
    assert message.startswith("bad.yaml:3: ") and where in message and what in message
    assert "\n" not in message


def test_config_path_relative_to_the_session(tmp_path):
    from workbench.io.model_configs import shipped_configs

    folder = tmp_path / "models" / "mine"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(shipped_configs()["Qwen3-8B"].read_text())
    path = tmp_path / "s.yaml"
    path.write_text("schema_version: 1\nmodels:\n  - {config: models/mine/config.json}\n")
    session = load_session(path)
    assert session.models[0].arch.kv_heads == 8 and session.models[0].arch.qk_norm


def _doc_with(view="all", name="Llama-3.1-70B"):
    doc = Document()
    changes = []
    doc.subscribe(changes.append)
    model = ModelEntry(name, read_model_config(name), view=view)
    doc.add_model(model)
    return doc, model, changes


def test_editing_batch_moves_every_operation_in_one_change():
    doc, model, changes = _doc_with("all")
    ids = list(model.op_ids)
    before = [e.operation.counts().flops for e in doc.session.operations]
    changes.clear()
    doc.set_model(model.id, batch=16)
    assert [c.what for c in changes] == ["operation", "state"]
    assert set(changes[0].ids) == set(ids) and len(changes[0].ids) == len(ids)
    assert changes[0].fields == ("params",)
    after = [e.operation.counts().flops for e in doc.session.operations]
    gemms = [(b, a) for b, a, e in zip(before, after, doc.session.operations, strict=True)
             if e.operation.kind == "gemm" and "lm_head" not in e.operation.name]
    assert gemms and all(a == pytest.approx(16 * b) for b, a in gemms)
    assert model.op_ids == ids  # the same operations, moved
    doc.undo()
    assert [e.operation.counts().flops for e in doc.session.operations] == before


def test_drag_of_batch_is_one_undo_step_and_view_change_replaces_operations():
    doc, model, _changes = _doc_with("all")
    steps = len(doc._undo)
    for batch in (2, 3, 4, 5):
        doc.set_model(model.id, batch=batch)
    assert len(doc._undo) == steps + 1
    doc.seal()
    every = len(doc.session.operations)
    doc.set_model(model.id, view="layers")
    assert len(doc.session.operations) < every / 10
    doc.undo()
    assert len(doc.session.operations) == every
    assert all(e.operation.params.get("batch", 5) for e in doc.session.operations)
    doc.undo()
    doc.undo()
    assert doc.session.operations == [] and doc.session.models == []
    doc.redo()
    assert len(doc.session.operations) == every and doc.session.models == [model]


def test_remove_model_and_undo():
    doc, model, _ = _doc_with("layers", "DeepSeek-V2-Lite")
    names = [e.operation.name for e in doc.session.operations]
    doc.remove_model(model.id)
    assert doc.session.operations == [] and doc.session.models == []
    doc.undo()
    assert [e.operation.name for e in doc.session.operations] == names


def test_undo_of_tensor_parallelism_gives_back_the_all_reduces_colour():
    """Tensor parallelism adds a kind of operation, the all-reduce, and the model gives it a
    colour; undone, the model's colours were left with it: the file then saved held a
    colour for operations that no longer exist. Undo puts the session back as it was, byte
    for byte; redo brings the same colour back."""
    doc = Document()
    doc.replace_session(loads_session(SESSION))
    before = dumps_session(doc.session)
    model = doc.session.models[0]
    assert "all_reduce" not in model.colors
    doc.set_model(model.id, tp=2)
    colour = model.colors.get("all_reduce")
    assert colour is not None
    assert any(e.operation.kind == "all_reduce" and e.color == colour
               for e in doc.session.operations)
    doc.undo()
    assert dumps_session(doc.session) == before
    doc.redo()
    assert doc.session.models[0].colors["all_reduce"] == colour
    assert any(e.operation.kind == "all_reduce" and e.color == colour
               for e in doc.session.operations)


def test_invalid_edit_is_refused_and_nothing_changes():
    doc, model, _ = _doc_with("layers", "Qwen3-8B")
    before = [dict(e.operation.params) for e in doc.session.operations]
    with pytest.raises(ValueError):
        doc.set_model(model.id, batch=0)
    assert [e.operation.params for e in doc.session.operations] == before


def test_a_model_edit_after_one_of_its_operations_was_deleted_expands_afresh():
    doc, model, _ = _doc_with("layers", "Llama-3.1-8B")
    doc.remove_operations([model.op_ids[0], model.op_ids[3]])
    doc.set_model(model.id, batch=2)
    assert len(model.op_ids) == len(doc.session.operations) == 14
    assert all(e.id in model.op_ids for e in doc.session.operations)
