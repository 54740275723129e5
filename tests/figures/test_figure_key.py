"""Every figure says what its points are: each machine's row in the legend shows its line
and its marker shape (shape means machine), wherever the legend sits."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from figures.figcheck import legend_box, read_figure

from workbench.io.sessions import load_session
from workbench.ui.export import figure_bytes, resolve_size


def _example(stem: str):
    return load_session(next(p for p in EXAMPLES if p.stem == stem))


def _inside(box, outer, eps: float = 0.5) -> bool:
    return (box[0] >= outer[0] - eps and box[1] >= outer[1] - eps and box[2] <= outer[2] + eps
            and box[3] <= outer[3] + eps)


@pytest.mark.parametrize("size", ["single", "double"])
def test_the_legend_below_the_plot_shows_every_machines_marker(qapp, size):
    """Three machines (circle, square, triangle) with the legend below the plot: each row's
    sample has its marker, not just the first row's."""
    session = _example("llama_ffn")
    fig = read_figure(figure_bytes(session, "pdf", resolve_size(size)))
    box = legend_box(fig)
    assert box is not None, "the legend sits below the plot at this size"
    rows = [t for t in fig.texts if _inside(t.bbox(), box)]
    machines = [t for t in rows if t.text.startswith(("NVIDIA", "Google"))]
    assert len(machines) == 3, [t.text for t in rows]
    # a marker is a small closed, filled shape left of its row's text, on its baseline
    markers = [s for s in fig.shapes if s.closed and s.filled and _inside(s.bbox, box)
               and max(s.bbox[2] - s.bbox[0], s.bbox[3] - s.bbox[1]) < 12]
    for row in machines:
        x0, y0, x1, y1 = row.bbox()
        beside = [s for s in markers if s.bbox[2] <= x0 and s.bbox[1] < y1 and s.bbox[3] > y0]
        assert beside, f"no marker beside the legend row {row.text!r}"
