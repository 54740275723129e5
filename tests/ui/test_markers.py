"""The machines' markers: the session file names them by the model's codes, and the user
interface, the one place that knows pyqtgraph, draws and names every one of them."""

from __future__ import annotations

from pyqtgraph.graphicsItems.ScatterPlotItem import Symbols

from workbench.model.session import MARKERS
from workbench.ui.editors.hardware_fields import MARKER_NAMES


def test_every_marker_of_a_session_is_a_symbol_the_chart_draws():
    assert set(MARKERS) <= set(Symbols)
    assert len(set(MARKERS)) == len(MARKERS)


def test_every_marker_has_a_name_for_the_tool_tips():
    assert set(MARKER_NAMES) == set(MARKERS)
    assert len(set(MARKER_NAMES.values())) == len(MARKERS)
