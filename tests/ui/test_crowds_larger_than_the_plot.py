"""A whole model shown operation by operation (Llama-3.1-405B: 1,389 operations on three
machines) crowds its tags into texts of hundreds of tags, taller than the plot. No place
holds such a text: it is asked for with no places; a placing in which no operation's text
fits leaves the texts to the next one (the crowds said in parts); and a step that only
makes texts too large (a crowd said in parts, tags gathered) is undone without placing
every text again. The chart then shows exactly what the full placing of each step showed."""

from __future__ import annotations

import pytest
from conftest import open_model_window

from workbench.model.chart.placement import TextLayout
from workbench.model.chart.tagging import crowd_text
from workbench.model.llm.architecture import Setup
from workbench.ui.chart import labels as labels_module
from workbench.ui.chart.tags import TagsAndKey


def _shown(win) -> dict:
    """Every operation's text (wording, shown, where) and every placed text's box and
    leader, the tags and their crowds; operations by their place in the session (each
    window numbers its own)."""
    canvas = win.canvas
    labels = canvas.labels
    nth = {e.id: i for i, e in enumerate(win.document.session.operations)}
    texts = {nth[op]: (item.toPlainText(), item.isVisible(), round(item.pos().x(), 6),
                       round(item.pos().y(), 6))
             for op, item in labels.point_labels.items()}
    placed = {(k[0], nth[k[1]] if k[0] == "point" else k[1]):
              None if p is None else (tuple(round(v, 6) for v in p.rect), p.leader)
              for k, p in labels.text_layout.placed.items() if k[0] != "crossing"}
    return {"texts": texts, "placed": placed,
            "tags": {nth[op]: tag for op, tag in canvas.key.tags.items()},
            "groups": {nth[k]: [nth[o] for o in v] for k, v in canvas.key._groups.items()}}


def _model_window(open_window, qtbot, size):
    win, model = open_model_window(open_window, ("h100-sxm", "a100-80gb", "tpu-v5e"),
                                   "Llama-3.1-405B", Setup("decode", 1, 2048, 2048),
                                   view="all", size=size)
    _settled(qtbot, win)
    return win, model


def _settled(qtbot, win) -> None:
    """Wait for the chart as the user sees it: painted, and painted again until its y axis
    keeps its width (the axis is as wide as its numbers only once it has drawn them: an edit
    before that placed the roofs' values for a plot 52 pixels wider, and on a busy machine
    the test compared a window painted with one not painted yet), its texts placed for that
    plot."""
    from PySide6.QtWidgets import QApplication

    canvas = win.canvas
    axis = canvas.plot_widget.getPlotItem().getAxis("left")
    for _ in range(5):
        width = axis.width()
        win.grab()  # (every widget painted now, the axis's numbers among them)
        QApplication.processEvents()  # (the layout the axis asked for)
        qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
        if axis.width() == width:
            return
    raise AssertionError(f"the chart's y axis kept changing its width ({axis.width()})")


@pytest.fixture
def placings(monkeypatch):
    """How many times every text is placed (a list that grows by one for each)."""
    runs: list = []
    place_all = TextLayout.place_all

    def counted(self, requests, names_missed=None):
        runs.append(1)
        return place_all(self, requests, names_missed)
    monkeypatch.setattr(TextLayout, "place_all", counted)
    return runs


def test_model_edits_show_what_placing_every_step_showed(open_window, qtbot, monkeypatch,
                                                          placings):
    shown, runs = {}, {}
    tall: list = []
    for every_step_placed in (True, False):
        with monkeypatch.context() as m:
            if every_step_placed:  # each text asked for in full, each placing made
                m.setattr(TagsAndKey, "_no_room_for", lambda self, ops: False)
                m.setattr(labels_module, "fits", lambda w, h, frame: True)
            win, model = _model_window(open_window, qtbot, (900, 560))
            canvas = win.canvas
            if not every_step_placed:
                tall = [op for op, item in canvas.labels.point_labels.items()
                        if not canvas.labels.fits_plot(item)]
            seen, counts = [], []

            def edit(batch, win=win, model=model, seen=seen, counts=counts):
                placings.clear()
                win.document.set_model(model.id, batch=batch)
                counts.append(len(placings))
                seen.append(_shown(win))

            # a small window: no crowd's parts fit either, no step is placed
            edit(8)
            # a large one: the crowds' parts fit, one placing says them
            win.resize(1600, 900)
            qtbot.wait(200)
            _settled(qtbot, win)
            seen.append(_shown(win))
            edit(12)
            # a step placed and not kept (the chart told no more): the texts as the first
            # placing left them
            m.setattr(TagsAndKey, "_told", lambda self: 0)
            edit(8)
        shown[every_step_placed], runs[every_step_placed] = seen, counts
    assert tall, "the crowds of this model's tags are taller than the plot"
    assert any(visible for _text, visible, _x, _y in shown[False][2]["texts"].values()), \
        "with room, parts of the crowds are told"
    assert shown[True] == shown[False], "the chart shows what placing every step showed"
    assert sum(runs[False]) < sum(runs[True]), \
        f"placings for each edit: {runs[False]}, with every step {runs[True]}"


def test_a_text_is_measured_as_its_label_would_say_it(open_window):
    """A label's box for a text it does not say yet (a crowd said in parts, tags gathered)
    is the box it has once it says it, and the label is left as it was meanwhile."""
    from conftest import EXAMPLES

    win = open_window(next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml"),
                      size=(1200, 800))
    labels = win.canvas.labels
    texts = ["lm_head", "QKV projection ×32 (measured)"] + [
        crowd_text([f"{letter}{n}" for n in range(1, count + 1) for letter in "AB"])
        for count in (2, 9, 63, 253)]
    boxes = {}
    for theme in ("light", "presentation"):  # (the presentation's type is larger)
        win.document.set_view("theme", theme)
        label = next(iter(labels.point_labels.values()))
        for text in texts:
            before = label.toPlainText()
            box = labels.text_box_of(label, text)
            assert label.toPlainText() == before
            label.setText(text)
            assert labels.text_box_of(label, text) == box, (theme, text[:20])
            boxes[theme, text] = box
    assert boxes["presentation", texts[-1]][1] > boxes["light", texts[-1]][1] > 800
