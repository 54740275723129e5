"""Every form fits its dock at the default layout of a laptop screen (1366 × 768): the
Attention and Sharded-matmul forms were wider than the editor dock, their combo and spin
arrows out of sight, "same as Qu…" and "same as Element type (bf16" cut."""

from __future__ import annotations

import pytest
from conftest import HANG_GUARD_S
from PySide6.QtCore import QPoint, QSettings
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QComboBox,
    QLineEdit,
    QMessageBox,
    QScrollArea,
    QStyle,
    QStyleOptionComboBox,
)

from workbench.io.presets import get_preset
from workbench.model.operations import KINDS
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow


@pytest.fixture
def laptop(qtbot):
    create_app()
    settings = QSettings()  # the default layout
    settings.remove("window/state")
    settings.remove("window/geometry")
    win = MainWindow()
    qtbot.addWidget(win)
    win.ask_save_changes = lambda: QMessageBox.Discard
    for preset in ("h100-sxm", "tpu-v5e"):
        win.document.add_machine(get_preset(preset), preset)
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    return win


def _cut_widgets(scroll: QScrollArea) -> list[str]:
    """The inputs of the form in ``scroll`` that reach past its visible width."""
    viewport = scroll.viewport()
    cut = []
    inputs = [w for kind in (QComboBox, QAbstractSpinBox, QLineEdit, QCheckBox)
              for w in scroll.widget().findChildren(kind)]
    for widget in inputs:
        if not widget.isVisibleTo(scroll.widget()) or isinstance(widget.parent(),
                                                                  QAbstractSpinBox):
            continue
        right = widget.mapTo(viewport, QPoint(widget.width(), 0)).x()
        if (right > viewport.width() or widget.width() < widget.minimumSizeHint().width()
                or (isinstance(widget, QCheckBox) and not _label_fits(widget))
                or (isinstance(widget, QComboBox) and not _choice_fits(widget))):
            cut.append(widget.objectName() or type(widget).__name__)
    return cut


def _label_fits(box: QCheckBox) -> bool:
    """Whether the check box shows its label whole ("same as Query heads", not "same as
    Qu…"): the text's width and the indicator's."""
    if not box.text():
        return True
    indicator = box.style().pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth, None, box)
    spacing = box.style().pixelMetric(QStyle.PixelMetric.PM_CheckBoxLabelSpacing, None, box)
    return QFontMetrics(box.font()).horizontalAdvance(box.text()) + indicator + spacing \
        <= box.width()


def _choice_fits(combo: QComboBox) -> bool:
    """Whether the combo box shows its choice whole ("bf16 = Element type", not "same as
    Element type (bf16"): the text within the style's edit field."""
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                         QStyle.SubControl.SC_ComboBoxEditField, combo)
    return QFontMetrics(combo.font()).horizontalAdvance(combo.currentText()) <= field.width()


def test_every_operation_form_fits_the_editor_dock(qtbot, laptop):
    win = laptop
    win.editor_dock.raise_()
    scroll = win.editor._scroll
    too_wide = {}
    for kind in KINDS:
        win.add_operation(kind)
        form = scroll.widget()
        try:  # as the user sees it once the new form's layout has settled
            qtbot.waitUntil(lambda: not _cut_widgets(scroll), timeout=HANG_GUARD_S * 1000)
        except qtbot.TimeoutError:
            too_wide[kind] = _cut_widgets(scroll)
        if form.minimumSizeHint().width() > scroll.viewport().width():
            too_wide[kind] = form.minimumSizeHint().width()
    assert too_wide == {}, f"dock viewport {scroll.viewport().width()} px"
    assert {"attention", "sharded_matmul"} <= set(KINDS)


def test_the_hardware_form_fits_its_dock(qtbot, laptop):
    win = laptop
    win.hardware_dock.raise_()
    QApplication.processEvents()
    panel = win.hardware_panel
    for entry in win.document.session.hardware:
        panel.select_machine(entry.id)
        qtbot.wait(20)
        for scroll in panel.findChildren(QScrollArea):
            if scroll.widget() is None or not scroll.isVisible():
                continue
            assert _cut_widgets(scroll) == [], entry.hardware.label
