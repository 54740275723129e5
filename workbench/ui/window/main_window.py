"""The main window: composes the canvas and the panels, and owns files, menus and settings.

The panels each take the :class:`Workspace` and work on their own; this module only places
them, declares the actions, and does the file work (split from the dialogs so that tests and
the command line can call it).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QWidget,
)

from workbench import __version__
from workbench.document import Change, Document, OverBudget, new_operation
from workbench.document.changes import What
from workbench.io.autosave import Autosave, Recoverable, find_recoverable
from workbench.io.errors import InputError
from workbench.io.examples import list_examples
from workbench.io.sessions import load_session, save_session
from workbench.model.operations import CONVENTIONS, KINDS
from workbench.model.roofline import FORMULAS
from workbench.model.session import THEMES, Session
from workbench.ui.bridge import Workspace
from workbench.ui.dialogs.load_warnings import show_assumed
from workbench.ui.window.docks import DocksMixin

__all__ = ["MainWindow", "APP_NAME", "MAX_RECENT"]

APP_NAME = "Roofline Workbench"
MAX_RECENT = 8
AUTOSAVE_INTERVAL_MS = 30_000
FILE_FILTER = "Roofline sessions (*.yaml *.yml);;All files (*)"

_log = logging.getLogger(__name__)


class MainWindow(DocksMixin, QMainWindow):
    #: Hardware ▸ Measure This Machine…'s dialog and Edit ▸ Measure on This Machine's timer,
    #: made when first used (one of each per window)
    measure_dialog = None
    operation_timer = None
    #: the file name of the example shown (it has no path: Save asks where to keep a copy)
    example: str | None = None
    #: a background autosave failed (emitted on its worker thread, heard on the window's)
    autosave_failed = Signal(str)

    def __init__(self, workspace: Workspace | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MainWindow")
        self.workspace = workspace or Workspace(Document())
        self.document = self.workspace.document
        self.settings = QSettings()
        self.setAcceptDrops(True)
        self.fit_first_window()  # to the screen it opens on; saved settings may move it

        from workbench.ui.chart.canvas import RooflineCanvas

        self.canvas = RooflineCanvas(self.workspace, self)
        self.canvas.setObjectName("canvas")
        self.setCentralWidget(self.canvas)
        self.build_docks()
        self._build_actions()
        self._build_menus()
        # Ctrl+E is Export Figure… in every field too (X11's line edits take it otherwise)
        from workbench.ui.widgets import WindowKeysFilter

        self._keys_filter = WindowKeysFilter(self, [self.export_figure_action])
        self._build_status()

        self.workspace.signals.changed.connect(self._on_change)
        self.autosave = Autosave(autosave_folder())
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(AUTOSAVE_INTERVAL_MS)
        self.autosave_timer.timeout.connect(self._autosave_tick)
        self._autosaved_state = False  # the autosave slot holds the session as it is
        self.autosave_failed.connect(self._show_autosave_failure)
        self.autosave_timer.start()
        self._restore_settings()
        self._update_title()
        self._update_undo_actions()

    def _view_choice(self, key: str, choices) -> tuple[QActionGroup, dict]:
        """Exclusive actions setting the view's ``key`` to each ``(value, text, tip)``."""
        group = QActionGroup(self)
        actions = {}
        for value, text, tip in choices:
            action = self._action(text, lambda checked, v=value: checked and self.document
                                  .set_view(key, v), tip=tip, checkable=True,
                                  name=f"{key}_{value}")
            group.addAction(action)
            actions[value] = action
        return group, actions

    def _action(self, text: str, slot, shortcut=None, tip: str = "", checkable: bool = False,
                name: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.setCheckable(checkable)
        if name:
            action.setObjectName(name)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        K = QKeySequence.StandardKey
        self.new_action = self._action("&New", self.new_session, K.New, "Start an empty session",
                                       name="new")
        self.open_action = self._action("&Open…", self._on_open, K.Open, "Open a session file",
                                        name="open")
        self.save_action = self._action("&Save", self._on_save, K.Save, "Save the session",
                                        name="save")
        self.save_as_action = self._action("Save &As…", self._on_save_as, K.SaveAs,
                                           "Save the session under a new name", name="save_as")
        self.quit_action = self._action("&Quit", self.close, K.Quit, "Quit Roofline Workbench",
                                        name="quit")
        self.export_figure_action = self._action(
            "Export &Figure…", self._on_export_figure, QKeySequence("Ctrl+E"),
            "Save the chart as PNG, SVG, PDF or an interactive HTML page", name="export_figure")
        self.copy_figure_action = self._action(
            "&Copy Figure", self.copy_figure, QKeySequence("Ctrl+Shift+C"),
            "Copy the chart as an image (size and theme as last exported)", name="copy_figure")
        self.export_csv_action = self._action(
            "Export Results as CS&V…", self._on_export_csv, tip="Save the results table as CSV",
            name="export_csv")
        self.undo_action = self._action("&Undo", self.document.undo, K.Undo, name="undo")
        self.redo_action = self._action("&Redo", self.document.redo, K.Redo, name="redo")
        self.fit_action = self._action("&Fit to Data", self.canvas.fit_to_data,
                                       QKeySequence("Ctrl+0"), "Zoom to show every point and roof",
                                       name="fit")
        self.view_actions: dict[str, QAction] = {}
        for key, text, tip in (
            ("legend", "&Legend", "Show the legend"),
            ("labels", "Point &Labels", "Label each point with its operation's name"),
            ("regions", "Shade &Regions", "Shade the memory-bound and compute-bound regions"),
            ("derated", "&Derated Roofs", "Dashed practical roofs at each machine's efficiency"),
            ("all_precisions", "&All Precision Roofs",
             "Draw every precision's compute roof, not only those the operations use"),
            ("all_levels", "All &Memory Roofs",
             "Draw every memory level's roof (caches too), not only main memory and the "
             "levels the operations are measured across"),
            ("sweeps", "&Sweep Paths",
             "Draw each swept operation's path, its end values and its exact ridge crossings"),
            ("measured", "&Measured Points",
             "Draw measured points linked to their predictions, with their verdicts"),
            ("pairs", "Compared &Pairs",
             "Link compared operations (fused vs unfused, naive vs flash) with the bytes "
             "saved and the predicted speed-up"),
        ):
            action = self._action(text, lambda checked, k=key: self.document.set_view(k, checked),
                                  tip=tip, checkable=True, name=f"view_{key}")
            self.view_actions[key] = action
        top_tip = ("How many profiled kernels of each run the chart draws, by GPU time; the "
                   "legend says how many it hides")
        self.level_group, self.level_actions = self._view_choice("level", (
            ("dram", "&DRAM", "Place each profiled kernel at its DRAM (main memory) "
                              "intensity, against the main-memory roof"),
            ("l2", "L&2", "Place each profiled kernel at its L2 intensity, against the "
                          "machine's L2 roof"),
            ("l1", "L&1", "Place each profiled kernel at its L1 intensity, against the "
                          "machine's L1 roof"),
            ("all", "&All Levels", "One point per memory level a profiled kernel has bytes "
                                   "for, joined by a thin line")))
        self.top_group, self.top_actions = self._view_choice("top", (
            (0, "The Kernels That Make &95 % of the Time", top_tip), (5, "Top &5", top_tip),
            (10, "Top &10", top_tip), (20, "Top &20", top_tip), (50, "Top 5&0", top_tip),
            (100_000, "&Every Kernel", top_tip)))
        self.theme_group, self.theme_actions = self._view_choice(
            "theme", [(theme, theme.capitalize(), "") for theme in THEMES])
        from workbench.model.prediction import LAUNCHES

        self.prediction_group = QActionGroup(self)
        self.prediction_actions: dict[str, QAction] = {}
        for model, text, tip in (
                ("derated", "&Derated", "T_predicted = max(T_lower / efficiency, kernels × "
                                        "launch overhead): one efficiency per machine"),
                ("calibrated", "&Calibrated", "Efficiencies by kernel class, start-up and "
                                              "launch costs per kernel, fitted on measured "
                                              "kernels (the H100 and H200 presets; others: "
                                              "the H100's, assumed)")):
            action = self._action(text, lambda checked, m=model: checked and
                                  self.document.set_prediction(model=m), tip=tip,
                                  checkable=True, name=f"prediction_{model}")
            self.prediction_group.addAction(action)
            self.prediction_actions[model] = action
        self.launches_group = QActionGroup(self)
        self.launches_actions: dict[str, QAction] = {}
        for launches, text in LAUNCHES.items():
            action = self._action(f"Kernels {text}", lambda checked, k=launches: checked and
                                  self.document.set_prediction(launches=k),
                                  tip=f"Calibrated prediction: the launch cost of kernels {text}",
                                  checkable=True, name=f"launches_{launches}")
            self.launches_group.addAction(action)
            self.launches_actions[launches] = action
        self.guide_action = self._action("Reading the &Chart", self.show_guide, K.HelpContents,
                                         name="guide")
        self.conventions_action = self._action("Counting &Conventions", self.show_conventions,
                                               name="conventions")
        self.about_action = self._action("&About Roofline Workbench", self.show_about,
                                         name="about")
        self.show_log_action = self._action("Show &Log", self.show_log, name="show_log",
                                            tip="The app's log: faults and refusals, to send")
        self.import_measurements_action = self._action(
            "&Import Measurements…", self._on_import_measurements, QKeySequence("Ctrl+I"),
            "Import measured points from CSV (plain columns or ncu --csv --page raw)",
            name="import_measurements")
        self.compare_action = self._action(
            "Compare &With…", self._on_compare_with, tip="Compare the selected operation with "
            "another one (fused vs unfused, naive vs flash)", name="compare_with")
        self.measure_machine_action = self._action(
            "&Measure This Machine…", self._on_measure_machine,
            tip="Measure this computer's CPU (numpy) or a GPU (PyTorch) and add it as a machine",
            name="measure_machine")
        self.measure_operation_action = self._action(
            "Measure on &This Machine", self._on_measure_operation,
            tip="Time the selected operation with numpy here and add it as a measured point",
            name="measure_operation")

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.new_action)
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.examples_menu = file_menu.addMenu("Open E&xample")
        for title, path in list_examples():
            action = self.examples_menu.addAction(title)
            action.triggered.connect(lambda checked=False, p=path: self.open_example(p))
        file_menu.addSeparator()
        file_menu.addAction(self.save_action)
        file_menu.addAction(self.save_as_action)
        file_menu.addSeparator()
        file_menu.addAction(self.export_figure_action)
        file_menu.addAction(self.copy_figure_action)
        file_menu.addAction(self.export_csv_action)
        file_menu.addSeparator()
        file_menu.addAction(self.import_measurements_action)
        built = self.built_panel("measurements")
        if built is not None:  # built early (else it takes it when built)
            built.set_import_action(self.import_measurements_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        edit = bar.addMenu("&Edit")
        edit.addAction(self.undo_action)
        edit.addAction(self.redo_action)
        edit.addSeparator()
        add_menu = edit.addMenu("&Add Operation")
        self.add_kind_actions: dict[str, QAction] = {}
        for kind, spec in KINDS.items():
            action = add_menu.addAction(spec.label)
            action.setObjectName(f"add_{kind}")
            action.setStatusTip(spec.doc)
            action.triggered.connect(lambda checked=False, k=kind: self.add_operation(k))
            self.add_kind_actions[kind] = action
        self.add_model_action = edit.addAction("Add &Model…")
        self.add_model_action.setObjectName("add_model")
        self.add_model_action.setStatusTip("A whole LLM from its config.json: every layer, "
                                           "prefill or decode")
        self.add_model_action.triggered.connect(self._on_add_model)
        panel = self.operations_panel
        for name in ("duplicate_action", "delete_action", "move_up_action", "move_down_action"):
            action = getattr(panel, name, None)
            if action is not None:
                edit.addAction(action)
        edit.addSeparator()
        edit.addAction(self.compare_action)
        edit.addAction(self.measure_operation_action)

        view = bar.addMenu("&View")
        view.addAction(self.fit_action)
        view.addSeparator()
        for action in self.view_actions.values():
            view.addAction(action)
        view.addAction(self.sweep_dock.toggleViewAction())
        for title, actions in (("Profile Memory &Level", self.level_actions),
                               ("Profiled &Kernels Shown", self.top_actions),
                               ("&Theme", self.theme_actions)):
            submenu = view.addMenu(title)
            for action in actions.values():
                submenu.addAction(action)
        prediction_menu = view.addMenu("&Prediction")
        for action in self.prediction_actions.values():
            prediction_menu.addAction(action)
        prediction_menu.addSeparator()
        for action in self.launches_actions.values():
            prediction_menu.addAction(action)
        view.addSeparator()
        panels = view.addMenu("&Panels")
        for dock in (self.operations_dock, self.editor_dock, self.hardware_dock,
                     self.results_dock, self.measurements_dock, self.compare_dock,
                     self.model_dock, self.sweep_dock):
            panels.addAction(dock.toggleViewAction())

        hardware_menu = bar.addMenu("&Hardware")
        hardware_menu.addAction(self._action(
            "&Add Preset…", lambda: self.add_machines_from_menu("preset"),
            tip="Add machines from the hardware presets (sourced vendor figures)",
            name="add_preset"))
        hardware_menu.addAction(self._action(
            "&New Machine", lambda: self.add_machines_from_menu("new"),
            tip="Define a machine of your own", name="new_machine"))
        hardware_menu.addAction(self.measure_machine_action)

        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.guide_action)
        help_menu.addAction(self.conventions_action)
        help_menu.addSeparator()
        help_menu.addAction(self.show_log_action)
        help_menu.addAction(self.about_action)

    def _build_status(self) -> None:
        self.cursor_label = QLabel("")
        self.cursor_label.setObjectName("cursor_readout")
        self.statusBar().addPermanentWidget(self.cursor_label)
        signal = getattr(self.canvas, "cursor_text", None)
        if signal is not None:
            signal.connect(self.cursor_label.setText)

    # -- document state --------------------------------------------------------------------

    def _on_change(self, change: Change) -> None:
        self._autosaved_state = False
        if change.what == What.STATE:
            self._update_title()
            self._update_undo_actions()
            if not self.document.modified:
                self.autosave.remove()
        if change.what in (What.VIEW, What.SESSION, What.HARDWARE, What.MACHINES):
            self._sync_view_actions()
        if change.what in (What.OPERATIONS, What.SESSION):
            self.workspace.select_valid()

    def _sync_view_actions(self) -> None:
        view = self.document.session.view
        for key, action in self.view_actions.items():
            action.blockSignals(True)
            action.setChecked(bool(getattr(view, key)))
            action.blockSignals(False)
        for theme, action in self.theme_actions.items():
            action.blockSignals(True)
            action.setChecked(view.theme == theme)
            action.blockSignals(False)
        for choices, value in ((self.level_actions, view.level), (self.top_actions, view.top)):
            for key, action in choices.items():
                action.blockSignals(True)
                action.setChecked(key == value)
                action.blockSignals(False)
        machines = self.document.session.hardware
        first = machines[0].hardware if machines else None
        for key, action in (*self.prediction_actions.items(), *self.launches_actions.items()):
            action.blockSignals(True)
            action.setEnabled(first is not None and (key in self.prediction_actions
                                                     or first.prediction == "calibrated"))
            action.setChecked(first is not None and key in (first.prediction, first.launches))
            action.blockSignals(False)

    # -- autosave and recovery -------------------------------------------------------------

    def autosave_now(self) -> None:
        """Write unsaved changes to the autosave slot; remove it when there are none."""
        self._autosave(background=False)

    def _autosave_tick(self) -> None:
        """The autosave timer: write what changed since the last autosave, on a worker thread
        (a session of tens of thousands of measured points takes seconds to write)."""
        self._autosave(background=True)

    def _autosave(self, background: bool) -> None:
        if not self.document.modified:
            self.autosave.remove()
            self._autosaved_state = False
            return
        if self._autosaved_state and self.autosave.path.exists():
            return  # (nothing changed since it was written)
        session, path = self.document.session, self.document.path
        try:
            if background:
                pending = self.autosave.write_in_background(session, path, self.example)
                if pending is None:
                    return  # the previous write still runs: the next tick writes this state
                pending.add_done_callback(self._autosave_done)
            else:
                self.autosave.write(session, path, self.example)
        except OSError as exc:
            self._autosave_failed(exc)
            return
        self._autosaved_state = True

    def _autosave_done(self, pending) -> None:
        """(On the worker thread) a failed write is said in the status bar, on the window's
        thread."""
        exc = pending.exception()
        if exc is not None:
            self.autosave_failed.emit(_reason(exc))

    def _autosave_failed(self, exc: BaseException) -> None:
        self._show_autosave_failure(_reason(exc))

    def _show_autosave_failure(self, reason: str) -> None:
        _log.warning("autosave failed: %s", reason)
        self._autosaved_state = False
        self.statusBar().showMessage(f"Autosave failed: {reason}", 5000)

    def ask_recover(self, found: Recoverable) -> bool:
        """Ask whether to recover an autosave (separate so that tests can answer it)."""
        import datetime

        when = datetime.datetime.fromtimestamp(found.saved_at).strftime("%Y-%m-%d %H:%M")
        name = (Path(found.original).name if found.original
                else f"the example {found.example}" if found.example else "an untitled session")
        answer = QMessageBox.question(
            self, "Recover unsaved work?",
            f"Roofline Workbench did not close cleanly. Unsaved changes to {name} were "
            f"autosaved at {when}.\n\nRecover them?",
            QMessageBox.Yes | QMessageBox.No, QMessageBox.Yes)
        return answer == QMessageBox.Yes

    def offer_recovery(self) -> bool:
        """After a crash: offer the newest autosave left by a process that is gone."""
        found = find_recoverable(self.autosave.folder)
        if not found:
            return False
        newest = found[0]
        if not self.ask_recover(newest):
            for item in found:
                item.discard()
            return False
        try:
            session = newest.load()
        except InputError as exc:
            self.show_error("Cannot recover autosave", str(exc))
            return False
        original = Path(newest.original) if newest.original else None
        # named as it was before the crash: its file, the example it came from, or Untitled
        self.example = None if original else newest.example
        self.document.replace_session(session, original, modified=True)
        self.workspace.select_valid()
        for item in found:
            item.discard()
        self.autosave_now()
        self.statusBar().showMessage("Recovered unsaved changes", 5000)
        return True

    def _session_name(self) -> str:
        """The open file's name, an example's file name, or "Untitled"."""
        if self.document.path:
            return self.document.path.name
        return self.example or "Untitled"

    def _update_title(self) -> None:
        name = self._session_name()
        if not self.document.path and self.example:
            name += " (example)"
        self.setWindowTitle(f"{name}[*] — {APP_NAME}")
        self.setWindowModified(self.document.modified)

    def _update_undo_actions(self) -> None:
        d = self.document
        self.undo_action.setEnabled(d.can_undo())
        self.redo_action.setEnabled(d.can_redo())
        self.undo_action.setText(f"&Undo {d.undo_text()}".strip())
        self.redo_action.setText(f"&Redo {d.redo_text()}".strip())
        self.save_action.setEnabled(True)

    # -- operations ------------------------------------------------------------------------

    def add_operation(self, kind: str) -> int | None:
        current = self.workspace.selection.current
        index = None
        if current is not None:
            try:
                index = self.document.operation_index(current) + 1
            except (KeyError, StopIteration):
                index = None
        try:
            op_id = self.document.add_operation(new_operation(kind), index)
        except OverBudget as exc:
            self.statusBar().showMessage(f"Not added: {exc}", 6000)
            return None
        self.workspace.selection.select(op_id)
        return op_id

    # -- whole models ----------------------------------------------------------------------

    def _on_add_model(self) -> None:
        """Edit ▸ Add Model…: a shipped config or a config.json file, and its set-up."""
        from workbench.ui.editors.model_editor import AddModelDialog

        dialog = AddModelDialog(self, self.document)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.accepted.connect(lambda: self.add_model(dialog.entry))
        dialog.open()
        self._add_model_dialog = dialog  # (tests reach it here)

    def add_model(self, entry) -> int:
        """Add a model to the session, show it in the Model tab, select its first operation
        (-1, said in a dialog, when the session has no room for its operations)."""
        from workbench.document.models import ModelTooLarge

        try:
            model_id = self.document.add_model(entry)
        except ModelTooLarge as exc:
            self.show_error("Add Model", str(exc))
            return -1
        self.document.seal()
        self.show_model(model_id)
        shown = [e.id for e in self.document.session.operations
                 if e.visible and e.id in set(entry.op_ids)]
        if shown:
            self.workspace.selection.select(shown[0])
        return model_id

    def show_model(self, model_id: int) -> None:
        self.model_panel.show_model(model_id)
        self.model_dock.show()
        self.model_dock.raise_()

    # -- measurements and compared pairs ---------------------------------------------------

    def import_measurements(self, path: str | Path) -> bool:
        """Append the measured points of a measurements file (plain CSV or a profiler export)
        as one undo step. A large file is read off the window's thread under a progress
        dialog with Cancel; cancelling, or any problem, leaves the session as it was (a
        problem's message, file:line, is shown)."""
        from workbench.ui.panels.measurements_panel import (
            dialog_steps,
            import_measurements,
            is_large_import,
            read_profile,
            read_with_progress,
        )

        dialog = None
        try:
            large = is_large_import(path)
            if large:
                result, dialog = read_with_progress(self, path, None, self.document.session)
                if result is None:
                    self.statusBar().showMessage(
                        f"Import of {Path(path).name} cancelled; nothing was changed", 5000)
                    return False
            else:
                result = read_profile(path, None, self.document.session)
            count = import_measurements(self.document, path, result=result,
                                        progress=dialog_steps(dialog) if dialog else None)
        except InputError as exc:
            self.show_error("Cannot import measurements", str(exc))
            return False
        except OSError as exc:
            self.show_error("Cannot import measurements", f"{path}: {exc.strerror or exc}")
            return False
        finally:
            if dialog is not None:
                dialog.close()
        summary = f" ({result.summary()})" if result.format != "plain" else ""
        self.statusBar().showMessage(
            f"Imported {count} measured point{'s' * (count != 1)} from {Path(path).name}"
            + summary, 8000)
        if result.format != "plain":
            self.measurements_panel.show_import(result)
        self.measurements_dock.show()
        self.measurements_dock.raise_()
        return True

    def _on_import_measurements(self) -> None:
        start = str(self.document.path.parent) if self.document.path else ""
        path, _ = QFileDialog.getOpenFileName(
            self, "Import Measurements", start,
            "Measurements and profiles (*.csv *.json *.gz);;"
            "Nsight Compute or plain CSV (*.csv);;"
            "PyTorch profiler traces (*.json *.json.gz);;"
            "rocprof-compute workloads (pmc_perf.csv roofline.csv);;All files (*)")
        if path:
            self.import_measurements(path)

    def compare_with(self, first_id: int, second_id: int) -> bool:
        """Compare two operations (``first_id`` the baseline) as one undo step."""
        from workbench.ui.panels.compare_panel import add_comparison

        first = self.document.operation(first_id).operation.name
        second = self.document.operation(second_id).operation.name
        problem = add_comparison(self.document, first, second)
        if problem:
            self.statusBar().showMessage(f"Not compared: {problem}", 6000)
            return False
        self.compare_dock.show()
        self.compare_dock.raise_()
        return True

    def _on_compare_with(self) -> None:
        """Edit ▸ Compare With…: choose the other operation in a (window-modal, not blocking)
        dialog; ``self.compare_dialog`` is the open dialog."""
        from workbench.ui.panels.compare_panel import CompareDialog

        op_id = self.workspace.selection.current
        if op_id is None or len(self.document.session.operations) < 2:
            self.statusBar().showMessage("Select one of at least two operations to compare", 5000)
            return
        dialog = CompareDialog(self.workspace, op_id, self)

        def done() -> None:
            chosen = dialog.chosen()
            if chosen is not None:
                self.compare_with(*chosen)

        dialog.accepted.connect(done)
        dialog.finished.connect(dialog.deleteLater)
        self.compare_dialog = dialog
        dialog.open()

    # -- files -----------------------------------------------------------------------------

    def _on_measure_machine(self):
        from workbench.ui.dialogs.measure_dialog import open_measure_dialog

        return open_measure_dialog(self)

    def _on_measure_operation(self):
        from workbench.ui.dialogs.measure_op import measure_selected_operation

        return measure_selected_operation(self)

    def set_session(self, session: Session, path: Path | None, example: str | None = None
                    ) -> None:
        """Show another session (New, Open, an example): nothing of the last one stays in
        the status bar."""
        show_assumed(self, path or "", [])  # a message about the previous file goes with it
        self.example = example
        self.statusBar().clearMessage()
        self.cursor_label.clear()
        self.document.replace_session(session, path)
        self.workspace.select_valid()
        # The canvas already rebuilt and fitted on the "session" change; that fit differs
        # from fit_to_data only when the session saved a view range, so only then is a
        # second full rebuild needed (it is the slowest step of opening a large session).
        if hasattr(self.canvas, "fit_to_data") and (session.view.x_range
                                                    or session.view.y_range):
            self.canvas.fit_to_data()

    def open_path(self, path: str | Path) -> bool:
        """Open a session file. On any problem the current session (and its undo history) is
        left exactly as it was and the engine's message is shown."""
        path = Path(path)
        assumed: list[str] = []
        try:
            session = load_session(path, assumed)
        except InputError as exc:
            self.show_error("Cannot open session", str(exc))
            return False
        if not self.maybe_save():
            return False
        self.set_session(session, path.resolve())
        self.add_recent(path.resolve())
        self.statusBar().showMessage(f"Opened {path}", 4000)
        show_assumed(self, path, assumed)
        return True

    def open_example(self, path: Path) -> bool:
        try:
            session = load_session(path)
        except InputError as exc:
            self.show_error("Cannot open example", str(exc))
            return False
        if not self.maybe_save():
            return False
        self.set_session(session, None, Path(path).name)
        self.statusBar().showMessage(f"Example: {session.title} (Save As to keep a copy)", 5000)
        return True

    def new_session(self) -> bool:
        if not self.maybe_save():
            return False
        self.set_session(Session(), None)
        return True

    def save_to(self, path: str | Path) -> bool:
        """Save to exactly ``path``. A read-only file is refused with a message and the
        session stays modified."""
        path = Path(path)
        notes: list[str] = []
        try:
            save_session(self.document.session, path, notes=notes)
        except OSError as exc:
            self.show_error("Cannot save session", f"{path}: {exc.strerror or exc}")
            return False
        self.example = None
        self.document.mark_clean(path.resolve())
        self.add_recent(path.resolve())
        if notes:  # (saved, but the user should know)
            self.show_warning("Session saved", "\n".join(notes))
        self.statusBar().showMessage(f"Saved {path}", 4000)
        return True

    def _on_open(self) -> None:
        start = str(self.document.path.parent) if self.document.path else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open Session", start, FILE_FILTER)
        if path:
            self.open_path(path)

    def _on_save(self) -> bool:
        if self.document.path is None:
            return self._on_save_as()
        return self.save_to(self.document.path)

    def _on_save_as(self) -> bool:
        start = str(self.document.path) if self.document.path else (
            self.example or "session.yaml")
        path, _ = QFileDialog.getSaveFileName(self, "Save Session As", start, FILE_FILTER)
        if not path:
            return False
        path = Path(path)
        if not path.suffix:  # the name chosen, with .yaml added only when it has no extension
            path = path.with_name(path.name.rstrip(".") + ".yaml")
            # the dialog asked about the name typed, not about the one with .yaml added
            if os.path.lexists(path) and not self.confirm_replace(path):
                return False
        return self.save_to(path)

    def confirm_replace(self, path: Path) -> bool:
        """Ask before replacing a file the user did not name (separate so that tests can
        answer it)."""
        answer = QMessageBox.question(
            self, APP_NAME, f"{path.name} already exists in {path.parent}. Replace it?",
            QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
        return answer == QMessageBox.Yes

    def ask_save_changes(self) -> QMessageBox.StandardButton:
        """Ask whether to save unsaved changes (separate so that tests can answer it)."""
        name = self._session_name()
        return QMessageBox.question(
            self, APP_NAME, f"Save changes to {name} before closing it?",
            QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)

    def maybe_save(self) -> bool:
        """True when it is fine to drop the current session."""
        if not self.document.modified:
            return True
        answer = self.ask_save_changes()
        if answer == QMessageBox.Save:
            return self._on_save()
        return answer == QMessageBox.Discard

    def show_error(self, title: str, message: str) -> None:
        _log.warning("%s: %s", title, message)
        self.last_error = message
        self._message_box(QMessageBox.Critical, title, message, "error_dialog")

    def show_warning(self, title: str, message: str) -> None:
        """Something done, with what the user should know about it (an owner not kept)."""
        self.last_warning = message
        self._message_box(QMessageBox.Warning, title, message, "warning_dialog")

    def _message_box(self, icon, title: str, message: str, name: str) -> None:
        box = QMessageBox(icon, title, message, QMessageBox.Ok, self)
        box.setObjectName(name)
        box.setTextInteractionFlags(Qt.TextSelectableByMouse)
        box.open()
        self._error_box = box

    # -- figures and tables ----------------------------------------------------------------

    def _figure_stem(self) -> str:
        if self.document.path:
            return self.document.path.stem
        return Path(self.example).stem if self.example else "roofline"

    def _on_export_figure(self):
        """Open the Export Figure dialog (not modal-blocking: tests reach it as
        ``export_dialog`` and call its ``accept_path``)."""
        from workbench.ui.figures.export_dialog import ExportDialog

        start = str((self.document.path.parent if self.document.path else Path.home())
                    / f"{self._figure_stem()}.png")
        dialog = ExportDialog(self.settings, start, self)
        dialog.export_requested.connect(self.export_figure)
        self.export_dialog = dialog
        dialog.open()
        return dialog

    def export_figure(self, path: str | Path, options=None) -> bool:
        """Draw the chart as shown (same zoom; the chart as fitted is fitted to the figure's
        page, as the command line does) to ``path`` with ``options`` (a
        :class:`~workbench.ui.figures.export_dialog.FigureOptions`; default: the last choices)."""
        from workbench.ui.figures.export import ExportError, render_figure
        from workbench.ui.figures.export_dialog import load_options

        options = options or load_options(self.settings)
        try:
            fig = render_figure(self.document.session, path, figure=options.figure_size(),
                                theme=options.theme, transparent=options.transparent,
                                view_range=self.canvas.figure_view_range())
        except ExportError as exc:
            self.show_error("Cannot export figure", str(exc))
            return False
        except OSError as exc:
            self.show_error("Cannot export figure", f"{path}: {exc.strerror or exc}")
            return False
        self.statusBar().showMessage(f"Exported {path} ({fig.width} × {fig.height} px)", 5000)
        return True

    def copy_figure(self, options=None):
        """Put the chart on the clipboard as an image, with the last export choices."""
        from PySide6.QtGui import QGuiApplication

        from workbench.ui.figures.export import ExportError, figure_image
        from workbench.ui.figures.export_dialog import load_options

        options = options or load_options(self.settings)
        try:
            fig = options.figure_size()
            image = figure_image(self.document.session, fig, theme=options.theme,
                                 transparent=options.transparent,
                                 view_range=self.canvas.figure_view_range())
        except ExportError as exc:
            self.show_error("Cannot copy figure", str(exc))
            return None
        QGuiApplication.clipboard().setImage(image)
        self.statusBar().showMessage(
            f"Copied the chart ({image.width()} × {image.height()} px)", 4000)
        return image

    def _on_export_csv(self) -> bool:
        start = str((self.document.path.parent if self.document.path else Path.home())
                    / f"{self._figure_stem()}-results.csv")
        path, _ = QFileDialog.getSaveFileName(self, "Export Results as CSV", start,
                                              "CSV table (*.csv);;All files (*)")
        return self.export_results_csv(path) if path else False

    def export_results_csv(self, path: str | Path) -> bool:
        """Every operation × machine row, numbers in base SI units, units in the headers."""
        try:
            count = self.results_table.export_csv(path)
        except OSError as exc:
            self.show_error("Cannot export results", f"{path}: {exc.strerror or exc}")
            return False
        self.statusBar().showMessage(f"Exported {count} rows to {path}", 5000)
        return True

    # -- recent files ----------------------------------------------------------------------

    def recent_files(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [v for v in (value or []) if isinstance(v, str)]

    def add_recent(self, path: Path) -> None:
        files = [str(path)] + [f for f in self.recent_files() if f != str(path)]
        self.settings.setValue("recent_files", files[:MAX_RECENT])

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        if not files:
            self.recent_menu.addAction("(none)").setEnabled(False)
            return
        for i, name in enumerate(files, 1):
            action = self.recent_menu.addAction(f"&{i} {Path(name).name}")
            action.setToolTip(name)
            action.setStatusTip(name)
            action.setEnabled(Path(name).exists())
            action.triggered.connect(lambda checked=False, n=name: self.open_path(n))
        self.recent_menu.addSeparator()
        self.recent_menu.addAction("Clear Menu").triggered.connect(
            lambda: self.settings.setValue("recent_files", []))

    # -- settings, close, drops ------------------------------------------------------------

    def _restore_settings(self) -> None:
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray | bytes):
            self.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        if isinstance(state, QByteArray | bytes):
            self.restoreState(state)

    def _save_settings(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.maybe_save():
            self._save_settings()
            self.autosave.remove()
            self.autosave_timer.stop()
            self.canvas.dispose()
            event.accept()
        else:
            event.ignore()

    def dragEnterEvent(self, event) -> None:
        if self._dropped_path(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:
        path = self._dropped_path(event)
        if path is not None:
            event.acceptProposedAction()
            QTimer.singleShot(0, lambda: self.open_path(path))

    @staticmethod
    def _dropped_path(event) -> Path | None:
        mime = event.mimeData()
        if not mime.hasUrls():
            return None
        for url in mime.urls():
            if url.isLocalFile() and url.toLocalFile().lower().endswith((".yaml", ".yml")):
                return Path(url.toLocalFile())
        return None

    # -- help ------------------------------------------------------------------------------

    def show_guide(self) -> None:
        self._info("Reading the Chart", GUIDE_HTML)

    def show_conventions(self) -> None:
        from workbench.ui.widgets import escape_html

        # the texts are plain (they say "T_math < overhead"): escaped, or rich text would
        # take a "<" for the start of a tag and drop the rest
        items = "".join(f"<li>{escape_html(c)}</li>" for c in CONVENTIONS)
        formulas = "".join(f"<li><code>{escape_html(f)}</code></li>" for f in FORMULAS.values())
        self._info("Counting Conventions",
                   f"<h3>Counting</h3><ul>{items}</ul><h3>Roofline formulas</h3><ul>{formulas}</ul>")

    def show_about(self) -> None:
        self._info(f"About {APP_NAME}",
                   f"<h3>{APP_NAME} {__version__}</h3><p>The roofline model as a live, explained "
                   "chart: operations, machines, and every FLOP and byte counted in the open."
                   "</p><p>Sessions are YAML files; hardware presets list their sources.</p>")

    def show_log(self) -> None:
        from workbench.ui.dialogs.log_view import LogDialog
        from workbench.ui.log import log_path

        dialog = LogDialog(log_path(), self)
        dialog.open()
        self._log_dialog = dialog

    def _info(self, title: str, html: str) -> None:
        from workbench.ui.dialogs.info_dialog import InfoDialog

        box = InfoDialog(title, html, self)  # (scrolls: never taller than the screen)
        box.open()
        self._info_box = box

    def open_url(self, url: str) -> None:
        QDesktopServices.openUrl(QUrl(url))


def _reason(exc: BaseException) -> str:
    return str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)


def autosave_folder() -> Path:
    base = QStandardPaths.writableLocation(QStandardPaths.AppDataLocation)
    return Path(base or Path.home() / ".roofline-workbench") / "autosave"


GUIDE_HTML = f"""
<h3>Reading the roofline chart</h3>
<p><b>x</b>: arithmetic intensity, FLOPs per byte moved across the memory level
(main memory unless the operation chooses another). <b>y</b>: attainable FLOP/s.
Both axes are logarithmic.</p>
<ul>
<li>A <b>sloped roof</b> is a memory level: attainable = intensity × bandwidth. The main
memory's roof is drawn heavier.</li>
<li>A <b>flat roof</b> is a compute peak for one precision (dense figures).</li>
<li>The <b>ridge</b> is where they meet: {FORMULAS['ridge']}. Left of it an operation is
<b>memory-bound</b> (move fewer bytes: fuse, quantise, reuse); right of it,
<b>compute-bound</b>.</li>
<li>An operation is <b>overhead-bound</b> when its derated time is below its kernels' launch
overhead ({FORMULAS['t_predicted']}): fuse it or batch it.</li>
<li>Each point is one operation on one machine: colour = operation, shape = machine.
Hover for numbers; click to edit it.</li>
</ul>
<p>Edit any dimension in the editor and watch the point move; the derivation under the form
shows every FLOP term and byte term with its formula.</p>
"""

