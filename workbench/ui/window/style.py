"""The application's widget style: the platform's own, with the docks' title-bar icons kept.

Qt's Fusion style makes the close and float icons of a dock's title bar anew, from their
image files, every time it is asked for them, and a dock's title bar asks each time it is
laid out: about a hundred times while the main window is first built and shown (a tenth of
a second of processor time on a slow machine, 1.3 % of start-up). The style here hands out
the icons it made first; everything else is the wrapped style's.
"""

from __future__ import annotations

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

__all__ = ["KeptTitleIcons", "keep_title_icons"]

#: the icons kept: a dock's close and float buttons (the same for every dock and window)
_KEPT = frozenset({QStyle.StandardPixmap.SP_TitleBarCloseButton,
                   QStyle.StandardPixmap.SP_TitleBarNormalButton})


class KeptTitleIcons(QProxyStyle):
    """A style (the platform's) that makes each title-bar icon once."""

    def __init__(self, base: QStyle) -> None:
        super().__init__(base)
        self._icons: dict[QStyle.StandardPixmap, QIcon] = {}

    def standardIcon(self, standard: QStyle.StandardPixmap, option: QStyleOption | None = None,
                     widget: QWidget | None = None) -> QIcon:
        if standard not in _KEPT:
            return super().standardIcon(standard, option, widget)
        icon = self._icons.get(standard)
        if icon is None:
            icon = self._icons[standard] = super().standardIcon(standard, option, widget)
        return icon


def keep_title_icons(app: QApplication) -> None:
    """Give ``app`` (before any widget exists) its own style wrapped in
    :class:`KeptTitleIcons`, once."""
    if isinstance(app.style(), KeptTitleIcons):
        return
    base = QStyleFactory.create(app.style().name())
    if base is not None:
        app.setStyle(KeptTitleIcons(base))
