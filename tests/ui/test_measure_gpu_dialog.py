"""Hardware ▸ Measure This Machine… with a GPU: the device menu, progress, cancel, failure
and the measured machine beside its datasheet, driven as a user would on the replayed H100
(tests/fake_gpu.py)."""

from __future__ import annotations

import threading

import pytest
from conftest import EXAMPLES, HANG_GUARD_S
from fake_gpu import ReplayGpu, reference
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from workbench.io.user_presets import USER_PRESETS_VARIABLE, load_machine_file
from workbench.measure import gpu_backend
from workbench.measure.gpu_backend import Unavailable
from workbench.measure.runner import PROFILE_VARIABLE
from workbench.ui.dialogs import measure_dialog
from workbench.ui.dialogs.measure_dialog import MeasureDialog
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

LLAMA = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


class SlowReplay(ReplayGpu):
    """The replayed H100, each GEMM held until the test lets it go."""

    def __init__(self) -> None:
        super().__init__("h100-sxm")
        self.entered = threading.Event()
        self.go = threading.Event()

    def time_gemm(self, *args, **kw):
        self.entered.set()
        self.go.wait(10)
        return super().time_gemm(*args, **kw)


def _window(qtbot, tmp_path, monkeypatch, gpus):
    monkeypatch.setenv(PROFILE_VARIABLE, "tiny")
    monkeypatch.setenv(USER_PRESETS_VARIABLE, str(tmp_path / "presets"))
    monkeypatch.setattr(measure_dialog, "discover_gpus",
                        lambda: [(g, g.devices()[0]) for g in gpus])
    create_app()
    win = MainWindow()
    win.open_path(LLAMA)
    win.show()
    qtbot.waitExposed(win)
    return win


def _close(win):
    win.ask_save_changes = lambda: QMessageBox.Discard
    win.close()
    win.deleteLater()


def _trigger_measure(win) -> MeasureDialog:
    """Hardware ▸ Measure This Machine…: the dialog, as soon as it is shown."""
    for menu_action in win.menuBar().actions():
        if menu_action.text().replace("&", "") == "Hardware":
            for action in menu_action.menu().actions():
                if action.text().replace("&", "") == "Measure This Machine…":
                    action.trigger()
    dialog = win.findChild(MeasureDialog)
    assert dialog is not None and dialog.isVisible()
    return dialog


def _open_dialog(win) -> MeasureDialog:
    """The dialog, once it has looked for GPUs."""
    dialog = _trigger_measure(win)
    # (the GPUs are looked for beside the window; a search still running after the hang
    # guard fails below)
    for _ in range(HANG_GUARD_S * 200):
        if dialog.gpus is not None:
            break
        QTest.qWait(5)
    assert dialog.gpus is not None
    return dialog


@pytest.fixture
def gpu_window(qtbot, tmp_path, monkeypatch):
    fake = ReplayGpu("h100-sxm")
    win = _window(qtbot, tmp_path, monkeypatch, [fake])
    win.fake = fake
    yield win
    _close(win)


def test_the_gpu_is_offered_with_its_datasheet_and_measured_beside_it(qtbot, gpu_window,
                                                                     tmp_path):
    win = gpu_window
    dialog = _open_dialog(win)
    assert dialog.device_combo.count() == 2
    assert not dialog.gpu_hint.isVisible()
    assert dialog.datasheet_combo.findData("xeon-8480") >= 0  # the CPU's datasheets first
    dialog.device_combo.setCurrentIndex(1)
    assert "NVIDIA H100 80GB HBM3" in dialog.device_combo.currentText()
    assert dialog.datasheet_combo.currentData() == "h100-sxm"  # found by the device's name
    assert dialog.datasheet_combo.findData("xeon-8480") == -1  # GPU datasheets only
    assert "H100" in dialog.profile_combo.itemText(0) and "30 s" in dialog.profile_combo.itemText(0)
    assert "kernel-class efficiencies" in dialog.intro.text()

    before = len(win.document.session.hardware)
    estimates = []
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert not dialog.device_combo.isEnabled()
    qtbot.waitUntil(lambda: estimates.append(dialog.estimate_label.text()) or not dialog.running,
                    timeout=HANG_GUARD_S * 1000)
    assert dialog.stage_label.text() == "Done.", dialog.result_label.text()
    assert dialog.progress_bar.value() == 1000
    assert dialog.device_combo.isEnabled()

    bf16 = 2 * 8192**3 / reference("h100-sxm")["ops"]["g_8192"]["torch"]["median_s"]
    text = dialog.result_label.text()
    assert f"{bf16 / 1e12:.3g} TFLOP/s" in text
    assert "compared with the datasheet preset h100-sxm" in text and "bf16 peak" in text

    session = win.document.session
    added = session.hardware[before:]
    # the datasheet is in the session already (llama_ffn.yaml has it) or was added
    assert any(e.preset == "h100-sxm" for e in session.hardware)
    measured = added[-1].hardware
    assert measured.kind == "gpu" and measured.compute["bf16"] == pytest.approx(bf16)
    assert measured.calibration is not None and "gemm" in measured.calibration.efficiency
    assert f"bf16 {bf16 / 989.4e12:.2f}×" in measured.name
    saved = list((tmp_path / "presets").glob("measured-h100-sxm-*.yaml"))
    assert len(saved) == 1
    assert load_machine_file(saved[0])[1]["device"]["name"] == "NVIDIA H100 80GB HBM3"
    assert win.fake.released


