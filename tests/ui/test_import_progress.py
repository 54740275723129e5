"""A large measurement file is imported with a progress dialog that names each step, and
Nsight Compute exports are read in linear time."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QProgressDialog

from workbench.io.measurements import parse_ncu_csv
from workbench.ui.app import create_app
from workbench.ui.main_window import MainWindow

NCU_HEADER = ('"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum",'
              '"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"\n'
              '"","","nsecond","byte","inst"\n')


@pytest.fixture
def window(qtbot):
    create_app()
    win = MainWindow()
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.ask_save_changes = lambda: QMessageBox.Discard
    win.close()


def _watch_progress(seen: list[tuple[str, bool]]) -> QTimer:
    """Record the label of every progress dialog on screen while the import runs (the timer
    fires inside the dialog's own event processing)."""
    timer = QTimer()
    timer.setInterval(0)

    def look() -> None:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QProgressDialog) and widget.isVisible():
                entry = (widget.labelText(), widget.windowTitle() == "Import Measurements")
                if entry not in seen:
                    seen.append(entry)

    timer.timeout.connect(look)
    timer.start()
    return timer


def test_a_large_csv_shows_each_step_of_its_import(qtbot, window, tmp_path):
    path = tmp_path / "kernels.csv"
    rows = "".join(f"kernel number {i},{1 + i % 7}.25,{i + 1}e9,{i + 1}e6\n"
                   for i in range(40_000))
    path.write_text("name,time_us,flops,bytes\n" + rows, encoding="utf-8")
    assert path.stat().st_size > 1_000_000
    seen: list[tuple[str, bool]] = []
    timer = _watch_progress(seen)
    try:
        assert window.import_measurements(path)
    finally:
        timer.stop()
    assert ("Reading kernels.csv…", True) in seen
    assert ("Checking 40,000 measured points…", True) in seen
    assert ("Drawing 40,000 measured points…", True) in seen
    assert not any(isinstance(w, QProgressDialog) and w.isVisible()
                   for w in QApplication.topLevelWidgets())
    assert len(window.document.session.measurements) == 40_000
    assert window.document.undo_text().startswith("Import 40000 measurements")


def test_a_small_csv_is_imported_without_a_dialog(qtbot, window, tmp_path):
    path = tmp_path / "few.csv"
    path.write_text("name,time_us,flops,bytes\nk,1,1e9,1e6\n", encoding="utf-8")
    seen: list[tuple[str, bool]] = []
    timer = _watch_progress(seen)
    try:
        assert window.import_measurements(path)
    finally:
        timer.stop()
    assert seen == []
    assert [m.name for m in window.document.session.measurements] == ["k"]


def test_40000_nsight_kernels_are_read_in_linear_time():
    rows = "".join(f'"{i}","kernel_{i % 50}","{1000 + i}","{1000 + i}","{1000 + i}"\n'
                   for i in range(40_000))
    started = time.perf_counter()
    measurements = parse_ncu_csv(NCU_HEADER + rows, "big.csv")
    seconds = time.perf_counter() - started
    assert len(measurements) == 40_000
    assert measurements[7].name == "kernel_7 #7"  # repeated names get their ID
    assert seconds < 3, seconds  # (41 s with the name count per kernel)
