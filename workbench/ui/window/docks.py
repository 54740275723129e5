"""The main window's docks: the panels around the chart, where they sit by default, and the
panels built only when first shown (a mixin of :class:`~workbench.ui.window.main_window.MainWindow`)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QTabBar, QWidget

__all__ = ["DocksMixin", "first_window_geometry"]

#: the first window's size where the screen has room for it
FIRST_SIZE = QSize(1500, 950)
#: room around the first window for the window manager's frame: 8 px each side, a 40 px
#: title bar above and 8 px below
FRAME_ROOM = QSize(16, 48)
TITLE_BAR = 40


def first_window_geometry(available: QRect) -> QRect:
    """The first window's client geometry on a screen whose free area is ``available``:
    :data:`FIRST_SIZE` where it fits, else the free area less room for the frame (so the
    bottom panels and the status bar stay on the screen), centred in it."""
    width = max(320, min(FIRST_SIZE.width(), available.width() - FRAME_ROOM.width()))
    height = max(240, min(FIRST_SIZE.height(), available.height() - FRAME_ROOM.height()))
    spare_x = max(0, available.width() - FRAME_ROOM.width() - width)
    spare_y = max(0, available.height() - FRAME_ROOM.height() - height)
    left = available.x() + FRAME_ROOM.width() // 2 + spare_x // 2
    top = available.y() + TITLE_BAR + spare_y // 2
    return QRect(left, top, width, height)


#: the left column's default width: the widest operation form's minimum and its scroll bar
LEFT_WIDTH = 350
#: the chart's share of the window in the default layout (over half, with a margin)
CHART_SHARE = 0.505
#: the bottom row's tallest default height (its panels are usable well below it)
BOTTOM_MAX = 320


def bottom_height(window_height: int) -> int:
    """The bottom row's default height (its dock, title bar included) in a window this
    tall: about a quarter of it, at least a few table rows."""
    return max(150, min(300, window_height * 25 // 100))


def _against(bar: QRect, dock: QRect) -> bool:
    """Whether a tab bar lies against a dock: along its lower or upper edge, overlapping it
    sideways."""
    sideways = bar.left() < dock.right() and dock.left() < bar.right()
    return sideways and (abs(bar.top() - dock.bottom() - 1) <= 2
                         or abs(bar.bottom() + 1 - dock.top()) <= 2)


class _Placeholder(QWidget):
    """Stands in a dock for a panel built on first use, with the panel's size hints (the
    docks tabbed together share the larger one, which sets their part of the window)."""

    def __init__(self, hint: QSize, minimum: QSize | None = None) -> None:
        super().__init__()
        self._hint = hint
        self._minimum = minimum or QSize(0, 0)

    def sizeHint(self) -> QSize:
        return self._hint

    def minimumSizeHint(self) -> QSize:
        return self._minimum


#: the panels built when first shown or used, with the size hints of the built panel (the
#: default layout is the same before and after): behind another tab at start-up they would
#: only cost start-up time
LAZY_PANELS: dict[str, tuple[QSize, QSize] | None] = {
    "measurements": None,  # (an empty widget's hints: the table takes what is left)
    "compare": (QSize(470, 336), QSize(0, 0)),
    "hardware": (QSize(337, 567), QSize(309, 186)),
    "model": (QSize(512, 344), QSize(76, 76)),
    "sweep": (QSize(600, 100), QSize(172, 100)),
}


class DocksMixin:
    """Builds and places the main window's docks; the window calls :meth:`build_docks`."""

    # -- construction ----------------------------------------------------------------------

    def fit_first_window(self) -> None:
        """Size and place the window for the screen it opens on (the one under the mouse,
        else the primary one)."""
        from PySide6.QtGui import QCursor

        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        if screen is None:
            self.resize(FIRST_SIZE)
            return
        self.setGeometry(first_window_geometry(screen.availableGeometry()))

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        features = (QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                    | QDockWidget.DockWidgetClosable)
        if area == Qt.BottomDockWidgetArea:
            # the title bar up the left side: the tabs under the row name the panels, and
            # the short row keeps its height for the tables and the plot
            features |= QDockWidget.DockWidgetVerticalTitleBar
        dock.setFeatures(features)
        self.addDockWidget(area, dock)
        return dock

    def build_docks(self) -> None:
        from workbench.ui.editors.operation_editor import OperationEditor
        from workbench.ui.panels.operations_panel import OperationsPanel
        from workbench.ui.panels.results_table import ResultsTable

        ws = self.workspace
        self._panels: dict[str, QWidget] = {}
        self.operations_panel = OperationsPanel(ws, self)
        self.editor = OperationEditor(ws, self)
        self.results_table = ResultsTable(ws, self)
        # The chart gets the room: one column on the left (the operations over the editor,
        # the machines a tab beside the editor) and one tabbed row at the bottom (results,
        # measurements, comparisons, the sweep plot); at 1366 × 768 the chart takes half the
        # window.
        left = Qt.LeftDockWidgetArea
        self.operations_dock = self._dock("Operations", "OperationsDock", self.operations_panel,
                                          left)
        self.editor_dock = self._dock("Editor", "EditorDock", self.editor, left)
        self.hardware_dock = self._lazy_dock("Hardware", "HardwareDock", "hardware", left)
        self.results_dock = self._dock("Results", "ResultsDock", self.results_table,
                                       Qt.BottomDockWidgetArea)
        self.splitDockWidget(self.operations_dock, self.editor_dock, Qt.Vertical)
        self.tabifyDockWidget(self.editor_dock, self.hardware_dock)
        self.editor_dock.raise_()
        self.hardware_dock.visibilityChanged.connect(
            lambda shown: self._on_panel_shown("hardware", shown))
        self._build_sweep_dock()
        self._build_analysis_docks()
        self._size_default_docks()

    def _size_default_docks(self) -> None:
        """The default layout for the window's size: the left column as narrow as the
        operation forms allow, the bottom row about a quarter of the height; when first
        shown, the bottom row takes what the chart can spare over half the window
        (:meth:`_fit_default_docks`). A saved layout replaces this."""
        self._default_layout = True
        self.resizeDocks([self.operations_dock], [LEFT_WIDTH], Qt.Horizontal)
        self.resizeDocks([self.operations_dock, self.editor_dock], [200, 480], Qt.Vertical)
        self._bottom_asked = bottom_height(self.height())
        self.resizeDocks([self.results_dock], [self._bottom_asked], Qt.Vertical)

    def restoreState(self, state, version: int = 0) -> bool:
        restored = super().restoreState(state, version)
        if restored:
            self._default_layout = False  # the user's layout: kept as it was
        return restored

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if getattr(self, "_default_layout", False):
            self._default_layout = False
            self._fit_default_docks()
        self.layout().activate()
        self.hide_stale_tab_bars()

    def hide_stale_tab_bars(self) -> None:
        """Hide the tab bars of dock groups that the window does not lay out. Qt (6.11)
        leaves one behind, shown where it was first put, for each group of tabbed docks
        made while another group exists before the window is shown, and for each group a
        saved layout restores: a second "Results | Sweep Plot" row drawn over the status
        bar, an "Editor | Hardware" row over the editor. A bar the window lays out lies
        against its group's shown dock (its tabs under it); a stale one lies elsewhere."""
        docks = {d.windowTitle(): d for d in self.findChildren(QDockWidget)}
        for bar in self.findChildren(QTabBar):
            if bar.parent() is not self or not bar.isVisible() or not bar.count():
                continue
            shown = [docks[t] for t in (bar.tabText(i) for i in range(bar.count()))
                     if t in docks and docks[t].isVisible() and not docks[t].isFloating()]
            box = bar.geometry()
            if shown and not any(_against(box, d.geometry()) for d in shown):
                bar.hide()

    def _fit_default_docks(self) -> None:
        """Give the bottom row what the chart can spare: the chart keeps :data:`CHART_SHARE`
        of the window (a few pixels' margin over half), the bottom row the rest up to
        :data:`BOTTOM_MAX` (fonts and screens differ: measured, not assumed)."""
        self.layout().activate()
        canvas, window = self.centralWidget(), self.size()
        if canvas is None or canvas.width() <= 0 or window.height() <= 0:
            return
        needed = -(-int(CHART_SHARE * window.width() * window.height()) // canvas.width())
        # (a size given to resizeDocks counts the row's tab bar too: the change is added to
        # the size given before)
        wanted = max(0, min(BOTTOM_MAX, self._bottom_asked + canvas.height() - needed))
        if wanted != self._bottom_asked:
            self._bottom_asked = wanted
            self.resizeDocks([self.results_dock], [wanted], Qt.Vertical)

    def _build_analysis_docks(self) -> None:
        """Measured points and compared pairs, tabbed with the results table. Each panel is
        built when it is first shown or used (:attr:`measurements_panel`,
        :attr:`compare_panel`): behind the results tab it would only cost start-up time."""
        bottom = Qt.BottomDockWidgetArea
        self.measurements_dock = self._lazy_dock("Measurements", "MeasurementsDock",
                                                 "measurements", bottom)
        self.compare_dock = self._lazy_dock("Compare", "CompareDock", "compare", bottom)
        self.model_dock = self._lazy_dock("Model", "ModelDock", "model", bottom)
        self.tabifyDockWidget(self.results_dock, self.measurements_dock)
        self.tabifyDockWidget(self.measurements_dock, self.compare_dock)
        self.tabifyDockWidget(self.compare_dock, self.model_dock)
        self.operations_panel.model_chosen.connect(self.show_model)
        for name, dock in (("measurements", self.measurements_dock),
                           ("compare", self.compare_dock), ("model", self.model_dock)):
            dock.visibilityChanged.connect(
                lambda shown, name=name: self._on_panel_shown(name, shown))
        self.results_dock.raise_()

    def _lazy_dock(self, title: str, object_name: str, panel: str,
                   area: Qt.DockWidgetArea) -> QDockWidget:
        """A dock whose panel (one of :data:`LAZY_PANELS`) is built when first shown."""
        hints = LAZY_PANELS[panel]
        return self._dock(title, object_name, _Placeholder(*hints) if hints else QWidget(), area)

    @property
    def measurements_panel(self):
        """The Measurements dock's panel, built on first use."""
        return self._panel("measurements")

    @property
    def compare_panel(self):
        """The Compare dock's panel, built on first use."""
        return self._panel("compare")

    @property
    def hardware_panel(self):
        """The Hardware dock's panel (the session's machines), built on first use."""
        return self._panel("hardware")

    def add_machines_from_menu(self, how: str) -> None:
        """Hardware ▸ Add Preset… (``how="preset"``) or New Machine (``"new"``): show the
        Hardware panel, then open its preset chooser or add a machine of one's own."""
        self.hardware_dock.show()
        self.hardware_dock.raise_()
        panel = self.hardware_panel
        if how == "preset":
            panel.open_preset_dialog()
        else:
            panel.new_machine()

    @property
    def model_panel(self):
        """The Model dock's panel, built on first use."""
        return self._panel("model")

    @property
    def sweep_plot(self):
        """The Sweep Plot dock's plot, built on first use."""
        return self._panel("sweep")

    def built_panel(self, name: str):
        """The panel of a dock built on first use (a name of :data:`LAZY_PANELS`) if it was
        built, else None."""
        return self._panels.get(name)

    def _panel(self, name: str):
        panel = self._panels.get(name)
        if panel is None:
            panel, dock = self._build_panel(name)
            self._panels[name] = panel
            place = dock.widget()
            dock.setWidget(panel)
            if place is not None:
                place.hide()
                place.deleteLater()
            if dock.visibleRegion().isEmpty() and hasattr(panel, "set_shown"):
                panel.set_shown(False)  # as a panel tabbed behind another is told
        return panel

    def _build_panel(self, name: str) -> tuple[QWidget, QDockWidget]:
        ws = self.workspace
        if name == "measurements":
            from workbench.ui.panels.measurements_panel import MeasurementsPanel

            panel = MeasurementsPanel(ws, self)
            action = getattr(self, "import_measurements_action", None)
            if action is not None:  # else build_menus gives it
                panel.set_import_action(action)
            return panel, self.measurements_dock
        if name == "compare":
            from workbench.ui.panels.compare_panel import ComparePanel

            return ComparePanel(ws, self), self.compare_dock
        if name == "hardware":
            from workbench.ui.panels.hardware_panel import HardwarePanel

            return HardwarePanel(ws, self), self.hardware_dock
        if name == "model":
            from workbench.ui.panels.model_panel import ModelPanel

            panel = ModelPanel(ws, self)
            panel.export_chart_requested.connect(self.on_export_throughput_chart)
            panel.copy_chart_requested.connect(self.copy_throughput_chart)
            return panel, self.model_dock
        from workbench.ui.panels.sweep_plot import SweepPlot

        panel = SweepPlot(ws, self)
        panel.export_requested.connect(self.on_export_sweep_plot)
        panel.copy_requested.connect(self.copy_sweep_plot)
        return panel, self.sweep_dock

    def _on_panel_shown(self, name: str, shown: bool) -> None:
        """A dock's ``visibilityChanged``: build its panel when it is first seen; a panel
        that cannot be seen does no work."""
        if shown or name in self._panels:
            panel = self._panel(name)
            if hasattr(panel, "set_shown"):
                panel.set_shown(shown)

    def _build_sweep_dock(self) -> None:
        """The sweep plot (attainable FLOP/s or time against the swept parameter), beside the
        results tabs under the chart."""
        self.sweep_dock = self._lazy_dock("Sweep Plot", "SweepPlotDock", "sweep",
                                          Qt.BottomDockWidgetArea)
        # a tab beside the results: without a sweep it would only take room from the chart
        self.tabifyDockWidget(self.results_dock, self.sweep_dock)
        self.sweep_dock.visibilityChanged.connect(
            lambda shown: self._on_panel_shown("sweep", shown))
        self.sweep_dock.toggleViewAction().setText("Sweep Pl&ot")
        self.sweep_dock.toggleViewAction().setObjectName("view_sweep_plot")

    def results_over_empty_tabs(self) -> None:
        """Another session shown (New, Open, an example, recovery): a tab on top of the bottom
        row that has nothing of it to show (the Model panel of a session without a model,
        the Sweep Plot of one without a sweep, the Measurements or Compare panel of one
        without measured points or pairs) gives way to Results."""
        session = self.document.session
        nothing = {self.model_dock: not session.models,
                   self.sweep_dock: not any(e.sweep is not None for e in session.operations),
                   self.measurements_dock: not session.measurements,
                   self.compare_dock: not session.comparisons}
        tabbed = set(self.tabifiedDockWidgets(self.results_dock))  # (none floating)
        if any(empty and dock in tabbed and not dock.visibleRegion().isEmpty()
               for dock, empty in nothing.items()):
            self.results_dock.raise_()
