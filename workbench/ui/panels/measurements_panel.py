"""The "Measurements" panel: measured points judged against their predictions.

Predict, then verify. Each measured point of the session is one row per machine it is judged
on (a point that names no machine is judged on every machine of the session): its name, the
operation it verifies (or "standalone": its own FLOPs and bytes give the prediction), the
machine, the measured time and achieved FLOP/s, the predicted ceiling (attainable FLOP/s at
the predicted intensity) and lower-bound time, the **fraction of the predicted ceiling**
(predicted T_lower / measured time) and the **verdict** against the prediction of its own
machine and mode, with a coloured cell (measured time / T_predicted):

    < 0.8 × re-measure · 0.8–1.2 × as predicted · 1.2–2 × below prediction ·
    > 2 × likely a bug · overhead-bound (launch and start-up outweigh the work and the
    kernel meets its prediction)

Under the table, the selected point's fields can be edited (SI entry: "4.86 ms",
"790 TFLOP/s", "4.3 GFLOP", "35.7 MB"); buttons add a standalone point or one attached to the
selected operation, and delete. Every edit goes through :meth:`Document.set_measurements`
(one undo step each). Measurements are imported from CSV with :func:`import_measurements`
(File ▸ Import Measurements…; the formats are described in :mod:`workbench.io.measurements`).

The table follows the document incrementally: an operation edit re-judges only the rows of
the points attached to it, a machine edit only that machine's rows; while the panel is hidden
nothing is computed, and it catches up when shown (the rows and their model are in
:mod:`workbench.ui.panels.measurements_model`).

Public API::

    panel = MeasurementsPanel(workspace)
    panel.model.rowCount(), panel.model.row(i)        # MeasuredRow: measurement, judgement…
    panel.model.text(row, "fraction")                  # the text of a cell by column key
    panel.select_row(i)                                # show row i's measurement in the form
    panel.field("time")                                # an input of the form (name, operation,
                                                       # hardware, time, achieved, flops,
                                                       # bytes, precision, source)
    panel.add_standalone(), panel.add_for_operation(op_id), panel.delete_selected()
    import_measurements(document, path) -> int         # appends, one undo step; InputError
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QModelIndex, Qt, QThread, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressDialog,
    QPushButton,
    QScrollArea,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change, Document
from workbench.document.changes import What
from workbench.io.errors import InputError
from workbench.io.measurements import ImportCancelled, MeasurementImport, attach_measurements
from workbench.io.measurements import import_measurements as read_measurements_file
from workbench.io.profiles import add_machines, check_vendor
from workbench.model.dtypes import PRECISIONS
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.limits import (
    OverBudget,
    Totals,
    hardware_bytes,
    measurement_bytes,
    text_problem,
)
from workbench.model.measured import Measurement
from workbench.model.measured_session import judge_ahead
from workbench.model.units import QuantityError, format_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.panels.docked import DockedPanel
from workbench.ui.panels.measurements_model import (
    COLUMN,
    MEASURED_COLUMNS,
    VERDICT_COLORS,
    MeasuredRow,
    MeasurementsModel,
    ref,
)
from workbench.ui.widgets import QuantityEdit, WideSplitter, no_wheel_filter, set_invalid

__all__ = ["MeasurementsPanel", "MeasurementsModel", "MeasuredRow", "import_measurements",
           "ImportWorker", "is_large_import", "read_with_progress", "dialog_steps",
           "read_profile", "run_name",
           "scrolled_layout", "VERDICT_COLORS", "MEASURED_COLUMNS"]


def scrolled_layout(panel: QWidget) -> QVBoxLayout:
    """The layout of ``panel``'s contents, inside a scroll area: a dock shrunk below the
    contents' minimum scrolls instead of squeezing (or growing the window)."""
    outer = QVBoxLayout(panel)
    outer.setContentsMargins(0, 0, 0, 0)
    scroll = QScrollArea(panel)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setMinimumSize(120, 60)
    content = QWidget()
    scroll.setWidget(content)
    outer.addWidget(scroll)
    layout = QVBoxLayout(content)
    layout.setContentsMargins(4, 4, 4, 4)
    return layout


