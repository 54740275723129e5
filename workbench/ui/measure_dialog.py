"""Hardware ▸ Measure This Machine…: measure the local CPU's roofs without blocking the window.

The measurement (:func:`workbench.measure.measure_machine`) runs in a worker thread; the
dialog shows the stage, the fraction done and an estimate of the time left, and Cancel stops
it at any moment (between two timed runs, or by killing the GEMM child process). The
measured machine is saved to the user presets folder (listed with the presets, marked
measured) and added to the session, with the datasheet machine chosen to compare it with.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QEvent, QObject, Qt, QThread, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from workbench.measure import (
    Cancelled,
    MeasuredMachine,
    Progress,
    compare_to_datasheet,
    measure_machine,
    profile_from_env,
)
from workbench.ui.bridge import Workspace

__all__ = ["MeasureDialog", "MeasureWorker", "open_measure_dialog"]


class MeasureWorker(QObject):
    """Runs one measurement in the thread it is moved to; reports through signals."""

    progressed = Signal(object)  # Progress
    finished = Signal(object)  # MeasuredMachine
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, profile) -> None:
        super().__init__()
        self.profile = profile
        self._stop = threading.Event()

    def cancel(self) -> None:
        self._stop.set()

    @Slot()
    def run(self) -> None:
        try:
            result = measure_machine(self.profile, self.progressed.emit, self._stop.is_set)
        except Cancelled:
            self.cancelled.emit()
        except Exception as exc:  # noqa: BLE001 - shown to the user, never lost
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.finished.emit(result)


class MeasureDialog(QDialog):
    """Start, watch and cancel a measurement; the result joins the session and the presets."""

    #: The document id of the measured machine just added.
    machine_added = Signal(int)

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MeasureDialog")
        self.setWindowTitle("Measure This Machine")
        self.workspace = workspace
        self.document = workspace.document
        self.thread: QThread | None = None
        self.worker: MeasureWorker | None = None
        self.result: MeasuredMachine | None = None
        self.saved_path = None

        intro = QLabel(
            "Measures this computer's roofs with numpy: GEMM FLOP/s per precision (all cores "
            "and one) and copy bandwidth from L1 to DRAM, each the best of repeated runs. "
            "The machine is saved with your presets (marked measured) and added to the "
            "session.", self)
        intro.setWordWrap(True)
        self.profile_combo = QComboBox(self)
        self.profile_combo.setObjectName("measureProfile")
        self.profile_combo.addItem("Quick (about 20 s)", "quick")
        self.profile_combo.addItem("Full (about 90 s)", "full")
        self.datasheet_combo = QComboBox(self)
        self.datasheet_combo.setObjectName("measureDatasheet")
        self.datasheet_combo.addItem("(none)", None)
        from workbench.io.presets import load_presets

        for preset_id, hw in load_presets().items():
            if hw.kind == "cpu":
                self.datasheet_combo.addItem(f"{hw.name} ({preset_id})", preset_id)
        form = QFormLayout()
        form.addRow("Run", self.profile_combo)
        form.addRow("Compare with datasheet", self.datasheet_combo)

        self.progress_bar = QProgressBar(self)
        self.progress_bar.setObjectName("measureProgress")
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(0)
        self.stage_label = QLabel("Not started.", self)
        self.stage_label.setObjectName("measureStage")
        self.estimate_label = QLabel("", self)
        self.estimate_label.setObjectName("measureEstimate")
        self.result_label = QLabel("", self)
        self.result_label.setObjectName("measureResult")
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.start_button = QPushButton("&Start", self)
        self.start_button.setObjectName("measureStart")
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("&Cancel", self)
        self.cancel_button.setObjectName("measureCancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button = QPushButton("Close", self)
        self.close_button.setObjectName("measureClose")
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.start_button, self.cancel_button, self.close_button):
            buttons.addWidget(button)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.stage_label)
        layout.addWidget(self.estimate_label)
        layout.addWidget(self.result_label, 1)
        layout.addLayout(buttons)
        self.resize(560, 360)
        if parent is not None:  # the window closing stops a running measurement first
            parent.installEventFilter(self)

    # -- state -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.thread is not None

    def start(self) -> None:
        if self.running:
            return
        profile = profile_from_env(self.profile_combo.currentData())
        self.result = None
        self.result_label.setText("")
        self.progress_bar.setValue(0)
        self.stage_label.setText(f"Starting the {profile.name} measurement…")
        self.estimate_label.setText("")
        self.thread = QThread(self)
        self.worker = MeasureWorker(profile)
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)
        self.worker.progressed.connect(self._on_progress)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.worker.cancelled.connect(self._on_cancelled)
        for signal in (self.worker.finished, self.worker.failed, self.worker.cancelled):
            signal.connect(self.thread.quit)
        self.thread.finished.connect(self._on_thread_done)
        self.start_button.setEnabled(False)
        self.profile_combo.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.thread.start()

    def cancel(self) -> None:
        """Stop the running measurement; nothing is saved or added."""
        if self.worker is not None:
            self.worker.cancel()
            self.stage_label.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def wait(self, ms: int = 30_000) -> bool:
        """Wait for the worker thread to end (closing, tests)."""
        return self.thread.wait(ms) if self.thread is not None else True

    # -- reactions -------------------------------------------------------------------------

    def _on_progress(self, p: Progress) -> None:
        self.progress_bar.setValue(round(1000 * p.fraction))
        self.stage_label.setText(p.stage)
        self.estimate_label.setText(f"{p.elapsed_s:.0f} s elapsed, about "
                                    f"{max(1, round(p.remaining_s))} s left")

    def _on_finished(self, result: MeasuredMachine) -> None:
        from workbench.io.presets import get_preset
        from workbench.io.user_presets import save_machine
        from workbench.measure.summary import summary_lines

        datasheet_id = self.datasheet_combo.currentData()
        if datasheet_id:
            compare_to_datasheet(result, get_preset(datasheet_id), datasheet_id)
        self.result = result
        self.progress_bar.setValue(1000)
        try:
            self.saved_path = save_machine(result.hardware, result.provenance)
            saved = f"Saved with your presets as {result.hardware.id}."
        except OSError as exc:
            saved = f"Could not save it with your presets: {exc.strerror or exc}"
        hw = result.hardware.copy()
        hw.id = ""  # in the session a machine defined in place: the session file stays portable
        with self.document.batch():
            if datasheet_id and not any(e.preset == datasheet_id
                                        for e in self.document.session.hardware):
                self.document.add_machine(get_preset(datasheet_id), preset=datasheet_id)
            new_id = self.document.add_machine(hw)
        self.document.seal()
        self.stage_label.setText("Done.")
        self.estimate_label.setText(f"{result.provenance['duration_s']:.0f} s")
        self.result_label.setText("\n".join(summary_lines(result)) + "\n" + saved)
        self.machine_added.emit(new_id)

    def _on_failed(self, message: str) -> None:
        self.stage_label.setText("The measurement failed; nothing was saved.")
        self.result_label.setText(message)

    def _on_cancelled(self) -> None:
        self.stage_label.setText("Cancelled; nothing was saved.")
        self.estimate_label.setText("")
        self.progress_bar.setValue(0)

    def _on_thread_done(self) -> None:
        if self.worker is not None:
            self.worker.deleteLater()
        if self.thread is not None:
            self.thread.deleteLater()
        self.worker = None
        self.thread = None
        self.start_button.setEnabled(True)
        self.profile_combo.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if watched is self.parent() and event.type() == QEvent.Type.Close and self.running:
            self.cancel()
            self.wait()
        return False

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        if self.running:
            self.cancel()
            self.wait()
        super().closeEvent(event)


def open_measure_dialog(window) -> MeasureDialog:
    """The window's measure dialog (one per window), shown without blocking it."""
    dialog = window.measure_dialog
    if dialog is None:
        dialog = MeasureDialog(window.workspace, window)
        window.measure_dialog = dialog
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
