"""Hardware ▸ Measure This Machine…: measure the local CPU's or a GPU's roofs without blocking
the window.

The device menu offers the CPU (numpy) and every GPU a GPU library finds here (PyTorch, else
CuPy: :func:`workbench.measure.gpu_backend.list_gpus`), looked for in a thread of its own
while the dialog is open; without one it says what to install.
The measurement (:func:`workbench.measure.measure_machine`, or
:func:`workbench.measure.gpu_runner.measure_gpu` for a GPU) runs in a worker thread; the
dialog shows the stage, the fraction done and an estimate of the time left, and Cancel stops
it at any moment (between two timed runs, or by killing the GEMM child process). The
measured machine is saved to the user presets folder (listed with the presets, marked
measured) and added to the session, with the datasheet machine chosen to compare it with.
"""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QEvent, QObject, Qt, QThread, Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
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

__all__ = ["GpuSearch", "MeasureDialog", "MeasureWorker", "open_measure_dialog"]

_log = logging.getLogger(__name__)


class MeasureWorker(QObject):
    """Runs one measurement in the thread it is moved to; reports through signals."""

    progressed = Signal(object)  # Progress
    finished = Signal(object)  # MeasuredMachine
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, profile, job=None) -> None:
        super().__init__()
        self.profile = profile
        #: job(progress, cancelled) → MeasuredMachine; by default the CPU measurement
        self.job = job or (lambda progress, cancelled: measure_machine(self.profile, progress,
                                                                      cancelled))
        self._stop = threading.Event()

    def cancel(self) -> None:
        self._stop.set()

    @Slot()
    def run(self) -> None:
        try:
            result = self.job(self.progressed.emit, self._stop.is_set)
        except Cancelled:
            self.cancelled.emit()
        except Exception as exc:  # noqa: BLE001 - any library's fault: shown and logged
            _log.exception("the measurement failed")
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.finished.emit(result)