def import_measurements(document: Document, path: str | os.PathLike[str],
                        hardware: str | None = None,
                        progress: Callable[[str, int], None] | None = None,
                        result: MeasurementImport | None = None) -> int:
    """Append the measured points of a measurements file (plain CSV or a profiler export) to
    the document's session as one undo step; returns how many. All or nothing: a problem in
    the file (or a point naming an operation or machine the session lacks) raises
    :class:`~workbench.io.errors.InputError` naming the file and line, and nothing changes.
    ``progress(text, step)`` is told each of the :data:`IMPORT_STEPS` steps as it starts.
    ``result``: the file already read (by an :class:`ImportWorker`)."""
    step = progress or (lambda _text, _step: None)
    if result is None:
        step(f"Reading {Path(path).name}…", 0)
        result = read_profile(path, hardware, document.session)
    measurements = result.measurements
    step(f"Checking {len(measurements):,} measured points…", 1)
    probe = copy.copy(document.session)
    probe.measurements = list(document.session.measurements)
    probe.hardware = list(document.session.hardware)
    check_vendor(probe, result, hardware)  # (an AMD trace on an H100: refused)
    machines = add_machines(probe, result)  # a trace's GPU preset, a workload's roofline
    if machines and measurements:  # (the machines and the points, or neither)
        problem = document.growth_problem(Totals(
            machines=len(machines), measurements=len(measurements),
            bytes=sum(map(hardware_bytes, machines)) + sum(map(measurement_bytes,
                                                                measurements))))
        if problem:
            count = len(measurements)
            raise InputError(f"importing {count:,} measured point{'s' * (count != 1)} and "
                             f"{', '.join(e.hardware.label for e in machines)}: {problem}; "
                             "nothing was imported", str(path))
    added = attach_measurements(probe, measurements, str(path))  # (within the budget)
    if added:
        step(f"Drawing {len(added):,} measured points…", 2)
        document.seal()
        for entry in machines:
            document.add_machine(entry.hardware, entry.preset)
            document.seal()
        document.set_measurements(list(document.session.measurements) + added,
                                  f"Import {len(added):,} measurement"
                                  f"{'s' * (len(added) != 1)} from {Path(path).name}")
        document.seal()
    return len(added)


def run_name(path: str | os.PathLike[str], session) -> str:
    """The run a profile's points are marked with: its file name, numbered when the session
    already has a run of that name."""
    from workbench.io.profiles import run_name as numbered

    return numbered(path, {m.run for m in session.measurements if m.run is not None})


