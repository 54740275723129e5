"""The main window's actions and menus: File, Edit, View, Hardware and Help, their shortcuts,
and the checked state of the View menu's choices kept in step with the session (a mixin of
:class:`~workbench.ui.window.main_window.MainWindow`)."""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QLabel

from workbench.io.presets import list_examples
from workbench.model.operations import KINDS
from workbench.model.session import THEMES
from workbench.ui.mnemonics import escaped, give_mnemonics_when_shown

__all__ = ["MenusMixin"]


class MenusMixin:
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

    def build_menus(self) -> None:
        """The window's actions, then the menu bar that shows them."""
        self._build_actions()
        self._build_menu_bar()

    def _build_actions(self) -> None:
        K = QKeySequence.StandardKey
        self.new_action = self._action("&New", self.new_session, K.New, "Start an empty session",
                                       name="new")
        self.open_action = self._action("&Open…", self.on_open, K.Open, "Open a session file",
                                        name="open")
        self.save_action = self._action("&Save", self.on_save, K.Save, "Save the session",
                                        name="save")
        self.save_as_action = self._action("Save &As…", self.on_save_as, K.SaveAs,
                                           "Save the session under a new name", name="save_as")
        self.revert_action = self._action(
            "Rever&t to Saved", self.revert_to_saved,
            tip="Read the session file again as it is on disk, dropping the changes since",
            name="revert")
        self.quit_action = self._action("&Quit", self.close, None, "Quit Roofline Workbench",
                                        name="quit")
        # (the platform's Quit key, and Ctrl+Q where it has none, as under Windows' bindings)
        self.quit_action.setShortcuts(QKeySequence.keyBindings(K.Quit)
                                      or [QKeySequence("Ctrl+Q")])
        self.export_figure_action = self._action(
            "Export &Figure…", self.on_export_figure, QKeySequence("Ctrl+E"),
            "Save the chart as PNG, SVG, PDF or an interactive HTML page", name="export_figure")
        self.copy_figure_action = self._action(
            "&Copy Figure", self.copy_figure, QKeySequence("Ctrl+Shift+C"),
            "Copy the chart as an image (size and theme as last exported)", name="copy_figure")
        self.export_csv_action = self._action(
            "Export Results as CS&V…", self.on_export_csv, tip="Save the results table as CSV",
            name="export_csv")
        self.undo_action = self._action("&Undo", self.document.undo, K.Undo, name="undo")
        self.redo_action = self._action("&Redo", self.document.redo, K.Redo, name="redo")
        # every key the platform gives Redo (a standard key's sequence is only its first:
        # Ctrl+Y alone under Windows' bindings), and Ctrl+Shift+Z everywhere
        redo_keys = QKeySequence.keyBindings(K.Redo)
        if QKeySequence("Ctrl+Shift+Z") not in redo_keys:
            redo_keys.append(QKeySequence("Ctrl+Shift+Z"))
        self.redo_action.setShortcuts(redo_keys)
        self.fit_action = self._action("&Fit to Data", self.canvas.fit_to_data,
                                       QKeySequence("Ctrl+0"), "Zoom to show every point and roof",
                                       name="fit")
        self.view_actions: dict[str, QAction] = {}
        for key, text, tip in (
            ("legend", "&Legend", "Show the legend"),
            ("labels", "Point La&bels", "Label each point with its operation's name"),
            ("regions", "Shade &Regions", "Shade the memory-bound and compute-bound regions"),
            ("derated", "&Derated Roofs", "Dashed practical roofs at each machine's efficiency"),
            ("all_precisions", "&All Precision Roofs",
             "Draw every precision's compute roof, not only those the operations use"),
            ("all_levels", "All &Memory Roofs",
             "Draw every memory level's roof (caches too), not only main memory and the "
             "levels the operations are measured across"),
            ("sweeps", "&Sweep Paths",
             "Draw each swept operation's path, its end values and its exact ridge crossings"),
            ("measured", "Measured Po&ints",
             "Draw measured points linked to their predictions, with their verdicts"),
            ("pairs", "&Compared Pairs",
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
        self.guide_action = self._action("&Reading the Chart", self.show_guide, K.HelpContents,
                                         name="guide")
        self.conventions_action = self._action("Counting &Conventions", self.show_conventions,
                                               name="conventions")
        self.about_action = self._action("&About Roofline Workbench", self.show_about,
                                         name="about")
        self.show_log_action = self._action("Show &Log", self.show_log, name="show_log",
                                            tip="The app's log: faults and refusals, to send")
        self.import_measurements_action = self._action(
            "&Import Measurements…", self.on_import_measurements, QKeySequence("Ctrl+I"),
            "Import measured points from CSV (plain columns or ncu --csv --page raw)",
            name="import_measurements")
        self.compare_action = self._action(
            "Compare &With…", self.on_compare_with, tip="Compare the selected operation with "
            "another one (fused vs unfused, naive vs flash)", name="compare_with")
        self.measure_machine_action = self._action(
            "&Measure This Machine…", self.on_measure_machine,
            tip="Measure this computer's CPU (numpy) or a GPU (PyTorch) and add it as a machine",
            name="measure_machine")
        self.measure_operation_action = self._action(
            "Measure on &This Machine", self.on_measure_operation,
            tip="Time the selected operation with numpy here and add it as a measured point",
            name="measure_operation")

    def _build_menu_bar(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.new_action)
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self.fill_recent_menu)
        self.examples_menu = file_menu.addMenu("Open E&xample")
        for title, path in list_examples():
            action = self.examples_menu.addAction(escaped(title))
            action.triggered.connect(lambda checked=False, p=path: self.open_example(p))
        file_menu.addSeparator()
        file_menu.addAction(self.save_action)
        file_menu.addAction(self.save_as_action)
        file_menu.addAction(self.revert_action)
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
        self.add_model_action.triggered.connect(self.on_add_model)
        panel = self.operations_panel
        for name in ("duplicate_action", "delete_action", "move_up_action", "move_down_action"):
            action = getattr(panel, name, None)
            if action is not None:
                edit.addAction(action)
        edit.addSeparator()
        self.title_action = edit.addAction("Title and &Notes…")
        self.title_action.setObjectName("title_and_notes")
        self.title_action.setStatusTip("The chart's title (every figure's heading) and the "
                                       "session's notes")
        self.title_action.triggered.connect(self.on_edit_title)
        edit.addAction(self.compare_action)
        edit.addAction(self.measure_operation_action)

        view = bar.addMenu("&View")
        view.addAction(self.fit_action)
        view.addSeparator()
        for action in self.view_actions.values():
            view.addAction(action)
        view.addAction(self.sweep_dock.toggleViewAction())
        for title, actions in (("Profile Memory Le&vel", self.level_actions),
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
        panels = view.addMenu("Pa&nels")
        for dock in (self.operations_dock, self.editor_dock, self.hardware_dock,
                     self.results_dock, self.measurements_dock, self.compare_dock,
                     self.model_dock, self.sweep_dock):
            panels.addAction(dock.toggleViewAction())

        hardware_menu = bar.addMenu("Hard&ware")
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
        for menu in (file_menu, edit, view, hardware_menu, help_menu):
            give_mnemonics_when_shown(menu)

    def build_status_bar(self) -> None:
        self.cursor_label = QLabel("")
        self.cursor_label.setObjectName("cursor_readout")
        self.statusBar().addPermanentWidget(self.cursor_label)
        signal = getattr(self.canvas, "cursor_text", None)
        if signal is not None:
            signal.connect(self.cursor_label.setText)

    def sync_view_actions(self) -> None:
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

    def update_undo_actions(self) -> None:
        d = self.document
        self.undo_action.setEnabled(d.can_undo())
        self.redo_action.setEnabled(d.can_redo())
        self.undo_action.setText(f"&Undo {d.undo_text()}".strip())
        self.redo_action.setText(f"&Redo {d.redo_text()}".strip())
        self.save_action.setEnabled(True)

