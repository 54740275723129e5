"""The verdict scales' bands are guide lines the texts keep off: the layout adds them to its
grid as polylines chained end to end (:func:`~workbench.ui.chart.naming.chained_pairs`), one
pass each instead of one per band. A guide layer only marks cells, so the chained polylines
must mark exactly the cells the bands mark one by one."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.chart.occupancy import Occupancy
from workbench.ui.chart.naming import chained_pairs

FRAME = (0.0, 0.0, 400.0, 300.0)


def _scales(rng, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Curves drawn with ``connect="pairs"`` as the chart draws verdict scales: one curve per
    verdict, each holding that verdict's band below every prediction (bands of one scale meet
    end to end, on one vertical line), plus loose segments in any direction, some long,
    some leaving the plot."""
    bounds = np.sort(rng.uniform(-40, 340, (count, 4)), axis=1)
    xs = rng.uniform(-10, 410, count)
    curves = []
    for verdict in range(3):
        cx, cy = [], []
        for x, b in zip(xs, bounds, strict=True):
            cx += [x, x]
            cy += [b[verdict + 1], b[verdict]]  # (drawn from its low value, lower on screen)
        curves.append((np.asarray(cx), np.asarray(cy)))
    loose = rng.uniform(-60, 460, (count, 4))
    curves.append((loose[:, [0, 2]].ravel(), loose[:, [1, 3]].ravel()))
    return curves


@pytest.mark.parametrize("seed", range(12))
def test_chained_bands_mark_the_cells_each_band_marks(seed):
    curves = _scales(np.random.default_rng(seed), 25)
    one_by_one, chained = Occupancy(FRAME), Occupancy(FRAME)
    for xs, ys in curves:
        for i in range(0, len(xs) - 1, 2):
            one_by_one.add_polyline(xs[i:i + 2], ys[i:i + 2], 3.5, soft=True)
    polylines = chained_pairs(curves)
    for xs, ys in polylines:
        chained.add_polyline(xs, ys, 3.5, soft=True)
    assert one_by_one.soft.any()
    assert np.array_equal(one_by_one.soft, chained.soft)
    # (the bands of a scale do join: fewer passes than bands)
    assert len(polylines) < sum(len(xs) // 2 for xs, _ys in curves)


def test_each_segment_is_kept_once_in_its_own_direction():
    curves = _scales(np.random.default_rng(7), 10)
    # a ring (each segment ends where another starts) and a segment drawn twice
    curves.append((np.array([5.0, 50.0, 50.0, 5.0]), np.array([5.0, 5.0, 5.0, 5.0])))
    curves.append((np.array([1.0, 2.0, 1.0, 2.0]), np.array([1.0, 1.0, 1.0, 1.0])))
    wanted = sorted((float(xs[i]), float(ys[i]), float(xs[i + 1]), float(ys[i + 1]))
                    for xs, ys in curves for i in range(0, len(xs) - 1, 2))
    got = sorted((xs[i], ys[i], xs[i + 1], ys[i + 1]) for xs, ys in chained_pairs(curves)
                 for i in range(len(xs) - 1))
    assert got == wanted