def read_profile(path: str | os.PathLike[str], hardware: str | None, session, *,
                 progress: Callable[[float], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> MeasurementImport:
    """A measurements file read for ``session``: a profile's points are marked as a run (so
    that a second run of the same program is compared with it)."""
    result = read_measurements_file(path, hardware, progress=progress, cancel=cancel)
    if result.format != "plain":
        run = run_name(path, session)
        for m in result.measurements:
            m.run = run
    return result


#: The share of an :class:`ImportWorker`'s progress that the read fills; judging the points
#: read (:func:`~workbench.model.measured_session.judge_ahead`) fills the rest.
READ_PART = 0.7


class ImportWorker(QThread):
    """Reads a measurements file off the window's thread, and judges its points there.
    ``fraction`` is how far it is (0…1); :meth:`cancel` stops it at the next chunk of rows
    (a few thousand) or of points, and it then ends with ``cancelled`` set and nothing read.
    ``result`` or ``error`` holds the outcome once the thread has finished."""

    def __init__(self, path: str | os.PathLike[str], hardware: str | None, session,
                 parent=None) -> None:
        super().__init__(parent)
        self.path = path
        self.hardware = hardware
        self.session = session
        self.fraction = 0.0
        self.result: MeasurementImport | None = None
        self.error: Exception | None = None
        self.cancelled = False
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def run(self) -> None:  # the worker thread
        def report(fraction: float) -> None:
            self.fraction = READ_PART * fraction

        def judged(fraction: float) -> None:
            self.fraction = READ_PART + (1 - READ_PART) * fraction

        try:
            self.result = read_profile(self.path, self.hardware, self.session,
                                       progress=report, cancel=self._cancel.is_set)
            # the points judged here, as they will be on the session's machines: the chart
            # and the table that show them then find them judged (the window is not held)
            if not judge_ahead(self.session, self.result.measurements, judged,
                               self._cancel.is_set):
                self.result = None
                self.cancelled = True
        except ImportCancelled:
            self.cancelled = True
        except Exception as exc:  # noqa: BLE001 - handed to the window's thread, which shows it
            self.error = exc


#: The steps of an import that :func:`import_measurements` reports.
IMPORT_STEPS = 3
#: Files from this size on are imported with a progress dialog (read in an
#: :class:`ImportWorker`, with Cancel).
LARGE_IMPORT_BYTES = 1_000_000


def is_large_import(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is read under a progress dialog: a file of
    :data:`LARGE_IMPORT_BYTES` or more, a compressed trace (its size on disk says little of
    what it holds) or a workload folder."""
    try:
        if os.path.isdir(path):
            return True
        return (os.stat(path).st_size >= LARGE_IMPORT_BYTES
                or str(path).lower().endswith(".gz"))
    except OSError:
        return False


#: The progress bar's range: the read fills 0…:data:`READ_SHARE`, the steps after it the rest.
PROGRESS_RANGE = 100
READ_SHARE = 80


def read_with_progress(parent: QWidget, path: str | os.PathLike[str], hardware: str | None,
                       session) -> tuple[MeasurementImport | None, Any]:
    """Read a large file in an :class:`ImportWorker` under a progress dialog with Cancel,
    keeping the window responsive; ``(result, dialog)``: ``result`` is ``None`` when the
    user cancelled (``dialog`` is then closed); an error of the read is raised here. The
    dialog stays open for the steps after the read (see :func:`dialog_steps`)."""
    dialog = QProgressDialog(f"Reading {Path(path).name}…", "Cancel", 0, PROGRESS_RANGE,
                             parent)
    dialog.setObjectName("import_progress")
    dialog.setWindowTitle("Import Measurements")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    worker = ImportWorker(path, hardware, session)
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(30)
    timer.timeout.connect(lambda: dialog.setValue(int(READ_SHARE * worker.fraction)))
    dialog.canceled.connect(worker.cancel)
    worker.finished.connect(loop.quit)
    dialog.show()
    worker.start()
    timer.start()
    if not worker.isFinished():
        loop.exec()
    timer.stop()
    worker.wait()
    if worker.cancelled:
        dialog.close()
        return None, dialog
    if worker.error is not None:
        dialog.close()
        raise worker.error
    dialog.setCancelButton(None)  # the steps after the read are all or nothing, and short
    return worker.result, dialog


def dialog_steps(dialog) -> Callable[[str, int], None]:
    """The ``progress(text, step)`` of :func:`import_measurements` shown in ``dialog``."""

    def report(text: str, step: int) -> None:
        dialog.setLabelText(text)
        dialog.setValue(READ_SHARE + (PROGRESS_RANGE - READ_SHARE) * step // IMPORT_STEPS)
        dialog.show()
        QApplication.processEvents()  # paint the dialog before the step's work starts

    return report


# =========================================================================================
# the panel


class MeasurementsPanel(DockedPanel, QWidget):
    """Table of measured points and a form for the selected one (see the module docstring)."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("measurements_panel")
        self.workspace = workspace
        self.document = workspace.document
        self._stale = True
        self._current: int | None = None  # index of the measurement in the form
        self._loading = False

        layout = scrolled_layout(self)
        bar = QHBoxLayout()
        self.add_standalone_button = QPushButton("Add Standalone")
        self.add_standalone_button.setObjectName("add_standalone")
        self.add_standalone_button.setToolTip("Add a measured kernel with its own FLOPs and bytes")
        self.add_standalone_button.clicked.connect(lambda: self.add_standalone())
        self.add_attached_button = QPushButton("Add for Operation")
        self.add_attached_button.setObjectName("add_attached")
        self.add_attached_button.setToolTip("Add a measurement of the selected operation: start "
                                            "from its predicted time, then type what you measured")
        self.add_attached_button.clicked.connect(lambda: self.add_for_operation())
        self.delete_button = QPushButton("Delete")
        self.delete_button.setObjectName("delete_measurement")
        self.delete_button.setToolTip("Delete the selected measured point")
        self.delete_button.clicked.connect(self.delete_selected)
        for b in (self.add_standalone_button, self.add_attached_button, self.delete_button):
            bar.addWidget(b)
        self.import_button = QToolButton()
        self.import_button.setObjectName("import_measurements")
        self.import_button.setVisible(False)
        bar.addWidget(self.import_button)
        bar.addStretch(1)
        self.count_label = QLabel("")
        bar.addWidget(self.count_label)
        layout.addLayout(bar)

        splitter = WideSplitter()  # the form beside the table in the short bottom row
        splitter.setObjectName("measurements_split")
        self.model = MeasurementsModel(workspace, self)
        self.view = QTableView()
        self.view.setObjectName("measurements_table")
        self.view.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
        self.view.setModel(self.model)
        self.view.setMinimumHeight(60)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        widths = {"name": 180, "operation": 150, "machine": 150, "time": 95, "achieved": 105,
                  "ceiling": 110, "predicted": 110, "fraction": 75}
        for key, column in COLUMN.items():
            # never narrower than the header's title ("Predicted T_lower" was cut)
            self.view.setColumnWidth(column, max(widths.get(key, 0),
                                                 header.sectionSizeHint(column)))
        self.view.selectionModel().currentRowChanged.connect(self._on_current)
        splitter.addWidget(self.view)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self._build_form())
        scroll.setMinimumHeight(0)
        splitter.addWidget(scroll)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)  # side by side, the form needs room for its fields
        layout.addWidget(splitter, 1)
        self.import_label = QLabel("")
        self.import_label.setObjectName("import_summary")
        self.import_label.setWordWrap(True)
        self.import_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.import_label.setVisible(False)
        layout.addWidget(self.import_label)

        workspace.signals.changed.connect(self._on_change)
        self._load_form()

    def show_import(self, result: MeasurementImport) -> None:
        """Say what the last profile import read (with the reader's notes: the GPU it ran on
        and the machines its points are judged on) and which kernels it could not count,
        with their launches, GPU time and why."""
        lines = [f"{Path(result.file).name}: {result.summary()}", *result.notes]
        for item in result.not_counted:
            lines.append(f"not counted: {item.name} ({item.count:,} launch"
                         f"{'es' if item.count != 1 else ''}, "
                         f"{format_quantity(item.time_s, 'time')}): {item.reason}")
        self.import_label.setText("\n".join(lines[:8]) + (
            f"\n… and {len(lines) - 8} more (tooltip)" if len(lines) > 8 else ""))
        self.import_label.setToolTip("\n".join(lines))
        self.import_label.setVisible(True)

    # -- form ------------------------------------------------------------------------------

    def _build_form(self) -> QWidget:
        box = QWidget()
        box.setObjectName("measurement_form")
        form = QFormLayout(box)
        form.setContentsMargins(4, 4, 4, 4)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self._fields: dict[str, QWidget] = {}
        self._errors: dict[str, str] = {}
        name = QLineEdit()
        name.setToolTip("The measured point's label")
        name.editingFinished.connect(lambda: self._on_text("name"))
        self._fields["name"] = name
        op = QComboBox()
        op.setToolTip("The operation this measurement verifies; standalone: its own FLOPs and "
                      "bytes give the prediction")
        op.activated.connect(lambda _i: self._on_combo("operation"))
        self._fields["operation"] = op
        hw = QComboBox()
        hw.setToolTip("The machine it was measured on; every machine: judged on each")
        hw.activated.connect(lambda _i: self._on_combo("hardware"))
        self._fields["hardware"] = hw
        for key, unit, tip in (
            ("time", "time", "Measured time, e.g. 4.86 ms (empty: give an achieved rate)"),
            ("achieved", "flop_rate", "Achieved FLOP/s, e.g. 790 TFLOP/s (used when the time "
                                      "is empty)"),
            ("flops", "flops", "Measured FLOPs (needed when standalone), e.g. 4.3 GFLOP"),
            ("bytes", "bytes", "Measured bytes (needed when standalone), e.g. 35.7 MB"),
        ):
            edit = QuantityEdit(unit, positive=True)
            edit.setToolTip(tip)
            edit.setProperty("base_tip", tip)
            edit.errorChanged.connect(lambda message, e=edit: e.setToolTip(
                f"Not applied: {message}" if message else e.property("base_tip")))
            edit.editingFinished.connect(lambda k=key: self._on_text(k))
            self._fields[key] = edit
        precision = QComboBox()
        precision.addItem("(default: bf16)", None)
        for p in PRECISIONS:
            precision.addItem(p, p)
        precision.setToolTip("Compute precision of a standalone point's ceiling")
        precision.activated.connect(lambda _i: self._on_combo("precision"))
        self._fields["precision"] = precision
        source = QLineEdit()
        source.setToolTip("Where the number came from (profiler, script, file)")
        source.editingFinished.connect(lambda: self._on_text("source"))
        self._fields["source"] = source
        for key, label in (("name", "Name"), ("operation", "Operation"), ("hardware", "Machine"),
                           ("time", "Measured time"), ("achieved", "Achieved FLOP/s"),
                           ("flops", "FLOPs"), ("bytes", "Bytes"), ("precision", "Precision"),
                           ("source", "Source")):
            widget = self._fields[key]
            widget.setObjectName(f"measurement_{key}")
            if isinstance(widget, QComboBox):
                widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
                widget.installEventFilter(no_wheel_filter())
            form.addRow(label, widget)
        self.hint = QLabel("")
        self.hint.setObjectName("measurement_hint")
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("QLabel#measurement_hint { color: #c62828; }")
        self.hint.setVisible(False)
        form.addRow(self.hint)
        self._form_box = box
        return box

    def field(self, key: str) -> QWidget:
        return self._fields[key]

    def hint_text(self) -> str:
        return self.hint.text()

    def _measurement(self) -> Measurement | None:
        ms = self.document.session.measurements
        if self._current is None or not 0 <= self._current < len(ms):
            return None
        return ms[self._current]

    def _load_form(self) -> None:
        m = self._measurement()
        self._form_box.setEnabled(m is not None)
        self.delete_button.setEnabled(m is not None)
        self._loading = True
        try:
            session = self.document.session
            op = self._fields["operation"]
            op.clear()
            op.addItem("(standalone)", None)
            for e in session.operations:
                op.addItem(e.operation.name, e.operation.name)
            hw = self._fields["hardware"]
            hw.clear()
            hw.addItem("(every machine)", None)
            for e in session.hardware:
                hw.addItem(e.hardware.label, ref(session, e))
            if m is None:
                for key in ("name", "source"):
                    self._fields[key].setText("")
                for key in ("time", "achieved", "flops", "bytes"):
                    self._fields[key].setValue(None)
                self._set_hint()
                return
            self._fields["name"].setText(m.name)
            self._fields["source"].setText(m.source)
            index = op.findData(m.operation) if m.operation is not None else 0
            if index < 0:
                op.addItem(f"{m.operation} (not in the session)", m.operation)
                index = op.count() - 1
            op.setCurrentIndex(index)
            index = 0
            if m.hardware is not None:
                matches = session.machines_matching(m.hardware)
                index = -1
                if len(matches) == 1:
                    index = next(i for i, e in enumerate(session.hardware, 1)
                                 if e.id == matches[0].id)
                    hw.setItemData(index, m.hardware)  # keep how the point names it
                if index < 0:
                    hw.addItem(f"{m.hardware} (not in the session)", m.hardware)
                    index = hw.count() - 1
            hw.setCurrentIndex(index)
            for key, attr in (("time", "time_s"), ("achieved", "achieved_flops"),
                              ("flops", "flops"), ("bytes", "bytes")):
                edit = self._fields[key]
                edit.setValue(getattr(m, attr))
                set_invalid(edit, False)
            precision = self._fields["precision"]
            precision.setCurrentIndex(max(0, precision.findData(m.precision)))
            self._errors.clear()
            self._set_hint()
        finally:
            self._loading = False

    def _set_hint(self) -> None:
        text = "\n".join(self._errors.values())
        self.hint.setText(text)
        self.hint.setVisible(bool(text))

    def _on_text(self, key: str) -> None:
        m = self._measurement()
        if m is None or self._loading:
            return
        widget = self._fields[key]
        new = m.copy()
        if key in ("name", "source"):
            text = widget.text().strip()
            if key == "name" and not text:
                self._refuse(key, "Name: must not be empty", m.name)
                return
            problem = text_problem(text, "measurement" if key == "name" else "source")
            if problem is not None:
                self._refuse(key, f"{key.capitalize()}: {problem}", getattr(m, key))
                return
            setattr(new, key, text)
        else:
            attr = {"time": "time_s", "achieved": "achieved_flops"}.get(key, key)
            text = widget.text().strip()
            if text:
                try:
                    value = widget.check(text)
                except QuantityError as exc:
                    self._refuse(key, f"{key}: {exc}", getattr(m, attr))
                    return
            else:
                value = None
            setattr(new, attr, value)
            problems = [p for f, p in new.problems() if f == attr]
            if problems:
                self._refuse(key, f"{key}: {problems[0]}", getattr(m, attr))
                return
        self._commit(new, f"Edit measurement {m.name}", key)

    def _on_combo(self, key: str) -> None:
        m = self._measurement()
        if m is None or self._loading:
            return
        new = m.copy()
        value = self._fields[key].currentData()
        setattr(new, key, value)
        self._commit(new, f"Edit measurement {m.name}", key)

    def _refuse(self, key: str, message: str, kept: Any) -> None:
        """Not applied: put the document's value back and say why."""
        shown = "empty" if kept is None else (kept if isinstance(kept, str) else f"{kept:g}")
        self._errors[key] = f"{message} — kept {shown}."
        self._set_hint()
        widget = self._fields[key]
        self._loading = True
        try:
            if isinstance(widget, QuantityEdit):
                widget.setValue(kept)
            elif isinstance(widget, QLineEdit):
                widget.setText(kept or "")
        finally:
            self._loading = False

    def _commit(self, new: Measurement, text: str, key: str) -> None:
        old = self.document.session.measurements
        if old[self._current] == new:
            self._errors.pop(key, None)
            self._set_hint()
            return
        # never leave a point that cannot be judged (no time left, standalone without bytes)
        blocking = [p for _f, p in new.problems()]
        if blocking:
            self._errors[key] = f"Not applied: {blocking[0]}"
            self._load_field(key)
            return
        self._errors.pop(key, None)
        self._set_hint()
        items = list(old)
        items[self._current] = new
        self.document.seal()
        try:
            self.document.set_measurements(items, text)
        except OverBudget as exc:  # (a session file that would not open again)
            self._errors[key] = f"Not applied: {exc}"
            self._load_field(key)
            return
        self.document.seal()

    def _load_field(self, key: str) -> None:
        errors = dict(self._errors)
        self._load_form()
        self._errors = errors
        self._set_hint()

    # -- add, delete -----------------------------------------------------------------------

    def add_standalone(self) -> int:
        session = self.document.session
        hw = session.hardware[0] if len(session.hardware) == 1 else None
        m = Measurement(name="measured kernel", hardware=ref(session, hw) if hw else None,
                        time_s=1e-3, flops=1e9, bytes=1e8, precision="bf16",
                        source="typed in")
        return self._append(m)

    def add_for_operation(self, op_id: int | None = None) -> int | None:
        """A measurement of an operation (default: the selected one), starting from its
        predicted time on the first machine it can be evaluated on."""
        op_id = self.workspace.selection.current if op_id is None else op_id
        if op_id is None:
            return None
        entry = self.document.operation(op_id)
        session = self.document.session
        time_s, machine = None, None
        for hw in session.hardware:
            try:
                pair = self.workspace.results.pair(op_id, hw.id)
            except COUNTING_ERRORS:  # invalid parameters: no prediction to offer
                continue
            if pair.result is not None and pair.result.t_predicted_s > 0:
                time_s, machine = float(f"{pair.result.t_predicted_s:.3g}"), hw
                break
        if time_s is None:
            return None
        m = Measurement(name=f"{entry.operation.name} (measured)",
                        operation=entry.operation.name, hardware=ref(session, machine),
                        time_s=min(max(time_s, 1e-12), 1e9), source="typed in")
        return self._append(m)

    def _append(self, m: Measurement) -> int | None:
        items = list(self.document.session.measurements) + [m]
        self.document.seal()
        try:
            self.document.set_measurements(items, f"Add measurement {m.name}")
        except OverBudget as exc:
            self._errors["add"] = f"Not added: {exc}"
            self._set_hint()
            return None
        self.document.seal()
        index = len(items) - 1
        self._refresh_now()
        self.select_measurement(index)
        return index

    def delete_selected(self) -> None:
        m = self._measurement()
        if m is None:
            return
        items = list(self.document.session.measurements)
        del items[self._current]
        self.document.seal()
        self.document.set_measurements(items, f"Delete measurement {m.name}")
        self.document.seal()

    # -- selection -------------------------------------------------------------------------

    def select_row(self, row: int) -> None:
        self._refresh_now()
        self.view.selectRow(row)
        self.view.setCurrentIndex(self.model.index(row, 0))

    def select_measurement(self, index: int) -> None:
        row = self.model.first_row_of(index)
        if row is not None:
            self.select_row(row)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        index = self.model.row(current.row()).index if current.isValid() else None
        if index != self._current:
            self._current = index
            self._errors.clear()
            self._load_form()

    # -- following the document ------------------------------------------------------------

    def set_import_action(self, action: QAction) -> None:
        self.import_button.setDefaultAction(action)
        self.import_button.setText("Import…")
        self.import_button.setVisible(True)

    def _on_change(self, change: Change) -> None:
        what = change.what
        if what in (What.STATE, What.VIEW, What.TITLE, What.COMPARISONS):
            return
        if what == What.OPERATION and change.fields and set(change.fields) <= {
                "color", "visible", "label", "sweep"}:
            return
        if what == What.HARDWARE and change.fields == ("visible",):
            return
        if not self.is_shown():
            self._stale = True
            return
        if self._stale:
            return  # a rebuild is already due
        if what in (What.OPERATION, What.HARDWARE):
            if what == What.OPERATION:
                self.model.operations_edited(change.ids)
            else:
                self.model.machines_edited(change.ids)
            if "name" in change.fields or what == What.HARDWARE:
                self._schedule_form()
        elif what == What.MEASUREMENTS:
            self.model.measurements_edited()
            self._after_rows()
        else:  # operations, machines, session
            self._stale = True
            QTimer.singleShot(0, self, self._refresh_now)

    def _schedule_form(self) -> None:
        QTimer.singleShot(0, self, self._load_form)

    def _refresh_now(self) -> None:
        if self._stale:
            self._stale = False
            self.model.rebuild()
            self._after_rows()

    def _after_rows(self) -> None:
        n = len(self.document.session.measurements)
        self.count_label.setText(f"{n} measured point{'s' * (n != 1)}")
        if self._current is not None and self._current >= n:
            self._current = None
        if self._current is not None:
            row = self.model.first_row_of(self._current)
            selected = self.view.currentIndex()
            if row is not None and (not selected.isValid()
                                    or self.model.row(selected.row()).index != self._current):
                self.view.blockSignals(True)
                self.view.selectRow(row)
                self.view.blockSignals(False)
        self._errors.clear()
        self._load_form()

    def _catch_up(self) -> None:
        if self.is_shown():
            self._refresh_now()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._catch_up()
