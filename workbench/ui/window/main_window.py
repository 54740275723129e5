"""The main window: composes the canvas and the panels, and owns the settings and the
operations, models and measurements added from its menus.

The panels each take the :class:`Workspace` and work on their own; this module only places
them. The actions and menus (:mod:`.menus`), the file work (:mod:`.files`: open, save,
recent files, autosave and recovery), the exports (:mod:`.exporting`) and the Help menu
(:mod:`.help_pages`) are mixins, callable without their dialogs so that tests and the
command line can use them.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox, QWidget

from workbench.document import Change, Document, OverBudget, new_operation
from workbench.document.changes import What
from workbench.io.errors import InputError
from workbench.ui.bridge import Workspace
from workbench.ui.window.app import APP_NAME
from workbench.ui.window.docks import DocksMixin
from workbench.ui.window.exporting import ExportingMixin
from workbench.ui.window.files import MAX_RECENT, FilesMixin
from workbench.ui.window.help_pages import HelpMixin
from workbench.ui.window.menus import MenusMixin

__all__ = ["MainWindow", "APP_NAME", "MAX_RECENT"]

_log = logging.getLogger(__name__)


class MainWindow(DocksMixin, MenusMixin, FilesMixin, ExportingMixin, HelpMixin,
                 QMainWindow):
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
        self.build_menus()
        # Ctrl+E is Export Figure… in every field too (X11's line edits take it otherwise)
        from workbench.ui.widgets import WindowKeysFilter

        self._keys_filter = WindowKeysFilter(self, [self.export_figure_action])
        self.build_status_bar()

        self.workspace.signals.changed.connect(self._on_change)
        self.start_autosave()
        self._restore_settings()
        self.update_title()
        self.update_undo_actions()

    # -- document state --------------------------------------------------------------------

    def _on_change(self, change: Change) -> None:
        self._autosaved_state = False
        if change.what == What.STATE:
            self.update_title()
            self.update_undo_actions()
            if not self.document.modified:
                self.autosave.remove()
        if change.what in (What.VIEW, What.SESSION, What.HARDWARE, What.MACHINES):
            self.sync_view_actions()
        if change.what in (What.OPERATIONS, What.SESSION):
            self.workspace.select_valid()

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

    def on_edit_title(self) -> None:
        """Edit ▸ Title and Notes…: both set as one undo step when OK is pressed."""
        from workbench.ui.dialogs.title_dialog import TitleDialog

        session = self.document.session
        dialog = TitleDialog(session.title, session.notes, self,
                             budget=self.document.title_and_notes_problem)
        if self.run_dialog(dialog):
            self.document.set_title_and_notes(*dialog.values())

    def run_dialog(self, dialog) -> bool:
        """Show ``dialog`` modal; whether it was accepted (separate so that tests can fill
        it in and answer it)."""
        return dialog.exec() == dialog.DialogCode.Accepted

    # -- whole models ----------------------------------------------------------------------

    def on_add_model(self) -> None:
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
        problem's message, file:line, is shown). A chart that showed the whole data shows
        it again with the new points; one zoomed or panned keeps its view."""
        from workbench.ui.panels.measurements_panel import (
            dialog_steps,
            import_measurements,
            is_large_import,
            read_profile,
            read_with_progress,
        )

        dialog = None
        fitted = self.canvas.shows_fit  # (a view of the whole data stays one)
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
            with self.canvas.fitting_changes() if fitted else contextlib.nullcontext():
                count = import_measurements(self.document, path, result=result,
                                            progress=dialog_steps(dialog) if dialog else None)
        except InputError as exc:
            self.show_error("Cannot import measurements", str(exc))
            return False
        except OverBudget as exc:  # (the session could not be opened again)
            self.show_error("Cannot import measurements", f"{path}: {exc}")
            return False
        except OSError as exc:
            self.show_error("Cannot import measurements", f"{path}: {exc.strerror or exc}")
            return False
        finally:
            if dialog is not None:
                dialog.close()
        summary = f" ({result.summary()})" if result.format != "plain" else ""
        self.statusBar().showMessage(
            f"Imported {count:,} measured point{'s' * (count != 1)} from {Path(path).name}"
            + summary, 8000)
        if result.format != "plain":
            self.measurements_panel.show_import(result)
        self.measurements_dock.show()
        self.measurements_dock.raise_()
        return True

    def on_import_measurements(self) -> None:
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

    def on_compare_with(self) -> None:
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

    # -- measuring on this machine ---------------------------------------------------------

    def on_measure_machine(self):
        from workbench.ui.dialogs.measure_dialog import open_measure_dialog

        return open_measure_dialog(self)

    def on_measure_operation(self):
        from workbench.ui.dialogs.measure_op import measure_selected_operation

        return measure_selected_operation(self)

    # -- messages --------------------------------------------------------------------------

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

    # -- settings and close ----------------------------------------------------------------

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


