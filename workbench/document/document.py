"""The open session as a document: undoable edits addressed by id, change notifications.

No Qt here. Views subscribe with :meth:`Document.subscribe` and receive a :class:`Change`
naming what changed, so each view refreshes only what it must. Every edit is a command on
the undo stack; consecutive edits of the same field merge into one step until
:meth:`Document.seal` is called (a spin-box drag is one undo step).
"""

from __future__ import annotations

import copy
import dataclasses
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.document.changes import Change, Command, What
from workbench.document.names import NameInUse, unique_name
from workbench.model.hardware import Hardware
from workbench.model.limits import (
    MAX_OPERATIONS,
    OverBudget,
    Totals,
    budget_problem,
    hardware_bytes,
    measurement_bytes,
    operation_bytes,
    session_totals,
    sweep_total_problem,
    text_bytes,
)
from workbench.model.operations import KINDS, Operation
from workbench.model.prediction import LAUNCHES
from workbench.model.session import (
    Comparison,
    HardwareEntry,
    OperationEntry,
    Session,
    ViewSettings,
    free_color,
)
from workbench.records import record

if TYPE_CHECKING:
    # (named in signatures only: a session without sweeps or measurements starts without
    # their modules)
    from workbench.model.measured import Measurement
    from workbench.model.sweeps import Sweep

__all__ = ["Change", "Document", "NameInUse", "OverBudget", "new_operation", "unique_name"]




#: Undo steps kept (a long session of edits would otherwise hold every one of them).
UNDO_LIMIT = 1000


def new_operation(kind: str, name: str | None = None) -> Operation:
    """An operation of ``kind`` with every parameter written out at its default."""
    spec = KINDS[kind]
    params = {}
    for p in spec.params:
        if p.default is not None:
            params[p.name] = copy.deepcopy(p.default)
    return Operation(kind, params, name or spec.default_name)


