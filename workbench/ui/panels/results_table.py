"""The results table: every operation on every machine, with the roofline numbers.

One row per (operation, machine) pair of :meth:`ResultCache.pairs`, operations outermost.
Cells show SI-prefixed values to three significant figures; sorting uses the raw numbers
(:data:`SORT_ROLE`), so 0.167 < 42.7 < 341 < 3584 whatever the text says. Pairs that cannot
be evaluated (a machine without the precision, an unknown memory level, invalid parameters)
are rows of "—" with the reason as tooltip.

Ctrl+C copies the selected rows, "Copy all" every row shown, as tab-separated text with a
header row; :meth:`ResultsTable.export_csv` writes every row as CSV. Both carry raw numbers
in base SI units, named in the headers ("intensity [FLOP/B]", "T_math [s]"); text a
spreadsheet would run as a formula gets a leading ``'`` (:mod:`workbench.io.tables`).

The model (:mod:`workbench.ui.panels.results_model`) follows the document's
:class:`~workbench.document.Change` notifications: an edit of one operation re-evaluates only
that operation's rows (``dataChanged``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QAccessible, QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change
from workbench.document.changes import What
from workbench.io.tables import csv_text, tsv_text
from workbench.ui.bridge import Workspace
from workbench.ui.panels.results_delegate import ResultsDelegate
from workbench.ui.panels.results_model import (
    BOUND_COLORS,
    COLUMN_INDEX,
    COLUMNS,
    KEY_ROLE,
    SORT_ROLE,
    Column,
    ResultsModel,
    ResultsProxy,
    forget_palette_colors,
)
from workbench.ui.widgets import style_row_table

__all__ = ["ResultsTable", "ResultsModel", "ResultsProxy", "COLUMNS", "COLUMN_INDEX", "Column",
           "SORT_ROLE", "BOUND_COLORS"]


class _CopyFilter(QObject):
    """Routes the Copy key on the view to :meth:`ResultsTable.copy_selection` (the item
    view would otherwise copy the current cell's text only)."""

    def __init__(self, table: ResultsTable) -> None:
        super().__init__(table)
        self._table = table

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if (kind in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride)
                and event.matches(QKeySequence.StandardKey.Copy)):
            if kind == QEvent.Type.ShortcutOverride:
                event.accept()  # the key comes to the view as a KeyPress
            else:
                self._table.copy_selection()
            return True
        return False


def _span(header: QHeaderView, first: int, last: int) -> tuple[int, int]:
    """(start, end) in viewport pixels of the sections ``first``..``last`` (logical)."""
    if not header.sectionsMoved():
        return (header.sectionViewportPosition(first),
                header.sectionViewportPosition(last) + header.sectionSize(last))
    starts = [header.sectionViewportPosition(i) for i in range(first, last + 1)]
    ends = [start + header.sectionSize(i) for i, start in zip(range(first, last + 1), starts,
                                                              strict=True)]
    return min(starts), max(ends)


#: changes after which the view's cells are painted anew (see :class:`ResultsDelegate`)
_RESTYLED = frozenset({QEvent.Type.StyleChange, QEvent.Type.FontChange,
                       QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange,
                       QEvent.Type.ApplicationFontChange, QEvent.Type.LayoutDirectionChange})


