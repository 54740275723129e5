"""Choosing hardware presets: a searchable list with the details of the highlighted machine.

Also home to the small pieces the hardware panel shares with it: the one-line summary of a
machine (main bandwidth, widest 16-bit peak, ridge) and a two-line list delegate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from workbench.io.presets import builtin_ids
from workbench.io.user_presets import all_presets
from workbench.model.hardware import Hardware, UnknownLevel, UnsupportedPrecision
from workbench.model.limits import OverBudget
from workbench.model.rules import ridge
from workbench.model.units import format_number, format_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.widgets import escape_html

__all__ = [
    "PresetDialog",
    "TwoLineDelegate",
    "SUMMARY_ROLE",
    "ID_ROLE",
    "sixteen_bit_peak",
    "machine_summary",
    "preset_matches",
]

ID_ROLE = int(Qt.ItemDataRole.UserRole)
SUMMARY_ROLE = int(Qt.ItemDataRole.UserRole) + 1
_SELECT_ONLY = QItemSelectionModel.SelectionFlag.ClearAndSelect


# ---------------------------------------------------------------------------------------------
# shared helpers (no math beyond what Hardware offers)


def sixteen_bit_peak(hw: Hardware) -> tuple[str, float] | None:
    """The wider of the machine's bf16 / fp16 peaks (the usual headline figure), or the peak a
    16-bit computation would fall back to (e.g. fp32 on a machine without 16-bit units)."""
    own = [(p, hw.compute[p]) for p in ("bf16", "fp16") if p in hw.compute]
    if own:
        return max(own, key=lambda pair: pair[1])
    try:
        used = hw.precision_for("bf16")
    except UnsupportedPrecision:
        return None
    return used, hw.compute[used]


def main_bandwidth(hw: Hardware) -> float | None:
    try:
        return hw.bandwidth()
    except UnknownLevel:
        return None


def machine_summary(hw: Hardware) -> str:
    """'hbm 3.35 TB/s · bf16 989 TFLOP/s · ridge 295 FLOP/B'."""
    parts = []
    bandwidth = main_bandwidth(hw)
    if bandwidth is not None:
        parts.append(f"{hw.main_memory} {format_quantity(bandwidth, 'bandwidth')}")
    peak = sixteen_bit_peak(hw)
    if peak is not None:
        parts.append(f"{peak[0]} {format_quantity(peak[1], 'flop_rate')}")
        if bandwidth:
            parts.append(f"ridge {format_number(ridge(peak[1], bandwidth))} FLOP/B")
    return " · ".join(parts)


def preset_matches(query: str, hw: Hardware, substring: bool = False) -> bool:
    """Every word of ``query`` starts a word of the preset's id, name, vendor or kind, or the
    model number inside one ("h200" finds the H200 but not the GH200; "100" finds the H100
    and the A100s); with ``substring``, any part of them will do."""
    haystack = f"{hw.id} {hw.name} {hw.vendor} {hw.kind}".lower()
    tokens = query.lower().split()
    if substring:
        return all(token in haystack for token in tokens)
    words = set(re.split(r"[^0-9a-z+]+", haystack)) | {hw.id.lower()}
    words |= {number for word in list(words) for number in re.findall(r"(?<=[a-z])\d\w*", word)}
    return all(any(word.startswith(token) for word in words) for token in tokens)


class TwoLineDelegate(QStyledItemDelegate):
    """A list row with the item text on the first line and a muted summary below it
    (``SUMMARY_ROLE``); checkbox and icon as usual."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        title, opt.text = opt.text, ""
        summary = index.data(SUMMARY_ROLE) or ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is None:
            super().paint(painter, option, index)
            return
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        rect = rect.adjusted(2, 0, -2, 0)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        group = (QPalette.ColorGroup.Normal if opt.state & QStyle.StateFlag.State_Enabled
                 else QPalette.ColorGroup.Disabled)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        text_color = opt.palette.color(group, role)
        muted = QColor(text_color)
        if not selected:
            base = opt.palette.color(group, QPalette.ColorRole.Base)
            muted = QColor((text_color.red() + base.red()) // 2,
                           (text_color.green() + base.green()) // 2,
                           (text_color.blue() + base.blue()) // 2)
        painter.save()
        title_font = QFont(opt.font)
        title_font.setWeight(QFont.Weight.DemiBold)
        small = QFont(opt.font)
        if small.pointSizeF() > 0:
            small.setPointSizeF(small.pointSizeF() * 0.9)
        half = rect.height() // 2
        top = rect.adjusted(0, 2, 0, -half)
        bottom = rect.adjusted(0, half, 0, -2)
        painter.setFont(title_font)
        painter.setPen(text_color)
        metrics = painter.fontMetrics()
        painter.drawText(top, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                         metrics.elidedText(title, Qt.TextElideMode.ElideRight, top.width()))
        painter.setFont(small)
        painter.setPen(muted)
        metrics = painter.fontMetrics()
        painter.drawText(bottom, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                         metrics.elidedText(summary, Qt.TextElideMode.ElideRight, bottom.width()))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        height = option.fontMetrics.height() * 2 + 10
        return QSize(size.width(), max(size.height(), height))


# ---------------------------------------------------------------------------------------------
# details of one machine as HTML


def _link(source: str) -> str:
    if source.startswith(("http://", "https://")):
        return f'<a href="{escape_html(source)}">{escape_html(source)}</a>'
    return escape_html(source)


def hardware_details_html(hw: Hardware, preset_id: str | None = None) -> str:
    """Everything a preset file says about a machine, for the details pane."""
    bandwidth = main_bandwidth(hw)
    meta = [m for m in (hw.vendor if hw.vendor != "none" else "", hw.kind,
                        preset_id or hw.id) if m]
    rows = ['<table cellspacing="0" cellpadding="2">']

    def section(title: str) -> None:
        rows.append(f'<tr><td colspan="3" style="padding-top:8px"><b>{escape_html(title)}</b></td></tr>')

    def row(a: str, b: str, c: str = "") -> None:
        rows.append(f'<tr><td style="padding-right:14px">{a}</td>'
                    f'<td align="right" style="padding-right:14px">{b}</td>'
                    f'<td style="color:#666">{c}</td></tr>')

    def measured(path: str, text: str = "") -> str:
        return ", ".join(t for t in (text, "measured" if hw.is_measured(path) else "") if t)

    for table, title in (("compute", "Dense peak compute, matrix units"),
                         ("vector_compute", "Dense peak compute, vector units")):
        figures = getattr(hw, table)
        if not figures:
            continue
        section(title)
        for precision, value in figures.items():
            ridge_text = ""
            if bandwidth:
                ridge_text = f"ridge {format_number(ridge(value, bandwidth))} FLOP/B"
            rate = format_quantity(value, "flop_rate", 4)
            if precision.startswith("int"):
                rate = rate.replace("FLOP/s", "OP/s")
            row(escape_html(precision), escape_html(rate), measured(f"{table}.{precision}", ridge_text))
    section("Memory bandwidth")
    for level, value in hw.memory.items():
        row(escape_html(level), escape_html(format_quantity(value, "bandwidth", 4)),
            measured(f"memory.{level}", "main memory" if level == hw.main_memory else ""))
    if hw.interconnect:
        section("Interconnect")
        for link, value in hw.interconnect.items():
            row(escape_html(link), escape_html(format_quantity(value, "bandwidth", 4)),
                measured(f"interconnect.{link}"))
    section("Other")
    row("capacity", escape_html(format_quantity(hw.capacity, "bytes", 4)) if hw.capacity else "—",
        measured("capacity"))
    row("launch overhead",
        escape_html(format_quantity(hw.launch_overhead, "time")) if hw.launch_overhead else "none",
        hw.figure_status("launch_overhead") if hw.launch_overhead else "")
    row("efficiency", escape_html(f"{hw.efficiency:.12g}") if hw.efficiency else "—",
        "derating for predicted times" if hw.efficiency else "")
    rows.append("</table>")

    ridges = []
    if bandwidth:
        for precision in ("bf16", "fp16"):
            try:
                used = hw.precision_for(precision)
            except UnsupportedPrecision:
                continue
            note = "" if used == precision else f" (runs at {used})"
            ridges.append(f"{precision} {format_number(ridge(hw.compute[used], bandwidth))} "
                          f"FLOP/B{note}")
    parts = [f"<h3 style='margin-bottom:2px'>{escape_html(hw.name)}</h3>",
             f"<div style='color:#666'>{escape_html(' · '.join(meta))}</div>"]
    if ridges:
        parts.append(f"<p><b>Ridge</b> (peak / {escape_html(hw.main_memory)} bandwidth): "
                     f"{escape_html(', '.join(ridges))}</p>")
    parts.append("".join(rows))
    if hw.sparse_halved:
        parts.append("<p><b>Dense figures; vendor sparse figures halved.</b> The vendor quotes "
                     "some peaks with 2:4 structured sparsity; the values above are half of "
                     "those.</p>")
    else:
        parts.append("<p>Dense figures (no sparse vendor figures were halved).</p>")
    parts.append("<p><b>Sources</b><br>" + ("<br>".join(_link(s) for s in hw.sources)
                                            if hw.sources else "none given") + "</p>")
    if hw.notes:
        parts.append(f"<p><b>Notes</b><br>{escape_html(hw.notes.strip())}</p>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# the dialog


class PresetDialog(QDialog):
    """Pick one or more hardware presets to add to the session.

    Tests and other code can drive it without ``exec()``: set :attr:`filter_edit`, call
    :meth:`choose` with preset ids, then :meth:`accept` (which adds them), or call
    :meth:`add_presets` directly.
    """

    #: The document ids of the machines just added (list of int).
    presets_added = Signal(list)

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PresetDialog")
        self.setWindowTitle("Add hardware presets")
        self.workspace = workspace
        self.document = workspace.document
        self.presets = dict(sorted(all_presets().items(),
                                   key=lambda kv: (kv[1].name.lower(), kv[0])))
        self.added_ids: list[int] = []

        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("presetFilter")
        self.filter_edit.setPlaceholderText("Filter by name, id, vendor or kind (e.g. h100, tpu)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._apply_filter)
        self.filter_edit.installEventFilter(self)

        self.preset_list = QListWidget(self)
        self.preset_list.setObjectName("presetList")
        self.preset_list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.preset_list.setItemDelegate(TwoLineDelegate(self.preset_list))
        self.preset_list.setUniformItemSizes(True)
        in_session = {e.preset for e in self.document.session.hardware if e.preset}
        builtin = builtin_ids()
        for preset_id, hw in self.presets.items():
            item = QListWidgetItem(hw.name)
            item.setData(ID_ROLE, preset_id)
            mark = "✓ in session · " if preset_id in in_session else ""
            if hw.measured and preset_id not in builtin:  # the user's own, from measure
                mark += "measured · "
            item.setData(SUMMARY_ROLE, f"{mark}{preset_id} · {machine_summary(hw)}")
            item.setToolTip(f"{hw.name}\n{preset_id} · {hw.vendor} · {hw.kind}")
            self.preset_list.addItem(item)
        self.preset_list.itemSelectionChanged.connect(self._on_selection)
        self.preset_list.currentItemChanged.connect(self._show_details)
        self.preset_list.itemDoubleClicked.connect(self._on_double_click)

        self.details = QTextBrowser(self)
        self.details.setObjectName("presetDetails")
        self.details.setOpenExternalLinks(True)
        self.details.setMinimumWidth(360)

        self.empty_label = QLabel("No preset matches the filter.", self)
        self.empty_label.setObjectName("presetEmpty")
        self.empty_label.setEnabled(False)
        self.empty_label.hide()

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.preset_list)
        left_layout.addWidget(self.empty_label)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setChildrenCollapsible(False)

        self.button_box = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        self.add_button = self.button_box.button(QDialogButtonBox.StandardButton.Ok)
        self.add_button.setObjectName("presetAdd")
        self.button_box.accepted.connect(self.accept)
        self.button_box.rejected.connect(self.reject)

        hint = QLabel("Peaks are dense figures; Ctrl/Shift-click to add several machines.", self)
        hint.setEnabled(False)

        layout = QVBoxLayout(self)
        layout.addWidget(self.filter_edit)
        layout.addWidget(splitter, 1)
        layout.addWidget(hint)
        layout.addWidget(self.button_box)
        self.resize(1000, 620)
        splitter.setSizes([440, 560])

        if self.preset_list.count():
            self.preset_list.setCurrentRow(0)
        self._on_selection()
        self.filter_edit.setFocus()

    # -- queries ---------------------------------------------------------------------------

    def _items(self) -> Iterable[QListWidgetItem]:
        for row in range(self.preset_list.count()):
            yield self.preset_list.item(row)

    def visible_ids(self) -> list[str]:
        """Ids of the presets the filter leaves in the list, in list order."""
        return [item.data(ID_ROLE) for item in self._items() if not item.isHidden()]

    def selected_ids(self) -> list[str]:
        """Ids of the selected (and visible) presets, in list order."""
        return [item.data(ID_ROLE) for item in self._items()
                if item.isSelected() and not item.isHidden()]

    # -- driving ---------------------------------------------------------------------------

    def choose(self, ids: Iterable[str]) -> None:
        """Select exactly these presets (unknown ids raise ``KeyError``)."""
        wanted = list(ids)
        for preset_id in wanted:
            if preset_id not in self.presets:
                raise KeyError(preset_id)
        self.preset_list.clearSelection()
        for item in self._items():
            if item.data(ID_ROLE) in wanted:
                item.setHidden(False)
                item.setSelected(True)
        first = next((i for i in self._items() if i.data(ID_ROLE) in wanted), None)
        if first is not None:
            self.preset_list.setCurrentItem(first, QItemSelectionModel.SelectionFlag.NoUpdate)

    def add_presets(self, ids: Iterable[str]) -> list[int]:
        """Add these presets to the document (one undo step each); returns the new ids."""
        builtin = builtin_ids()  # a user preset is stored in the session in full
        # the figures listed and shown here: a user preset's file may have been removed or
        # changed on disk since the dialog opened
        new_ids = []
        for preset_id in ids:
            try:
                new_ids.append(self.document.add_machine(
                    self.presets[preset_id].copy(),
                    preset=preset_id if preset_id in builtin else None))
            except OverBudget as exc:  # (the session could not be saved with it)
                QMessageBox.warning(self, "Add Preset",
                                    f"{self.presets[preset_id].label} not added: {exc}")
                break
        if new_ids:
            self.document.seal()
            self.added_ids.extend(new_ids)
            self.presets_added.emit(new_ids)
        return new_ids

    def accept(self) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        self.add_presets(ids)
        super().accept()

    # -- reactions -------------------------------------------------------------------------

    def _apply_filter(self, text: str) -> None:
        query = text.strip()
        matching = {pid for pid, hw in self.presets.items() if preset_matches(query, hw)}
        if query and not matching:  # "100" finds the H100 and A100s by substring
            matching = {pid for pid, hw in self.presets.items()
                        if preset_matches(query, hw, substring=True)}
        for item in self._items():
            item.setHidden(item.data(ID_ROLE) not in matching)
        for item in self._items():
            if item.isHidden() and item.isSelected():
                item.setSelected(False)
        visible = [i for i in self._items() if not i.isHidden()]
        self.empty_label.setVisible(not visible)
        if visible and not self.selected_ids():
            self.preset_list.setCurrentItem(visible[0], _SELECT_ONLY)
        elif not visible:
            self.details.clear()
        self._on_selection()

    def _on_selection(self) -> None:
        count = len(self.selected_ids())
        self.add_button.setEnabled(count > 0)
        self.add_button.setText("Add" if count <= 1 else f"Add {count} machines")

    def _show_details(self, item: QListWidgetItem | None, _previous=None) -> None:
        if item is None or item.isHidden():
            self.details.clear()
            return
        preset_id = item.data(ID_ROLE)
        self.details.setHtml(hardware_details_html(self.presets[preset_id], preset_id))

    def details_text(self) -> str:
        """The details pane as plain text (for tests and accessibility)."""
        return self.details.toPlainText()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Up/Down in the filter move through the list, so the keyboard never has to leave."""
        if (watched is self.filter_edit and event.type() == QEvent.Type.KeyPress
                and event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down)):
            visible = [i for i in self._items() if not i.isHidden()]
            if visible:
                current = self.preset_list.currentItem()
                index = visible.index(current) if current in visible else -1
                step = 1 if event.key() == Qt.Key.Key_Down else -1
                index = max(0, min(len(visible) - 1, index + step))
                self.preset_list.setCurrentItem(visible[index], _SELECT_ONLY)
            return True
        return super().eventFilter(watched, event)

    def _on_double_click(self, item: QListWidgetItem) -> None:
        self.add_presets([item.data(ID_ROLE)])
        super().accept()