class GpuSearch(QObject):
    """Looks for GPUs (:func:`discover_gpus`) in the thread that calls :meth:`run`, and
    reports them, queued to the GUI thread, by :attr:`found`. It has no parent: a dialog
    closed meanwhile is simply not told."""

    found = Signal(object)  # [(backend, device info), ...]

    def run(self) -> None:
        try:
            gpus = discover_gpus()
        except Exception:  # noqa: BLE001 - a broken library: no GPU to offer, the hint says why
            _log.exception("looking for GPUs failed")
            gpus = []
        self.found.emit(gpus)


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

        self.intro = QLabel(self)
        self.intro.setObjectName("measureIntro")
        self.intro.setWordWrap(True)
        self.device_combo = QComboBox(self)
        self.device_combo.setObjectName("measureDevice")
        self.device_combo.addItem("This computer's CPU (numpy)", None)
        #: the GPUs found, as (backend, device info); ``None`` while they are looked for
        self.gpus: list | None = None
        self.gpu_hint = QLabel(self)
        self.gpu_hint.setObjectName("measureGpuHint")
        self.gpu_hint.setWordWrap(True)
        self.gpu_hint.setText("Looking for GPUs…")
        # PyTorch takes 1–3 s to import and start CUDA: looked for beside the window, which
        # stays responsive; the CPU can be measured meanwhile
        search = GpuSearch()
        search.found.connect(self._gpus_found)
        threading.Thread(target=search.run, name="gpu search", daemon=True).start()
        self.profile_combo = QComboBox(self)
        self.profile_combo.setObjectName("measureProfile")
        self.profile_combo.addItem("Quick (about 20 s)", "quick")
        self.profile_combo.addItem("Full (about 90 s)", "full")
        self.datasheet_combo = QComboBox(self)
        self.datasheet_combo.setObjectName("measureDatasheet")
        form = QFormLayout()
        form.addRow("Device", self.device_combo)
        form.addRow("", self.gpu_hint)
        form.addRow("Run", self.profile_combo)
        form.addRow("Compare with datasheet", self.datasheet_combo)
        self.device_combo.currentIndexChanged.connect(self._device_changed)
        self._device_changed()

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
        self.result_label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.result_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.result_scroll = QScrollArea(self)
        self.result_scroll.setWidgetResizable(True)
        self.result_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.result_scroll.setWidget(self.result_label)

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
        layout.addWidget(self.intro)
        layout.addLayout(form)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.stage_label)
        layout.addWidget(self.estimate_label)
        layout.addWidget(self.result_scroll, 1)
        layout.addLayout(buttons)
        # (no result yet: the dialog as tall as its set-up, not a blank area under it)
        self.result_scroll.hide()
        self.resize(640, self._set_up_height(640))
        if parent is not None:  # the window closing stops a running measurement first
            parent.installEventFilter(self)

    # -- state -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.thread is not None

    def selected_gpu(self):
        """(backend, device info) of the GPU chosen, or ``None`` for the CPU."""
        index = self.device_combo.currentData()
        return None if index is None or not self.gpus else self.gpus[index]

    @Slot(object)
    def _gpus_found(self, gpus) -> None:
        self.gpus = list(gpus)
        for i, (backend, info) in enumerate(self.gpus):
            self.device_combo.addItem(f"{info.name} ({info.kind}:{info.index}, "
                                      f"{backend.name})", i)
        if not self.gpus:
            from workbench.measure.gpu_backend import INSTALL_HINT

            self.gpu_hint.setText(f"No GPU found to measure: {INSTALL_HINT}.")
        self.gpu_hint.setVisible(not self.gpus)
        self._grow_to(self._set_up_height(self.width()))  # (the hint may take more lines)

    def _device_changed(self) -> None:
        """Texts, run lengths and the datasheets offered follow the device chosen."""
        from workbench.io.presets import builtin_ids, load_presets

        gpu = self.selected_gpu()
        if gpu is None:
            self.intro.setText(
                "Measures this computer's roofs with numpy: GEMM FLOP/s per precision (all "
                "cores and one) and copy bandwidth from L1 to DRAM, each the best of repeated "
                "runs. The machine is saved with your presets (marked measured) and added to "
                "the session.")
            labels = ("Quick (about 20 s)", "Full (about 90 s)")
        else:
            self.intro.setText(
                f"Measures {gpu[1].name} with {gpu[0].name}: the GEMM peak per precision, "
                "memory bandwidth (copy, read, triad) and the L2 plateau, launch costs eager "
                "and from a CUDA graph, and the kernel-class efficiencies of the calibrated "
                "prediction, each the median of repeated runs with its spread. The machine "
                "is saved with your presets (marked measured), compared with the datasheet "
                "and added to the session.")
            labels = ("Quick (under 30 s on an H100)", "Full (under 2 minutes on an H100)")
        for i, label in enumerate(labels):
            self.profile_combo.setItemText(i, label)
        kind = "cpu" if gpu is None else "gpu"
        self.datasheet_combo.clear()
        self.datasheet_combo.addItem("(none)", None)
        for preset_id, hw in load_presets().items():
            if hw.kind == kind:
                self.datasheet_combo.addItem(f"{hw.name} ({preset_id})", preset_id)
        if gpu is not None:
            from workbench.measure.gpu_runner import datasheet_for

            match = datasheet_for(gpu[1].name, builtin_ids())
            if match:
                self.datasheet_combo.setCurrentIndex(self.datasheet_combo.findData(match))
        if self.layout() is not None:  # (a GPU's introduction is longer)
            self._grow_to(self._set_up_height(self.width()))

    def start(self) -> None:
        if self.running:
            return
        gpu = self.selected_gpu()
        if gpu is not None:
            self._start_gpu(*gpu)
            return
        profile = profile_from_env(self.profile_combo.currentData())
        self._launch(MeasureWorker(profile), profile.name)

    def _start_gpu(self, backend, info) -> None:
        from workbench.io.presets import get_preset
        from workbench.measure.gpu_runner import gpu_profile_from_env, measure_gpu

        profile = gpu_profile_from_env(self.profile_combo.currentData())
        datasheet_id = self.datasheet_combo.currentData()
        datasheet = get_preset(datasheet_id) if datasheet_id else None

        def job(progress, cancelled):
            try:
                return measure_gpu(backend, info.index, profile, progress, cancelled,
                                   datasheet=datasheet, datasheet_id=datasheet_id)
            finally:
                backend.release()

        self._launch(MeasureWorker(profile, job), f"{profile.name} {info.name}")

    def _launch(self, worker: MeasureWorker, what: str) -> None:
        self.result = None
        self._show_result("")
        self.progress_bar.setValue(0)
        self.stage_label.setText(f"Starting the {what} measurement…")
        self.estimate_label.setText("")
        self.thread = QThread(self)
        self.worker = worker
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
        for combo in (self.profile_combo, self.device_combo, self.datasheet_combo):
            combo.setEnabled(False)
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
        from workbench.model.limits import OverBudget, Totals, hardware_bytes
        from workbench.model.session import HardwareEntry

        gpu = "device" in result.provenance  # a GPU measurement compares itself as it ends
        datasheet_id = (result.provenance.get("compared_to") if gpu
                        else self.datasheet_combo.currentData())
        if datasheet_id and not gpu:
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
        adding = [HardwareEntry(hw)]
        if datasheet_id and not any(e.preset == datasheet_id
                                    for e in self.document.session.hardware):
            adding.insert(0, HardwareEntry(get_preset(datasheet_id), preset=datasheet_id))
        # (both or neither: the session could not be opened again with them)
        problem = self.document.growth_problem(Totals(
            machines=len(adding), bytes=sum(map(hardware_bytes, adding))))
        new_id = None
        if problem is None:
            try:
                with self.document.batch():
                    for entry in adding:
                        new_id = self.document.add_machine(entry.hardware, preset=entry.preset)
            except OverBudget as exc:
                problem = str(exc)
            self.document.seal()
        if problem is not None:
            saved += f"\nNot added to the session: {problem}."
        self.stage_label.setText("Done." if problem is None
                                 else "Done; not added to the session.")
        self.estimate_label.setText(f"{result.provenance['duration_s']:.0f} s")
        if gpu:
            from workbench.measure.gpu_runner import gpu_summary_lines

            lines = gpu_summary_lines(result)
        else:
            lines = summary_lines(result)
        self._show_result("\n".join(lines) + "\n" + saved)
        if new_id is not None:
            self.machine_added.emit(new_id)

    def _on_failed(self, message: str) -> None:
        self.stage_label.setText("The measurement failed; nothing was saved.")
        self._show_result(message)

    def _show_result(self, text: str) -> None:
        """Show a run's result (or hide the empty area): the dialog grows to show it whole,
        where the screen has room (else it scrolls)."""
        self.result_label.setText(text)
        self.result_scroll.hide()  # (the dialog measured without it, then with its text)
        if not text:
            return
        layout = self.layout()
        margins = layout.contentsMargins()
        wide = self.width() - margins.left() - margins.right()
        wanted = (self._set_up_height(self.width()) + layout.spacing()
                  + self.result_label.heightForWidth(wide))
        self.result_scroll.show()
        self._grow_to(wanted)

    def _set_up_height(self, width: int) -> int:
        """How tall the dialog is at ``width`` without a result (its texts wrapped)."""
        layout = self.layout()
        if layout.hasHeightForWidth():
            return max(layout.totalHeightForWidth(width), self.sizeHint().height())
        return self.sizeHint().height()

    def _grow_to(self, height: int) -> None:
        """Made taller to ``height`` where the screen has room (never shorter)."""
        if self.height() < height:
            room = int(self.screen().availableGeometry().height() * 0.9)
            self.resize(self.width(), min(height, room))

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
        for combo in (self.profile_combo, self.device_combo, self.datasheet_combo):
            combo.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.parent() and event.type() == QEvent.Type.Close and self.running:
            self.cancel()
            self.wait()
        return False

    def closeEvent(self, event) -> None:
        if self.running:
            self.cancel()
            self.wait()
        super().closeEvent(event)


def discover_gpus():
    """Every GPU a GPU library finds here, as (backend, device info); ``[]`` without one."""
    from workbench.measure.gpu_backend import list_gpus

    return list_gpus()


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
