"""A whole model as a session entry: its config, set-up and view, expanded into ordinary
operations of the session (the chart, results table and editor treat them like any other).

No Qt, no I/O: the architecture is read by :mod:`workbench.io.model_configs` and handed in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field, replace

from workbench.model.llm.architecture import VIEWS, Architecture, Setup, layer_steps, scaled
from workbench.model.session import OperationEntry, Session, free_color, new_id
from workbench.records import record

__all__ = ["ModelEntry", "expand_entries", "expand_in", "operation_count", "refresh_params",
           "SETUP_FIELDS"]

#: Set-up fields a model entry keeps (and a session file writes), in order.
SETUP_FIELDS = ("phase", "batch", "prompt_len", "kv_len", "weights", "activations",
                "kv_cache", "tp", "quantize_embeddings", "output_len", "ep", "pp", "imbalance",
                "memory_utilization", "kv_block", "prefill_chunk", "all_reduce",
                "draft_tokens", "acceptance")


@record
class ModelEntry:
    """A model of the session. ``config`` is a shipped config's name or a path to a
    config.json (as written in the session file); ``arch`` is what it describes; ``view`` is
    ``layers`` (one point per operation of a layer kind, summed over its layers) or ``all``
    (every operation of every layer). ``op_ids`` are the operations it expands into."""
    config: str
    arch: Architecture
    setup: Setup = field(default_factory=Setup)
    view: str = "layers"
    name: str = ""
    visible: bool = True
    id: int = field(default_factory=new_id)
    op_ids: list[int] = field(default_factory=list)
    #: For each of ``op_ids``: the index of its step in :func:`layer_steps` (same order).
    roles: list[int] = field(default_factory=list)
    #: The colour of each kind of operation (``gemm``, ``norm``, …): every operation of a
    #: kind shares it, through any change of set-up, and a kind keeps it once given.
    colors: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.name or self.arch.name

    def copy(self, **changes) -> ModelEntry:
        """A copy with changes (``setup`` fields may be given directly: ``batch=8``)."""
        setup_changes = {k: changes.pop(k) for k in list(changes) if k in SETUP_FIELDS}
        out = replace(self, op_ids=list(self.op_ids), roles=list(self.roles),
                      colors=dict(self.colors), **changes)
        if setup_changes:
            out.setup = replace(self.setup, **setup_changes)
        return out


def _check_view(view: str) -> None:
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")


def _layout(model: ModelEntry, steps) -> list[tuple[int, str, int]]:
    """``(step index, name, layer count folded in)`` for each operation shown, in order."""
    arch = model.arch
    out: list[tuple[int, str, int]] = []
    if model.view == "layers":
        for i, step in enumerate(steps):
            if step.group == "model":
                name = step.role
            elif step.group != "layer":
                name = f"{step.role} ({step.group}s) ×{step.count}"
            else:
                name = f"{step.role} ×{step.count}"
            out.append((i, name, step.count))
        return out
    by_group: dict[str, list[int]] = {}
    for i, step in enumerate(steps):
        by_group.setdefault(step.group, []).append(i)
    head = [i for i in by_group.get("model", []) if steps[i].role == "embedding gather"]
    tail = [i for i in by_group.get("model", []) if steps[i].role != "embedding gather"]
    out += [(i, steps[i].role, 1) for i in head]
    left = {group: steps[ids[0]].count for group, ids in by_group.items()}
    for layer in range(arch.layers):
        group = arch.layer_group(layer)
        if not left.get(group):
            continue  # (pipeline parallel: this chip's stage has no more of this kind)
        left[group] -= 1
        out += [(i, f"L{layer} {steps[i].role}", 1) for i in by_group.get(group, [])]
    out += [(i, steps[i].role, 1) for i in tail]
    return out


def operation_count(model: ModelEntry) -> int:
    """How many operations ``model`` expands into (without expanding it)."""
    _check_view(model.view)
    return len(_layout(model, layer_steps(model.arch, model.setup)))


def expand_in(session: Session, model: ModelEntry) -> list[OperationEntry]:
    """:func:`expand_entries` for a model of ``session``: a kind another model of the
    session has coloured takes that colour, a new kind one no other operation uses."""
    shared: dict[str, str] = {}
    for other in session.models:
        if other is not model:
            for kind, color in other.colors.items():
                shared.setdefault(kind, color)
    own = set(model.op_ids)
    taken = [c for c in session.colors_in_use(own) if c not in model.colors.values()]
    return expand_entries(model, taken, shared)


def expand_entries(model: ModelEntry, taken: Iterable[str] = (),
                   shared: dict[str, str] | None = None) -> list[OperationEntry]:
    """Fresh operation entries for ``model`` (it records their ids and roles). A kind of
    operation the model has no colour for yet takes its colour from ``shared`` (other
    models' kinds), else the first palette colour that neither ``taken`` nor the model's
    other kinds use (once all are in use, the least used of those its kinds do not have)."""
    _check_view(model.view)
    steps = layer_steps(model.arch, model.setup)
    colors = model.colors
    taken = list(taken)
    entries: list[OperationEntry] = []
    prefix = f"{model.label}: "
    every = model.view == "all"
    layout = _layout(model, steps)
    for index, name, count in layout:
        step = steps[index]
        op = scaled(step.operation, count)
        op.name = prefix + name
        color = colors.get(op.kind)
        if color is None:
            color = (shared or {}).get(op.kind) or free_color(
                [*taken, *colors.values()], avoid=colors.values())
            colors[op.kind] = color
        entries.append(OperationEntry(op, color=color, visible=_shown(model, step),
                                      label=not every and op.kind in _LABELLED, id=new_id()))
    model.op_ids = [e.id for e in entries]
    model.roles = [index for index, _, _ in layout]
    return entries


def refresh_params(model: ModelEntry, entries: list[OperationEntry]) -> bool:
    """Give ``entries`` (the model's operations, in order) the parameters of the model's
    current set-up, in place. ``False`` when the layout changed (a different number of
    operations or kinds): the caller expands afresh."""
    steps = layer_steps(model.arch, model.setup)
    layout = _layout(model, steps)
    if len(layout) != len(entries) or [i for i, _, _ in layout] != model.roles:
        return False
    prefix = f"{model.label}: "
    # (a layer's operations are those of the others: each one's parameters and whether it
    # is shown worked out once, for the model's thousand operations)
    scaled_cache: dict[tuple[int, int], tuple[dict, bool]] = {}
    for entry, (index, name, count) in zip(entries, layout, strict=True):
        step = steps[index]
        if entry.operation.kind != step.operation.kind:
            return False
        key = (index, count)
        known = scaled_cache.get(key)
        if known is None:
            known = scaled_cache[key] = (scaled(step.operation, count).params,
                                         _shown(model, step))
        params, shown = known
        op = entry.operation
        op.params = params.copy()
        if not op.name.endswith(name) or not op.name.startswith(prefix):
            op.name = prefix + name
        entry.visible = shown
    return True


#: Kinds labelled on the chart in the layer view (the matrix products and attention; the
#: norms, adds and activations keep their numbers in the tooltip and tables).
_LABELLED = frozenset({"gemm", "attention", "mla_attention", "moe_gemm", "all_reduce"})


def _shown(model: ModelEntry, step) -> bool:
    """On the chart with its model, unless it has no FLOPs (the embedding gather, a copy):
    a log-log chart cannot place it; its bytes are in the results and the derivation."""
    return model.visible and step.role != "embedding gather" and not (
        step.operation.kind == "all_reduce"
        and step.operation.params.get("collective", "all_reduce") != "all_reduce")