@record
class Document:
    """The open session, its file and its undo history; listeners hear every change."""
    session: Session = field(default_factory=Session)
    path: Path | None = None
    # the history and the listeners are not part of the document's value (equality, repr)
    _undo: deque[Command] = field(default_factory=lambda: deque(maxlen=UNDO_LIMIT),
                                  compare=False, repr=False)
    _redo: list[Command] = field(default_factory=list, compare=False, repr=False)
    #: How many undo steps lead to the saved state (None: it can no longer be reached).
    _clean: int | None = field(default=0, compare=False, repr=False)
    _listeners: list[Callable[[Change], None]] = field(default_factory=list, compare=False,
                                                       repr=False)
    _batch: list[Change] | None = field(default=None, compare=False, repr=False)
    #: The session's totals as the last edit left them (see :meth:`totals`), with the
    #: session they count.
    _totals: tuple[Session, Totals] | None = field(default=None, compare=False, repr=False)
    #: Whether the change being heard takes the session back or forth through its history
    #: (undo, redo, a gesture abandoned) rather than making a new edit.
    stepping: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.session.give_colors()

    # -- notifications ---------------------------------------------------------------------

    def subscribe(self, listener: Callable[[Change], None]) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[Change], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _emit(self, change: Change) -> None:
        if self._batch is not None:
            self._batch.append(change)
            return
        for listener in list(self._listeners):
            listener(change)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Collect notifications; emit one ``session`` change at the end if anything changed."""
        outer = self._batch is not None
        if not outer:
            self._batch = []
        try:
            yield
        finally:
            if not outer:
                changes, self._batch = self._batch, None
                if changes:
                    self._emit(Change(What.SESSION))

    # -- the session's budget -------------------------------------------------------------

    def totals(self) -> Totals:
        """The session's :class:`~workbench.model.limits.Totals`: counted once, then kept
        by each edit that says what it adds (after one that does not, counted anew)."""
        if self._totals is None or self._totals[0] is not self.session:
            self._totals = (self.session, session_totals(self.session))
        return self._totals[1]

    def growth_problem(self, grows: Totals) -> str | None:
        """Why an edit that adds ``grows`` to the session's totals cannot be made: the
        session would pass one of its limits, a file Save refuses or Open would refuse
        (the message says which, with the numbers); or ``None``."""
        if not grows.grows():
            return None
        before = self.totals()
        return budget_problem(before + grows, before)

    def _check_growth(self, grows: Totals) -> None:
        problem = self.growth_problem(grows)
        if problem:
            raise OverBudget(problem)

    def _count(self, grows: Totals | None) -> None:
        """Keep the totals through an edit done (``grows``) or undone (its negation)."""
        if grows is None or self._totals is None or self._totals[0] is not self.session:
            self._totals = None
        else:
            self._totals = (self.session, self._totals[1] + grows)

    # -- undo state ------------------------------------------------------------------------

    @property
    def modified(self) -> bool:
        return self._clean != len(self._undo)

    def mark_clean(self, path: Path | None = None) -> None:
        if path is not None:
            self.path = Path(path)
        self._clean = len(self._undo)
        self.seal()
        self._emit(Change(What.STATE))

    def can_undo(self) -> bool:
        return bool(self._undo)

    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo_text(self) -> str:
        return self._undo[-1].text if self._undo else ""

    def redo_text(self) -> str:
        return self._redo[-1].text if self._redo else ""

    def seal(self) -> None:
        """End the current gesture: the next edit of the same field is a new undo step."""
        if self._undo:
            self._undo[-1].sealed = True

    def abandon_param_edit(self, op_id: int, name: str) -> bool:
        """Undo and forget the open (not yet sealed) step of an edit of parameter ``name``:
        typing whose final text is refused leaves the document as it was before it, with
        nothing to undo or redo. Whether there was such a step."""
        return self._abandon(("param", op_id, name))

    def abandon_model_edit(self, model_id: int, name: str) -> bool:
        """As :meth:`abandon_param_edit`, for the set-up field ``name`` of a whole model."""
        return self._abandon(("model", model_id, (name,)))

    def _abandon(self, merge_key: object) -> bool:
        top = self._undo[-1] if self._undo else None
        if top is None or top.sealed or top.merge_key != merge_key:
            return False
        self._undo.pop()
        change = top.undo()
        self._count(None if top.grows is None else Totals() - top.grows)
        self._emit_step(change)
        self._emit(Change(What.STATE))
        return True

    def undo(self) -> None:
        if not self._undo:
            return
        command = self._undo.pop()
        command.sealed = True
        self._redo.append(command)
        change = command.undo()
        self._count(None if command.grows is None else Totals() - command.grows)
        self._emit_step(change)
        self._emit(Change(What.STATE))

    def redo(self) -> None:
        if not self._redo:
            return
        command = self._redo.pop()
        self._undo.append(command)
        change = command.redo()
        self._count(command.grows)
        self._emit_step(change)
        self._emit(Change(What.STATE))

    def _emit_step(self, change: Change) -> None:
        """Emit the change of a step through the history (see :attr:`stepping`)."""
        self.stepping = True
        try:
            self._emit(change)
        finally:
            self.stepping = False

    def edit(self, text: str, put: Callable[[Any], Change], new: Any, old: Any,
             merge_key: object = None, grows: Totals | None = None) -> None:
        """The edit that every setter is: ``put(value)`` puts a value in place and says what
        changed; doing the edit puts ``new``, undoing it puts ``old`` back. ``grows``: what
        it adds to the session's totals (see :attr:`Command.grows`)."""
        self.push(Command(text, lambda: put(new), lambda: put(old), merge_key=merge_key,
                          grows=grows))

    def push(self, command: Command) -> None:
        """Do ``command`` and put it on the undo stack (merged into the step on top when
        both edit the same thing and the gesture is not sealed); listeners hear its change."""
        top = self._undo[-1] if self._undo else None
        change = command.redo()
        self._count(command.grows)
        if (top is not None and command.merge_key is not None and not top.sealed
                and top.merge_key == command.merge_key and self._clean != len(self._undo)):
            top.redo = command.redo  # keep the oldest undo: one step for the whole gesture
            top.grows = (None if top.grows is None or command.grows is None
                         else top.grows + command.grows)
        else:
            if self._clean is not None and self._clean > len(self._undo):
                self._clean = None  # the clean state can no longer be reached
            if len(self._undo) == self._undo.maxlen and self._clean is not None:
                # the oldest step goes (memory stays bounded): one step fewer to the saved
                # state, or none left if the saved state was the oldest one
                self._clean = self._clean - 1 if self._clean > 0 else None
            self._undo.append(command)
        self._redo.clear()
        self._emit(change)
        self._emit(Change(What.STATE))

    def replace_session(self, session: Session, path: Path | None = None,
                        modified: bool = False) -> None:
        """A new or opened session: forgets the undo history. ``modified`` marks it as not
        saved (a recovered autosave)."""
        self.session = session
        session.give_colors()
        self._totals = None
        self.path = Path(path) if path else None
        self._undo.clear()
        self._redo.clear()
        self._clean = None if modified else 0
        self._emit(Change(What.SESSION))
        self._emit(Change(What.STATE))

    # -- lookups ---------------------------------------------------------------------------

    # An id's position in the session's lists, checked on every use (ids are unique, so an
    # entry found at the remembered position with that id is the one) and re-derived when
    # the lists have changed under it: lookups stay O(1) on sessions of thousands of
    # operations, with no bookkeeping in the edits.
    _op_at: ClassVar[dict[int, int]] = {}  # replaced, never changed in place
    _hw_at: ClassVar[dict[int, int]] = {}

    def operation_index(self, op_id: int) -> int:
        return self._index(self.session.operations, "_op_at", op_id)

    def machine_index(self, hw_id: int) -> int:
        return self._index(self.session.hardware, "_hw_at", hw_id)

    def _index(self, entries: list, memo: str, entry_id: int) -> int:
        at = getattr(self, memo)
        i = at.get(entry_id)
        if i is None or i >= len(entries) or entries[i].id != entry_id:
            at = {e.id: k for k, e in enumerate(entries)}
            setattr(self, memo, at)
            i = at.get(entry_id)
            if i is None:
                raise KeyError(entry_id)
        return i

    def operation(self, op_id: int) -> OperationEntry:
        return self.session.operations[self.operation_index(op_id)]

    def machine(self, hw_id: int) -> HardwareEntry:
        return self.session.hardware[self.machine_index(hw_id)]

    # -- operation edits -------------------------------------------------------------------

    def set_param(self, op_id: int, name: str, value: Any) -> None:
        """Set one parameter (``None`` returns it to its default). Consecutive edits of the
        same parameter merge into one undo step until :meth:`seal`."""
        entry = self.operation(op_id)
        old = copy.deepcopy(entry.operation.params.get(name))
        new = copy.deepcopy(value)
        if old == new:
            return
        label = entry.operation.spec.param(name).label
        changed = entry.operation.copy()
        if new is None:
            changed.params.pop(name, None)
        else:
            changed.params[name] = new
        grows = self._growth(entry, dataclasses.replace(entry, operation=changed))
        self._check_growth(grows)

        def put(v: Any) -> Change:
            params = self.operation(op_id).operation.params
            if v is None:
                params.pop(name, None)
            else:
                params[name] = copy.deepcopy(v)
            return Change(What.OPERATION, (op_id,), (name,))

        self.edit(f"Set {label} of {entry.operation.name}", put, new, old,
                  merge_key=("param", op_id, name), grows=grows)

    def set_operation_field(self, op_id: int, name: str, value: Any) -> None:
        """``name``, ``memory_level`` (on the operation) or ``color``, ``visible``, ``label``
        (display settings)."""
        entry = self.operation(op_id)
        if name == "color" and not entry.auto_color:  # "Default Colour" gives it one of its own
            entry.auto_color = free_color(self.session.colors_in_use((op_id,)))
        on_op = name in ("name", "memory_level")
        old = getattr(entry.operation if on_op else entry, name)
        if old == value:
            return
        if name == "name":
            problem = self.operation_name_problem(op_id, value)
            if problem is not None:
                raise NameInUse(problem)
        grows = Totals()  # (a colour, hidden, unlabelled: within an operation's estimate)
        if on_op:
            changed = entry.operation.copy()
            setattr(changed, name, value)
            grows = self._growth(entry, dataclasses.replace(entry, operation=changed))
            if name == "name":
                grows += self._renamed_references(old, value)
            self._check_growth(grows)

        def put(v: Any) -> Change:
            target = self.operation(op_id)
            if name == "name":
                self._rename_references(target, v)
            setattr(target.operation if on_op else target, name, v)
            return Change(What.OPERATION, (op_id,), (name,))

        texts = {"name": "Rename", "visible": "Show" if value else "Hide", "color": "Colour",
                 "label": "Label", "memory_level": "Memory level of"}
        # (each show or hide is a step of its own: hidden and shown again is two steps, not
        # one that undoes nothing)
        self.edit(f"{texts.get(name, name)} {entry.operation.name}", put, value, old,
                  merge_key=None if name == "visible" else ("field", op_id, name), grows=grows)

    def _growth(self, entry: OperationEntry, changed: OperationEntry) -> Totals:
        """What putting ``changed`` (an edited copy of ``entry``) in its place adds to the
        session's totals: its sweep's points, and its bytes in the file (none for a
        model's operation: the file keeps the model)."""
        points = ((changed.sweep.points if changed.sweep is not None else 0)
                  - (entry.sweep.points if entry.sweep is not None else 0))
        if self.session.model_of(entry.id) is not None:
            return Totals(sweep_points=points)
        return Totals(sweep_points=points,
                      bytes=operation_bytes(changed) - operation_bytes(entry))

    def _renamed_references(self, old_name: str, new_name: str) -> Totals:
        """What the measured points and compared pairs that name operation ``old_name`` add
        to the session's file once they name ``new_name`` (:meth:`_rename_references`)."""
        size = self._points_renamed("operation", old_name, new_name)
        for c in self.session.comparisons:
            size += (text_bytes(new_name) - text_bytes(old_name)) * (
                (c.first == old_name) + (c.second == old_name))
        return Totals(bytes=size)

    def _points_renamed(self, field: str, old_name: str, new_name: str) -> int:
        """What the measured points whose ``field`` (``operation``, ``hardware``) names
        ``old_name`` add to the session's file once it names ``new_name``."""
        renamed: dict[str, Any] = {field: new_name}
        return sum(measurement_bytes(dataclasses.replace(m, **renamed)) - measurement_bytes(m)
                   for m in self.session.measurements if getattr(m, field) == old_name)

    def operation_name_problem(self, op_id: int | None, name: str) -> str | None:
        """Why operation ``op_id`` (``None``: a new one) cannot be called ``name``: another
        operation has it (measured points and compared pairs name their operation), or
        ``None``."""
        if any(e.operation.name == name and e.id != op_id for e in self.session.operations):
            return (f"another operation is named {name!r}; measured points and compared "
                    "pairs name their operation, so each name is used once")
        model = self.session.model_of(op_id) if op_id is not None else None
        if model is not None:  # (a session file keeps the model, not its operations)
            return f"the operations of {model.label} are named by the model; rename the model"
        return None

    def machine_name_problem(self, hw_id: int | None, name: str) -> str | None:
        """Why machine ``hw_id`` (``None``: a new one) cannot be called ``name``: another
        machine has that name, preset or id (measured points name their machine), or
        ``None``."""
        for e in self.session.hardware:
            if e.id != hw_id and name in (e.hardware.name, e.preset, e.hardware.id):
                return (f"another machine is named {name!r}; measured points name their "
                        "machine, so each name is used once")
        return None

    def add_operation(self, operation: Operation, index: int | None = None,
                      entry: OperationEntry | None = None) -> int:
        """Add an operation; a name another operation has gets a number (``GEMM 2``)."""
        entry = entry or OperationEntry(operation)
        if len(self.session.operations) >= MAX_OPERATIONS:
            raise OverBudget(f"the session holds {len(self.session.operations):,} operations; "
                             f"at most {MAX_OPERATIONS:,}")
        taken = {e.operation.name for e in self.session.operations}
        if entry.operation.name in taken:
            entry.operation.name = unique_name(entry.operation.name, taken, "operation")
        grows = Totals(operations=1, bytes=operation_bytes(entry),
                       sweep_points=entry.sweep.points if entry.sweep is not None else 0)
        self._check_growth(grows)
        if not (entry.color or entry.auto_color):  # a colour no other operation has
            entry.auto_color = self.session.new_color()
        ops = self.session.operations
        position = len(ops) if index is None else max(0, min(index, len(ops)))

        def do() -> Change:
            self.session.operations.insert(position, entry)
            return Change(What.OPERATIONS, (entry.id,))

        def undo() -> Change:
            self.session.operations.remove(entry)
            return Change(What.OPERATIONS, (entry.id,))

        self.push(Command(f"Add {operation.name}", do, undo, grows=grows))
        return entry.id

    def duplicate_operation(self, op_id: int) -> int:
        source = self.operation(op_id)
        op = source.operation.copy()
        op.name = unique_name(op.name, {e.operation.name for e in self.session.operations},
                              "operation", " (copy)")
        for p in op.spec.params:  # a model's tensor names ("q, k") as a file writes them
            if p.type == "str" and isinstance(op.params.get(p.name), str):
                op.params[p.name] = _tensor_name(op.params[p.name])
        entry = OperationEntry(op, color=None, visible=source.visible, label=source.label)
        model = self.session.model_of(op_id)
        if model is not None:  # an ordinary operation of its own, after the model's block
            index = max(i for i, e in enumerate(self.session.operations)
                        if e.id in set(model.op_ids)) + 1
        else:
            index = self.operation_index(op_id) + 1
        return self.add_operation(op, index, entry)

    def _rename_references(self, entry: OperationEntry, new_name: str) -> None:
        """Measurements and compared pairs refer to operations by name: they follow a rename
        (unless another operation still carries the old name)."""
        old_name = entry.operation.name
        if old_name == new_name or any(e is not entry and e.operation.name == old_name
                                       for e in self.session.operations):
            return
        if not (any(m.operation == old_name for m in self.session.measurements)
                or any(old_name in (c.first, c.second) for c in self.session.comparisons)):
            return
        # (new records, not the old ones changed: an earlier step of the history that kept
        # them, a deletion's undo, puts back what they were)
        measurements = [dataclasses.replace(m, operation=new_name) if m.operation == old_name
                        else m for m in self.session.measurements]
        comparisons = [Comparison(new_name if c.first == old_name else c.first,
                                  new_name if c.second == old_name else c.second, id=c.id)
                       if old_name in (c.first, c.second) else c
                       for c in self.session.comparisons]
        self._set_references(measurements, comparisons, True, True)

    def remove_operations(self, op_ids: list[int]) -> None:
        """Delete operations, with the measurements attached to them and the compared pairs
        they are part of (all restored by undo)."""
        entries = [(self.operation_index(i), self.operation(i)) for i in op_ids]
        if not entries:
            return
        entries.sort(key=lambda pair: pair[0])
        gone = {e.operation.name for _, e in entries}
        gone -= {e.operation.name for e in self.session.operations
                 if all(e is not d for _, d in entries)}
        measurements = list(self.session.measurements)
        comparisons = list(self.session.comparisons)
        kept_m = [m for m in measurements if m.operation not in gone]
        kept_c = [c for c in comparisons if c.first not in gone and c.second not in gone]

        def do() -> Change:
            for _, entry in entries:
                self.session.operations.remove(entry)
            self._set_references(kept_m, kept_c, len(kept_m) != len(measurements),
                                 len(kept_c) != len(comparisons))
            return Change(What.OPERATIONS, tuple(e.id for _, e in entries))

        def undo() -> Change:
            for index, entry in entries:
                self.session.operations.insert(index, entry)
            self._set_references(measurements, comparisons, len(kept_m) != len(measurements),
                                 len(kept_c) != len(comparisons))
            return Change(What.OPERATIONS, tuple(e.id for _, e in entries))

        what = entries[0][1].operation.name if len(entries) == 1 else f"{len(entries)} operations"
        self.push(Command(f"Delete {what}", do, undo))

    def move_operation(self, op_id: int, new_index: int) -> None:
        self._move("operations", op_id, new_index, What.OPERATIONS,
                   self.operation(op_id).operation.name)

    def _move(self, where: str, item_id: int, new_index: int, what: What, name: str) -> None:
        """Move the entry ``item_id`` of the session's list ``where`` (``operations``,
        ``hardware``) to ``new_index`` (clamped to the list), one undo step "Move NAME"."""
        def index_of() -> int:
            return next(i for i, e in enumerate(getattr(self.session, where))
                        if e.id == item_id)

        old_index = index_of()
        new_index = max(0, min(new_index, len(getattr(self.session, where)) - 1))
        if new_index == old_index:
            return

        def put(index: int) -> Change:
            items = getattr(self.session, where)
            items.insert(index, items.pop(index_of()))
            return Change(what, (item_id,))

        self.edit(f"Move {name}", put, new_index, old_index, grows=Totals())

    # -- whole models (workbench.document.models) -------------------------------------------

    def add_model(self, model) -> int:
        from workbench.document.models import add_model

        return add_model(self, model)

    def set_model(self, model_id: int, text: str = "", **changes: Any) -> None:
        from workbench.document.models import set_model

        set_model(self, model_id, text, **changes)

    def remove_model(self, model_id: int) -> None:
        from workbench.document.models import remove_model

        remove_model(self, model_id)

    # -- hardware edits --------------------------------------------------------------------

    def add_machine(self, hardware: Hardware, preset: str | None = None) -> int:
        if any(e.hardware is hardware for e in self.session.hardware):
            hardware = hardware.copy()  # (one machine's figures, never shared by two)
        if self.session.hardware:  # the session's prediction choice holds for every machine
            first = self.session.hardware[0].hardware
            hardware.prediction, hardware.launches = first.prediction, first.launches
        else:  # a new session's first machine: the default prediction
            from workbench.model.prediction import DEFAULT_LAUNCHES, DEFAULT_PREDICTION

            hardware.prediction, hardware.launches = DEFAULT_PREDICTION, DEFAULT_LAUNCHES
        taken: set[str] = set()
        for e in self.session.hardware:
            taken.update(n for n in (e.hardware.name, e.preset, e.hardware.id) if n)
        if hardware.name in taken:  # a second machine of a preset: "H100 SXM 2"
            hardware.name = unique_name(hardware.name, taken, "machine")
        entry = HardwareEntry(hardware, preset=preset)
        grows = Totals(bytes=hardware_bytes(entry), machines=1)
        self._check_growth(grows)

        def do() -> Change:
            self.session.hardware.append(entry)
            return Change(What.MACHINES, (entry.id,))

        def undo() -> Change:
            self.session.hardware.remove(entry)
            return Change(What.MACHINES, (entry.id,))

        self.push(self.keeping_references(Command(f"Add {hardware.label}", do, undo,
                                                  grows=grows)))
        return entry.id

    def keeping_references(self, command: Command) -> Command:
        """``command`` made to keep every measured point and compared pair on the operation
        and machine it names: a reference that another entry would now answer to (a second
        machine of the same preset, a renamed machine) is rewritten to its entry's name, and
        one whose entry is gone is dropped with it. Undo puts the references back."""
        kept: dict[str, Any] = {}
        do, undo = command.redo, command.undo

        def redo() -> Change:
            before = self._references()
            change = do()
            kept["old"] = (self.session.measurements, self.session.comparisons)
            measurements, comparisons = self._repinned(before)
            self._set_references(measurements, comparisons,
                                 measurements != kept["old"][0], comparisons != kept["old"][1])
            return change

        def revert() -> Change:
            change = undo()
            old_m, old_c = kept["old"]
            self._set_references(old_m, old_c, old_m != self.session.measurements,
                                 old_c != self.session.comparisons)
            return change

        return Command(command.text, redo, revert, command.merge_key, grows=command.grows)

    def _operation_ids(self) -> dict[str, list[int]]:
        ids: dict[str, list[int]] = {}
        for e in self.session.operations:
            ids.setdefault(e.operation.name, []).append(e.id)
        return ids

    def _machine_ids(self, ref: str) -> list[int]:
        return [e.id for e in self.session.machines_matching(ref)]

    def _references(self) -> tuple[list, list]:
        """What each measured point and compared pair refers to, as entry ids."""
        ops = self._operation_ids()
        measured = [(ops.get(m.operation) if m.operation is not None else None,
                     self._machine_ids(m.hardware) if m.hardware is not None else None)
                    for m in self.session.measurements]
        pairs = [(ops.get(c.first), ops.get(c.second)) for c in self.session.comparisons]
        return measured, pairs

    def _repinned(self, before: tuple[list, list]) -> tuple[list[Measurement], list[Comparison]]:
        """The measured points and compared pairs, each named again by the entry it referred
        to in ``before`` (see :meth:`keeping_references`)."""
        ops = self._operation_ids()
        op_names = {e.id: e.operation.name for e in self.session.operations}
        hw_names = {e.id: e.hardware.name for e in self.session.hardware}

        def op_ref(ref: str, was: list[int] | None) -> str | None:
            """The name that refers to the same operation (None: it is gone)."""
            if was is None or len(was) != 1 or ops.get(ref) == was:
                return ref  # (a reference that was already broken stays as it was)
            return op_names.get(was[0])

        def hw_ref(ref: str, was: list[int] | None) -> str | None:
            if was is None or len(was) != 1 or self._machine_ids(ref) == was:
                return ref
            return hw_names.get(was[0])

        measurements: list[Measurement] = []
        measured, pairs = before
        for m, (was_op, was_hw) in zip(self.session.measurements, measured, strict=True):
            operation = m.operation if m.operation is None else op_ref(m.operation, was_op)
            hardware = m.hardware if m.hardware is None else hw_ref(m.hardware, was_hw)
            if (m.operation is not None and operation is None) or (
                    m.hardware is not None and hardware is None):
                continue  # its operation or machine is gone
            if (operation, hardware) != (m.operation, m.hardware):
                m = dataclasses.replace(m, operation=operation, hardware=hardware)
            measurements.append(m)
        comparisons: list[Comparison] = []
        for c, (was_first, was_second) in zip(self.session.comparisons, pairs, strict=True):
            first, second = op_ref(c.first, was_first), op_ref(c.second, was_second)
            if first is None or second is None:
                continue
            if (first, second) != (c.first, c.second):
                c = Comparison(first, second, id=c.id)
            comparisons.append(c)
        return measurements, comparisons

    def set_prediction(self, model: str | None = None, launches: str | None = None) -> None:
        """The session's prediction choice on every machine, one undo step: ``derated`` or
        ``calibrated`` (see :mod:`workbench.model.prediction`), and ``kernel``, ``eager`` or
        ``graph`` launches; ``None`` keeps the current one."""
        entries = list(self.session.hardware)
        if not entries:
            return
        old = [(e.hardware.prediction, e.hardware.launches) for e in entries]
        first = old[0]
        new = (model or first[0], launches or first[1])
        if all(o == new for o in old):
            return

        def put(values: list[tuple[str, str]]) -> Change:
            for entry, (m, k) in zip(entries, values, strict=True):
                entry.hardware = entry.hardware.copy(prediction=m, launches=k)
            return Change(What.HARDWARE, tuple(e.id for e in entries))

        # named as View ▸ Prediction names the choice
        what = new[0].capitalize() if model else f"Kernels {LAUNCHES[new[1]]}"
        self.edit(f"Prediction: {what}", put, [new] * len(entries), old, grows=Totals())

    def remove_machine(self, hw_id: int) -> None:
        index = self.machine_index(hw_id)
        entry = self.machine(hw_id)

        def do() -> Change:
            self.session.hardware.remove(entry)
            return Change(What.MACHINES, (hw_id,))

        def undo() -> Change:
            self.session.hardware.insert(index, entry)
            return Change(What.MACHINES, (hw_id,))

        self.push(self.keeping_references(Command(f"Remove {entry.hardware.label}", do, undo)))

    def move_machine(self, hw_id: int, new_index: int) -> None:
        """Move a machine to ``new_index`` in the session's list (the legend's, the
        results' and the hardware list's order)."""
        self._move("hardware", hw_id, new_index, What.MACHINES, self.machine(hw_id).hardware.label)

    def set_machine(self, hw_id: int, hardware: Hardware, text: str = "") -> None:
        """Replace a machine's figures (an edited copy of :attr:`HardwareEntry.hardware`)."""
        entry = self.machine(hw_id)
        old = entry.hardware.copy()
        new = hardware.copy()
        if old == new:
            return
        if new.name != old.name:
            problem = self.machine_name_problem(hw_id, new.name)
            if problem is not None:
                raise NameInUse(problem)
        size = hardware_bytes(dataclasses.replace(entry, hardware=new)) - hardware_bytes(entry)
        if new.name != old.name:  # (measured points that name it follow its name)
            size += self._points_renamed("hardware", old.name, new.name)
        grows = Totals(bytes=size)
        self._check_growth(grows)

        def put(hw: Hardware) -> Change:
            self.machine(hw_id).hardware = hw.copy()
            return Change(What.HARDWARE, (hw_id,))

        command = Command(text or f"Edit {old.label}", lambda: put(new), lambda: put(old),
                          merge_key=("machine", hw_id, text), grows=grows)
        self.push(self.keeping_references(command) if new.name != old.name else command)

    def set_machine_visible(self, hw_id: int, visible: bool) -> None:
        entry = self.machine(hw_id)
        if entry.visible == visible:
            return

        def put(v: bool) -> Change:
            self.machine(hw_id).visible = v
            return Change(What.HARDWARE, (hw_id,), ("visible",))

        self.edit(f"{'Show' if visible else 'Hide'} {entry.hardware.label}", put, visible,
                  not visible, grows=Totals())

    # -- sweeps, measurements, compared pairs ----------------------------------------------

    def set_sweep(self, op_id: int, sweep: Sweep | None) -> None:
        """Give an operation a sweep (``None`` removes it). Consecutive edits of the same
        operation's sweep merge into one undo step until :meth:`seal`."""
        entry = self.operation(op_id)
        old = entry.sweep
        if old is sweep or (old is not None and sweep is not None
                            and old.param == sweep.param and old.describe() == sweep.describe()):
            return

        def put(v: Sweep | None) -> Change:
            self.operation(op_id).sweep = v
            return Change(What.OPERATION, (op_id,), ("sweep",))

        if sweep is not None:
            problem = self.sweep_problem(op_id, sweep)
            if problem:
                raise OverBudget(problem)
        grows = self._growth(entry, dataclasses.replace(entry, sweep=sweep))
        self._check_growth(grows)
        text = "Remove sweep of" if sweep is None else "Sweep"
        self.edit(f"{text} {entry.operation.name}", put, sweep, old,
                  merge_key=("sweep", op_id) if sweep is not None else None, grows=grows)

    def sweep_problem(self, op_id: int, sweep: Sweep) -> str | None:
        """Why operation ``op_id`` cannot take ``sweep``: the session's sweeps would have
        more points in all than a session holds, or its file would be larger than a session
        file holds; or ``None``."""
        entry = self.operation(op_id)
        old = entry.sweep
        total = self.totals().sweep_points - (old.points if old is not None else 0)
        problem = sweep_total_problem(total + sweep.points)
        if problem:
            return problem
        grows = self._growth(entry, dataclasses.replace(entry, sweep=sweep))
        return self.growth_problem(dataclasses.replace(grows, sweep_points=0))

    def measurements_problem(self, measurements: list[Measurement]) -> str | None:
        """Why the session cannot hold ``measurements`` in place of its measured points
        (too many, or a file too large to open again), with the numbers; or ``None``."""
        return budget_problem(self.totals() + self._measurements_growth(measurements),
                              self.totals())

    def _measurements_growth(self, measurements: list[Measurement]) -> Totals:
        """What ``measurements`` in place of the session's measured points add to its
        totals."""
        old = self.session.measurements
        return Totals(measurements=len(measurements) - len(old),
                      bytes=sum(map(measurement_bytes, measurements))
                      - sum(map(measurement_bytes, old)))

    def set_measurements(self, measurements: list[Measurement], text: str = "Edit measurements"
                         ) -> None:
        """Replace the session's measured points (an import appends by passing the old ones
        followed by the new). :class:`OverBudget` (nothing changed) when the session could
        not hold them."""
        old = list(self.session.measurements)
        new = list(measurements)
        if old == new:
            return
        grows = self._measurements_growth(new)
        self._check_growth(grows)

        def put(v: list[Measurement]) -> Change:
            self.session.measurements = list(v)
            return Change(What.MEASUREMENTS)

        self.edit(text, put, new, old, grows=grows)

    def set_comparisons(self, comparisons: list[Comparison], text: str = "Edit compared pairs"
                        ) -> None:
        old = list(self.session.comparisons)
        new = list(comparisons)
        if old == new:
            return

        def size(pairs: list[Comparison]) -> int:
            return sum(64 + text_bytes(c.first) + text_bytes(c.second) for c in pairs)

        grows = Totals(bytes=size(new) - size(old), comparisons=len(new) - len(old))
        self._check_growth(grows)

        def put(v: list[Comparison]) -> Change:
            self.session.comparisons = list(v)
            return Change(What.COMPARISONS)

        self.edit(text, put, new, old, grows=grows)

    def _set_references(self, measurements: list[Measurement], comparisons: list[Comparison],
                        m_changed: bool, c_changed: bool) -> None:
        if m_changed or c_changed:  # (what they add to the file: counted anew when needed)
            self._totals = None
        self.session.measurements = list(measurements)
        self.session.comparisons = list(comparisons)
        if m_changed:
            self._emit(Change(What.MEASUREMENTS))
        if c_changed:
            self._emit(Change(What.COMPARISONS))

    # -- view and title --------------------------------------------------------------------

    def set_view(self, name: str, value: Any) -> None:
        """Set the view setting ``name``: each choice is an undo step of its own, named as
        the View menu names it ("Hide Legend", "Theme: Dark")."""
        old = getattr(self.session.view, name)
        if old == value:
            return

        def put(v: Any) -> Change:
            setattr(self.session.view, name, v)
            return Change(What.VIEW, (), (name,))

        self.edit(_view_text(name, value), put, value, old, grows=Totals())

    def set_title(self, title: str) -> None:
        old = self.session.title
        if old == title:
            return

        grows = Totals(bytes=text_bytes(title) - text_bytes(old))
        self._check_growth(grows)

        def put(v: str) -> Change:
            self.session.title = v
            return Change(What.TITLE)

        self.edit("Edit title", put, title, old, merge_key=("title",), grows=grows)

    def title_and_notes_problem(self, title: str, notes: str) -> str | None:
        """Why the session cannot take ``title`` and ``notes``: its file would pass what a
        session file holds; or ``None``."""
        return self.growth_problem(Totals(bytes=text_bytes(title) + text_bytes(notes) - text_bytes(
            self.session.title) - text_bytes(self.session.notes)))

    def set_title_and_notes(self, title: str, notes: str) -> None:
        """Set the session's title and notes, as one step ("Edit Title and Notes", or of
        the one changed)."""
        old = (self.session.title, self.session.notes)
        new = (title, notes)
        if old == new:
            return

        def put(v: tuple[str, str]) -> Change:
            self.session.title, self.session.notes = v
            return Change(What.TITLE)

        changed = [what for what, a, b in zip(("Title", "Notes"), old, new, strict=True)
                   if a != b]
        grows = Totals(bytes=sum(map(text_bytes, new)) - sum(map(text_bytes, old)))
        self._check_growth(grows)
        self.edit(f"Edit {' and '.join(changed)}", put, new, old, grows=grows)


