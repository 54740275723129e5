"""A large profile is read off the window's thread under a progress bar with Cancel: the bar
moves while it reads, and Cancel leaves the session as it was."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QProgressDialog, QPushButton

from workbench.io import ncu

HEADER = ('"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum",'
          '"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"\n"","","nsecond","byte","inst"\n')


@pytest.fixture
def window(open_window):
    return open_window()


def _profile(path, launches: int) -> None:
    rows = "".join(f'"{i}","kernel_{i % 40}","{1000 + i}","{4096 * (1 + i % 3)}","{i}"\n'
                   for i in range(launches))
    path.write_text(HEADER + rows, encoding="utf-8")


def _dialog() -> QProgressDialog | None:
    return next((w for w in QApplication.topLevelWidgets()
                 if isinstance(w, QProgressDialog) and w.isVisible()), None)


def _slowed(monkeypatch) -> None:
    """Each progress report of the read takes a millisecond more, so that the window sees
    the read under way whatever the machine's load."""
    tick = ncu._Records.tick

    def slow(self):
        time.sleep(0.001)
        tick(self)

    monkeypatch.setattr(ncu._Records, "tick", slow)


def test_cancel_leaves_the_session_as_it_was(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr(ncu, "_CHUNK", 20)  # report (and look for Cancel) often
    _slowed(monkeypatch)
    path = tmp_path / "step.csv"
    _profile(path, 40_000)
    assert path.stat().st_size > 1_000_000
    before = list(window.document.session.measurements)
    undo = window.document.undo_text()
    seen: list[int] = []

    def press_cancel() -> None:
        dialog = _dialog()
        if dialog is None or dialog.value() <= 0:
            return
        seen.append(dialog.value())
        button = dialog.findChild(QPushButton)
        assert button is not None and button.text() == "Cancel"
        timer.stop()
        button.click()

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(press_cancel)
    timer.start()
    try:
        assert not window.import_measurements(path)
    finally:
        timer.stop()
    assert seen and 0 < seen[0] < 80  # the bar had moved, the read had not finished
    assert window.document.session.measurements == before
    assert window.document.undo_text() == undo
    assert window.statusBar().currentMessage() == (
        "Import of step.csv cancelled; nothing was changed")
    assert _dialog() is None


def test_a_large_profile_is_read_with_a_moving_bar_and_grouped(qtbot, window, tmp_path,
                                                               monkeypatch):
    monkeypatch.setattr(ncu, "_CHUNK", 100)
    _slowed(monkeypatch)
    path = tmp_path / "step.csv"
    _profile(path, 40_000)
    values: list[int] = []

    def look() -> None:
        dialog = _dialog()
        if dialog is not None and dialog.windowTitle() == "Import Measurements":
            values.append(dialog.value())

    timer = QTimer()
    timer.setInterval(1)
    timer.timeout.connect(look)
    timer.start()
    try:
        assert window.import_measurements(path)
    finally:
        timer.stop()
    assert values and max(values) > min(values)
    points = window.document.session.measurements
    # 40,000 launches of 40 kernels (each launched with one shape): 40 points of 1,000 each
    assert len(points) == 40 and all(m.count == 1000 for m in points)
    assert {m.run for m in points} == {"step.csv"}
    assert "40,000 dispatches of 40 kernels" in window.statusBar().currentMessage()


def test_a_large_profile_is_judged_off_the_window_thread(qtbot, open_window, tmp_path,
                                                          monkeypatch):
    """A large profile's kernels are judged as it is read, off the window's thread: the
    chart and the Measurements table show their verdicts without judging them again."""
    import threading

    from conftest import EXAMPLES

    from workbench.model import analysis

    on_window: list[str] = []
    elsewhere: list[str] = []
    evaluate = analysis.evaluate_counts

    def counting(counts, hardware, level=None, name="", calibrated=None):
        if name.startswith("kernel_"):
            (on_window if threading.current_thread() is threading.main_thread()
             else elsewhere).append(name)
        return evaluate(counts, hardware, level, name, calibrated)

    monkeypatch.setattr(analysis, "evaluate_counts", counting)
    window = open_window(next(p for p in EXAMPLES if p.name == "llama_ffn.yaml"))
    machines = len(window.document.session.hardware)
    path = tmp_path / f"{tmp_path.name}.csv"  # (a run of its own: judged by no other test)
    _profile(path, 40_000)
    assert window.import_measurements(path)
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 40 * machines)
    QApplication.processEvents()
    # (the kernels name no machine: each is judged on every machine of the session)
    assert len(elsewhere) == 40 * machines
    assert on_window == []
    # (a TPU has no fp32 peak to judge these kernels against, and says so)
    judged = [panel.model.text(row, "verdict").startswith("not judged")
              for row in range(panel.model.rowCount())
              if not panel.model.text(row, "machine").startswith("Google Cloud TPU")]
    assert len(judged) == 40 * (machines - 1) and not any(judged)
    assert window.canvas.measured_items()
