"""Measure on This Machine: time the selected operation with numpy here and add the result as
a measured point, judged against this machine's measured roofs like an imported measurement.

The machine is the session's measured CPU (the last one added), else the newest measured
machine of the user presets (added to the session), else the user is asked to measure this
machine first. The timing runs in a worker thread: the window stays responsive.
"""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QEvent, QObject, QThread, Signal, Slot

from workbench.measure.operations import time_operation, timing_problem
from workbench.model.limits import OverBudget
from workbench.model.measured import Measurement

__all__ = ["OperationTimer", "local_machine_name", "measure_selected_operation"]

_log = logging.getLogger(__name__)


class _Worker(QObject):
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, operation) -> None:
        super().__init__()
        self.operation = operation
        self.stop = threading.Event()

    @Slot()
    def run(self) -> None:
        try:
            self.finished.emit(time_operation(self.operation, cancelled=self.stop.is_set))
        except Exception as exc:  # noqa: BLE001 - any library's fault: shown and logged
            _log.exception("timing %s failed", self.operation.name)
            self.failed.emit(f"{self.operation.name}: {exc}")


def local_machine_name(document) -> str | None:
    """The name of this computer's measured machine in the session, adding the newest
    measured user preset when the session has none; ``None`` when there is none at all."""
    for entry in reversed(document.session.hardware):
        if entry.hardware.kind == "cpu" and entry.hardware.measured:
            return entry.hardware.name
    from workbench.io.user_presets import load_user_presets

    measured = [hw for hw in load_user_presets().values() if hw.measured]
    if not measured:
        return None
    newest = max(measured, key=lambda hw: hw.id)
    newest.id = ""
    document.add_machine(newest)
    document.seal()
    return newest.name


class OperationTimer(QObject):
    """Times operations for one window; ``done(int)`` gives the new measurement's index,
    ``problem(str)`` says why an operation was not timed."""

    done = Signal(int)
    problem = Signal(str)

    def __init__(self, workspace, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.document = workspace.document
        self.thread: QThread | None = None
        self.worker: _Worker | None = None
        self._target: tuple[str, str] | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None

    def measure(self, op_id: int | None = None) -> bool:
        """Start timing the operation (default: the selected one); False if it cannot be."""
        if self.running:
            self.problem.emit("An operation is already being timed.")
            return False
        op_id = self.workspace.selection.current if op_id is None else op_id
        if op_id is None:
            self.problem.emit("Select an operation to measure on this machine.")
            return False
        operation = self.document.operation(op_id).operation
        reason = timing_problem(operation)
        if reason:
            self.problem.emit(f"{operation.name} cannot be timed here: {reason}.")
            return False
        try:
            machine = local_machine_name(self.document)
        except OverBudget as exc:  # (the session could not be opened again with it)
            self.problem.emit(f"This machine's measured roofs were not added to the "
                              f"session: {exc}.")
            return False
        if machine is None:
            self.problem.emit("Measure this machine first (Hardware ▸ Measure This "
                              "Machine…): its roofs are the prediction a timing is judged "
                              "against.")
            return False
        self._target = (operation.name, machine)
        self.thread = QThread(self)
        self.worker = _Worker(operation.copy())
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self.problem.emit)
        self.worker.finished.connect(self.thread.quit)
        self.worker.failed.connect(self.thread.quit)
        self.thread.finished.connect(self._on_thread_done)
        self.thread.start()
        return True

    def wait(self, ms: int = 60_000) -> bool:
        return self.thread.wait(ms) if self.thread is not None else True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Close and self.running:  # the window closes: stop
            self.worker.stop.set()
            self.wait()
        return False

    def _on_finished(self, timed) -> None:
        import numpy as np

        name, machine = self._target
        t = timed.timing
        measurement = Measurement(
            name=f"{name} (numpy here)", operation=name, hardware=machine, time_s=t.best_time,
            source=f"timed on this machine: {timed.how}; best of {t.runs} runs, spread "
                   f"{100 * t.spread:.0f} %, numpy {np.__version__}")
        measurements = list(self.document.session.measurements) + [measurement]
        try:
            self.document.set_measurements(measurements, text=f"Measure {name} on This Machine")
        except OverBudget as exc:  # (the session could not be opened again with it)
            self.problem.emit(f"The timing of {name} was not added: {exc}.")
            return
        self.document.seal()
        self.done.emit(len(measurements) - 1)

    def _on_thread_done(self) -> None:
        for obj in (self.worker, self.thread):
            if obj is not None:
                obj.deleteLater()
        self.worker = None
        self.thread = None


def measure_selected_operation(window) -> OperationTimer:
    """Operation ▸ Measure on This Machine for ``window`` (one timer per window): problems
    are shown as errors, the new point is selected in the measurements panel."""
    timer = window.operation_timer
    if timer is None:
        timer = OperationTimer(window.workspace, window)
        window.operation_timer = timer
        window.installEventFilter(timer)
        timer.problem.connect(lambda text: window.show_error("Measure on This Machine", text))
        timer.done.connect(lambda index: _show_point(window, index))
    if timer.measure():
        window.statusBar().showMessage("Timing the operation on this machine…", 5000)
    return timer


def _show_point(window, index: int) -> None:
    window.statusBar().showMessage("Measured on this machine: see the Measurements panel",
                                   5000)
    panel = window.measurements_panel
    if panel is not None:
        window.measurements_dock.show()
        window.measurements_dock.raise_()
        panel.select_measurement(index)
