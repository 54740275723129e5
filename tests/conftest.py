"""Test set-up shared by every level: headless Qt, isolated settings, example paths."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any Qt import

import pytest
from xdist.scheduler import LoadFileScheduling

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "workbench" / "examples").glob("*.yaml"))
PRESETS = sorted((ROOT / "hardware_presets").glob("*.yaml"))
# How long a test waits for a process or a thread that should end on its own before calling it
# hung: a guard against waiting forever, far beyond any run on a loaded machine, never a claim
# about speed (speed is measured in benchmarks/).
HANG_GUARD_S = 600


# Test files that read the same example exports (``figures/example_figures.py`` makes each
# once per process): run in one process, they share them instead of each making its own.
SHARED_EXPORTS = ("tests/figures/test_figure_quality.py", "tests/figures/test_figure_key.py",
                  "tests/ui/test_export.py", "tests/figures/test_compute_roof_values.py",
                  "tests/figures/test_ridges_in_key.py")
# Files of a few tests that take long (the soak: 2,000 edits in one test), started first: last,
# one process would run them alone while the other has finished.
LONG_FIRST = ("tests/ui/test_soak.py",)


class SuiteScheduling(LoadFileScheduling):
    """``--dist loadfile``, except that the files of :data:`SHARED_EXPORTS` are one unit of
    work, run whole in one process, each file's tests in its own order; and that the files of
    :data:`LONG_FIRST` are handed out before the rest (which go, as ever, the files of more
    tests first)."""

    def _split_scope(self, nodeid: str) -> str:
        scope = super()._split_scope(nodeid)
        return SHARED_EXPORTS[0] if scope in SHARED_EXPORTS else scope

    def _assign_work_unit(self, node) -> None:
        for scope in reversed(LONG_FIRST):
            if scope in self.workqueue:
                self.workqueue.move_to_end(scope, last=False)
        super()._assign_work_unit(node)


@pytest.hookimpl(optionalhook=True)  # (a run without pytest-xdist has no such hook)
def pytest_xdist_make_scheduler(config, log):
    """The scheduler of ``--dist loadfile`` (pyproject.toml's) keeps the example exports'
    readers together and starts the long files first; any other ``--dist`` is
    pytest-xdist's own."""
    if config.getoption("dist") == "loadfile":
        return SuiteScheduling(config, log)
    return None


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory, monkeypatch):
    """Tests never read or write a person's settings or autosaves."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    try:
        from PySide6.QtCore import QStandardPaths
    except ImportError:  # engine-only environments
        yield
        return
    QStandardPaths.setTestModeEnabled(True)
    _clear_app_settings()  # Qt finds its settings file once a process: start each test clean
    yield
    _clear_app_settings()


@pytest.fixture(autouse=True)
def _no_mouse_button_left_pressed():
    """A test leaves no mouse button pressed: Qt keeps the buttons of the events the test
    sent for the whole process, and with one still down the next test's pointer moves carry
    it (the window it leaves is not told, and its status bar read-out stays). A test that
    leaves one pressed fails here; the button is released for the next."""
    yield
    pressed = _pressed_buttons()
    if pressed:
        _release(pressed)
        pytest.fail(f"the test left the mouse button(s) {pressed} pressed")


def double_click(qtbot, widget, pos) -> None:
    """Double-click ``widget`` at ``pos`` as a person does: a click, then a second press read
    as a double click, and its release (a view answers only a double click it saw begin;
    QTest's double click leaves its button pressed)."""
    from PySide6.QtCore import Qt

    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(widget, Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseRelease(widget, Qt.MouseButton.LeftButton, pos=pos)


def _pressed_buttons() -> list:
    try:
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QGuiApplication
    except ImportError:  # engine-only environments
        return []

    if QGuiApplication.instance() is None:
        return []
    held = QGuiApplication.mouseButtons()
    return [b for b in (Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton,
                        Qt.MouseButton.MiddleButton) if held & b]


def _release(buttons: list) -> None:
    """Release ``buttons`` as the window system would (over a window of its own)."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QWidget

    spare = QWidget()
    spare.resize(20, 20)
    spare.show()
    QTest.qWaitForWindowExposed(spare)
    for button in buttons:
        QTest.mouseRelease(spare.windowHandle(), button, Qt.KeyboardModifier.NoModifier,
                           QPoint(5, 5))
    spare.close()
    spare.deleteLater()


def _clear_app_settings() -> None:
    """Forget what an earlier test's window saved (layout, recent files, export options)."""
    from PySide6.QtCore import QCoreApplication, QSettings

    if QCoreApplication.organizationName() or QCoreApplication.applicationName():
        QSettings().clear()


@pytest.fixture
def open_window(qtbot):
    """Shown main windows: ``open_window(path=None, size=None)`` opens one (on the session
    file ``path``, resized to ``size``); each is closed at the end without asking to save."""
    from PySide6.QtWidgets import QMessageBox

    from workbench.ui.window.app import create_app
    from workbench.ui.window.main_window import MainWindow

    windows = []

    def open_(path=None, size: tuple[int, int] | None = None):
        create_app()
        win = MainWindow()
        if path is not None:
            assert win.open_path(path)
        if size is not None:
            win.resize(*size)
        win.show()
        qtbot.waitExposed(win)
        windows.append(win)
        return win

    yield open_
    for win in windows:
        win.ask_save_changes = lambda: QMessageBox.Discard
        win.close()
        win.deleteLater()


@pytest.fixture
def gpu_window(open_window):
    """A shown main window with an H100 and an RTX 4090 and no operations (the whole-model
    tests add theirs); closed without asking to save."""
    from workbench.io.presets import get_preset

    win = open_window()
    for preset in ("h100-sxm", "rtx-4090"):
        win.document.add_machine(get_preset(preset), preset)
    return win


def open_model_window(open_window, presets: tuple[str, ...], config: str, setup,
                      view: str = "layers", size: tuple[int, int] = (1366, 768)):
    """A shown window of ``size`` with the preset machines ``presets`` and the model
    ``config`` at ``setup`` (a :class:`Setup`), its chart showing ``view``: ``(window,
    model)``."""
    from workbench.io.model_configs import read_model_config
    from workbench.io.presets import get_preset
    from workbench.model.llm.session import ModelEntry

    win = open_window(size=size)
    for preset in presets:
        win.document.add_machine(get_preset(preset), preset)
    model = ModelEntry(config, read_model_config(config), setup, view=view)
    win.add_model(model)
    return win, model


def add_model_through_dialog(qtbot, win, config: str = "Llama-3.1-8B", tp: int = 1):
    """Edit ▸ Add Model… as a user does it: pick ``config``, set the tensor parallelism,
    press OK; the session's first model."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDialogButtonBox

    win.add_model_action.trigger()
    dialog = win._add_model_dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.config.setCurrentIndex(dialog.config.findData(config))
    dialog.form.tp.setValue(tp)
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok),
                     Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    return win.document.session.models[0]


def open_editor(qtbot, session, size=(520, 900)):
    """The operation editor on ``session`` as its dock shows it (``size``), the first
    operation selected: ``(document, workspace, editor, op_id)``."""
    from workbench.document import Document
    from workbench.ui.bridge import Workspace
    from workbench.ui.editors.operation_editor import OperationEditor

    document = Document(session)
    workspace = Workspace(document)
    editor = OperationEditor(workspace)
    qtbot.addWidget(editor)
    editor.resize(*size)
    editor.show()
    op_id = document.session.operations[0].id
    workspace.selection.select(op_id)
    return document, workspace, editor, op_id


def open_canvas(qtbot, path: Path, size: tuple[int, int]):
    """The live chart alone on the session at ``path``, shown at ``size`` and laid out."""
    from PySide6.QtWidgets import QApplication

    from workbench.document import Document
    from workbench.io.sessions import load_session
    from workbench.ui.bridge import Workspace
    from workbench.ui.chart.canvas import RooflineCanvas

    document = Document()
    document.replace_session(load_session(path))
    canvas = RooflineCanvas(Workspace(document))
    qtbot.addWidget(canvas)
    canvas.resize(*size)
    canvas.show()
    qtbot.waitExposed(canvas)
    QApplication.processEvents()
    canvas.relayout()
    return canvas


def keystroke_done() -> None:
    """The event loop after an edit set as the editor sets it: the repaint, then the
    editor's queued derivation and the sweep's crossings."""
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()
    QApplication.processEvents()


def open_sweep_example(open_window, qtbot):
    """The critical-batch example with the sweep plot raised and the first operation
    selected, as the user types in it."""
    path = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")
    win = open_window(path, size=(1366, 768))
    win.sweep_dock.raise_()
    win.workspace.selection.select(win.document.session.operations[0].id)
    qtbot.waitUntil(lambda: not win.sweep_plot.is_empty(), timeout=HANG_GUARD_S * 1000)
    keystroke_done()
    return win


def rest_pointer(widget, pixel) -> None:
    """What Qt sends ``widget`` once the pointer has rested at ``pixel`` (its coordinates) a
    moment: a request for its tooltip."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication

    QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, pixel,
                                              widget.mapToGlobal(pixel)))


