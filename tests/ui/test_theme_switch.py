"""View ▸ Theme: switching themes back and forth keeps every text of the chart drawn."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from PySide6.QtWidgets import QApplication

from workbench.ui.chart.items import Label

SWEEP = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")


@pytest.fixture
def window(open_window):
    # room for both end labels in every theme, whatever the screen
    return open_window(SWEEP, (1500, 950))


def _sweep_labels_drawn(canvas) -> dict[str, int]:
    """Each sweep end label shown on the canvas ("m = 1") → how many pixels of its colour
    the chart, as painted, has inside the label's box (0: the label is not drawn)."""
    view = canvas.plot_widget
    image = view.grab().toImage()
    drawn: dict[str, int] = {}
    for item in view.scene().items():
        if not (isinstance(item, Label) and item.isVisible()
                and item.toPlainText().startswith("m = ")):
            continue
        color = item.textItem.defaultTextColor()
        box = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
        count = 0
        for x in range(max(0, box.left()), min(image.width(), box.right() + 1)):
            for y in range(max(0, box.top()), min(image.height(), box.bottom() + 1)):
                pixel = image.pixelColor(x, y)
                if (abs(pixel.red() - color.red()) + abs(pixel.green() - color.green())
                        + abs(pixel.blue() - color.blue())) < 90:
                    count += 1
        text = item.toPlainText()
        drawn[text] = min(drawn.get(text, count), count)
    return drawn


def test_light_dark_light_keeps_the_sweep_end_labels_drawn(window):
    """Light → Dark → Light: the sweep's end labels ("m = 1", "m = 4096") stay on the
    chart (they were shown but painted blank after a switch: the font changed, their
    colour did not, and their cached picture was not drawn again)."""
    seen: dict[str, set[str]] = {}
    for theme in ("light", "dark", "light", "presentation", "dark"):
        window.theme_actions[theme].trigger()
        QApplication.processEvents()
        assert window.canvas.theme.name == theme
        drawn = _sweep_labels_drawn(window.canvas)
        # every end label shown is painted, and a theme shown again shows the same ones
        assert all(count >= 10 for count in drawn.values()), (theme, drawn)
        assert seen.setdefault(theme, set(drawn)) == set(drawn), (theme, drawn)
    # the light and dark themes have room for both (the presentation theme's larger type
    # may leave one to the tooltip)
    assert seen["light"] == seen["dark"] == {"m = 1", "m = 4096"}
    assert "m = 1" in seen["presentation"]
