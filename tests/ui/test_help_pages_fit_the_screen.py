"""Help pages (Reading the Chart, Counting Conventions, About) fit the screen they open on,
a 768-pixel-high laptop's included, and a longer text scrolls."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt


@pytest.mark.parametrize("action", ["conventions_action", "guide_action", "about_action"])
def test_a_help_page_fits_the_screen_and_scrolls(open_window, qtbot, action):
    win = open_window()
    getattr(win, action).trigger()
    page = win._info_box
    qtbot.waitExposed(page)
    screen = page.screen().availableGeometry()
    assert page.frameGeometry().height() <= min(screen.height(), 768)
    browser = page.browser
    bar = browser.verticalScrollBar()
    text_height = browser.document().size().height()
    if text_height > browser.viewport().height():  # longer than the page: it scrolls
        assert bar.isVisible() and bar.maximum() > 0
        browser.setFocus()
        for _ in range(20):  # Page Down reaches the last line
            qtbot.keyClick(browser, Qt.Key.Key_PageDown)
        assert bar.value() == bar.maximum()
    else:
        assert not bar.isVisible()
    page.close()


def test_counting_conventions_is_longer_than_a_laptop_screen_and_scrolls(open_window, qtbot):
    win = open_window()
    win.conventions_action.trigger()
    page = win._info_box
    qtbot.waitExposed(page)
    # the text is taller than a 768-pixel screen leaves (it was a dialog 896 pixels high)
    assert page.browser.document().size().height() > 0.8 * 768
    assert page.browser.verticalScrollBar().isVisible()
    assert page.frameGeometry().height() < 768


@pytest.mark.parametrize("action", ["guide_action", "about_action"])
def test_a_short_help_page_is_as_tall_as_its_text(open_window, qtbot, action):
    """A page shorter than the screen is as tall as its text: About was measured at the
    width its text box had before it was laid out (84 pixels), four times its height, and
    opened with two thirds of it empty."""
    win = open_window()
    getattr(win, action).trigger()
    page = win._info_box
    qtbot.waitExposed(page)
    browser = page.browser
    text = browser.document().size().height()
    room = browser.viewport().height()
    line = browser.fontMetrics().lineSpacing()
    assert not browser.verticalScrollBar().isVisible()
    assert text <= room < text + 2 * line, (text, room, line)
    page.close()
