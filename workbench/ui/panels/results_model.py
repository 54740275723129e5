"""The rows of the results table: every operation on every machine, with the roofline numbers.

:class:`ResultsModel` holds one row per (operation, machine) pair of
:meth:`ResultCache.pairs`, operations outermost, and follows the document's
:class:`~workbench.document.Change` notifications: an edit of one operation re-evaluates only
that operation's rows (``dataChanged``). Cells show SI-prefixed values to three significant
figures; :data:`SORT_ROLE` carries the raw numbers, which :class:`ResultsProxy` sorts by.
The table around them is :mod:`workbench.ui.panels.results_table`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QModelRoleDataSpan,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from workbench.document import Change
from workbench.document.changes import What
from workbench.document.derivation import worked_out
from workbench.io.tables import result_cells, result_header, skipped_cells
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.roofline import FORMULAS, Result
from workbench.model.rules import intensity as intensity_of
from workbench.model.session import HardwareEntry, OperationEntry
from workbench.model.units import format_number, format_quantity
from workbench.records import record
from workbench.ui.bridge import Workspace

__all__ = ["ResultsModel", "ResultsProxy", "COLUMNS", "COLUMN_INDEX", "Column", "SORT_ROLE",
           "FILTER_ROLE", "KEY_ROLE", "BOUND_COLORS", "forget_palette_colors"]

#: Text colour of each bound (Okabe–Ito blue, vermillion, reddish purple).
BOUND_COLORS: dict[str, str] = {"memory": "#0072B2", "compute": "#D55E00",
                                "overhead": "#CC79A7"}

#: Role with the raw value of a cell (float in base SI units, or lower-case text); ``None``
#: where there is no value (a skipped pair).
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
#: Role on column 0 with "operation name<TAB>machine name" (the filter looks at it).
FILTER_ROLE = Qt.ItemDataRole.UserRole + 2
#: Role with the (operation id, machine id) of a row, on every cell.
KEY_ROLE = Qt.ItemDataRole.UserRole + 3

_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_CENTER = int(Qt.AlignmentFlag.AlignCenter)
_DASH = "—"
#: An edit touching at most this many rows re-evaluates them at once and announces only the
#: cells that changed; more rows (a machine edit on a large session) are re-evaluated lazily.
_DIFF_ROWS = 64


@record(frozen=True)
class Column:
    """A column: its key, header in the view, how to get its raw value from a
    :class:`Result`, how to show it, and a tooltip (formula). (Copy and CSV write the
    Results CSV's columns, :mod:`workbench.io.tables`.)"""

    key: str
    title: str
    value: Callable[[Result], Any]
    show: Callable[[Any], str] | None
    tip: str
    numeric: bool = True
    #: widest text expected, for the initial column width
    sample: str = "999 TFLOP/s"


def _q(unit: str) -> Callable[[Any], str]:
    return lambda v: format_quantity(v, unit)


COLUMNS: tuple[Column, ...] = (
    Column("operation", "Operation", lambda r: r.operation, None,
           "The operation", numeric=False, sample="FFN up, decode GEMV, INT4 weights"),
    Column("machine", "Machine", lambda r: r.hardware, None,
           "The machine", numeric=False, sample="NVIDIA H100 SXM5"),
    Column("precision", "Precision", lambda r: r.precision_used, None,
           "Precision whose peak is the ceiling (the operation's compute precision, or the "
           "next wider one the machine has)", numeric=False, sample="Precision"),
    Column("flops", "FLOPs", lambda r: r.flops, _q("flops"),
           "FLOPs: total floating-point operations (a multiply-add counts as 2)",
           sample="999 TFLOP"),
    Column("bytes", "Bytes", lambda r: r.bytes, _q("bytes"),
           "bytes: traffic across the memory level, loads and stores both counted",
           sample="999 MB"),
    Column("intensity", "Intensity [FLOP/B]", lambda r: r.intensity,
           format_number, FORMULAS["intensity"], sample="Intensity [FLOP/B]"),
    Column("ceiling", "Ceiling", lambda r: r.peak_flops, _q("flop_rate"),
           "ceiling = the machine's dense peak at the precision used"),
    Column("bandwidth", "Bandwidth", lambda r: r.bandwidth, _q("bandwidth"),
           "bandwidth of the memory level the bytes cross", sample="99.9 TB/s"),
    Column("ridge", "Ridge [FLOP/B]", lambda r: r.ridge, format_number,
           FORMULAS["ridge"], sample="Ridge [FLOP/B]"),
    Column("attainable", "Attainable", lambda r: r.attainable_flops,
           _q("flop_rate"), FORMULAS["attainable"]),
    Column("bound", "Bound", lambda r: r.bound, None,
           f"bound: {FORMULAS['bound']} (derated prediction); {FORMULAS['bound_calibrated']} "
           "(calibrated)", numeric=False, sample="overhead"),
    Column("fraction_of_peak", "% of peak",
           lambda r: 100.0 * r.fraction_of_peak, format_number,
           FORMULAS["fraction_of_peak"] + " × 100", sample="% of peak"),
    Column("t_math", "T_math", lambda r: r.t_math_s, _q("time"),
           FORMULAS["t_math"], sample="999 ms"),
    Column("t_mem", "T_mem", lambda r: r.t_mem_s, _q("time"),
           FORMULAS["t_mem"], sample="999 ms"),
    Column("t_lower", "T_lower", lambda r: r.t_lower_s, _q("time"),
           FORMULAS["t_lower"], sample="999 ms"),
    Column("t_upper", "T_upper", lambda r: r.t_upper_s, _q("time"),
           FORMULAS["t_upper"], sample="999 ms"),
    Column("t_predicted", "T_predicted", lambda r: r.t_predicted_s, _q("time"),
           f"{FORMULAS['t_predicted']} (derated prediction); "
           f"{FORMULAS['t_predicted_calibrated']} (calibrated)", sample="T_predicted"),
    Column("efficiency", "Efficiency", lambda r: r.efficiency,
           lambda v: f"{100 * v:.3g} %",
           "derating efficiency of the machine (T_predicted = T_lower / efficiency, floored by "
           "the launch overhead); — : none, T_predicted = T_lower, or the calibrated "
           "prediction (its efficiencies under Efficiencies)", sample="Efficiency"),
    Column("overhead", "Overhead floor", lambda r: r.launch_overhead_s,
           _q("time"), "launch overhead of the machine: the time floor below which an operation "
           "is overhead-bound; — : none known", sample="Overhead floor"),
    # the calibrated prediction's parts (— : the derated prediction)
    Column("t_work", "T_work",
           lambda r: r.t_work_s if r.calibrated is not None else None, _q("time"),
           FORMULAS["t_work"] + " (calibrated prediction; — : derated)", sample="999 ms"),
    Column("t_fixed", "T_fixed",
           lambda r: r.t_fixed_s if r.calibrated is not None else None, _q("time"),
           FORMULAS["t_fixed"] + " (calibrated prediction; — : derated)", sample="999 µs"),
    Column("kernel_class", "Efficiencies",
           lambda r: (None if r.calibrated is None else
                      f"{r.calibrated.math_class} {r.calibrated.e_math:g} · "
                      f"{r.calibrated.memory_class} {r.calibrated.e_mem:g}"
                      + (" (assumed)" if r.calibrated.assumed else "")),
           None, "The kernel class's efficiencies on the compute roof and the bandwidth roof "
                 "(calibrated prediction; — : derated)", numeric=False,
           sample="attention_causal 0.558 · streaming 0.87"),
)
COLUMN_INDEX = {c.key: i for i, c in enumerate(COLUMNS)}
_BOUND_COL = COLUMN_INDEX["bound"]
# roles as plain ints: compared once per role of every painted cell
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
#: the roles ``ResultsModel.cell`` can answer (any other is always empty)
_ANSWERED = frozenset({_DISPLAY, _ALIGNMENT, _FOREGROUND, _BACKGROUND, _TOOLTIP,
                       int(SORT_ROLE), int(FILTER_ROLE), int(KEY_ROLE)})
_MACHINE_INDEPENDENT = ("flops", "bytes", "intensity")


@record
class _Row:
    """The evaluated contents of one row: raw values (sort keys), the skip reason, and
    display texts formatted on first use."""

    raw: list[Any]
    reason: str = ""
    #: the result the row shows, whose cells' tooltips (:func:`_cell_tips`) are written
    #: when first asked for
    result: Result | None = None
    machine: str = ""
    tips: dict[int, str] | None = None
    text: list[str | None] = field(default_factory=lambda: [None] * len(COLUMNS))

    def tip_of(self, col: int) -> str | None:
        if self.tips is None and self.result is not None:
            self.tips = _cell_tips(self.result, self.machine)
        return self.tips.get(col) if self.tips else None

    def text_of(self, col: int) -> str:
        text = self.text[col]
        if text is None:
            value = self.raw[col]
            column = COLUMNS[col]
            if value is None:
                # a skipped pair says so in its Bound cell (the tooltips say why)
                text = "skipped" if self.reason and column.key == "bound" else _DASH
            elif column.show is None:
                text = str(value)
            else:
                text = column.show(value)
            self.text[col] = text
        return text

    def changed_columns(self, old: _Row) -> list[int]:
        """Columns whose cells differ from ``old`` (the same row before an edit); the texts
        of the others, already formatted in ``old``, are kept.

        A cell's text, sort key and colour follow from its raw value and the row's skip
        reason, so a column whose raw value is unchanged shows the same; a changed reason
        changes every cell (the whole row is greyed or not)."""
        if old.reason != self.reason:
            return list(range(len(COLUMNS)))
        changed = []
        new_raw, old_raw, old_text, text = self.raw, old.raw, old.text, self.text
        for col in range(len(COLUMNS)):
            a, b = new_raw[col], old_raw[col]
            if a is b or (a == b and type(a) is type(b)):
                text[col] = old_text[col]
            else:
                changed.append(col)
        return changed


def _cell_tips(r: Result, machine: str) -> dict[int, str]:
    """What each cell of a result's row is and how it is computed, with the row's own
    values (as the editor's derivation writes them), by column."""
    def q(value: float, unit: str) -> str:
        return format_quantity(value, unit)

    i = COLUMN_INDEX
    latency = f" + link latency {q(r.latency_s, 'time')}" if r.latency_s else ""
    roofline = r.t_lower_s - r.latency_s  # max(T_math, T_mem)
    c = r.calibrated
    tips = {
        i["precision"]: (
            f"computes in {r.precision}; {machine} has no {r.precision} peak, so the "
            f"{r.precision_used} peak is the ceiling" if r.precision_used != r.precision
            else f"{r.precision} peak of {machine}") + f" ({r.unit} units)",
        i["flops"]: (f"FLOPs = {q(r.flops, 'flops')}: every floating-point operation it "
                     "does, a multiply-add counted as 2 (each term in the editor's "
                     "derivation)"),
        i["bytes"]: (f"bytes = {q(r.bytes, 'bytes')} across {r.level}, loads and stores both "
                     "counted (each term in the editor's derivation)"),
        i["intensity"]: (f"{FORMULAS['intensity']} = {q(r.flops, 'flops')} / "
                         f"{q(r.bytes, 'bytes')} = {format_number(r.intensity)} FLOP/B"),
        i["ceiling"]: (f"{r.precision_used} peak of the {r.unit} units"
                       + (f"; {r.ceiling_note}" if r.ceiling_note else "")),
        i["bandwidth"]: f"memory level: {r.level}",
        i["ridge"]: f"ridge = {worked_out('ridge', r, q)}",
        i["attainable"]: f"attainable = {worked_out('attainable', r, q)}",
        i["fraction_of_peak"]: (f"{FORMULAS['fraction_of_peak']} × 100 = "
                                f"{q(r.attainable_flops, 'flop_rate')} / "
                                f"{q(r.peak_flops, 'flop_rate')} × 100 = "
                                f"{format_number(100.0 * r.fraction_of_peak)}"),
        i["t_math"]: (f"{FORMULAS['t_math']} = {q(r.flops, 'flops')} / "
                      f"{q(r.peak_flops, 'flop_rate')} = {q(r.t_math_s, 'time')}"),
        i["t_mem"]: (f"{FORMULAS['t_mem']} = {q(r.bytes, 'bytes')} / "
                     f"{q(r.bandwidth, 'bandwidth')} = {q(r.t_mem_s, 'time')}"),
        i["t_lower"]: (f"T_lower = max(T_math, T_mem){' + latency' if latency else ''} = "
                       f"max({q(r.t_math_s, 'time')}, {q(r.t_mem_s, 'time')}){latency} = "
                       f"{q(r.t_lower_s, 'time')}"),
        i["t_upper"]: (f"T_upper = T_math + T_mem{' + latency' if latency else ''} = "
                       f"{q(r.t_math_s, 'time')} + {q(r.t_mem_s, 'time')}{latency} = "
                       f"{q(r.t_upper_s, 'time')}"),
    }
    if r.bound == "compute":
        tips[i["bound"]] = (f"compute-bound: T_math ≥ T_mem ({q(r.t_math_s, 'time')} ≥ "
                            f"{q(r.t_mem_s, 'time')})")
    elif r.bound == "memory":
        tips[i["bound"]] = (f"memory-bound: T_mem > T_math ({q(r.t_mem_s, 'time')} > "
                            f"{q(r.t_math_s, 'time')})")
    kernels = f"{r.kernels} × " if r.kernels > 1 else ""
    if c is not None:  # the calibrated prediction
        tips[i["t_work"]] = f"T_work = {worked_out('t_work', r, q)}"
        tips[i["t_fixed"]] = f"T_fixed = {worked_out('t_fixed', r, q)}"
        total = q(r.t_fixed_s + r.t_work_s, "time")
        if c.floor > 0:
            predicted = (f"T_predicted = max(T_fixed + T_work, kernels × launch floor)"
                         f"{' + latency' if latency else ''} = max({q(r.t_fixed_s, 'time')} "
                         f"+ {q(r.t_work_s, 'time')}, {r.kernels} × {q(c.floor, 'time')})")
        else:
            predicted = (f"T_predicted = T_fixed + T_work{' + latency' if latency else ''} = "
                         f"{q(r.t_fixed_s, 'time')} + {q(r.t_work_s, 'time')}")
        tips[i["t_predicted"]] = (f"{predicted}{latency} = {q(r.t_predicted_s, 'time')} "
                                  f"(calibrated: {c.math_class} {c.e_math:g} on the compute "
                                  f"roof, {c.memory_class} {c.e_mem:g} on the bandwidth roof)")
        tips[i["kernel_class"]] = (f"{c.math_class} {c.e_math:g} on the compute roof, "
                                   f"{c.memory_class} {c.e_mem:g} on the bandwidth roof: "
                                   f"{c.reason}")
        if r.bound == "overhead":
            tips[i["bound"]] = (
                f"overhead-bound: T_work {q(r.t_work_s, 'time')} < T_fixed "
                f"{q(r.t_fixed_s, 'time')}" if r.t_work_s < r.t_fixed_s else
                f"overhead-bound: T_fixed + T_work {total} < {r.kernels} × launch floor "
                f"{q(c.floor, 'time')}")
        if r.launch_overhead_s:
            cost = (f"max(launch floor, launch) = max({q(c.floor, 'time')}, "
                    f"{q(c.launch, 'time')}) = " if c.floor > 0 else "")
            tips[i["overhead"]] = (f"launch cost per kernel (calibrated, {c.launches} "
                                   f"launches): {cost}{q(r.launch_overhead_s, 'time')}")
    else:  # the derated prediction
        base = "max(T_math, T_mem)" if latency else "T_lower"
        value = q(roofline, "time")
        eff = r.efficiency or 1.0
        derated = f"{base} / {r.efficiency:g}" if r.efficiency else base
        shown = f"{value} / {r.efficiency:g}" if r.efficiency else value
        if r.launch_overhead_s:
            floor = f"{kernels}{q(r.launch_overhead_s, 'time')}"
            predicted = (f"T_predicted = max({derated}, kernels × launch overhead)"
                         f"{' + latency' if latency else ''} = max({shown}, {floor})")
        else:
            predicted = f"T_predicted = {derated}{' + latency' if latency else ''} = {shown}"
        tips[i["t_predicted"]] = f"{predicted}{latency} = {q(r.t_predicted_s, 'time')}"
        if r.efficiency:
            tips[i["efficiency"]] = (f"derating efficiency of {machine}: T_predicted = "
                                     f"{base} / {r.efficiency:g}")
        if r.launch_overhead_s:
            tips[i["overhead"]] = (f"launch overhead of {machine}: "
                                   f"{q(r.launch_overhead_s, 'time')} per kernel; below "
                                   f"{kernels}{q(r.launch_overhead_s, 'time')} an operation is "
                                   "overhead-bound")
        if r.bound == "overhead":
            tips[i["bound"]] = (f"overhead-bound: {derated} = {q(roofline / eff, 'time')} < "
                                f"{kernels}launch overhead {q(r.launch_overhead_s or 0.0, 'time')}")
    return tips


_BOUND_QCOLORS = {bound: QColor(color) for bound, color in BOUND_COLORS.items()}
_BLACK = QColor("#000000")

_palette_cache: list[Any] = [None]  # [(highlight, disabled text)] until the palette changes


def _palette_colors() -> tuple[QColor, QColor]:
    """(row highlight, greyed text) from the application palette: a cell asks for them on
    every paint, the application for its palette only when it has changed (the results
    view forgets them on a palette change: see :mod:`~workbench.ui.panels.results_table`)."""
    colors = _palette_cache[0]
    if colors is None:
        palette = QApplication.palette()
        highlight = QColor(palette.color(QPalette.ColorRole.Highlight))
        highlight.setAlpha(45)
        disabled = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        colors = _palette_cache[0] = (highlight, disabled)
    return colors


def forget_palette_colors() -> None:
    """Look the highlight colours up again (the application's palette has changed)."""
    _palette_cache[0] = None


class ResultsModel(QAbstractTableModel):
    """Rows = (operation id, machine id) keys in session order; cells computed lazily from
    the workspace's :class:`ResultCache` and cached per pair until a change touches them
    (a reorder or an added operation keeps every other pair's cache)."""

    def __init__(self, workspace: Workspace, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self._keys: list[tuple[int, int]] = []
        self._op_rows: dict[int, tuple[int, int]] = {}  # op id -> (first row, row count)
        self._ops: dict[int, OperationEntry] = {}
        self._machines: dict[int, HardwareEntry] = {}
        self._op_order: list[int] = []
        self._hw_order: list[int] = []
        self._cache: dict[tuple[int, int], _Row] = {}
        self._highlight: int | None = workspace.selection.current
        self._snapshot()
        workspace.signals.changed.connect(self._on_change)
        workspace.selection.changed.connect(self._on_selection)

    # -- bookkeeping -----------------------------------------------------------------------

    def _snapshot(self, keep_cache: bool = True) -> None:
        session = self.workspace.document.session
        self._ops = {e.id: e for e in session.operations}
        self._machines = {e.id: e for e in session.hardware}
        self._hw_order = [h.id for h in session.hardware]
        self._set_order([e.id for e in session.operations])
        if keep_cache:
            self._cache = {k: v for k, v in self._cache.items()
                           if k[0] in self._ops and k[1] in self._machines}
        else:
            self._cache = {}

    def _set_order(self, op_order: list[int]) -> None:
        machines = self._hw_order
        m = len(machines)
        self._op_order = op_order
        self._keys = [(op, hw) for op in op_order for hw in machines]
        self._op_rows = {op: (i * m, m) for i, op in enumerate(op_order)}

    def reset(self, keep_cache: bool = True) -> None:
        self.beginResetModel()
        self._snapshot(keep_cache)
        self.endResetModel()

    def _follow_structure(self) -> None:
        """Operations added, removed or moved: insert, remove or move their rows (a sorted
        proxy then places only those rows); anything else resets the model."""
        session = self.workspace.document.session
        new = [e.id for e in session.operations]
        old = self._op_order
        if [h.id for h in session.hardware] != self._hw_order:
            self.reset()
            return
        self._ops.update({e.id: e for e in session.operations})
        removed = set(old) - set(new)
        added = set(new) - set(old)
        if removed and added:
            self.reset()
            return
        if removed:
            if [i for i in old if i not in removed] != new:
                self.reset()
                return
            for first, stop in reversed(_runs([i for i, op in enumerate(old) if op in removed])):
                self._remove_ops(first, stop)
        elif added:
            if [i for i in new if i not in added] != old:
                self.reset()
                return
            for first, stop in _runs([i for i, op in enumerate(new) if op in added]):
                self._insert_ops(first, new[first:stop])
        elif new != old:
            moved = _single_move(old, new)
            if moved is None:
                self.reset()
                return
            source, target = moved
            op = old[source]
            self._remove_ops(source, source + 1)
            self._insert_ops(target, [op])
        for op in removed:
            del self._ops[op]
        if removed:
            self._cache = {k: v for k, v in self._cache.items() if k[0] not in removed}

    def _remove_ops(self, first: int, stop: int) -> None:
        m = len(self._hw_order)
        order = self._op_order
        if m:
            self.beginRemoveRows(QModelIndex(), first * m, stop * m - 1)
        self._set_order(order[:first] + order[stop:])
        if m:
            self.endRemoveRows()

    def _insert_ops(self, first: int, ops: list[int]) -> None:
        m = len(self._hw_order)
        order = self._op_order
        if m:
            self.beginInsertRows(QModelIndex(), first * m, (first + len(ops)) * m - 1)
        self._set_order(order[:first] + ops + order[first:])
        if m:
            self.endInsertRows()

    def key(self, row: int) -> tuple[int, int]:
        """(operation id, machine id) of a row."""
        return self._keys[row]

    def rows_of(self, op_id: int | None) -> range:
        first, count = self._op_rows.get(op_id, (0, 0)) if op_id is not None else (0, 0)
        return range(first, first + count)

    def _touch_rows(self, rows: Sequence[int] | range) -> None:
        """Forget these rows' cells and announce the change. A few rows shown before (an
        edit of one operation) are re-evaluated at once and only their changed cells are
        announced: the view repaints those cells, not whole rows."""
        if not rows:
            return
        if len(rows) > _DIFF_ROWS:  # (a whole model: every cell of each run of rows)
            cache, keys, last = self._cache, self._keys, len(COLUMNS) - 1
            for row in rows:
                cache.pop(keys[row], None)
            for first, stop in _runs(sorted(set(rows))):
                self.dataChanged.emit(self.index(first, 0), self.index(stop - 1, last))
            return
        spans: dict[int, tuple[tuple[int, int], ...]] = {}  # row -> (first, last) columns
        for row in rows:
            key = self._keys[row]
            old = self._cache.pop(key, None)
            if old is None:
                spans[row] = ((0, len(COLUMNS) - 1),)
                continue
            new = self._evaluate(*key)
            self._cache[key] = new
            spans[row] = tuple((first, stop - 1)
                               for first, stop in _runs(new.changed_columns(old)))
        # contiguous rows with the same changed columns -> one dataChanged per column run
        ordered = sorted(spans)
        start = prev = ordered[0]
        for row in [*ordered[1:], None]:
            if row is not None and row == prev + 1 and spans[row] == spans[prev]:
                prev = row
                continue
            for first, last in spans[prev]:
                self.dataChanged.emit(self.index(start, first), self.index(prev, last))
            if row is not None:
                start = prev = row

    def _on_change(self, change: Change) -> None:
        what = change.what
        if what == What.OPERATION:
            fields = set(change.fields)
            if fields and fields <= {"color", "visible", "label"}:
                return  # display settings only: no number changes
            if len(change.ids) > 1:  # a group edit (a whole model): one pass over its rows
                self._touch_rows([r for op_id in change.ids for r in self.rows_of(op_id)])
                return
            for op_id in change.ids:
                self._touch_rows(self.rows_of(op_id))
        elif what == What.HARDWARE:
            if change.fields == ("visible",):
                return
            ids = set(change.ids)
            self._touch_rows([i for i, (_, hw) in enumerate(self._keys) if hw in ids])
        elif what == What.OPERATIONS:
            self._follow_structure()
        elif what == What.MACHINES:
            self.reset()
        elif what == What.SESSION:
            self.reset(keep_cache=False)

    def _on_selection(self, op_id: int | None) -> None:
        old, self._highlight = self._highlight, op_id
        last = len(COLUMNS) - 1
        for rows in (self.rows_of(old), self.rows_of(op_id)):
            if rows:
                self.dataChanged.emit(self.index(rows.start, 0), self.index(rows.stop - 1, last),
                                      [Qt.ItemDataRole.BackgroundRole])

    # -- evaluation ------------------------------------------------------------------------

    def row_data(self, row: int) -> _Row:
        key = self._keys[row]
        cached = self._cache.get(key)
        if cached is None:
            cached = self._evaluate(*key)
            self._cache[key] = cached
        return cached

    def sort_key(self, row: int, col: int) -> Any:
        """Raw value of a cell for sorting: a float, lower-case text, or ``None``."""
        value = self.row_data(row).raw[col]
        return value.lower() if isinstance(value, str) else value

    def _evaluate(self, op_id: int, hw_id: int) -> _Row:
        results = self.workspace.results
        op_name = self._ops[op_id].operation.name
        hw = self._machines[hw_id].hardware
        try:
            pair = results.pair(op_id, hw_id)
            result, reason = pair.result, (pair.skipped.reason if pair.skipped else "")
        except COUNTING_ERRORS as exc:  # invalid parameters: a row that says why
            result, reason = None, f"Cannot count {op_name}: {exc}"
        if result is not None:
            return _Row([c.value(result) for c in COLUMNS], "", result, hw.label)
        raw: list[Any] = [None] * len(COLUMNS)
        raw[0], raw[1] = op_name, hw.label
        try:  # FLOPs, bytes and intensity do not depend on the machine
            counts = results.counts(op_id)
        except COUNTING_ERRORS:
            counts = None  # (the reason says why: those cells stay empty)
        if counts is not None:
            flops, nbytes = float(counts.flops), float(counts.bytes)
            raw[COLUMN_INDEX["flops"]] = flops
            raw[COLUMN_INDEX["bytes"]] = nbytes
            raw[COLUMN_INDEX["intensity"]] = intensity_of(flops, nbytes)
        return _Row(raw, reason or "not evaluated", None)

    # -- Qt model interface ----------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._keys)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        column = COLUMNS[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.title
        if role == Qt.ItemDataRole.ToolTipRole:
            return column.tip
        if role == Qt.ItemDataRole.TextAlignmentRole:
            # numeric titles centred: right-aligned, they would run under the sort arrow
            return _CENTER if column.numeric else _LEFT
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        return self.cell(index.row(), index.column(), role)

    def cell(self, row: int, col: int, role: int) -> Any:
        """``data()`` of the cell at (row, col), without a model index."""
        if role == _DISPLAY:
            return self.row_data(row).text_of(col)
        if role == SORT_ROLE:
            return self.sort_key(row, col)
        if role == _ALIGNMENT:
            return _RIGHT if COLUMNS[col].numeric else _LEFT
        if role in (_FOREGROUND, _BACKGROUND):  # (copies: the colours are shared)
            color = (self._foreground(self.row_data(row), col) if role == _FOREGROUND else
                     self._background(row))
            return None if color is None else QColor(color)
        if role == _TOOLTIP:
            data = self.row_data(row)
            if data.reason:
                return data.reason
            return data.tip_of(col)
        if role == FILTER_ROLE:  # names only: filtering needs no evaluation
            op_id, hw_id = self._keys[row]
            return (f"{self._ops[op_id].operation.name}\t"
                    f"{self._machines[hw_id].hardware.label}")
        if role == KEY_ROLE:
            return self._keys[row]
        return None

    def look(self, row: int, col: int) -> tuple[str, QColor | None, QColor | None]:
        """What a cell shows, as one call (see :mod:`~workbench.ui.panels.results_delegate`):
        its text and its text and background colours (None: the view's)."""
        data = self.row_data(row)
        return data.text_of(col), self._foreground(data, col), self._background(row)

    @staticmethod
    def _foreground(data: _Row, col: int) -> QColor | None:
        """A cell's text colour: greyed in a skipped row, the bound's own in its column."""
        if data.reason:
            return _palette_colors()[1]
        if col == _BOUND_COL:
            return _BOUND_QCOLORS.get(data.raw[col], _BLACK)
        return None

    def _background(self, row: int) -> QColor | None:
        """A cell's background: the highlight in the rows of the operation highlighted."""
        if self._highlight is not None and self._keys[row][0] == self._highlight:
            return _palette_colors()[0]
        return None

    def fill_roles(self, row: int, col: int, span: QModelRoleDataSpan) -> None:
        """``multiData`` of a cell: each role's ``cell()`` value; roles the model never
        answers (a delegate asks for fonts, icons, check states) are left empty at once."""
        cell = self.cell
        for item in span:
            role = item.role()
            item.setData(cell(row, col, role) if role in _ANSWERED else None)

    # -- export ----------------------------------------------------------------------------

    @staticmethod
    def export_header() -> list[str]:
        """The Results CSV's header (:mod:`workbench.io.tables`, as the command line's)."""
        return result_header()

    def export_row(self, row: int) -> list[Any]:
        """The Results CSV's row of a row of the table (numbers in base SI units)."""
        op_id, hw_id = self._keys[row]
        try:
            pair = self.workspace.results.pair(op_id, hw_id)
        except COUNTING_ERRORS:
            pair = None
        if pair is not None and pair.result is not None:
            return result_cells(pair.result.renamed(self._ops[op_id].operation.name))
        data = self.row_data(row)
        raw = data.raw
        return skipped_cells(raw[0], raw[1], data.reason, raw[COLUMN_INDEX["flops"]],
                             raw[COLUMN_INDEX["bytes"]], raw[COLUMN_INDEX["intensity"]])


#: the flags of a results cell (the source's own: a table model's for any cell)
_CELL_FLAGS = (Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
               | Qt.ItemFlag.ItemNeverHasChildren)


class ResultsProxy(QSortFilterProxyModel):
    """Sorts on :data:`SORT_ROLE` (numbers as numbers) and filters on the operation and
    machine names. Rows without a value (skipped pairs) go last in either order."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterRole(FILTER_ROLE)
        self.setFilterKeyColumn(0)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setSortCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setDynamicSortFilter(True)

    _source: ResultsModel | None = None  # the source model, when it is a ResultsModel

    def setSourceModel(self, model) -> None:
        super().setSourceModel(model)
        # kept: asking Qt for it on every painted cell costs as much as a role
        self._source = model if isinstance(model, ResultsModel) else None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        """A results cell's flags (those of every cell of a table model), without mapping
        ``index``: the view asks for each cell it paints, and each mapping asks the source
        for its row and column counts."""
        if self._source is None or not index.isValid():
            return super().flags(index)
        return _CELL_FLAGS

    def multiData(self, index: QModelIndex | QPersistentModelIndex,
                  roleDataSpan: QModelRoleDataSpan) -> None:
        """Every role a delegate asks for, in one call: the same values as ``data()`` role
        by role, with the index mapped once (each ``data()`` through the proxy maps it again,
        and each mapping asks the source for its row and column counts)."""
        model = self._source
        source = self.mapToSource(index) if model is not None else None
        if source is None or not source.isValid():
            super().multiData(index, roleDataSpan)
            return
        model.fill_roles(source.row(), source.column(), roleDataSpan)

    def lessThan(self, left: QModelIndex | QPersistentModelIndex,
                 right: QModelIndex | QPersistentModelIndex) -> bool:
        model = self.sourceModel()
        if isinstance(model, ResultsModel):  # the same as data(SORT_ROLE), without Qt calls
            a = model.sort_key(left.row(), left.column())
            b = model.sort_key(right.row(), right.column())
        else:
            a = model.data(left, SORT_ROLE)
            b = model.data(right, SORT_ROLE)
        if a is None or b is None:
            if a is None and b is None:
                return left.row() < right.row()
            # None last whatever the order: Qt sorts descending with the arguments swapped.
            descending = self.sortOrder() == Qt.SortOrder.DescendingOrder
            return (a is None) == descending
        if type(a) is not type(b):
            a, b = str(a), str(b)
        if a == b:
            return left.row() < right.row()
        return a < b


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """Sorted indices as (first, stop) runs of consecutive values: [1, 2, 5] → [(1, 3), (5, 6)]."""
    runs: list[tuple[int, int]] = []
    first = stop = 0
    started = False
    for i in indices:  # (a run's pair made once it ends: a whole model's rows are thousands)
        if started and i == stop:
            stop = i + 1
            continue
        if started:
            runs.append((first, stop))
        first, stop, started = i, i + 1, True
    if started:
        runs.append((first, stop))
    return runs


def _single_move(old: list[int], new: list[int]) -> tuple[int, int] | None:
    """(index in ``old``, index in ``new``) if ``new`` is ``old`` with one item moved."""
    first = next(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b)
    last = next(i for i in range(len(old) - 1, -1, -1) if old[i] != new[i])
    if old[first + 1:last + 1] == new[first:last] and new[last] == old[first]:
        return first, last  # moved down
    if old[first:last] == new[first + 1:last + 1] and new[first] == old[last]:
        return last, first  # moved up
    return None
