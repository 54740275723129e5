"""Start the desktop application."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

__all__ = ["run", "start", "create_app", "quicken_pyside_import_check", "resources_dir"]


def quicken_pyside_import_check() -> None:
    """Make PySide6's check of every newly imported module cheap.

    Once imported, PySide6 asks of every module imported after it whether its source
    contains the text ``PySide6`` (which decides whether ``from __feature__ import ...`` may
    switch that module). It reads the source with :func:`inspect.getsource`, which walks all
    of ``sys.modules`` on each call and keeps every source file in ``linecache``: about
    0.25 ms a module, some 60 ms over this application's start-up (pyqtgraph's modules and
    ours). The same question is answered here by searching the file's bytes, about 0.03 ms
    a module; a module without a plain ``.py`` file is still answered by PySide6's own
    check. Where PySide6 has no such check, this does nothing."""
    import PySide6  # noqa: F401 (installs the check)

    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    if not callable(original) or getattr(original, "reads_bytes", False):
        return

    def mod_uses_pyside(module) -> bool:
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                with open(path, "rb") as source:
                    return b"PySide6" in source.read()
            except OSError:
                pass
        return original(module)

    mod_uses_pyside.reads_bytes = True
    mod_uses_pyside.original = original
    feature._mod_uses_pyside = mod_uses_pyside


def create_app(argv: list[str] | None = None):
    """The QApplication, configured before any widget exists (pyqtgraph needs that)."""
    quicken_pyside_import_check()
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else [sys.argv[0]])
    app.setOrganizationName("Roofline Workbench")
    app.setApplicationName("Roofline Workbench")
    app.setApplicationDisplayName("Roofline Workbench")
    if not getattr(app, "_workbench_font_set", False):
        from PySide6.QtGui import QFont

        # Latin text and numbers need no complex shaping; Qt still shapes the scripts that
        # require it. Laying out every label, cell and chart text is then markedly cheaper
        # (kerning pairs are not applied).
        font = app.font()
        font.setStyleStrategy(QFont.StyleStrategy.PreferNoShaping)
        app.setFont(font)
        app._workbench_font_set = True
    import pyqtgraph as pg

    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    icon = resources_dir() / "icon.svg"
    if icon.is_file():
        from PySide6.QtGui import QIcon

        app.setWindowIcon(QIcon(str(icon)))
    if not getattr(app, "_workbench_gc_frozen", False):
        # Everything imported so far (Qt, pyqtgraph, numpy: some 70,000 objects) lives as
        # long as the process: the cyclic collector need not walk it again on every full
        # collection (opening a large session triggers them; each took ~50 ms).
        gc.freeze()
        app._workbench_gc_frozen = True
    return app


def resources_dir() -> Path:
    """Icons and other assets: inside the package when installed, at the top in a checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_data" / "resources", here.parent / "resources"):
        if candidate.is_dir():
            return candidate
    return here.parent / "resources"


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
        from workbench.io.examples import DEFAULT_EXAMPLE, examples_dir
        from workbench.io.sessions import load_session

        path = Path(session) if session else None
        # read as given (a message names the file as the user typed it), kept resolved
        loaded = load_session(path if path else examples_dir() / DEFAULT_EXAMPLE)
        create_app()
        from workbench.ui.main_window import MainWindow

        window = MainWindow()
        resolved = path.resolve() if path else None
        window.set_session(loaded, resolved)
        if resolved:
            window._add_recent(resolved)
        window.show()
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

    QTimer.singleShot(0, window.offer_recovery)
    return QApplication.instance().exec()
