"""Every menu can be worked from the keyboard: each item has an access key (the underlined
letter) that no other item of its menu has. Qt activates an item by its key only where the
key is its alone: with two items sharing one (Edit had Undo, Duplicate and Move Up on U; View
had four items on P), the key moved between them and did nothing, and items with none (the
examples, the kinds to add, the themes, the panels) could not be reached by a letter. A `&`
in a user's own file name is shown as it is, not taken for a key."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from PySide6.QtWidgets import QMenu

from workbench.ui.mnemonics import access_key, shown_text, with_mnemonic

LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")
LLAMA_FFN = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


def _keys_problems(menu, path: str, deep: bool = True) -> list[str]:
    problems = []
    seen: dict[str, str] = {}
    for action in menu.actions():
        if action.isSeparator() or not action.isVisible():
            continue
        text = action.text()
        key = access_key(text)
        if key is None:
            problems.append(f"{path} ▸ {shown_text(text)}: no access key")
        elif key in seen:
            problems.append(f"{path}: {shown_text(text)} and {seen[key]} share {key!r}")
        else:
            seen[key] = shown_text(text)
        if deep and action.menu() is not None:
            problems += _keys_problems(action.menu(), f"{path} ▸ {shown_text(text)}")
    return problems


def _opened(menu: QMenu, qtbot) -> QMenu:
    """``menu`` as the user sees it: opened (its keys are given as it is first shown), then
    closed again."""
    from PySide6.QtCore import QPoint

    menu.popup(QPoint(0, 0))
    qtbot.waitUntil(menu.isVisible)
    menu.hide()
    return menu


def test_every_item_of_the_menu_bar_has_a_key_of_its_own(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 768))
    problems = _keys_problems(win.menuBar(), "menu bar", deep=False)
    for action in win.menuBar().actions():
        problems += _keys_problems(_opened(action.menu(), qtbot), shown_text(action.text()))
    assert not problems, "\n".join(problems)


def test_a_key_of_its_own_activates_an_edit_item(open_window, qtbot):
    """Edit ▸ (Duplicate Operation's key) duplicates the selected operation: its key was
    Undo's and Move Up's too, and pressing it only moved the highlight."""
    from PySide6.QtTest import QTest

    win = open_window(LLAMA_FFN, size=(1366, 768))
    doc = win.document
    first = doc.session.operations[1]
    doc.set_operation_field(first.id, "name", "renamed")  # (Undo enabled: an edit to undo)
    win.workspace.selection.select(first.id)  # (Move Up enabled: not the first row)
    before = len(doc.session.operations)
    edit = next(a.menu() for a in win.menuBar().actions() if shown_text(a.text()) == "Edit")
    duplicate = win.operations_panel.duplicate_action
    assert duplicate.isEnabled() and win.undo_action.isEnabled()
    assert win.operations_panel.move_up_action.isEnabled()
    key = access_key(duplicate.text())
    assert key is not None
    edit.popup(win.mapToGlobal(win.rect().center()))
    qtbot.waitUntil(edit.isVisible)
    QTest.keyClick(edit, key)
    qtbot.waitUntil(lambda: not edit.isVisible())
    assert len(doc.session.operations) == before + 1
    assert doc.session.operations[2].operation.kind == first.operation.kind
    assert doc.session.operations[1].operation.name == "renamed"  # (not undone, not moved)


def test_the_context_menus_have_a_key_for_each_item(open_window, qtbot):
    win = open_window(LLAMA_FFN, size=(1366, 768))
    panel = win.operations_panel
    shown = []
    for row in range(2):
        index = panel.view.model().index(row, 1)
        shown.append(panel.context_menu(panel.view.visualRect(index).center()))
    models = open_window(LLAMA_8B, size=(1366, 768)).operations_panel  # (a model's header)
    shown.append(models.context_menu(models.view.visualRect(models.view.model().index(0, 1))
                                     .center()))
    assert [shown_text(a.text()) for a in shown[0].actions()][:1] == ["Add Operation"]
    assert any(shown_text(a.text()) == "Colour…" for a in shown[0].actions())
    assert any(shown_text(a.text()) == "Edit Model…" for a in shown[2].actions())
    for menu in shown:
        assert not _keys_problems(menu, "context menu"), _keys_problems(menu, "context menu")
    add = _opened(open_window(LLAMA_FFN, size=(1024, 700)).operations_panel.add_button.menu(),
                  qtbot)  # (on its own, not first opened within a context menu)
    assert not _keys_problems(add, "+ Add")


def test_a_recent_file_named_with_an_ampersand_is_shown_as_it_is(open_window, tmp_path):
    from workbench.io.sessions import load_session, save_session

    win = open_window(None, size=(1024, 700))
    path = tmp_path / "R&D plan.yaml"
    save_session(load_session(LLAMA_8B), path)
    assert win.open_path(path)
    win.fill_recent_menu()
    first = win.recent_menu.actions()[0]
    assert shown_text(first.text()) == "1 R&D plan.yaml"
    assert access_key(first.text()) == "1"


@pytest.mark.parametrize("text, taken, expected", [
    ("Model", {"m", "o"}, "Mo&del"),
    ("Top 50", set(), "&Top 50"),
    ("R&&D", {"r"}, "R&&&D"),  # (a literal "&", then the key D: shown "R&D")
    ("xy", {"x", "y"}, "xy"),  # (none free: as it was)
])
def test_a_key_is_a_free_letter_a_words_first_where_one_is(text, taken, expected):
    given = with_mnemonic(text, set(taken))
    assert given == expected
    assert shown_text(given) == shown_text(text)
