"""Another session shown (New, Open) leaves no bottom tab on top that has nothing of it to
show: after File ▸ New from the Llama example with its Model tab raised, an empty Model
panel stayed on screen ("No model selected") where Results belong."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar


def _bottom_tab(window) -> str:
    """The tab on top of the bottom row, as the user sees it."""
    bar = next(bar for bar in window.findChildren(QTabBar)
               if bar.parent() is window and bar.isVisible()
               and "Results" in [bar.tabText(i) for i in range(bar.count())])
    return bar.tabText(bar.currentIndex())


def _example(stem: str):
    return next(p for p in EXAMPLES if p.stem == stem)


@pytest.mark.parametrize(("stem", "dock", "tab"), [
    ("llama31_8b_inference", "model_dock", "Model"),
    ("critical_batch_sweep", "sweep_dock", "Sweep Plot"),
    ("predicted_vs_measured", "measurements_dock", "Measurements"),
])
def test_ctrl_n_over_a_panel_of_the_last_session_shows_results(qtbot, open_window, stem, dock,
                                                               tab):
    window = open_window(_example(stem), size=(1366, 768))
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    getattr(window, dock).raise_()
    qtbot.waitUntil(lambda: _bottom_tab(window) == tab)
    qtbot.keyClick(window.focusWidget() or window, Qt.Key.Key_N,
                   Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.document.session.operations)
    assert _bottom_tab(window) == "Results"
    # the results table is what is drawn there now; the last session's panel is not
    assert not window.results_dock.visibleRegion().isEmpty()
    assert getattr(window, dock).visibleRegion().isEmpty()


def test_a_session_with_a_model_keeps_the_model_tab_on_top(qtbot, open_window):
    window = open_window(_example("llama_ffn"), size=(1366, 768))
    window.model_dock.raise_()
    qtbot.waitUntil(lambda: _bottom_tab(window) == "Model")
    assert window.open_path(_example("llama31_8b_inference"))
    assert window.document.session.models
    assert _bottom_tab(window) == "Model"
    # and one without a model in its place gives way to Results
    assert window.open_path(_example("attention"))
    assert _bottom_tab(window) == "Results"
