"""The chart canvas a figure is drawn from (:mod:`workbench.ui.figures.export`): the live
canvas with a figure's legend and its labels placed once, at the figure's final layout."""

from __future__ import annotations

import contextlib
from dataclasses import replace

from workbench.ui.chart.canvas import RooflineCanvas
from workbench.ui.figures.figure_size import FIGURE_LEGEND_OPERATIONS

__all__ = ["FigureCanvas"]


class FigureCanvas(RooflineCanvas):
    """The chart canvas with a figure's legend: machines, at most
    :data:`FIGURE_LEGEND_OPERATIONS` operations (none whose point carries its name, with the
    presentation theme: no clutter), then the notes."""

    legend_skips_labelled = False
    #: operations the legend lists at most (the rest are counted in one line)
    legend_operations = FIGURE_LEGEND_OPERATIONS
    search_legend_places = True
    key_on_screen = False  # (its own legend: see _figure_legend)
    #: while True (the constructor), ``rebuild`` does nothing: the figure rebuilds
    #: once it knows its legend, instead of twice
    holding = True
    #: while True, labels are not placed: the figure places them once, at its final
    #: layout (see :mod:`workbench.ui.figures.export`), not after every layout pass
    hold_layout = True

    def __init__(self, workspace, legend_skips_labelled: bool = False) -> None:
        #: the last scene built, with the kernels it was built for: drawn again by a rebuild
        #: while the document has not changed since (a figure laid out again at another
        #: view or size: see :meth:`show_again`)
        self._built: tuple | None = None
        super().__init__(workspace)
        self.holding = False
        self.legend_skips_labelled = legend_skips_labelled

    @contextlib.contextmanager
    def rebuilds_held(self):
        """Within this block ``rebuild`` does nothing (the caller rebuilds once)."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False

    def rebuild(self, *args, **kwargs) -> None:
        if not self.holding:
            super().rebuild(*args, **kwargs)

    def _new_scene(self, session):
        built = self._built
        if built is not None and built[0] == self.figure_kernels:
            return built[1]
        scene = super()._new_scene(session)
        self._built = (self.figure_kernels, scene)
        return scene

    def _on_change(self, change) -> None:
        self._built = None  # (the document changed: its scene is built anew)
        super()._on_change(change)

    def show_again(self) -> None:
        """Ready the chart of the session it shows to be drawn anew, as after that session
        was set again (the change of session forgets the legend's place and rows; the next
        rebuild draws the same scene, not built again: nothing in the document changed)."""
        self.session_view.forget_session()

    def layout_annotations(self) -> None:
        if not self.hold_layout:
            self.key.layout_with_key()
            self.key.attach_strays()

    def outside_side(self) -> str:
        """Right of a wide figure also when the legend below would take more than a
        quarter of its height and beside it at most a third of its width (a
        short double-column figure keeps its plot's height)."""
        side = super().outside_side()
        w, h = self.legend_item.width(), self.legend_item.height()
        if (side == "bottom" and self.width() > 1.25 * self.height()
                and h > 0.25 * self.height() and w < 0.34 * self.width()):
            return "right"
        return side

    def start_over(self) -> None:
        """Forget the last figure's layout, as a new canvas has none: the legend
        back inside the plot, the axis titles not yet fitted to any room (a kept
        canvas starting from the last figure's would lay the next one out
        differently: exporting the same view twice would not give the same file)."""
        self.legend.set_outside(None)
        self.titles.forget_rooms()

    def skip_labelled_in_legend(self) -> None:
        """Leave the operations whose points carry their names out of the legend:
        only the legend changes (no rebuild)."""
        self.legend_skips_labelled = True
        if self.scene_model is not None:
            self.sync_legend(self.scene_model)

    def set_legend_operations(self, count: int) -> None:
        """List at most ``count`` operations in the legend (only the legend
        changes)."""
        self.legend_operations = count
        if self.scene_model is not None:
            self.sync_legend(self.scene_model)

    def sync_legend(self, scene, *args, **kwargs):
        if scene is not None:
            scene = replace(scene, legend=self._figure_legend(scene.legend, {
                p.op_id for p in scene.points if p.show_label}))
        return super().sync_legend(scene, *args, **kwargs)

    def _figure_legend(self, legend, labelled: set[int]) -> tuple:
        """The machines, the key of the operations named by tags, the notes."""
        return self.key.keyed_legend(legend)