#: The View menu's name of each view setting, for the undo step that changes it.
_VIEW_NAMES = {"legend": "Legend", "labels": "Point Labels", "regions": "Shaded Regions",
               "derated": "Derated Roofs", "all_precisions": "All Precision Roofs",
               "all_levels": "All Memory Roofs", "sweeps": "Sweep Paths",
               "measured": "Measured Points", "pairs": "Compared Pairs", "theme": "Theme",
               "level": "Profile Memory Level", "top": "Profiled Kernels Shown",
               "x_range": "Zoom", "y_range": "Zoom"}


def _view_text(name: str, value: Any) -> str:
    """What setting view setting ``name`` to ``value`` does, in the View menu's words:
    "Show Legend", "Hide Point Labels", "Theme: Dark", "Profiled Kernels Shown: Top 10"."""
    what = _VIEW_NAMES.get(name, name)
    if isinstance(value, bool):
        return f"{'Show' if value else 'Hide'} {what}"
    if name == "level":
        return f"{what}: {'All Levels' if value == 'all' else str(value).upper()}"
    if name == "top":
        shown = ("The Kernels That Make 95 % of the Time" if value == 0
                 else "Every Kernel" if value >= 100_000 else f"Top {value}")
        return f"{what}: {shown}"
    if name == "theme":
        return f"{what}: {str(value).capitalize()}"
    return what


def _tensor_name(text: str) -> str:
    """``text`` as a tensor name a session file holds: a letter first, then letters,
    digits, ``_`` or ``-`` (``q, k`` → ``q_k``, ``h'`` → ``h_``)."""
    import re

    name = re.sub(r"[^A-Za-z0-9_\-]+", "_", text).strip("_") or "x"
    return name if name[0].isalpha() and name.isascii() else f"t_{name}"


def default_view() -> ViewSettings:
    return ViewSettings()
