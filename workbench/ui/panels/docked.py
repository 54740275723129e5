"""A panel that lives in a dock and does no work while it cannot be seen."""

from __future__ import annotations

from PySide6.QtCore import QTimer


class DockedPanel:
    """Mix-in for a ``QWidget`` panel in a dock: :meth:`set_shown` follows the dock's
    ``visibilityChanged`` (a dock tabbed behind another one stays "visible" to Qt but is not
    seen), and the panel catches up (:meth:`_catch_up`) when it is shown again."""

    _dock_shown = True

    def set_shown(self, shown: bool) -> None:
        """Whether the panel can be seen; when it can again, it catches up."""
        self._dock_shown = bool(shown)
        if self._dock_shown:
            QTimer.singleShot(0, self, self._catch_up)

    def is_shown(self) -> bool:
        return self._dock_shown and self.isVisible()

    def _catch_up(self) -> None:
        """Bring what the panel shows up to date (it was hidden through some changes)."""
        raise NotImplementedError
