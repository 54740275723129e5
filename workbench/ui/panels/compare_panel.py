"""The "Compare" panel: compared pairs, and one operation across every machine.

**Compared pairs** (fused vs unfused, naive vs flash): one row per pair and machine, with
what changing from the first operation (the baseline) to the second buys there:

* bytes saved = bytes(first) − bytes(second);
* FLOPs added = FLOPs(second) − FLOPs(first);
* predicted speed-up = T_predicted(first) / T_predicted(second), T_predicted =
  max(T_lower / efficiency, kernels × launch overhead): launches saved by fusing count.

Pairs are made with Edit ▸ Compare With… (:class:`CompareDialog`, or :func:`add_comparison`)
and removed or swapped here; every change is one undo step (:meth:`Document.set_comparisons`).
"Show pairs on the chart" is the session's ``view.pairs`` flag.

**Across machines**: the selected operation on every machine of the session, fastest first:
the ceiling used, the bound, T_lower, the predicted time at the machine's derating efficiency
(T_predicted = max(T_lower / efficiency, launch overhead)), the overhead floor, and how much
slower than the fastest machine it is.

Nothing is computed while the panel is hidden; an operation edit updates only the pair rows
that involve it.

Public API::

    panel = ComparePanel(workspace)
    panel.pairs_table, panel.machines_table              # QTableWidgets
    panel.pair_rows() -> [(comparison id, hw id)]
    panel.remove_selected_pair(), panel.swap_selected_pair()
    add_comparison(document, first_name, second_name) -> str   # "" or why not
    CompareDialog(workspace, op_id, parent)               # choose the other operation
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change, Document
from workbench.document.changes import What
from workbench.model.comparison import SPEEDUP_FORMULA, compare_results
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.limits import OverBudget
from workbench.model.roofline import FORMULAS, Result
from workbench.model.session import Comparison
from workbench.model.units import format_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.mnemonics import escaped
from workbench.ui.panels.docked import DockedPanel
from workbench.ui.panels.measurements_panel import scrolled_layout
from workbench.ui.panels.results_table import BOUND_COLORS
from workbench.ui.widgets import WideSplitter, escape_html

__all__ = ["ComparePanel", "CompareDialog", "add_comparison", "PAIR_COLUMNS",
           "MACHINE_COLUMNS"]

PAIR_COLUMNS = (
    ("first", "First (baseline)", "The baseline operation"),
    ("second", "Second", "The alternative"),
    ("machine", "Machine", "The machine both are predicted on"),
    ("bytes_saved", "Bytes saved", "bytes(first) − bytes(second); negative: the second moves "
                                   "more bytes"),
    ("flops_added", "FLOPs added", "FLOPs(second) − FLOPs(first) (recomputation shows here)"),
    ("speedup", "Predicted speed-up", SPEEDUP_FORMULA),
)
MACHINE_COLUMNS = (
    ("machine", "Machine", "A machine of the session"),
    ("ceiling", "Ceiling used", "The dense peak at the precision used, and the memory level's "
                                "bandwidth"),
    ("bound", "Bound", FORMULAS["bound"]),
    ("t_lower", "T_lower", FORMULAS["t_lower"]),
    ("t_predicted", "T_predicted", FORMULAS["t_predicted"] + " (efficiency: the machine's "
                                                             "derating; none: 1)"),
    ("overhead", "Overhead floor", "The machine's launch overhead: no kernel finishes faster"),
    ("relative", "vs fastest", "T_predicted / T_predicted of the fastest machine"),
)
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_DASH = "—"


def add_comparison(document: Document, first: str, second: str) -> str:
    """Compare two operations (by name; ``first`` is the baseline) as one undo step. Returns
    "" on success, else why nothing was added."""
    session = document.session
    names = [e.operation.name for e in session.operations]
    for name in (first, second):
        if names.count(name) != 1:
            return (f"no operation named {name!r}" if name not in names
                    else f"{names.count(name)} operations are named {name!r}; rename one")
    if first == second:
        return "choose two different operations"
    for c in session.comparisons:
        if {c.first, c.second} == {first, second}:
            return f"{c.first!r} and {c.second!r} are already compared"
    document.seal()
    try:
        document.set_comparisons(list(session.comparisons) + [Comparison(first, second)],
                                 f"Compare {first} with {second}")
    except OverBudget as exc:  # (a session file Save would refuse)
        return str(exc)
    document.seal()
    return ""


def _item(text: str, tip: str = "", right: bool = False, color: str | None = None
          ) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if tip:
        item.setToolTip(tip)
    if right:
        item.setTextAlignment(_RIGHT)
    if color is not None:
        item.setForeground(QColor(color))
    return item


def _cell(text: str, tip: str = "", right: bool = False, color: str | None = None) -> tuple:
    return (text, tip, right, color)


def _put(table, row: int, col: int, cell: tuple) -> None:
    """Show ``cell`` (from :func:`_cell`) in a table cell, leaving a cell that already shows
    it alone: an edit then repaints the cells whose text changed, not the whole table."""
    shown = table.__dict__.setdefault("_cells", {})
    if shown.get((row, col)) == cell and table.item(row, col) is not None:
        return
    shown[(row, col)] = cell
    table.setItem(row, col, _item(*cell))


def _launches(result) -> str:
    """``, 3 kernels`` for an operation that launches more than one."""
    return f", {result.kernels} kernels" if result.kernels > 1 else ""


def _speedup(value: float) -> str:
    return f"{value:.3g}×"


class CompareDialog(QDialog):
    """Choose the operation to compare the selected one with. Not modal to the test: open it
    with ``open()``, set ``other_combo`` and ``baseline_box``, then ``accept()``."""

    def __init__(self, workspace: Workspace, op_id: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_dialog")
        self.setWindowTitle("Compare With")
        self.workspace = workspace
        self.op_id = op_id
        session = workspace.document.session
        name = workspace.document.operation(op_id).operation.name
        layout = QVBoxLayout(self)
        form = QFormLayout()
        shown = QLabel(name)
        shown.setTextFormat(Qt.TextFormat.PlainText)  # (a name is shown as it is written)
        form.addRow("Operation", shown)
        self.other_combo = QComboBox()
        self.other_combo.setObjectName("compare_other")
        for e in session.operations:
            if e.id != op_id:
                self.other_combo.addItem(e.operation.name, e.id)
        form.addRow("Compare with", self.other_combo)
        self.baseline_box = QCheckBox(f"“{escaped(name)}” is the baseline (first)")
        self.baseline_box.setObjectName("compare_baseline")
        self.baseline_box.setChecked(True)
        self.baseline_box.setToolTip("The speed-up is T_predicted(first) / T_predicted(second):"
                                     " the baseline is the one you start from (unfused, naive)")
        form.addRow(self.baseline_box)
        layout.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(self.other_combo.count() > 0)
        layout.addWidget(buttons)

    def chosen(self) -> tuple[int, int] | None:
        """(first id, second id) as chosen, or None when there is no other operation."""
        other = self.other_combo.currentData()
        if other is None:
            return None
        return (self.op_id, other) if self.baseline_box.isChecked() else (other, self.op_id)


class ComparePanel(DockedPanel, QWidget):
    """Compared pairs and the selected operation across machines (see the module docstring)."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_panel")
        self.workspace = workspace
        self.document = workspace.document
        self._pairs_stale = True
        self._machines_stale = True
        self._pair_keys: list[tuple[int, int]] = []
        self.pair_rebuilds = 0

        layout = scrolled_layout(self)
        splitter = WideSplitter()  # the pairs beside the machines in the short bottom row
        splitter.setObjectName("compare_split")

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        title = QLabel("<b>Compared pairs</b>")
        bar.addWidget(title)
        bar.addStretch(1)
        self.show_pairs_box = QCheckBox("Show pairs on the chart")
        self.show_pairs_box.setObjectName("show_pairs")
        self.show_pairs_box.setToolTip("Draw each compared pair linked on the chart")
        self.show_pairs_box.toggled.connect(
            lambda checked: self.document.set_view("pairs", bool(checked)))
        bar.addWidget(self.show_pairs_box)
        self.swap_button = QPushButton("Swap")
        self.swap_button.setObjectName("swap_pair")
        self.swap_button.setToolTip("Make the second operation the baseline")
        self.swap_button.clicked.connect(self.swap_selected_pair)
        bar.addWidget(self.swap_button)
        self.remove_button = QPushButton("Remove Pair")
        self.remove_button.setObjectName("remove_pair")
        self.remove_button.setToolTip("Stop comparing the selected pair")
        self.remove_button.clicked.connect(self.remove_selected_pair)
        bar.addWidget(self.remove_button)
        top_layout.addLayout(bar)
        self.pairs_table = self._table("pairs_table", PAIR_COLUMNS)
        top_layout.addWidget(self.pairs_table)
        self.empty_label = QLabel("No compared pairs. Select an operation and use "
                                  "Edit ▸ Compare With… (fused vs unfused, naive vs flash).")
        self.empty_label.setWordWrap(True)
        self.empty_label.setEnabled(False)
        top_layout.addWidget(self.empty_label)
        splitter.addWidget(top)

        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        self.machines_title = QLabel("")
        self.machines_title.setObjectName("across_title")
        bottom_layout.addWidget(self.machines_title)
        self.machines_table = self._table("machines_table", MACHINE_COLUMNS)
        bottom_layout.addWidget(self.machines_table)
        splitter.addWidget(bottom)
        layout.addWidget(splitter)

        workspace.signals.changed.connect(self._on_change)
        workspace.selection.changed.connect(self._on_selection)
        self._sync_view()

    @staticmethod
    def _table(name: str, columns: tuple[tuple[str, str, str], ...]) -> QTableWidget:
        table = QTableWidget(0, len(columns))
        table.setObjectName(name)
        table.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
        for i, (_key, title, tip) in enumerate(columns):
            item = QTableWidgetItem(title)
            item.setToolTip(tip)
            table.setHorizontalHeaderItem(i, item)
        table.verticalHeader().setVisible(False)
        table.setMinimumHeight(50)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        table.horizontalHeader().setStretchLastSection(True)
        for i in range(len(columns)):
            table.setColumnWidth(i, 130)
        return table

    # -- public ----------------------------------------------------------------------------

    def pair_rows(self) -> list[tuple[int, int]]:
        self.refresh(force=True)
        return list(self._pair_keys)

    def cell(self, table: QTableWidget, row: int, key: str) -> str:
        """The text of a cell by column key (refreshing first)."""
        self.refresh(force=True)
        columns = PAIR_COLUMNS if table is self.pairs_table else MACHINE_COLUMNS
        col = next(i for i, c in enumerate(columns) if c[0] == key)
        item = table.item(row, col)
        return item.text() if item is not None else ""

    def _selected_comparison(self) -> Comparison | None:
        row = self.pairs_table.currentRow()
        if not 0 <= row < len(self._pair_keys):
            return None
        comp_id = self._pair_keys[row][0]
        return next((c for c in self.document.session.comparisons if c.id == comp_id), None)

    def remove_selected_pair(self) -> None:
        comparison = self._selected_comparison()
        if comparison is None:
            return
        items = [c for c in self.document.session.comparisons if c.id != comparison.id]
        self.document.seal()
        self.document.set_comparisons(items, f"Remove pair {comparison.first} / "
                                             f"{comparison.second}")
        self.document.seal()

    def swap_selected_pair(self) -> None:
        comparison = self._selected_comparison()
        if comparison is None:
            return
        items = [Comparison(c.second, c.first) if c.id == comparison.id else c
                 for c in self.document.session.comparisons]
        self.document.seal()
        self.document.set_comparisons(items, f"Swap pair {comparison.first} / "
                                             f"{comparison.second}")
        self.document.seal()

    # -- following the document ------------------------------------------------------------

    def _on_selection(self, _op_id: Any) -> None:
        self._machines_stale = True
        self.refresh()

    def _on_change(self, change: Change) -> None:
        what = change.what
        if what in (What.STATE, What.TITLE, What.MEASUREMENTS):
            return
        if what == What.VIEW:
            if not change.fields or "pairs" in change.fields:
                self._sync_view()
            return
        if what == What.OPERATION:
            if change.fields and set(change.fields) <= {"color", "visible", "label", "sweep"}:
                return
            if self.workspace.selection.current in change.ids:
                self._machines_stale = True
            self._operations_edited(change.ids)
        elif what == What.HARDWARE:
            if change.fields == ("visible",):
                return
            self._pairs_stale = self._machines_stale = True
        elif what == What.COMPARISONS:
            self._pairs_stale = True
        else:  # operations, machines, session
            self._pairs_stale = self._machines_stale = True
            if what == What.SESSION:
                self._sync_view()
        self.refresh()

    def _operations_edited(self, op_ids: tuple[int, ...]) -> None:
        if self._pairs_stale:
            return
        names = set()
        for op_id in op_ids:
            try:
                names.add(self.document.operation(op_id).operation.name)
            except KeyError:
                self._pairs_stale = True
                return
        by_id = {c.id: c for c in self.document.session.comparisons}
        touched = [row for row, (comp_id, _hw) in enumerate(self._pair_keys)
                   if comp_id in by_id and {by_id[comp_id].first, by_id[comp_id].second} & names]
        if not touched:
            return
        if not self.is_shown():
            self._pairs_stale = True
            return
        for row in touched:
            comp_id, hw_id = self._pair_keys[row]
            self._fill_pair_row(row, by_id[comp_id], hw_id)

    def _sync_view(self) -> None:
        self.show_pairs_box.blockSignals(True)
        self.show_pairs_box.setChecked(bool(self.document.session.view.pairs))
        self.show_pairs_box.blockSignals(False)

    def refresh(self, force: bool = False) -> None:
        if not force and not self.is_shown():
            return
        if self._pairs_stale:
            self._pairs_stale = False
            self._rebuild_pairs()
        if self._machines_stale:
            self._machines_stale = False
            self._rebuild_machines()

    def _catch_up(self) -> None:
        self.refresh()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self.refresh()

    # -- compared pairs --------------------------------------------------------------------

    def _rebuild_pairs(self) -> None:
        self.pair_rebuilds += 1
        session = self.document.session
        keys = [(c.id, hw.id) for c in session.comparisons for hw in session.hardware]
        by_id = {c.id: c for c in session.comparisons}
        current = self.pairs_table.currentRow()
        current_key = self._pair_keys[current] if 0 <= current < len(self._pair_keys) else None
        table = self.pairs_table
        table.setUpdatesEnabled(False)
        try:
            table.setRowCount(len(keys))
            self._pair_keys = keys
            for row, (comp_id, hw_id) in enumerate(keys):
                self._fill_pair_row(row, by_id[comp_id], hw_id)
        finally:
            table.setUpdatesEnabled(True)
        self.empty_label.setVisible(not session.comparisons)
        if current_key in keys:
            table.selectRow(keys.index(current_key))
        elif keys:
            table.selectRow(min(max(current, 0), len(keys) - 1))
        has = bool(keys)
        self.remove_button.setEnabled(has)
        self.swap_button.setEnabled(has)

    def _pair_of(self, name: str, hw_id: int):
        entry = self.document.session.operation_named(name)
        if entry is None:
            return None, f"no operation named {name!r}"
        try:
            pair = self.workspace.results.pair(entry.id, hw_id)
        except COUNTING_ERRORS as exc:  # invalid parameters: shown
            return None, f"cannot count {name}: {exc}"
        if pair.result is None:
            return None, pair.skipped.reason if pair.skipped else "not evaluated"
        return pair, ""

    def _fill_pair_row(self, row: int, comparison: Comparison, hw_id: int) -> None:
        table = self.pairs_table
        hw = self.document.machine(hw_id).hardware
        table.setItem(row, 0, _item(comparison.first, "baseline"))
        table.setItem(row, 1, _item(comparison.second))
        table.setItem(row, 2, _item(hw.label))
        first, why = self._pair_of(comparison.first, hw_id)
        second, why2 = (self._pair_of(comparison.second, hw_id) if first is not None
                        else (None, why))
        compared = (compare_results(comparison, first, second)
                    if first is not None and second is not None else None)
        if compared is None:
            reason = why2 or why or "cannot be compared on this machine"
            for col in range(3, len(PAIR_COLUMNS)):
                table.setItem(row, col, _item(_DASH, reason, right=True))
            return
        a, b = compared.first_result, compared.second_result
        table.setItem(row, 3, _item(
            format_quantity(compared.bytes_saved, "bytes"),
            f"{format_quantity(a.bytes, 'bytes')} − {format_quantity(b.bytes, 'bytes')}", True))
        table.setItem(row, 4, _item(
            format_quantity(compared.flops_added, "flops"),
            f"{format_quantity(b.flops, 'flops')} − {format_quantity(a.flops, 'flops')}", True))
        table.setItem(row, 5, _item(
            _speedup(compared.speedup),
            f"{SPEEDUP_FORMULA}\n= {format_quantity(a.t_predicted_s, 'time')} ({a.bound}-bound"
            f"{_launches(a)}) / {format_quantity(b.t_predicted_s, 'time')} ({b.bound}-bound"
            f"{_launches(b)}) = "
            f"{compared.speedup:.4g}", True))

    # -- across machines -------------------------------------------------------------------

    def _rebuild_machines(self) -> None:
        table = self.machines_table
        op_id = self.workspace.selection.current
        session = self.document.session
        try:
            entry = self.document.operation(op_id) if op_id is not None else None
        except KeyError:
            entry = None
        if entry is None:
            self.machines_title.setText("<b>Across machines</b>: select an operation")
            table.setRowCount(0)
            return
        self.machines_title.setText(f"<b>Across machines</b>: {escape_html(entry.operation.name)}")
        results: list[tuple[Any, Result]] = []
        skipped: list[tuple[Any, str]] = []
        for hw in session.hardware:
            try:
                pair = self.workspace.results.pair(op_id, hw.id)
            except COUNTING_ERRORS as exc:  # invalid parameters: listed as skipped
                skipped.append((hw, str(exc)))
                continue
            if pair.result is None:
                skipped.append((hw, pair.skipped.reason if pair.skipped else "not evaluated"))
            else:
                results.append((hw, pair.result))
        results.sort(key=lambda hr: (hr[1].t_predicted_s, hr[1].t_lower_s))
        fastest = results[0][1].t_predicted_s if results else None
        rows = len(results) + len(skipped)
        if table.rowCount() != rows:
            table.setRowCount(rows)
        for row, (hw, r) in enumerate(results):
            ceiling = (f"{format_quantity(r.peak_flops, 'flop_rate')} {r.precision_used}, "
                       f"{format_quantity(r.bandwidth, 'bandwidth')} {r.level}")
            _put(table, row, 0, _cell(hw.hardware.label))
            _put(table, row, 1, _cell(ceiling, f"ridge {r.ridge:.4g} FLOP/B"))
            _put(table, row, 2, _cell(r.bound, color=BOUND_COLORS.get(r.bound, "#000000")))
            _put(table, row, 3, _cell(format_quantity(r.t_lower_s, "time"),
                                        FORMULAS["t_lower"], True))
            eff = f"at efficiency {r.efficiency:g}" if r.efficiency else "no derating (1)"
            _put(table, row, 4, _cell(format_quantity(r.t_predicted_s, "time"),
                                        f"{FORMULAS['t_predicted']}, {eff}", True))
            overhead = (format_quantity(r.launch_overhead_s, "time")
                        if r.launch_overhead_s is not None else _DASH)
            _put(table, row, 5, _cell(overhead, "launch overhead of the machine", True))
            relative = r.t_predicted_s / fastest if fastest else float("nan")
            text = "fastest" if row == 0 else f"{relative:.3g}× slower"
            _put(table, row, 6, _cell(text, f"T_predicted / {format_quantity(fastest, 'time')}"
                                        if fastest else "", True))
        for i, (hw, reason) in enumerate(skipped, len(results)):
            _put(table, i, 0, _cell(hw.hardware.label, reason))
            for col in range(1, len(MACHINE_COLUMNS)):
                _put(table, i, col, _cell(_DASH, reason, col > 2))
