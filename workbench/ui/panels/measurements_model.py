"""The rows of the "Measurements" panel: each measured point judged on each machine.

:class:`MeasurementsModel` shows one row per measured point and machine it is judged on
(:class:`MeasuredRow`), with the columns :data:`MEASURED_COLUMNS`, and follows the document
incrementally: an operation edit re-judges only the rows of the points attached to it, a
machine edit only that machine's rows. The panel around it is
:mod:`workbench.ui.panels.measurements_panel`.
"""

from __future__ import annotations

import itertools
from operator import attrgetter
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from workbench.model.chart.profiled_kernels import kernel_row_name
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.measured import VERDICTS, Judgement, Measurement
from workbench.model.measured_session import SessionJudge, measurement_key
from workbench.model.profile import run_changes
from workbench.model.roofline import Result
from workbench.model.rules import formula
from workbench.model.session import HardwareEntry, Session
from workbench.model.units import format_quantity
from workbench.records import record
from workbench.ui.bridge import Workspace

__all__ = ["MeasurementsModel", "MeasuredRow", "MeasuredRows", "VERDICT_COLORS", "profile_lines",
           "MEASURED_COLUMNS", "COLUMN", "BANDS_TIP", "ref"]

#: Background of the verdict cell per band (text stays dark on it in every theme).
VERDICT_COLORS: dict[str, str] = {
    "re-measure": "#ffe08a",
    "as-predicted": "#b7e4c7",
    "overhead-bound": "#cfe3f5",
    "below-prediction": "#ffd3a8",
    "likely-bug": "#f8b4b0",
}
BANDS_TIP = ("Verdict against the prediction of the point's own machine and mode "
             "(measured time / T_predicted):<br>" + "<br>".join(v.label for v in VERDICTS))

#: (key, title, tooltip)
MEASURED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("name", "Measured point", "The measured point's name"),
    ("operation", "Operation", "The operation it verifies, or standalone (its own FLOPs and "
                               "bytes give the prediction)"),
    ("machine", "Machine", "The machine it is judged on"),
    ("time", "Measured time", "Measured time (or FLOPs / achieved FLOP/s when only a rate was "
                              "given)"),
    ("achieved", "Achieved", "Achieved FLOP/s = FLOPs / measured time"),
    ("ceiling", "Predicted ceiling", "Attainable FLOP/s predicted at the operation's intensity: "
                                     + formula("attainable")),
    ("predicted", "Predicted T_lower", "Predicted lower-bound time max(T_math, T_mem)"),
    ("fraction", "Fraction", "Fraction of the predicted ceiling = predicted T_lower / measured "
                             "time (= achieved ÷ attainable at the same FLOPs)"),
    ("verdict", "Verdict", BANDS_TIP),
    ("vs_predicted", "Measured / T_predicted", "Measured time over the predicted time "
                                               "(T_predicted, with the machine's efficiency "
                                               "or calibration): 1.00 × where the "
                                               "prediction meets the kernel"),
    ("traffic", "Traffic vs ideal", "Measured bytes (DRAM traffic of an imported kernel) over "
                                    "the operation's ideal bytes; empty when bytes were not "
                                    "measured"),
    ("launches", "Launches", "How many launches (dispatches) of the kernel the point stands "
                             "for; its time, FLOPs and bytes are the mean of one launch"),
    ("total", "Total time", "GPU time of all its launches: launches × mean time"),
    ("share", "% of GPU time", "Total time over the GPU time of every point of its run "
                               "(profile) in the session"),
    ("speedup", "Speed-up", "For a kernel in two runs of one program: its mean time in the "
                            "first run / in the second (> 1 ×: faster)"),
)
COLUMN = {key: i for i, (key, _t, _tip) in enumerate(MEASURED_COLUMNS)}


@record
class MeasuredRow:
    """One measured point on one machine (``hw_id`` ``None`` when it could not be placed)."""

    index: int  # position of the measurement in the session's list
    measurement: Measurement
    hw_id: int | None
    machine: str
    result: Result | None
    judgement: Judgement | None
    problem: str | None


def ref(session: Session, entry: HardwareEntry) -> str:
    """How a measurement names a machine: its preset id when that names it alone, else its
    name (see :meth:`Session.machine_ref`)."""
    return session.machine_ref(entry)


# =========================================================================================
# the table model


def profile_lines(m: Measurement, figures: tuple[float | None, float | None, str]
                  ) -> list[str]:
    """A profiled kernel's launches, total time, share of its run and speed-up, as lines."""
    share, speedup, tip = figures
    lines = []
    if m.count != 1 or m.run is not None:
        total = format_quantity(m.total_time_s, "time") if m.total_time_s else "—"
        line = f"{m.count:,} launch{'es' if m.count != 1 else ''}, {total} in all"
        if share is not None:
            line += f", {100 * share:.1f} % of the GPU time of {m.run}"
        lines.append(line)
    if speedup is not None:
        lines.append(f"speed-up {speedup:.2f} ×: {tip}")
    return lines


