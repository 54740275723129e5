"""Undoable edits of whole models (:class:`~workbench.model.llm.session.ModelEntry`).

A model's operations are ordinary operations of the session. Editing the model (batch,
lengths, dtypes, tensor-parallel degree, view) re-expands it: when the layout stays the same
(the same operations, other numbers) every operation's parameters change in place and one
``operation`` change names them all (field ``params``; no field when the model's name or
visibility changed, which restyles its points); otherwise its operations are replaced
(``operations``). Views that show models find the model from those operation ids
(:meth:`Session.model_of`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from workbench.document.changes import Change, Command, What
from workbench.document.names import NameInUse, unique_name
from workbench.model.limits import Totals, model_bytes, model_problem
from workbench.model.llm.session import ModelEntry, expand_in, operation_count, refresh_params
from workbench.model.session import Session

__all__ = ["add_model", "set_model", "remove_model", "model_by_id", "ModelTooLarge",
           "model_room_problem"]


class Document(Protocol):
    """What these edits need of the document (:class:`workbench.document.Document`, which
    calls them): its session, its undo stack and where an operation stands. Named here, so
    that this module does not depend back on the document that depends on it."""

    session: Session

    def edit(self, text: str, put: Callable[[Any], Change], new: Any, old: Any,
             merge_key: object = None) -> None: ...

    def push(self, command: Command) -> None: ...

    def operation_index(self, op_id: int) -> int: ...

    def keeping_references(self, command: Command) -> Command: ...

    def growth_problem(self, grows: Totals) -> str | None: ...

#: Set-up changes that keep a model's operations (its layout): no need to count them again.
_SAME_LAYOUT = frozenset({"batch", "prompt_len", "kv_len", "output_len", "name", "visible",
                          "imbalance", "memory_utilization", "kv_block", "prefill_chunk",
                          "all_reduce", "draft_tokens", "acceptance"})


class ModelTooLarge(ValueError):
    """A model would take the session past :data:`~workbench.model.limits.MAX_OPERATIONS`,
    or its file past what a session file holds (the session could not be saved, or not
    opened again)."""


def model_room_problem(doc: Document, model: ModelEntry, replacing: ModelEntry | None = None,
                       count: bool = True) -> str | None:
    """Why ``model`` cannot join the session (in place of ``replacing``, a model of it), with
    the message the session reader gives, or ``None``. ``count``: count its operations
    (an edit that keeps them need not)."""
    if count:
        others = len(doc.session.operations) - (len(replacing.op_ids) if replacing else 0)
        problem = model_problem(operation_count(model), others)
        if problem:
            return f"{model.label} {problem}"
    problem = doc.growth_problem(Totals(bytes=model_bytes(model) - (
        model_bytes(replacing) if replacing is not None else 0),
        models=int(replacing is None)))
    return f"{model.label}: {problem}" if problem else None


def model_by_id(doc: Document, model_id: int) -> ModelEntry:
    for model in doc.session.models:
        if model.id == model_id:
            return model
    raise KeyError(model_id)


def add_model(doc: Document, model: ModelEntry) -> int:
    """Add ``model`` and its operations (:class:`ModelTooLarge` if they would be too many)."""
    labels = {m.label for m in doc.session.models}
    name = model.name
    if model.label in labels:  # its operations are named after it: "Qwen3-8B 2: attention"
        model.name = unique_name(model.label, labels, "model")
    problem = model_room_problem(doc, model)
    if problem:
        model.name = name
        raise ModelTooLarge(problem)

    # its operations are made once: a redo puts back the very entries (and ids, roles and
    # colours) the later steps of the history name
    made: list[tuple[list, list[int], list[int], dict[str, str]]] = []

    def do() -> Change:
        doc.session.models.append(model)
        if not made:
            entries = expand_in(doc.session, model)
            made.append((entries, list(model.op_ids), list(model.roles), dict(model.colors)))
        else:
            entries, ids, roles, colors = made[0]
            model.op_ids, model.roles, model.colors = list(ids), list(roles), dict(colors)
        doc.session.operations.extend(entries)
        return Change(What.OPERATIONS, tuple(model.op_ids))

    def undo() -> Change:
        doc.session.models.remove(model)
        gone = set(model.op_ids)
        doc.session.operations[:] = [e for e in doc.session.operations if e.id not in gone]
        return Change(What.OPERATIONS, tuple(gone))

    doc.push(Command(f"Add {model.label}", do, undo, grows=Totals(
        operations=operation_count(model), bytes=model_bytes(model), models=1)))
    return model.id


def remove_model(doc: Document, model_id: int) -> None:

    model = model_by_id(doc, model_id)
    index = doc.session.models.index(model)
    ids = set(model.op_ids)
    positions = [(i, e) for i, e in enumerate(doc.session.operations) if e.id in ids]

    def do() -> Change:
        doc.session.models.remove(model)
        doc.session.operations[:] = [e for e in doc.session.operations if e.id not in ids]
        return Change(What.OPERATIONS, tuple(ids))

    def undo() -> Change:
        doc.session.models.insert(index, model)
        for i, entry in positions:
            doc.session.operations.insert(i, entry)
        return Change(What.OPERATIONS, tuple(ids))

    doc.push(doc.keeping_references(Command(f"Delete {model.label}", do, undo)))


def set_model(doc: Document, model_id: int, text: str = "", **changes: Any) -> None:
    """Change a model's set-up fields (``batch=8``), ``view``, ``name``, ``visible`` or its
    ``config`` and ``arch`` together. Consecutive edits of the same fields merge into one
    undo step until the document is sealed (a spin-box drag is one step)."""

    model = model_by_id(doc, model_id)
    old = model.copy()
    new = model.copy(**changes)
    if (old.setup, old.view, old.name, old.visible, old.config) == (
            new.setup, new.view, new.name, new.visible, new.config) and old.arch == new.arch:
        return
    if new.label != old.label and any(m.label == new.label for m in doc.session.models
                                      if m.id != model_id):
        raise NameInUse(f"another model is named {new.label!r}; a model's operations are "
                        "named after it, so each name is used once")
    new.setup.check()
    if (new.setup.tp, new.setup.ep, new.setup.pp) != (1, 1, 1):
        from workbench.model.llm.architecture import layer_steps

        # (an expert split of a dense model, too many stages, heads that tp does not divide)
        layer_steps(new.arch, new.setup)
    # (its operations may change in number: counted anew when next needed)
    layout = bool(set(changes) - _SAME_LAYOUT)
    problem = model_room_problem(doc, new, replacing=model, count=layout)
    if problem:
        raise ModelTooLarge(problem)

    # the session's operations and the model's ids, roles and colours before and after the
    # edit: undo and redo put back the very entries they had (an edit that makes the model's
    # operations anew gives them new ids, and later steps of the history name theirs; a kind
    # it adds, an all-reduce under tensor parallelism, takes a colour the undo gives back)
    kept: dict[str, tuple[list, list[int], list[int], dict[str, str]]] = {}

    def put(state: ModelEntry, side: str) -> Change:
        target = model_by_id(doc, model_id)
        snapshot = kept.get(side)
        if snapshot is None:  # (the edit done first)
            kept["old"] = _snapshot(doc, target)
            change = _apply(doc, target, state)
            kept["new"] = _snapshot(doc, target)
            return change
        ops = doc.session.operations
        moved = [e.id for e in ops] != [e.id for e in snapshot[0]]
        ids = list(target.op_ids)
        ops[:] = snapshot[0]
        target.op_ids, target.roles = list(snapshot[1]), list(snapshot[2])
        target.colors = dict(snapshot[3])
        change = _apply(doc, target, state, anew=False)
        return (Change(What.OPERATIONS, tuple(dict.fromkeys(ids + target.op_ids))) if moved
                else change)

    what = text or ", ".join(sorted(changes))
    command = Command(f"Set {what} of {model.label}", lambda: put(new, "new"),
                      lambda: put(old, "old"),
                      merge_key=("model", model_id, tuple(sorted(changes))),
                      grows=None if layout else Totals(bytes=model_bytes(new) - model_bytes(old)))
    # (its operations' names and number may change: measured points stay on theirs)
    doc.push(doc.keeping_references(command) if layout or "name" in changes else command)


def _snapshot(doc: Document, model: ModelEntry
              ) -> tuple[list, list[int], list[int], dict[str, str]]:
    return (list(doc.session.operations), list(model.op_ids), list(model.roles),
            dict(model.colors))


def _apply(doc: Document, target: ModelEntry, state: ModelEntry, anew: bool = True):
    """Give the model ``target`` the set-up of ``state``: its operations' parameters changed
    in place where their layout stays, else (``anew``) its operations made anew. Without
    ``anew`` (the session's operations put back as they were in that set-up) operations
    that no longer match the layout are left as they are."""

    restyle = (target.name, target.visible) != (state.name, state.visible)
    target.setup, target.view, target.name = state.setup, state.view, state.name
    target.visible, target.config, target.arch = state.visible, state.config, state.arch
    ops = doc.session.operations
    ids = target.op_ids
    entries = []
    first = None
    if ids:
        try:
            first = doc.operation_index(ids[0])
        except KeyError:  # one of its operations was deleted on its own: expand afresh
            first = None
    if first is not None:
        block = ops[first:first + len(ids)]
        if len(block) == len(ids) and all(e.id == i for e, i in zip(block, ids, strict=True)):
            entries = block
    if entries and refresh_params(target, entries):
        return Change(What.OPERATION, tuple(ids), () if restyle else ("params",))
    if not anew:
        return Change(What.OPERATIONS, tuple(ids))
    # a new layout: new operations where the old ones were
    gone = set(ids)
    at = next((i for i, e in enumerate(ops) if e.id in gone), len(ops))
    kept = [e for e in ops if e.id not in gone]
    at = min(at, len(kept))
    fresh = expand_in(doc.session, target)
    ops[:] = kept[:at] + fresh + kept[at:]
    return Change(What.OPERATIONS, tuple(gone) + tuple(e.id for e in fresh))