def test_cancel_a_gpu_measurement(qtbot, tmp_path, monkeypatch):
    fake = SlowReplay()
    win = _window(qtbot, tmp_path, monkeypatch, [fake])
    try:
        dialog = _open_dialog(win)
        dialog.device_combo.setCurrentIndex(1)
        before = len(win.document.session.hardware)
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
        assert fake.entered.wait(10)
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
        fake.go.set()
        qtbot.waitUntil(lambda: not dialog.running, timeout=HANG_GUARD_S * 1000)
        assert dialog.stage_label.text() == "Cancelled; nothing was saved."
        assert len(win.document.session.hardware) == before
        assert not (tmp_path / "presets").exists()
        assert fake.released
    finally:
        fake.go.set()
        _close(win)


def test_a_failing_device_is_a_message_in_the_dialog(qtbot, tmp_path, monkeypatch):
    fake = ReplayGpu("h200")

    def gone(index):
        raise Unavailable("no cuda device 0 (found 0)")

    fake.select = gone
    win = _window(qtbot, tmp_path, monkeypatch, [fake])
    try:
        dialog = _open_dialog(win)
        dialog.device_combo.setCurrentIndex(1)
        assert dialog.datasheet_combo.currentData() == "h200"
        before = len(win.document.session.hardware)
        qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not dialog.running, timeout=HANG_GUARD_S * 1000)
        assert dialog.stage_label.text() == "The measurement failed; nothing was saved."
        assert "no cuda device 0" in dialog.result_label.text()
        assert len(win.document.session.hardware) == before
    finally:
        _close(win)


def test_without_a_gpu_library_the_dialog_says_what_to_install(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_backend, "_installed", lambda module: False)
    monkeypatch.setenv(USER_PRESETS_VARIABLE, str(tmp_path / "presets"))
    create_app()
    win = MainWindow()
    win.show()
    qtbot.waitExposed(win)
    try:
        dialog = _open_dialog(win)
        assert dialog.device_combo.count() == 1  # the CPU only
        assert dialog.gpu_hint.isVisible()
        assert 'pip install ".[gpu]"' in dialog.gpu_hint.text()
    finally:
        _close(win)


def test_the_dialog_opens_at_once_and_offers_the_gpu_when_found(qtbot, tmp_path, monkeypatch):
    """PyTorch takes seconds to import and start CUDA: the dialog does not wait for it. It
    opens with the CPU and "Looking for GPUs…", the window answers meanwhile, and the GPU
    joins the menu once found."""
    fake = ReplayGpu("h100-sxm")
    release = threading.Event()

    def slow_discovery():
        release.wait(10)
        return [(fake, fake.devices()[0])]

    win = _window(qtbot, tmp_path, monkeypatch, [])
    monkeypatch.setattr(measure_dialog, "discover_gpus", slow_discovery)
    try:
        dialog = _trigger_measure(win)
        assert dialog.gpus is None
        assert dialog.device_combo.count() == 1 and dialog.selected_gpu() is None
        assert dialog.gpu_hint.isVisible() and dialog.gpu_hint.text() == "Looking for GPUs…"
        assert dialog.start_button.isEnabled()  # the CPU can be measured meanwhile
        release.set()
        qtbot.waitUntil(lambda: dialog.device_combo.count() == 2, timeout=HANG_GUARD_S * 1000)
        assert not dialog.gpu_hint.isVisible()
        dialog.device_combo.setCurrentIndex(1)
        assert dialog.selected_gpu()[1].name == "NVIDIA H100 80GB HBM3"
        assert dialog.datasheet_combo.currentData() == "h100-sxm"
    finally:
        release.set()
        _close(win)