def right_click_menu(qtbot, widget):
    """The context menu a right click in the middle of ``widget`` opens (as Qt sends it),
    once shown."""
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication, QMenu

    at = widget.rect().center()
    QApplication.sendEvent(widget, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at,
                                                     widget.mapToGlobal(at)))

    def shown():
        return next((w for w in QApplication.topLevelWidgets()
                     if isinstance(w, QMenu) and w.isVisible()), None)

    qtbot.waitUntil(lambda: shown() is not None)
    return shown()


def painted_canvas(win):
    """The canvas of ``win`` as the screen shows it (only what was repainted changes there)
    and as a full repaint draws it, with the plot area's rectangle (in the canvas's pixels)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()
    win.canvas.relayout()  # every text placed now: nothing moves between the two pictures
    QTest.qWait(150)
    canvas = win.canvas
    top_left = canvas.mapTo(win, QPoint(0, 0))

    def screen():
        return win.screen().grabWindow(win.winId(), top_left.x(), top_left.y(),
                                       canvas.width(), canvas.height()).toImage()

    shown = screen()
    for _ in range(20):  # until the screen has settled (a busy machine paints late)
        QTest.qWait(50)
        again = screen()
        if again == shown:
            break
        shown = again
    full = canvas.grab().toImage()
    plot = canvas.plot_widget
    area = plot.mapFromScene(plot.getPlotItem().getViewBox().sceneBoundingRect()).boundingRect()
    return shown, full, area.translated(plot.mapTo(canvas, QPoint(0, 0)))


#: Pixels in which a partial repaint may differ from a full one without anything being left
#: on screen: the anti-aliased ends of the legend's sample lines (a row of text left behind
#: is several hundred).
ANTIALIASED_ENDS = 40


def stale_pixels(shown, full, area) -> int:
    """Pixels around the plot area (axes, titles, a legend outside the plot) that the screen
    shows otherwise than a full repaint draws them (:func:`painted_canvas`). (Inside the plot
    a dotted line repainted in part may start its dots elsewhere.)"""
    shown = shown.convertToFormat(full.format())
    assert shown.size() == full.size() and full.devicePixelRatio() == 1
    inside = area.adjusted(-1, -1, 1, 1)
    return sum(1 for y in range(full.height()) for x in range(full.width())
               if not inside.contains(x, y) and shown.pixel(x, y) != full.pixel(x, y))


#: levels (of 255) a smoothed line's edge may be shaded otherwise where part of it is
#: repainted than where all of it is: Qt draws a line from the edge of the area repainted,
#: its slope worked out again there (a wide roof is drawn so on screen: see Segment.paint);
#: a remnant of a point, ring, leader or text differs by far more
SHADING = 4


def largest_difference(a, b) -> int:
    """The largest difference of any channel of any pixel of two pictures of one size."""
    import numpy as np

    assert (a.width(), a.height(), a.format()) == (b.width(), b.height(), b.format())
    rows_a = np.frombuffer(a.constBits(), np.uint8).reshape(a.height(), -1)
    rows_b = np.frombuffer(b.constBits(), np.uint8).reshape(b.height(), -1)
    used = a.width() * a.depth() // 8
    return int(np.abs(rows_a[:, :used].astype(int) - rows_b[:, :used].astype(int)).max())


def paint_regions(widget) -> list:
    """The regions of the paint events ``widget`` receives from now on, as they come (the
    watch goes with the widget; clear the list to start again)."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtGui import QRegion

    regions: list = []

    class Watch(QObject):
        def eventFilter(self, obj, event) -> bool:
            if event.type() == QEvent.Type.Paint:
                regions.append(QRegion(event.region()))
            return False

    widget.installEventFilter(Watch(widget))
    return regions