class MeasuredRows:
    """Judges the session's measurements (each judgement is remembered by what it depends
    on: :class:`~workbench.model.measured_session.SessionJudge`)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def judge(self) -> SessionJudge:
        """A judge of the session as it is now, for one pass over its measurements."""
        return SessionJudge(self.workspace.document.session)

    def rows_for(self, index: int, m: Measurement, judge: SessionJudge | None = None
                 ) -> list[MeasuredRow]:
        judge = judge or self.judge()
        key = measurement_key(m)
        problems = judge.problems(m, key)
        if problems:
            name, problem = problems[0]
            return [MeasuredRow(index, m, None, m.hardware or "—", None, None,
                                f"{name}: {problem}")]
        machines = judge.machines(m)
        if not machines:
            return [MeasuredRow(index, m, None, "—", None, None, "no machine in the session")]
        op_entry = judge.operation(m)
        out = []
        for hw in machines:
            label = hw.hardware.label
            try:
                result, judgement, problem = judge.outcome(m, op_entry, hw, key)
            except COUNTING_ERRORS as exc:  # invalid parameters: a row that says why
                out.append(MeasuredRow(index, m, hw.id, label, None, None, str(exc)))
                continue
            out.append(MeasuredRow(index, m, hw.id, label, result, judgement, problem))
        return out


class MeasurementsModel(QAbstractTableModel):
    """Rows of :class:`MeasuredRow`, measurements in session order, machines inside."""

    def __init__(self, workspace: Workspace, parent: Any = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.judge = MeasuredRows(workspace)
        self._rows: list[MeasuredRow] = []
        self._spans: list[tuple[int, int]] = []  # (first row, count) per measurement
        self._snapshot: list[Measurement] = []
        self.rebuilds = 0  # full rebuilds so far (tests check edits stay incremental)
        self._figures: dict[int, tuple[float | None, float | None, str]] | None = None

    # -- building --------------------------------------------------------------------------

    def rebuild(self) -> None:
        self._figures = None
        self.beginResetModel()
        self._rows, self._spans = [], []
        session = self.workspace.document.session
        judge = self.judge.judge()
        for i, m in enumerate(session.measurements):
            rows = self.judge.rows_for(i, m, judge)
            self._spans.append((len(self._rows), len(rows)))
            self._rows.extend(rows)
        self._snapshot = [m.copy() for m in session.measurements]
        self.rebuilds += 1
        self.endResetModel()

    def rejudge(self, indices: set[int]) -> bool:
        """Re-judge the measurements at ``indices`` in place; False when their number of rows
        changed (the caller rebuilds)."""
        session = self.workspace.document.session
        measurements = session.measurements
        if len(measurements) != len(self._spans):
            return False
        updates = []
        judge = self.judge.judge()
        for i in sorted(indices):
            rows = self.judge.rows_for(i, measurements[i], judge)
            start, count = self._spans[i]
            if len(rows) != count:
                return False
            updates.append((start, rows))
        for start, rows in updates:
            self._rows[start:start + len(rows)] = rows
            self.dataChanged.emit(self.index(start, 0),
                                  self.index(start + len(rows) - 1, len(MEASURED_COLUMNS) - 1))
        for i in indices:
            self._snapshot[i] = measurements[i].copy()
        return True

    def measurements_edited(self) -> None:
        """The session's measurements changed: re-judge the changed ones, or rebuild."""
        new = self.workspace.document.session.measurements
        self._figures = None
        if len(new) != len(self._snapshot):
            self.rebuild()
            return
        changed = {i for i, (a, b) in enumerate(zip(self._snapshot, new, strict=True)) if a != b}
        if changed and not self.rejudge(changed):
            self.rebuild()

    def operations_edited(self, op_ids: tuple[int, ...]) -> None:
        names = set()
        for op_id in op_ids:
            try:
                names.add(self.workspace.document.operation(op_id).operation.name)
            except KeyError:
                continue
        session = self.workspace.document.session
        # (looked through in C: an imported profile's many kernels, at every edit)
        touched = set(itertools.compress(itertools.count(), map(
            names.__contains__, map(attrgetter("operation"), session.measurements))))
        if touched and not self.rejudge(touched):
            self.rebuild()

    def machines_edited(self, hw_ids: tuple[int, ...]) -> None:
        ids = set(hw_ids)
        touched = {r.index for r in self._rows if r.hw_id in ids}
        if touched and not self.rejudge(touched):
            self.rebuild()

    # -- reading ---------------------------------------------------------------------------

    def profile_figures(self, m: Measurement) -> tuple[float | None, float | None, str]:
        """``(share of its run's GPU time, speed-up, speed-up's tooltip)`` of a point."""
        if self._figures is None:
            points = self.workspace.document.session.measurements
            totals: dict[str, float] = {}
            for p in points:
                if p.run is not None:
                    totals[p.run] = totals.get(p.run, 0.0) + (p.total_time_s or 0.0)
            figures: dict[int, tuple[float | None, float | None, str]] = {}
            for p in points:
                total = totals.get(p.run) if p.run is not None else None
                share = (p.total_time_s or 0.0) / total if total else None
                figures[id(p)] = (share, None, "")
            for change in run_changes(points):
                speedup = change.speedup
                tip = (f"{change.name}: {format_quantity(change.before.time_s, 'time')} in "
                       f"{change.before.run} → {format_quantity(change.after.time_s, 'time')} "
                       f"in {change.after.run}")
                for p in (change.before, change.after):
                    figures[id(p)] = (figures[id(p)][0], speedup, tip)
            self._figures = figures
        return self._figures.get(id(m), (None, None, ""))

    def row(self, i: int) -> MeasuredRow:
        return self._rows[i]

    def first_row_of(self, index: int) -> int | None:
        if 0 <= index < len(self._spans) and self._spans[index][1]:
            return self._spans[index][0]
        return None

    def text(self, row: int, key: str) -> str:
        r = self._rows[row]
        m, j = r.measurement, r.judgement
        if key == "name":
            return m.name
        if key == "operation":
            return m.operation if m.operation is not None else "standalone"
        if key == "machine":
            return r.machine
        if key == "launches":
            return f"{m.count:,}"
        if key == "total":
            return "—" if m.total_time_s is None else format_quantity(m.total_time_s, "time")
        if key == "share":
            share = self.profile_figures(m)[0]
            return "" if share is None else f"{100 * share:.1f} %"
        if key == "speedup":
            speedup = self.profile_figures(m)[1]
            return "" if speedup is None else f"{speedup:.2f} ×"
        if j is None:
            if key == "verdict":
                return f"not judged: {r.problem}"
            return "—"
        if key == "time":
            text = format_quantity(j.measured_time_s, "time")
            return text if m.time_s is not None else f"{text} (from achieved)"
        if key == "achieved":
            return format_quantity(j.achieved_flops, "flop_rate")
        if key == "ceiling":
            return format_quantity(j.predicted_attainable_flops, "flop_rate")
        if key == "predicted":
            return format_quantity(j.predicted_time_s, "time")
        if key == "fraction":
            return f"{100 * j.fraction:.1f} %"
        if key == "verdict":
            if j.above_roof:
                return f"⚠ above its roof: check the counting or the peak · {j.verdict_label}"
            return j.verdict_label
        if key == "vs_predicted":
            ratio = j.vs_predicted
            return "—" if ratio is None else f"{ratio:.2f} ×"
        if key == "traffic":
            if j.bytes_ratio is None or r.result is None:
                return ""
            return (f"{j.bytes_ratio:.2f} × ({format_quantity(j.bytes, 'bytes', 4)} of "
                    f"{format_quantity(r.result.bytes, 'bytes', 4)})")
        raise KeyError(key)

    def tooltip(self, row: int, key: str) -> str | None:
        r = self._rows[row]
        j = r.judgement
        if key == "speedup":
            return self.profile_figures(r.measurement)[2] or None
        if j is None:
            return r.problem
        if key == "fraction":
            return (f"predicted T_lower / measured time = "
                    f"{format_quantity(j.predicted_time_s, 'time')} / "
                    f"{format_quantity(j.measured_time_s, 'time')} = {j.fraction:.4f}")
        if key == "ceiling":
            return (f"{j.predicted_bound}-bound at intensity {j.predicted_intensity:.4g} FLOP/B"
                    f" on {r.machine}")
        if key in ("verdict", "name"):
            lines = [j.verdict_label, *j.notes]
            m = r.measurement
            if key == "name" and kernel_row_name(m.name, m.source or "") != m.name:
                lines.insert(0, m.name)  # (the row shows it shortened)
            lines += profile_lines(m, self.profile_figures(m))
            if m.source:
                lines.append(f"source: {m.source}")
            return "\n".join(lines)
        return None

    # -- Qt model interface ----------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(MEASURED_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(MEASURED_COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return MEASURED_COLUMNS[section][1]
        if role == Qt.ItemDataRole.ToolTipRole:
            return MEASURED_COLUMNS[section][2]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        R = Qt.ItemDataRole
        row, key = index.row(), MEASURED_COLUMNS[index.column()][0]
        if role == R.DisplayRole:
            if key == "name":  # (a kernel's C++ signature, shortened: see text for all)
                m = self._rows[row].measurement
                return kernel_row_name(m.name, m.source or "")
            return self.text(row, key)
        if role == R.ToolTipRole:
            return self.tooltip(row, key)
        if role == R.TextAlignmentRole:
            if key in ("name", "operation", "machine", "verdict"):
                return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        j = self._rows[row].judgement
        if key in ("verdict", "vs_predicted") and j is not None:
            if role == R.BackgroundRole:
                return QColor(VERDICT_COLORS.get(j.verdict, "#ffffff"))
            if role == R.ForegroundRole:
                return QColor("#1a1a1a")
        if role == R.ForegroundRole and j is None and key == "verdict":
            return QColor("#c62828")
        return None
