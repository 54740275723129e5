"""What the chart draws, as the cells of the text layout's grid
(:class:`~workbench.model.chart.occupancy.Occupancy`): roofs, ridge lines and marks, sweep
paths and marks, measured points and their links, the verdict scales' bands, the
operations' markers. A part of :mod:`workbench.ui.chart.labels`."""

from __future__ import annotations

import numpy as np

from workbench.model.chart.occupancy import Occupancy
from workbench.ui.chart.naming import AIR, other_marks

#: the text layout's grid: cells of this many pixels
CELL = 2.0


def drawn_occupancy(canvas, px, frame: tuple, cell: float
                    ) -> tuple[Occupancy, np.ndarray, np.ndarray, tuple]:
    """Everything drawn on the plot ``frame`` of ``canvas``, in device pixels (``px(x,
    y)``: the view's units to pixels), as an :class:`Occupancy` of ``cell`` pixels:
    ``(occupancy, the operations' markers' boxes by row of the hover arrays, the operation
    of each, the other marks a text could be taken to name)``."""
    theme = canvas.theme
    roofs, overlays, points = canvas.roofs, canvas.overlays, canvas.points
    occ = roofs.occupancy(px, frame, cell, AIR)
    # the sweep paths and the pairs' links (each line's cells kept while it and the grid
    # stay: see add_lines)
    overlays.add_lines(occ, px, AIR)
    # the verdict scales' bands (drawn in pairs of points): guide lines, which only mark
    # cells, all at once
    bands = []
    for band in overlays.bands:
        bx, by = band.getData()
        if bx is not None and len(bx) > 1:
            x, y = px(bx, by)
            bands.append(np.column_stack((x[:-1:2], y[:-1:2], x[1::2], y[1::2])))
    if bands:
        segments = np.concatenate(bands)
        occ.add_segments(segments, 2.0 + AIR, soft=np.ones(len(segments), dtype=bool))
    # markers: the operations' points (kept by key, for moves), then the other marks;
    # all added at once (each addition is a pass over the whole grid)
    marker_rects = np.zeros((0, 4))
    marker_ops = np.array([key[0] for key in points.keys], dtype=np.int64)
    boxes = []
    xy = points.xy
    if len(xy):
        x, y = px(xy[:, 0], xy[:, 1])
        half = theme.point_size / 2 + AIR
        marker_rects = np.column_stack((x - half, y - half, x + half, y + half))
        boxes.append(marker_rects)
    marks = other_marks(canvas, px)
    for scatter, size in ((roofs.ridge_marks, theme.ridge_size),
                          (overlays.sweep_dots, theme.point_size * 0.55),
                          (overlays.crossing_marks, theme.point_size + 5),
                          (overlays.measured_marks, theme.point_size * 1.3),
                          (overlays.level_marks, theme.point_size * 0.6),
                          (overlays.predicted_marks, theme.point_size * 0.9)):
        if scatter is None or not scatter.isVisible():  # (an overlay's, not made yet)
            continue
        xs, ys = scatter.getData()
        if xs is None or not len(xs):
            continue
        x, y = px(xs, ys)
        half = size / 2 + AIR
        boxes.append(np.column_stack((x - half, y - half, x + half, y + half)))
    if boxes:
        occ.add_rects(np.concatenate(boxes))
    occ.keep_drawn()  # (the lines are all drawn: shared by the placings' copies)
    return occ, marker_rects, marker_ops, marks
