"""The Model tab: a whole model's set-up (its editor) and its model-level results on every
machine of the session — time lower bound and predicted time (the sum of each kernel's
prediction with its launch overhead), TTFT or TPOT, tokens per second, the share of time per
operation kind, and memory per chip against capacity — with the derivation of every figure.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change
from workbench.document.changes import What
from workbench.model.llm.architecture import MODEL_CONVENTIONS
from workbench.model.llm.results import (
    MachineResult,
    derivation,
    model_result,
    model_totals,
    request_lines,
    request_result,
)
from workbench.model.llm.session import ModelEntry
from workbench.ui.bridge import Workspace
from workbench.ui.editors.model_editor import ModelEditor
from workbench.ui.panels.model_figures import (
    request_cells,
    result_cells,
    summary_text,
    summary_tooltip,
)
from workbench.ui.panels.throughput_chart import ThroughputChart, chart_title, curves_for
from workbench.ui.widgets import escape_html

__all__ = ["ModelPanel", "RESULT_ROWS", "ROW_T_LOWER", "ROW_PREDICTED", "ROW_TOKENS",
           "ROW_MEMORY", "ROW_CAPACITY", "ROW_FITS", "ROW_SHARE", "ROW_MAX_BATCH",
           "ROW_REQUEST", "ROW_OUT_USER", "ROW_OUT_CHIP"]

#: The Throughput page's chart is given at least this many pixels of height when shown
#: (its row of docks grows), the row at most this share of the window's height
CHART_HEIGHT = 220
MOST_ROW_SHARE = 0.5

#: The results table has one column per visible machine and one row per figure:
#: (row label, what it is). Each cell's tooltip has its formula with the values.
RESULT_ROWS: tuple[tuple[str, str], ...] = (
    ("T_lower", "Roofline lower bound: Σ over kernels of max(T_math, T_mem)"),
    ("T_predicted", "Predicted time of one step: Σ over kernels of "
                    "max(T_lower / efficiency, launch overhead)"),
    ("tokens/s", "Tokens produced per second: tokens of the step / predicted time"),
    ("Memory / chip", "Memory one chip needs: its weights + KV cache + activations"),
    ("Capacity", "One chip's memory capacity"),
    ("Fits", "Memory needed per chip ≤ capacity"),
    ("Share of time", "Share of the predicted time per operation kind"),
    ("Max batch", "The largest batch whose weights, KV cache and activations fit one chip"),
    ("Request", "A whole request (Output tokens): TTFT, then one decode step per output "
                "token with the KV cache growing"),
    ("Out tok/s user", "Output tokens per second per user: output tokens / request time"),
    ("Out tok/s chip", "Output tokens per second per chip: batch × per user / chips"),
)
(ROW_T_LOWER, ROW_PREDICTED, ROW_TOKENS, ROW_MEMORY, ROW_CAPACITY, ROW_FITS,
 ROW_SHARE, ROW_MAX_BATCH, ROW_REQUEST, ROW_OUT_USER, ROW_OUT_CHIP) = range(len(RESULT_ROWS))


def _set_row_height(window: QMainWindow, dock: QDockWidget, height: int) -> None:
    """Make ``dock``'s row of docks ``height`` pixels high. ``resizeDocks`` counts a tabbed
    row's tab bar in one way or another depending on what was asked before, so the size
    asked is corrected by what it gave (twice at most)."""
    asked = height
    for _ in range(3):
        window.resizeDocks([dock], [asked], Qt.Orientation.Vertical)
        window.layout().activate()
        off = height - dock.height()
        if abs(off) <= 1:
            return
        asked += off


class ModelPanel(QWidget):
    """Model selector, the model's editor, its results per machine and their derivation."""

    #: Export Chart… was pressed (or chosen on the chart's right click): the window asks
    #: where to write the throughput chart
    export_chart_requested = Signal()
    #: Copy Chart was chosen on the chart's right click: the window copies it as an image
    copy_chart_requested = Signal()

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ModelPanel")
        self.workspace = workspace
        self.document = workspace.document
        self._shown = True
        self._stale = True
        self.results: list[MachineResult] = []
        self.requests: list = []
        self.totals = None

        self.chooser = QComboBox(self)
        self.chooser.setObjectName("modelChooser")
        self.chooser.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.chooser.setMinimumContentsLength(12)
        self.chooser.currentIndexChanged.connect(self._on_choose)
        self.editor = ModelEditor(workspace, self)
        self.summary = QLabel(self)
        self.summary.setObjectName("modelSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(len(RESULT_ROWS), 0, self)
        self.table.setObjectName("modelResults")
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        for row, (label, tip) in enumerate(RESULT_ROWS):
            item = QTableWidgetItem(label)
            item.setToolTip(tip)
            self.table.setVerticalHeaderItem(row, item)
        vh = self.table.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        hh = self.table.horizontalHeader()
        # the machines share the width: a last column stretched alone left the others
        # eliding their names
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        hh.setMinimumSectionSize(self.table.fontMetrics().horizontalAdvance("does not fit") + 12)
        hh.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.derivation = QTextBrowser(self)
        self.derivation.setObjectName("modelDerivation")

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.chooser)
        left_layout.addWidget(self.editor)
        results = QWidget(self)
        results_layout = QVBoxLayout(results)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.addWidget(self.summary)
        results_layout.addWidget(self.table, 1)
        # a bottom dock is short: the results and their derivation are two pages
        self.pages = QTabWidget(self)
        self.pages.setObjectName("modelPages")
        self.pages.setDocumentMode(True)
        self.pages.addTab(results, "Results")
        self.pages.addTab(self.derivation, "Derivation")
        self.pages.setTabToolTip(1, "The formula of every figure, with its values")
        throughput = QWidget(self)
        throughput_layout = QVBoxLayout(throughput)
        throughput_layout.setContentsMargins(0, 0, 0, 0)
        self.chart = ThroughputChart(throughput)
        self.export_chart_button = QPushButton("Export Chart…", throughput)
        self.export_chart_button.setObjectName("exportThroughput")
        self.export_chart_button.setToolTip("Save this chart as PDF, SVG or PNG, at the size, "
                                            "DPI and theme last chosen in File ▸ Export Figure")
        self.export_chart_button.clicked.connect(self.export_chart_requested)
        self.chart.export_requested.connect(self.export_chart_requested)
        self.chart.copy_requested.connect(self.copy_chart_requested)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.export_chart_button)
        throughput_layout.addWidget(self.chart, 1)
        throughput_layout.addLayout(row)
        self.pages.addTab(throughput, "Throughput")
        self.pages.setTabToolTip(2, "Output tokens/s per chip against TPOT, batch 1 … the "
                                    "largest that fits, on every machine")
        self.pages.currentChanged.connect(self._on_page)
        self._chart_stale = True
        #: (the row's height after the chart grew it, its height before) until given back
        self._lent: tuple[int, int] | None = None
        scroll = QScrollArea(self)  # the form scrolls in a short dock; the window stays small
        scroll.setObjectName("modelEditorScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(left)
        scroll.setMinimumWidth(left.minimumSizeHint().width()
                               + scroll.verticalScrollBar().sizeHint().width())
        self.summary.setMinimumWidth(1)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.setObjectName("modelSplit")
        split.setChildrenCollapsible(False)
        split.addWidget(scroll)
        split.addWidget(self.pages)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        self._split = split
        self._left = scroll
        self._sized = False
        outer = QScrollArea(self)  # a short dock scrolls: the window's minimum size stays
        outer.setObjectName("modelPanelScroll")
        outer.setWidgetResizable(True)
        outer.setFrameShape(QScrollArea.Shape.NoFrame)
        split.setMinimumSize(560, 160)
        outer.setWidget(split)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(outer)

        workspace.signals.changed.connect(self._on_change)
        workspace.selection.changed.connect(self._on_selection)
        self._fill_chooser()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._sized and self._split.width() > 0:
            # the form as narrow as it can be, the results the rest (until the user drags)
            self._sized = True
            left = self._left.minimumWidth()
            self._split.setSizes([left, max(self._split.width() - left, 1)])

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
        if what == What.SESSION or (what == What.OPERATIONS and self._count() != len(models)):
            self._fill_chooser()
            return
        model = self._model()
        if what == What.OPERATION:
            if model is None or not change.ids or change.ids[0] not in model.op_ids:
                return
            index = self.chooser.findData(model.id)
            if index >= 0 and self.chooser.itemText(index) != model.label:
                self.chooser.setItemText(index, model.label)
        if what in (What.OPERATION, What.OPERATIONS, What.HARDWARE, What.MACHINES):
            self._stale = True
            self.refresh()

    def _count(self) -> int:
        return sum(1 for i in range(self.chooser.count()) if self.chooser.itemData(i) is not None)

    def set_shown(self, shown: bool) -> None:
        """Behind another tab the results are not computed; they are when it is shown.
        Hidden, it gives back the room its chart took (:meth:`_give_back_room`)."""
        self._shown = shown
        if shown:
            self.refresh()
            if self.pages.currentIndex() == 2:  # (its room was given back when hidden)
                QTimer.singleShot(0, self, self._room_for_chart)
        else:
            # (once the tab raised in its place is laid out)
            QTimer.singleShot(0, self, self._give_back_room)

    # -- results ---------------------------------------------------------------------------

    def refresh(self) -> None:
        if not self._stale or not self._shown:
            return
        self._stale = False
        model = self._model()
        self.table.setColumnCount(0)
        self._chart_stale = True
        if model is None:
            self.results, self.totals = [], None
            self.chart.set_curves([], "")
            self.summary.setText("")
            self.summary.setToolTip("")
            self.derivation.setHtml("<p>Add a model (Edit ▸ Add Model…) to see its time, "
                                    "tokens per second and memory on each machine.</p>")
            return
        arch, setup = model.arch, model.setup
        self.totals = totals = model_totals(arch, setup)
        machines = [e.hardware for e in self.document.session.hardware if e.visible]
        self.results = [model_result(arch, setup, hw) for hw in machines]
        self.requests = [request_result(arch, setup, hw, setup.output_len,
                                        r if setup.phase == "prefill" else None)
                         if setup.output_len else None
                         for hw, r in zip(machines, self.results, strict=True)]
        what = "TTFT" if setup.phase == "prefill" else "TPOT"
        header = self.table.verticalHeaderItem(ROW_PREDICTED)
        header.setText(what)
        header.setToolTip(f"{what}: {RESULT_ROWS[ROW_PREDICTED][1]}")
        summary = summary_text(setup, totals)
        if not machines:  # the results need a machine: say so where they would be
            summary += ("<br><b>No machine in the session:</b> add one in the Hardware panel "
                        "(Add preset… or New machine) to see this model's time, tokens per "
                        "second and memory fit.")
        self.summary.setText(summary)
        self.summary.setToolTip(summary_tooltip(setup, totals))
        self.table.setColumnCount(len(self.results))
        for col, r in enumerate(self.results):
            head = QTableWidgetItem(r.hardware)
            head.setToolTip(r.hardware)
            self.table.setHorizontalHeaderItem(col, head)
            cells = result_cells(r, setup, totals) + request_cells(
                r, self.requests[col], setup, arch)
            for row, (text, tip) in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                if row in (ROW_T_LOWER, ROW_PREDICTED, ROW_TOKENS, ROW_MEMORY, ROW_CAPACITY,
                           ROW_MAX_BATCH, ROW_REQUEST, ROW_OUT_USER, ROW_OUT_CHIP):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                if row == ROW_FITS and r.fits is False:
                    item.setForeground(QColor("#D55E00"))
                self.table.setItem(row, col, item)
        self._fit_cells()
        self.derivation.setHtml(self._derivation_html(model))
        self._chart_stale = True
        self._on_page(self.pages.currentIndex())

    def _on_page(self, index: int) -> None:
        """The batch sweep is computed when its page is shown, and the row it sits in is
        made tall enough to read it."""
        if index == 2:
            self._update_chart()
            self._room_for_chart()
        else:
            self._give_back_room()

    def _room_for_chart(self) -> None:
        """Grow the window's row of docks this panel sits in until the throughput chart
        shows :data:`CHART_HEIGHT` pixels (at most :data:`MOST_ROW_SHARE` of the window):
        the bottom row is short, and a chart a few ticks high says nothing."""
        dock = self.parentWidget()
        window = dock.parentWidget() if isinstance(dock, QDockWidget) else None
        if not isinstance(window, QMainWindow) or dock.isFloating():
            return
        shown = self.chart.visibleRegion().boundingRect().height()
        lacking = CHART_HEIGHT - shown
        if lacking <= 0:
            return
        height = min(dock.height() + lacking, int(MOST_ROW_SHARE * window.height()))
        if height > dock.height():
            before = self._lent[1] if self._lent else dock.height()
            _set_row_height(window, dock, height)
            self._lent = (dock.height(), before)

    def _give_back_room(self) -> None:
        """Give the row of docks back the height it had before the throughput chart grew
        it: the roofline chart and the editor get their room again when the chart is left.
        A row the user has sized since (by more than a pixel or two) is left as it is."""
        lent, self._lent = self._lent, None
        dock = self.parentWidget()
        window = dock.parentWidget() if isinstance(dock, QDockWidget) else None
        if lent is None or not isinstance(window, QMainWindow) or dock.isFloating():
            return
        grown, before = lent
        area = window.dockWidgetArea(dock)
        # the row's height as laid out now, read off whichever of its docks is shown
        shown = [d for d in [dock, *window.tabifiedDockWidgets(dock)]
                 if d.isVisible() and not d.isFloating() and not d.visibleRegion().isEmpty()
                 and window.dockWidgetArea(d) == area]
        if not shown or abs(shown[0].height() - grown) > 2:
            return
        _set_row_height(window, shown[0], before)

    def _update_chart(self) -> None:
        if not self._chart_stale:
            return
        self._chart_stale = False
        model = self._model()
        if model is None:
            self.chart.set_curves([], "")
            return
        machines = [e.hardware for e in self.document.session.hardware if e.visible]
        self.chart.set_curves(curves_for(model.arch, model.setup, machines),
                              chart_title(model.label, model.setup))

    def shown_chart(self) -> tuple[list, str]:
        """The throughput chart's curves and title, as up to date as the model (what its
        export draws)."""
        self._update_chart()
        return self.chart.curves, self.chart.title

    def _fit_cells(self) -> None:
        """Every cell's text whole: the share row as tall as its lines (one kind a line), the
        machines' columns no narrower than their widest line (the table scrolls instead)."""
        metrics = self.table.fontMetrics()
        pad = 2 * self.table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin,
                                                 None, self.table) + 8
        widest, lines = metrics.horizontalAdvance("does not fit"), 1
        for col in range(self.table.columnCount()):
            for row in range(self.table.rowCount()):
                item = self.table.item(row, col)
                if item is None:
                    continue
                parts = item.text().split("\n")
                lines = max(lines, len(parts)) if row == ROW_SHARE else lines
                widest = max(widest, *(metrics.horizontalAdvance(p) for p in parts))
        self.table.horizontalHeader().setMinimumSectionSize(widest + pad)
        self.table.verticalHeader().resizeSection(
            ROW_SHARE, lines * metrics.lineSpacing() + 6)

    def _derivation_html(self, model: ModelEntry) -> str:
        lines = derivation(model.arch, model.setup, self.totals, self.results)
        lines += request_lines(model.setup, [r for r in self.requests if r is not None])
        rows = "".join(f"<tr><td><b>{escape_html(a)}</b></td><td>{escape_html(b)}</td></tr>"
                       for a, b in lines)
        conventions = "".join(f"<li>{escape_html(c)}</li>" for c in MODEL_CONVENTIONS)
        return (f"<h4>Derivation</h4><table cellspacing='4'>{rows}</table>"
                f"<p>Each operation's own FLOP and byte terms are in the editor's derivation "
                f"when it is selected.</p><h4>Conventions</h4><ul>{conventions}</ul>")
