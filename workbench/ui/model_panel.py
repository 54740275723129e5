"""The Model tab: a whole model's set-up (its editor) and its model-level results on every
machine of the session — time lower bound and predicted time (the sum of each kernel's
prediction with its launch overhead), TTFT or TPOT, tokens per second, the share of time per
operation kind, and memory against capacity × t — with the derivation of every figure.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change
from workbench.model.llm import MODEL_CONVENTIONS
from workbench.model.llm_results import MachineResult, derivation, model_result, model_totals
from workbench.model.llm_session import ModelEntry
from workbench.model.units import format_number, format_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.model_editor import ModelEditor
from workbench.ui.widgets import escape_html

__all__ = ["ModelPanel", "RESULT_COLUMNS"]

RESULT_COLUMNS = ("Machine", "T_lower", "T_predicted", "tokens/s", "Memory", "Capacity × t",
                  "Fits", "Share of time")


class ModelPanel(QWidget):
    """Model selector, the model's editor, its results per machine and their derivation."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ModelPanel")
        self.workspace = workspace
        self.document = workspace.document
        self._shown = True
        self._stale = True
        self.results: list[MachineResult] = []
        self.totals = None

        self.chooser = QComboBox(self)
        self.chooser.setObjectName("modelChooser")
        self.chooser.currentIndexChanged.connect(self._on_choose)
        self.editor = ModelEditor(workspace, self)
        self.summary = QLabel(self)
        self.summary.setObjectName("modelSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(RESULT_COLUMNS), self)
        self.table.setObjectName("modelResults")
        self.table.setHorizontalHeaderLabels(list(RESULT_COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.derivation = QTextBrowser(self)
        self.derivation.setObjectName("modelDerivation")

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.chooser)
        left_layout.addWidget(self.editor)
        right = QSplitter(Qt.Orientation.Vertical, self)
        top = QWidget(right)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.summary)
        top_layout.addWidget(self.table)
        right.addWidget(top)
        right.addWidget(self.derivation)
        scroll = QScrollArea(self)  # the form scrolls in a short dock; the window stays small
        scroll.setObjectName("modelEditorScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(left)
        self.summary.setMinimumWidth(1)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(scroll)
        split.addWidget(right)
        split.setStretchFactor(1, 3)
        outer = QScrollArea(self)  # a short dock scrolls: the window's minimum size stays
        outer.setObjectName("modelPanelScroll")
        outer.setWidgetResizable(True)
        outer.setFrameShape(QScrollArea.Shape.NoFrame)
        split.setMinimumSize(560, 260)
        outer.setWidget(split)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(outer)

        workspace.signals.changed.connect(self._on_change)
        workspace.selection.changed.connect(self._on_selection)
        self._fill_chooser()

    # -- which model -----------------------------------------------------------------------

    @property
    def model_id(self) -> int | None:
        return self.editor.model_id

    def _model(self) -> ModelEntry | None:
        return next((m for m in self.document.session.models if m.id == self.model_id), None)

    def show_model(self, model_id: int | None) -> None:
        index = self.chooser.findData(model_id)
        if index >= 0 and index != self.chooser.currentIndex():
            self.chooser.setCurrentIndex(index)  # (shows it)
            return
        self.editor.show_model(model_id)
        self._stale = True
        self.refresh()

    def _fill_chooser(self) -> None:
        models = self.document.session.models
        keep = self.model_id
        self.chooser.blockSignals(True)
        self.chooser.clear()
        for m in models:
            self.chooser.addItem(m.label, m.id)
        self.chooser.setEnabled(bool(models))
        if not models:
            self.chooser.addItem("No model: Edit ▸ Add Model…", None)
        index = self.chooser.findData(keep) if keep is not None else -1
        self.chooser.setCurrentIndex(index if index >= 0 else 0)
        self.chooser.blockSignals(False)
        self.editor.show_model(self.chooser.currentData())
        self._stale = True
        self.refresh()

    def _on_choose(self, _index: int) -> None:
        self.editor.show_model(self.chooser.currentData())
        self._stale = True
        self.refresh()

    def _on_selection(self, op_id) -> None:
        if op_id is None:
            return
        model = self.document.session.model_of(op_id)
        if model is not None and model.id != self.model_id:
            self.show_model(model.id)

    def _on_change(self, change: Change) -> None:
        models = self.document.session.models
        what = change.what
        if what == "session" or (what == "operations" and self._count() != len(models)):
            self._fill_chooser()
            return
        model = self._model()
        if what == "operation":
            if model is None or not change.ids or change.ids[0] not in model.op_ids:
                return
            index = self.chooser.findData(model.id)
            if index >= 0 and self.chooser.itemText(index) != model.label:
                self.chooser.setItemText(index, model.label)
        if what in ("operation", "operations", "hardware", "machines"):
            self._stale = True
            self.refresh()

    def _count(self) -> int:
        return sum(1 for i in range(self.chooser.count()) if self.chooser.itemData(i) is not None)

    def set_shown(self, shown: bool) -> None:
        """Behind another tab the results are not computed; they are when it is shown."""
        self._shown = shown
        if shown:
            self.refresh()

    # -- results ---------------------------------------------------------------------------

    def refresh(self) -> None:
        if not self._stale or not self._shown:
            return
        self._stale = False
        model = self._model()
        self.table.setRowCount(0)
        if model is None:
            self.results, self.totals = [], None
            self.summary.setText("")
            self.derivation.setHtml("<p>Add a model (Edit ▸ Add Model…) to see its time, "
                                    "tokens per second and memory on each machine.</p>")
            return
        arch, setup = model.arch, model.setup
        self.totals = totals = model_totals(arch, setup)
        machines = [e.hardware for e in self.document.session.hardware if e.visible]
        self.results = [model_result(arch, setup, hw) for hw in machines]
        what = "TTFT" if setup.phase == "prefill" else "TPOT"
        self.table.setHorizontalHeaderItem(2, QTableWidgetItem(f"{what} (predicted)"))
        self.summary.setText(
            f"<b>{escape_html(model.label)}</b>, {setup.phase}: per chip "
            f"{format_quantity(totals.flops, 'flops')}, {format_quantity(totals.bytes, 'bytes')}"
            f" per step; weights {format_quantity(totals.weight_bytes, 'bytes')}, KV cache "
            f"{format_quantity(totals.kv_cache_bytes, 'bytes')}")
        for r in self.results:
            self._add_row(r)
        self.derivation.setHtml(self._derivation_html(model))

    def _add_row(self, r: MachineResult) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        q = format_quantity
        if r.skipped:
            cells = [r.hardware, "—", "—", "—", q(r.memory_needed_bytes, "bytes"), "", "",
                     "skipped: " + r.skipped]
        else:
            fits = ("fits" if r.fits else "does not fit") if r.fits is not None else "no capacity"
            share = ", ".join(f"{k} {100 * v:.0f} %" for k, v in r.share.items() if v >= 0.005)
            cells = [r.hardware, q(r.t_lower_s, "time"), q(r.t_predicted_s, "time"),
                     format_number(r.tokens_per_s), q(r.memory_needed_bytes, "bytes"),
                     q(r.memory_available_bytes, "bytes")
                     if r.memory_available_bytes is not None else "—", fits, share]
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if col == 6 and r.fits is False:
                item.setForeground(QColor("#D55E00"))
            self.table.setItem(row, col, item)

    def _derivation_html(self, model: ModelEntry) -> str:
        lines = derivation(model.arch, model.setup, self.totals, self.results)
        rows = "".join(f"<tr><td><b>{escape_html(a)}</b></td><td>{escape_html(b)}</td></tr>"
                       for a, b in lines)
        conventions = "".join(f"<li>{escape_html(c)}</li>" for c in MODEL_CONVENTIONS)
        return (f"<h4>Derivation</h4><table cellspacing='4'>{rows}</table>"
                f"<p>Each operation's own FLOP and byte terms are in the editor's derivation "
                f"when it is selected.</p><h4>Conventions</h4><ul>{conventions}</ul>")
