"""A ridge's text and a roof's value are offered only the places whose boxes lie in the plot
clear of the roof and ridge lines, and whose leaders cross none of them: the others were
refused at every placing (a roof is never crossed by a ridge's leader, no text lies over a
line), and a model's edits looked them over each time. The chart places every text as it did
with them."""

from __future__ import annotations

from conftest import open_model_window
from PySide6.QtWidgets import QApplication

from workbench.model.llm.architecture import Setup
from workbench.ui.chart.roofs import RoofLayer

BATCHES = (1, 8, 64, 512, 4)


def _edited(open_window) -> list:
    """A whole model on three machines, its batch edited: after each edit, where every text
    of the chart went (box and leader) and which are shown."""
    win, model = open_model_window(open_window, ("h100-sxm", "a100-80gb", "tpu-v5e"),
                                   "Llama-3.1-405B", Setup("decode", 1, 2048, 2048))
    QApplication.processEvents()
    # (operations by their place in the session: each window numbers its own)
    nth = {e.id: i for i, e in enumerate(win.document.session.operations)}

    def said(key) -> str:
        return str((key[0], nth[key[1]]) if key[0] == "point" else key)

    seen = []
    for batch in BATCHES:
        win.document.set_model(model.id, batch=batch)
        QApplication.processEvents()
        labels = win.canvas.labels
        placed = {said(k): None if p is None else (tuple(round(v, 6) for v in p.rect),
                                                    p.leader)
                  for k, p in labels.text_layout.placed.items()}
        shown = sorted(said(k) for k in labels.text_layout.requests
                       if labels.entry(k) is not None and labels.entry(k)[0].isVisible())
        seen.append((batch, placed, shown))
    return seen


def test_a_ridge_s_text_is_placed_as_among_all_its_places(open_window, monkeypatch):
    offered: list[tuple[int, int]] = []
    clear_of_lines = RoofLayer.places_clear_of_lines

    def counted(self, places, frame, cell, size=None):
        clear = clear_of_lines(self, places, frame, cell, size)
        offered.append((len(places), len(clear)))
        return clear

    monkeypatch.setattr(RoofLayer, "places_clear_of_lines", counted)
    with_fewer = _edited(open_window)
    assert offered and any(clear < every for every, clear in offered)
    assert all(clear <= every for every, clear in offered)
    assert any(k.startswith("('ridge'") for _b, placed, _s in with_fewer for k in placed)
    assert any(k.startswith("('roof'") for _b, placed, _s in with_fewer for k in placed)

    monkeypatch.setattr(RoofLayer, "places_clear_of_lines",
                        lambda self, places, frame, cell, size=None: places)
    with_all = _edited(open_window)
    assert with_fewer == with_all

