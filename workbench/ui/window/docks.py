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
    """Stands in a dock for a panel built on first use, with the panel's size hint (the
    docks tabbed together share the larger one, which sets their part of the window)."""

    def __init__(self, hint: QSize) -> None:
        super().__init__()
        self._hint = hint

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return self._hint


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
        from workbench.ui.panels.hardware_panel import HardwarePanel
        from workbench.ui.panels.operations_panel import OperationsPanel
        from workbench.ui.panels.results_table import ResultsTable

        ws = self.workspace
        self.operations_panel = OperationsPanel(ws, self)
        self.editor = OperationEditor(ws, self)
        self.hardware_panel = HardwarePanel(ws, self)
        self.results_table = ResultsTable(ws, self)
        # The chart gets the room: one column on the left (the operations over the editor,
        # the machines a tab beside the editor) and one tabbed row at the bottom (results,
        # measurements, comparisons, the sweep plot); at 1366 × 768 the chart takes half the
        # window.
        left = Qt.LeftDockWidgetArea
        self.operations_dock = self._dock("Operations", "OperationsDock", self.operations_panel,
                                          left)
        self.editor_dock = self._dock("Editor", "EditorDock", self.editor, left)
        self.hardware_dock = self._dock("Hardware", "HardwareDock", self.hardware_panel, left)
        self.results_dock = self._dock("Results", "ResultsDock", self.results_table,
                                       Qt.BottomDockWidgetArea)
        self.splitDockWidget(self.operations_dock, self.editor_dock, Qt.Vertical)
        self.tabifyDockWidget(self.editor_dock, self.hardware_dock)
        self.editor_dock.raise_()
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

    def restoreState(self, state, version: int = 0) -> bool:  # noqa: N802 (Qt API)
        restored = super().restoreState(state, version)
        if restored:
            self._default_layout = False  # the user's layout: kept as it was
        return restored

    def showEvent(self, event) -> None:  # noqa: N802 (Qt API)
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
        self._panels: dict[str, QWidget] = {}
        bottom = Qt.BottomDockWidgetArea
        self.measurements_dock = self._dock("Measurements", "MeasurementsDock", QWidget(),
                                            bottom)
        self.compare_dock = self._dock("Compare", "CompareDock", _Placeholder(QSize(470, 336)),
                                       bottom)
        from workbench.ui.panels.model_panel import ModelPanel

        self.model_panel = ModelPanel(self.workspace, self)
        self.model_dock = self._dock("Model", "ModelDock", self.model_panel, bottom)
        self.tabifyDockWidget(self.results_dock, self.measurements_dock)
        self.tabifyDockWidget(self.measurements_dock, self.compare_dock)
        self.tabifyDockWidget(self.compare_dock, self.model_dock)
        self.model_dock.visibilityChanged.connect(self.model_panel.set_shown)
        self.operations_panel.model_chosen.connect(self.show_model)
        self.measurements_dock.visibilityChanged.connect(
            lambda shown: self._on_panel_shown("measurements", shown))
        self.compare_dock.visibilityChanged.connect(
            lambda shown: self._on_panel_shown("compare", shown))
        self.results_dock.raise_()

    @property
    def measurements_panel(self):
        """The Measurements dock's panel, built on first use."""
        return self._panel("measurements")

    @property
    def compare_panel(self):
        """The Compare dock's panel, built on first use."""
        return self._panel("compare")

    def built_panel(self, name: str):
        """The panel of the ``"measurements"`` or ``"compare"`` dock if it was built (they
        are built on first use), else None."""
        return self._panels.get(name)

    def _panel(self, name: str):
        panel = self._panels.get(name)
        if panel is None:
            if name == "measurements":
                from workbench.ui.panels.measurements_panel import MeasurementsPanel

                panel = MeasurementsPanel(self.workspace, self)
                action = getattr(self, "import_measurements_action", None)
                if action is not None:  # else _build_menus gives it
                    panel.set_import_action(action)
                dock = self.measurements_dock
            else:
                from workbench.ui.panels.compare_panel import ComparePanel

                panel = ComparePanel(self.workspace, self)
                dock = self.compare_dock
            self._panels[name] = panel
            place = dock.widget()
            dock.setWidget(panel)
            if place is not None:
                place.hide()
                place.deleteLater()
            if dock.visibleRegion().isEmpty():
                panel.set_shown(False)  # as a panel tabbed behind another is told
        return panel

    def _on_panel_shown(self, name: str, shown: bool) -> None:
        """A dock's ``visibilityChanged``: build its panel when it is first seen; a panel
        that cannot be seen does no work."""
        if shown or name in self._panels:
            self._panel(name).set_shown(shown)

    def _build_sweep_dock(self) -> None:
        """The sweep plot (attainable FLOP/s or time against the swept parameter), beside the
        results tabs under the chart."""
        from workbench.ui.panels.sweep_plot import SweepPlot

        self.sweep_plot = SweepPlot(self.workspace, self)
        self.sweep_dock = self._dock("Sweep Plot", "SweepPlotDock", self.sweep_plot,
                                     Qt.BottomDockWidgetArea)
        # a tab beside the results: without a sweep it would only take room from the chart
        self.tabifyDockWidget(self.results_dock, self.sweep_dock)
        self.sweep_dock.visibilityChanged.connect(self.sweep_plot.set_shown)
        self.sweep_dock.toggleViewAction().setText("Sweep &Plot")
        self.sweep_dock.toggleViewAction().setObjectName("view_sweep_plot")
