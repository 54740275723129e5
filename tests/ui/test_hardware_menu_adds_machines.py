"""The Hardware menu adds machines: a new user with an empty session looks there first, and
it held only Measure This Machine…; Add Preset… and New Machine are there too, and show the
Hardware panel with what they did."""

from __future__ import annotations

from conftest import HANG_GUARD_S
from PySide6.QtWidgets import QApplication

from workbench.ui.dialogs.preset_dialog import PresetDialog


def _hardware_menu(win):
    bar = win.menuBar()
    menu = next(a.menu() for a in bar.actions() if a.text().replace("&", "") == "Hardware")
    return {a.text().replace("&", ""): a for a in menu.actions() if not a.isSeparator()}


def test_add_preset_and_new_machine_are_in_the_hardware_menu(open_window, qtbot):
    win = open_window(size=(1366, 768))
    assert win.new_session()
    actions = _hardware_menu(win)
    assert {"Add Preset…", "New Machine", "Measure This Machine…"} <= set(actions)

    actions["Add Preset…"].trigger()
    qtbot.waitUntil(lambda: any(isinstance(w, PresetDialog) and w.isVisible()
                                for w in QApplication.topLevelWidgets()), timeout=HANG_GUARD_S * 1000)
    dialog = next(w for w in QApplication.topLevelWidgets()
                  if isinstance(w, PresetDialog) and w.isVisible())
    assert not win.hardware_dock.visibleRegion().isEmpty()  # the panel it adds to is shown
    dialog.choose(["h100-sxm"])
    dialog.accept()
    qtbot.waitUntil(lambda: len(win.document.session.hardware) == 1, timeout=HANG_GUARD_S * 1000)

    win.editor_dock.raise_()
    actions["New Machine"].trigger()
    assert len(win.document.session.hardware) == 2
    qtbot.waitUntil(lambda: not win.hardware_dock.visibleRegion().isEmpty(), timeout=HANG_GUARD_S * 1000)


def test_ctrl_z_in_the_new_machines_name_field_takes_the_machine_away(open_window, qtbot):
    """Hardware ▸ New Machine puts the focus in the new machine's name, its text selected;
    Ctrl+Z there undoes the document's last edit, as in every other field (the field took
    the key for its own text history, empty: the first Ctrl+Z did nothing). A name typed
    and committed is undone the same way, the field showing the name before."""
    from PySide6.QtCore import Qt

    win = open_window(size=(1366, 768))
    assert win.new_session()
    actions = _hardware_menu(win)
    actions["New Machine"].trigger()
    field = win.hardware_panel.name_edit
    qtbot.waitUntil(lambda: field.hasFocus(), timeout=HANG_GUARD_S * 1000)
    assert len(win.document.session.hardware) == 1 and field.selectedText() == field.text()
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(win.document.session.hardware) == 0

    actions["New Machine"].trigger()
    qtbot.waitUntil(lambda: field.hasFocus(), timeout=HANG_GUARD_S * 1000)
    before = field.text()
    field.selectAll()
    qtbot.keyClicks(field, "My accelerator")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert win.document.session.hardware[0].hardware.name == "My accelerator"
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert win.document.session.hardware[0].hardware.name == before
    assert field.text() == before