class _ResultsView(QTableView):
    """The results view. A range of changed cells repaints exactly those cells: Qt's own
    rectangle for a range is one pixel wider and taller, which repaints the next row and
    column too (three cells more for an edit of one operation on three machines)."""

    def dataChanged(self, top_left: QModelIndex | QPersistentModelIndex,
                    bottom_right: QModelIndex | QPersistentModelIndex,
                    roles: Sequence[int] = ()) -> None:
        if (top_left == bottom_right or not top_left.isValid() or not bottom_right.isValid()
                or top_left.model() is not self.model() or QAccessible.isActive()):
            super().dataChanged(top_left, bottom_right, roles)
            return
        # what the base class does besides repainting concerns editors (this view has none)
        # and accessibility (handled above)
        if not self.isVisible():
            return
        x0, x1 = _span(self.horizontalHeader(), top_left.column(), bottom_right.column())
        y0, y1 = _span(self.verticalHeader(), top_left.row(), bottom_right.row())
        rect = QRect(x0, y0, x1 - x0, y1 - y0).intersected(self.viewport().rect())
        if not rect.isEmpty():
            self.viewport().update(rect)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        kind = event.type()
        if kind in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            # the cells' highlight and greyed text, looked up again at the repaint Qt
            # schedules for the change
            forget_palette_colors()
        if kind in _RESTYLED:
            delegate = self.itemDelegate()
            if isinstance(delegate, ResultsDelegate):
                delegate.restyled()  # (what it kept is painted in the new style)


