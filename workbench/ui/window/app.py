"""The QApplication: created once, configured before any widget exists."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

__all__ = ["APP_NAME", "create_app", "quiet_platform_notes", "resources_dir"]

APP_NAME = "Roofline Workbench"

_gc_frozen = False  # the start-up objects are frozen out of the collector's walks once
#: the cyclic collector's youngest generation, in objects (Python's default is 700)
YOUNG_OBJECTS = 10_000


def create_app(argv: list[str] | None = None, *, offscreen_without_display: bool = False):
    """The QApplication (the one place that makes it: the window, the command line's
    ``render`` and the tools all come here), configured before any widget exists (pyqtgraph
    needs that). With ``offscreen_without_display``, a process without a display (no
    ``DISPLAY`` or ``WAYLAND_DISPLAY``) uses Qt's offscreen platform, so that ``render``
    draws on a server; the window itself needs a display."""
    global _gc_frozen
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        if offscreen_without_display and not (os.environ.get("DISPLAY")
                                              or os.environ.get("WAYLAND_DISPLAY")):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QApplication(argv if argv is not None else sys.argv[:1] or ["roofline-workbench"])
    from workbench.ui.window.style import keep_title_icons

    keep_title_icons(app)
    app.setOrganizationName(APP_NAME)
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    import pyqtgraph as pg

    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    icon = resources_dir() / "icon.svg"
    if icon.is_file():
        from PySide6.QtGui import QIcon

        app.setWindowIcon(QIcon(str(icon)))
    if not _gc_frozen:
        # Everything imported so far (Qt, pyqtgraph, numpy: some 70,000 objects) lives as
        # long as the process: the cyclic collector need not walk it again on every full
        # collection (opening a large session triggers them; each took ~50 ms).
        gc.freeze()
        # A young generation of 10,000 objects, not 700: an edit of a whole model's every
        # operation makes some 10,000 objects (its points, their results) before it drops
        # the ones they replace, and at 700 each edit ran 16 young, 1.5 middle and a sixth
        # of a full collection (each of the model's 60,000 live objects walked): 5.4 ms of
        # a 54 ms edit, against 1 ms. What waits for a collection is at most those objects.
        gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
        _gc_frozen = True
    return app


def resources_dir() -> Path:
    """Icons and other assets: inside the package when installed, at the top in a checkout."""
    here = Path(__file__).resolve().parents[2]  # workbench/
    for candidate in (here / "_data" / "resources", here.parent / "resources"):
        if candidate.is_dir():
            return candidate
    return here.parent / "resources"


#: Qt messages that say nothing to a user of the command line (the offscreen platform has no
#: window manager to pass size hints to).
_QT_NOISE = ("This plugin does not support propagateSizeHints()",)


def quiet_platform_notes() -> None:
    """Leave out Qt's notes about the headless platform (``render`` on the command line);
    every other Qt message is printed as Qt would print it."""
    from PySide6.QtCore import qFormatLogMessage, qInstallMessageHandler

    def handler(mode, context, message: str) -> None:
        if message in _QT_NOISE:
            return
        sys.stderr.write(qFormatLogMessage(mode, context, message) + "\n")

    qInstallMessageHandler(handler)
