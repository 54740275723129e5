"""On screen, an edit takes the places of the texts whose surroundings it did not change from
the placing before (:mod:`~workbench.model.chart.kept_places`): after keystrokes in a swept
operation and batch edits of a whole model, each text lies where a placing that looks for
every text puts it, and the kept places were taken."""

from __future__ import annotations

from conftest import keystroke_done, open_model_window, open_sweep_example

from workbench.model.chart.kept_places import KeptPlaces
from workbench.model.llm.architecture import Setup


def _shown(win) -> dict:
    """Each text's place as the chart shows it: its box and leader (None: not shown)."""
    layout = win.canvas.labels.text_layout
    return {key: (p.rect, p.leader) for key, p in layout.placed.items()}


def _as_placed_afresh(win) -> None:
    """The chart's texts, where a placing that keeps nothing from before puts them, are
    where they are shown now."""
    labels = win.canvas.labels
    shown, before = _shown(win), labels.text_layout
    kept = labels.kept
    labels.kept = KeptPlaces()
    try:
        win.canvas.layout_annotations()
        assert labels.text_layout is not before  # (placed again)
        assert labels.kept.looked_for and not labels.kept.taken
        assert _shown(win) == shown
    finally:
        labels.kept = kept


def test_keystrokes_in_a_swept_operation_keep_the_other_texts_where_a_search_puts_them(
        open_window, qtbot):
    win = open_sweep_example(open_window, qtbot)
    doc = win.document
    target = doc.session.operations[0]
    kept = win.canvas.labels.kept
    taken = kept.taken
    edits = [("n", 8000), ("n", 8001), ("n", 9000), ("n", 12000), ("n", 120), ("k", 64),
             ("dtype", "int8"), ("k", 65536), ("n", 3000), ("dtype", "fp32")]
    for name, value in edits:
        doc.set_param(target.id, name, value)
        keystroke_done()
        _as_placed_afresh(win)
    assert kept.taken - taken >= len(edits)


def test_batch_edits_of_a_model_keep_texts_where_a_search_puts_them(open_window, qtbot):
    win, model = open_model_window(open_window, ("h100-sxm", "a100-80gb", "rtx-4090"),
                                   "Llama-3.1-8B", Setup("decode", 1, 4096, 4096))
    keystroke_done()
    kept = win.canvas.labels.kept
    taken = kept.taken
    for change in ({"batch": 2}, {"batch": 3}, {"batch": 16}, {"batch": 17}, {"batch": 512},
                   {"phase": "prefill"}, {"batch": 1}, {"phase": "decode"}):
        win.document.set_model(model.id, **change)
        keystroke_done()
        _as_placed_afresh(win)
    assert kept.taken > taken