class ResultsTable(QWidget):
    """Filter box, "Copy all" button and the sortable table of every (operation, machine).

    ``copy_action`` (Ctrl+C while the table has focus) copies the selected rows; clicking a
    row selects its operation in the shared selection; the selected operation's rows are
    highlighted.
    """

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ResultsTable")
        self.workspace = workspace
        self._syncing = False

        self.model = ResultsModel(workspace, self)
        self.proxy = ResultsProxy(self)
        self.proxy.setSourceModel(self.model)

        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("filterEdit")
        self.filter_edit.setPlaceholderText("Filter by operation or machine…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.set_filter)
        self.count_label = QLabel(self)
        self.count_label.setObjectName("countLabel")
        self.copy_all_button = QPushButton("Copy All", self)
        self.copy_all_button.setObjectName("copyAllButton")
        self.copy_all_button.setToolTip("Copy every row shown as tab-separated text with a "
                                        "header (raw numbers, units in the header)")
        self.copy_all_button.clicked.connect(self.copy_all)

        self.view = _ResultsView(self)
        self.view.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
        self.view.setObjectName("resultsView")
        self.view.setModel(self.proxy)
        self.view.setItemDelegate(ResultsDelegate(self.view, self.proxy, self.model))
        self._configure_view()

        self.copy_action = QAction("&Copy Results", self)
        self.copy_action.setObjectName("copy_results")
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_action.setToolTip("Copy the selected rows as tab-separated text")
        self.copy_action.triggered.connect(self.copy_selection)
        self.view.addAction(self.copy_action)
        self._copy_filter = _CopyFilter(self)
        self.view.installEventFilter(self._copy_filter)

        top = QHBoxLayout()
        top.setContentsMargins(4, 4, 4, 2)
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.count_label)
        top.addWidget(self.copy_all_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.view)

        self.view.selectionModel().selectionChanged.connect(self._on_view_selection)
        self.view.selectionModel().currentRowChanged.connect(self._on_view_selection)
        workspace.selection.changed.connect(self._reveal)
        for signal in (self.proxy.modelReset, self.proxy.rowsInserted, self.proxy.rowsRemoved,
                       self.proxy.layoutChanged):
            signal.connect(self._update_count)
        workspace.signals.changed.connect(self._on_change)
        workspace.signals.changed.connect(self._update_count)  # (machines added or removed)
        self._update_count()
        self.fit_name_columns()

    def _on_change(self, change: Change) -> None:
        if change.what == What.SESSION:
            self.fit_name_columns()

    def fit_name_columns(self) -> None:
        """Width of the operation and machine columns from the session's names (not from
        every row: that is what makes ResizeToContents slow on thousands of rows)."""
        session = self.workspace.document.session
        fm = self.view.fontMetrics()
        header = self.view.horizontalHeader()
        for col, names in ((0, [e.operation.name for e in session.operations]),
                           (1, [e.hardware.label for e in session.hardware])):
            widest = max((fm.horizontalAdvance(n) for n in names),
                         default=fm.horizontalAdvance(COLUMNS[col].title))
            header.resizeSection(col, max(90, min(widest + 20, 320)))

    def _configure_view(self) -> None:
        view = self.view
        # No sort column yet: session order. (Enabling sorting sorts by the indicator's
        # section at once, which would evaluate every row before the first paint.)
        view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        view.setSortingEnabled(True)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        style_row_table(view)
        header = view.horizontalHeader()
        header.setSectionsMovable(True)
        fm = view.fontMetrics()
        # Widths from sample texts: ResizeToContents would measure thousands of rows.
        for i, column in enumerate(COLUMNS):
            header.setSectionResizeMode(i, QHeaderView.ResizeMode.Interactive)
            # room for the sort indicator beside the title
            width = max(fm.horizontalAdvance(column.sample) + 20,
                        fm.horizontalAdvance(column.title) + 34)
            header.resizeSection(i, min(width, 280))

    # -- selection -------------------------------------------------------------------------

    def _on_view_selection(self, *_args) -> None:
        """A row clicked (selected and current) selects its operation everywhere."""
        sm = self.view.selectionModel()
        current = sm.currentIndex()
        if self._syncing or not current.isValid() or not sm.isRowSelected(current.row()):
            return
        op_id, _ = self.proxy.data(current, KEY_ROLE)
        self._syncing = True
        try:
            self.workspace.selection.select(op_id)
        finally:
            self._syncing = False

    def _reveal(self, op_id: int | None) -> None:
        """Scroll the selected operation's first shown row into view (highlight is in the
        model)."""
        if self._syncing or op_id is None:
            return
        rows = self.model.rows_of(op_id)
        if not rows:
            return
        index = self.proxy.mapFromSource(self.model.index(rows.start, 0))
        if index.isValid():
            self.view.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)

    # -- filter ----------------------------------------------------------------------------

    def set_filter(self, text: str) -> None:
        """Show only rows whose operation or machine name contains ``text`` (any case)."""
        if self.filter_edit.text() != text:
            self.filter_edit.setText(text)  # re-enters through textChanged
            return
        self.proxy.setFilterFixedString(text.strip())
        self._update_count()

    def _update_count(self, *_args) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        session = self.workspace.document.session
        if not total and session.operations and not session.hardware:
            # a row is an operation on a machine: say what is missing
            self.count_label.setText("No machine: add one in the Hardware panel")
            return
        rows = f"{total} row{'s' * (total != 1)}"
        self.count_label.setText(f"{shown} of {rows}" if shown != total else rows)

    # -- copy and export -------------------------------------------------------------------

    def selected_source_rows(self) -> list[int]:
        """Source rows of the selected rows, in the order shown."""
        rows = sorted(i.row() for i in self.view.selectionModel().selectedRows())
        return [self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in rows]

    def shown_source_rows(self) -> list[int]:
        return [self.proxy.mapToSource(self.proxy.index(r, 0)).row()
                for r in range(self.proxy.rowCount())]

    def table_text(self, rows: Sequence[int]) -> str:
        """Tab-separated text of these source rows with a header row."""
        return tsv_text([self.model.export_header(),
                         *([_cell(v) for v in self.model.export_row(row)] for row in rows)])

    def copy_selection(self) -> None:
        rows = self.selected_source_rows()
        if rows:
            QGuiApplication.clipboard().setText(self.table_text(rows))

    def copy_all(self) -> None:
        QGuiApplication.clipboard().setText(self.table_text(self.shown_source_rows()))

    def export_csv(self, path: str | os.PathLike[str]) -> int:
        """Write every row (whatever the filter and sort) as CSV with units in the headers;
        numbers in base SI units. Returns the number of data rows."""
        count = self.model.rowCount()
        text = csv_text([self.model.export_header(),
                         *([_cell(v) for v in self.model.export_row(row)]
                           for row in range(count))])
        from workbench.io.atomic import write_atomic

        write_atomic(path, text.encode("utf-8"))
        return count


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)
