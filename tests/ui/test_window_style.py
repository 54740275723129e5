"""The application's style keeps the docks' title-bar icons: made once, drawn as the
platform's style draws them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QDockWidget, QStyle, QStyleFactory

from workbench.ui.window.app import create_app

_TITLE = (QStyle.StandardPixmap.SP_TitleBarCloseButton,
          QStyle.StandardPixmap.SP_TitleBarNormalButton)


def _pixels(icon) -> bytes:
    image = icon.pixmap(16, 16).toImage()
    return bytes(image.constBits())


def test_title_bar_icons_are_made_once_and_look_as_the_platforms(qtbot):
    app = create_app()
    style = app.style()
    own = QStyleFactory.create(style.baseStyle().name())
    for pixmap in _TITLE:
        first, again = style.standardIcon(pixmap), style.standardIcon(pixmap)
        assert first.cacheKey() == again.cacheKey()  # (the same icon, not a new one)
        assert own.standardIcon(pixmap).cacheKey() != own.standardIcon(pixmap).cacheKey()
        assert _pixels(first) == _pixels(own.standardIcon(pixmap))
    arrow = QStyle.StandardPixmap.SP_ArrowUp  # (every other icon: the platform's, as made)
    assert _pixels(style.standardIcon(arrow)) == _pixels(own.standardIcon(arrow))
    create_app()
    assert app.style() is style  # (wrapped once)


def test_a_docks_buttons_show_the_kept_icons(open_window):
    win = open_window()
    dock = win.findChild(QDockWidget, "OperationsDock")
    buttons = [b for b in dock.findChildren(QAbstractButton, options=Qt.FindDirectChildrenOnly)
               if b.isVisible()]  # (its title bar's own)
    assert len(buttons) == 2  # (float and close)
    kept = {win.style().standardIcon(p).cacheKey() for p in _TITLE}
    assert {b.icon().cacheKey() for b in buttons} == kept
