"""Start the desktop application: read the session, build the main window, run the loop.

Kept apart from :mod:`workbench.ui.window.app` (the QApplication alone), which every window and the
figure export build on, so that nothing below the main window imports it.
"""

from __future__ import annotations

import gc
import importlib
import logging
import sys
from pathlib import Path

from workbench.ui.window.app import create_app

__all__ = ["run", "start"]

#: The Qt-free modules the window needs (with those they import: the model's, the document's
#: and the files' the window uses), imported before Qt. PySide6 reads the source of every
#: module imported after it (to see whether it names PySide6): 7 M instructions, about 2 ms,
#: for these 28. A test checks that start-up imports no Qt-free module of the product after
#: Qt.
QT_FREE_FIRST = ("workbench.document", "workbench.document.derivation",
                 "workbench.io.autosave", "workbench.io.tables", "workbench.model.chart.scene",
                 "workbench.model.chart.placement", "workbench.model.chart.tagging")


def start(session: str | None = None):
    """Read ``session`` (or the built-in example), build the main window on it and show it:
    the application's start-up, up to its first paint. Raises :class:`InputError` for a
    session that cannot be read, before any window exists. Returns the window.

    Python's cyclic garbage collector is paused meanwhile. Start-up allocates some 75,000
    objects (Qt's, pyqtgraph's and numpy's modules, then the window's) that all live as long
    as the process; every collection triggered on the way walked them again, about 60 ms in
    all. Afterwards they are frozen out of later collections (``gc.freeze``) and the
    collector runs as usual."""
    paused = gc.isenabled()
    gc.disable()
    try:
        from workbench.io.presets import DEFAULT_EXAMPLE, examples_dir
        from workbench.io.sessions import load_session

        path = Path(session) if session else None
        # read as given (a message names the file as the user typed it), kept resolved
        assumed: list[str] = []  # values an older file leaves out: said once shown
        source = path if path else examples_dir() / DEFAULT_EXAMPLE
        loaded = load_session(source, assumed)
        for name in QT_FREE_FIRST:
            importlib.import_module(name)
        create_app()
        from workbench.ui.window.main_window import MainWindow

        window = MainWindow()
        resolved = path.resolve() if path else None
        # the built-in example is named as an example (Save asks where to keep a copy)
        window.set_session(loaded, resolved, None if path else DEFAULT_EXAMPLE)
        if resolved:
            window.add_recent(resolved)
        window.show()
        if assumed:
            from workbench.ui.dialogs.load_warnings import show_assumed

            show_assumed(window, source, assumed)
        return window
    finally:
        if paused:
            gc.freeze()
            gc.enable()


def run(session: str | None = None) -> int:
    """Open the main window on ``session`` (or the built-in example) and run the event loop.

    A session that cannot be read is reported on one line with exit status 2, before any
    window opens, like every other command."""
    from workbench.io.errors import InputError

    try:
        window = start(session)
    except InputError as exc:
        sys.stderr.write(f"roofline-workbench: {exc}\n")
        return 2
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from workbench import __version__
    from workbench.ui.log import start_log  # (after the first paint: not needed for it)

    start_log()
    logging.getLogger(__name__).info("Roofline Workbench %s started on %s", __version__,
                                     session or "the built-in example")
    QTimer.singleShot(0, window.offer_recovery)
    return QApplication.instance().exec()
