"""Each kind of a whole model listed in the legend's key shows a marker of its colour: in
the Llama example only the attention's row had one (a colour the key's other rows share,
the norms' or the element-wise kinds', got none, so a reader could not tell which colour
is which kind)."""

from __future__ import annotations

from conftest import EXAMPLES

LLAMA = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")


def test_every_kind_in_the_key_has_a_marker_of_its_colour(open_window, qtbot):
    win = open_window(LLAMA, size=(1366, 768))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    canvas.relayout()
    drawn = canvas.point_colors()  # {(op, hw): colour as drawn}
    rows = [r for r in canvas.key.rows if not r.heading]
    assert len(rows) >= 10  # the model's kinds: norms, projections, RoPE, attention …
    samples = dict(canvas.legend_item.rows)
    assert set(canvas.legend_texts()) >= {r.text for r in rows}
    shared = 0
    for row in rows:
        colours = {c for (op, _hw), c in drawn.items() if op in row.ids}
        assert len(colours) == 1, (row.text, colours)  # a kind has one colour
        sample = samples[row.text]
        assert sample is not None, f"{row.text!r} has no swatch"
        _line, symbol, _size, _pen, brush = sample
        assert symbol is not None and brush is not None, row.text
        assert brush.color().name() == next(iter(colours)).lower(), row.text
        shared += sum(1 for other in rows if other is not row
                      and {c for (op, _hw), c in drawn.items() if op in other.ids} == colours)
    assert shared  # kinds sharing a colour (the norms) each show it too
