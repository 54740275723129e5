"""The occupancy's counts, and the tables it answers from. While :meth:`Occupancy.held`,
whether boxes are clear is read from summed-area tables of the grid made once, and from what
was covered since; with ``kept`` the tables outlive the block (for the texts placed after the
rest). Whatever happens to the grid meanwhile (texts, boxes and lines covered, and covered
less), the answer is the one a count of the cells under each box gives. Many boxes added at
once (the markers) count as each added alone."""

from __future__ import annotations

import gc
import weakref

import numpy as np

from workbench.model.chart.occupancy import Occupancy

FRAME = (10.0, 20.0, 330.0, 260.0)


def _boxes(rng: np.random.Generator, n: int) -> np.ndarray:
    x0 = rng.uniform(FRAME[0] - 20, FRAME[2], n)
    y0 = rng.uniform(FRAME[1] - 20, FRAME[3], n)
    return np.column_stack((x0, y0, x0 + rng.uniform(0, 60, n), y0 + rng.uniform(0, 30, n)))


def _answers_as_counted(occ: Occupancy, rng: np.random.Generator) -> None:
    boxes = _boxes(rng, 40)
    for kwargs in ({}, {"texts": True}, {"layer": occ.texts}):
        got = occ.clear_under(boxes, **kwargs)
        want = occ.counts_local(boxes, **kwargs) == 0
        assert np.array_equal(got, want), kwargs


def _change(occ: Occupancy, rng: np.random.Generator, less: bool) -> None:
    """One change of the grid, as a placing makes them: a text, a box or a leader covered
    (or, where ``less``, a text taken away again)."""
    box = tuple(float(v) for v in _boxes(rng, 1)[0])
    what = int(rng.integers(3))
    if less:
        occ.add_text(box, 1)
        occ.add_text(box, -1)
    elif what == 0:
        occ.add_text(box)
    elif what == 1:
        occ.add_rect(box)
    else:
        occ.add_polyline([box[0], box[2]], [box[1], box[3]], 1.5)


def test_kept_tables_answer_as_a_count_after_the_block_and_after_cells_are_covered_less():
    rng = np.random.default_rng(5)
    for _ in range(12):
        occ = Occupancy(FRAME)
        occ.add_rects(_boxes(rng, 30))
        occ.add_polyline([FRAME[0], FRAME[2]], [FRAME[3], FRAME[1]], 2.0)
        with occ.held(kept=True):
            for _ in range(6):
                _change(occ, rng, False)
                _answers_as_counted(occ, rng)
        # after the block: the tables kept, more covered since
        for _ in range(6):
            _change(occ, rng, False)
            _answers_as_counted(occ, rng)
        # covered less: no longer read from the tables; a new block makes them again
        _change(occ, rng, True)
        _answers_as_counted(occ, rng)
        with occ.held():
            _change(occ, rng, False)
            _answers_as_counted(occ, rng)
        _answers_as_counted(occ, rng)


def test_a_block_not_kept_leaves_no_tables_and_a_kept_one_is_entered_again_as_it_is():
    occ = Occupancy(FRAME)
    occ.add_rect((50.0, 50.0, 60.0, 60.0))
    with occ.held():
        pass
    assert occ.counts_local(np.array([[50.0, 50.0, 60.0, 60.0]]))[0] > 0
    with occ.held(kept=True):
        kept = occ._held
    assert kept is not None
    with occ.held():
        assert occ._held is kept  # (the same tables: nothing was covered less)
    assert occ._held is kept
    assert not occ.clear_under(np.array([[50.0, 50.0, 60.0, 60.0]]))[0]
    assert occ.clear_under(np.array([[200.0, 200.0, 210.0, 210.0]]))[0]


def test_boxes_added_at_once_count_as_each_added_alone():
    rng = np.random.default_rng(9)
    for n, weight, size in ((1, 1, 60), (12, 1, 60), (40, -1, 60), (3000, 1, 60),
                            (3000, 2, 60), (6, 1, 8), (9, -1, 8), (9, 3, 5), (2, 1, 0.5)):
        at_once, alone = Occupancy(FRAME), Occupancy(FRAME)
        boxes = _boxes(rng, n)
        # (markers a few cells wide, some on one another: counted where they lie)
        boxes[:, 2:] = boxes[:, :2] + np.minimum(boxes[:, 2:] - boxes[:, :2], size)
        if size < 10:
            boxes[n // 2:] = boxes[:n - n // 2]
        boxes[1::7] = np.nan  # (a marker with no place: left out)
        at_once.add_rects(boxes, weight)
        for box in boxes:
            if np.isfinite(box).all():
                alone.add_rect(tuple(float(v) for v in box), weight)
        assert np.array_equal(at_once.grid, alone.grid), (n, weight)
        assert at_once.grid.any()


def test_an_occupancy_with_its_tables_kept_is_freed_once_dropped():
    """Its tables are kept with it after a placing; dropped with the placing, its grids (a
    few megabytes on a large plot) are freed at once, not left to the cyclic collector."""
    occ = Occupancy(FRAME)
    occ.add_rect((50.0, 50.0, 60.0, 60.0))
    with occ.held(kept=True):
        occ.add_text((100.0, 100.0, 120.0, 110.0))
    assert occ._held is not None
    gone = weakref.ref(occ)
    collecting = gc.isenabled()
    gc.disable()
    try:
        del occ
        assert gone() is None
    finally:
        if collecting:
            gc.enable()


def test_copies_of_a_base_answer_as_counted_from_its_tables_made_once():
    """The copies of an occupancy that :meth:`~Occupancy.hold_copies` (the roofs' lines,
    copied for every edit's placing) answer from tables of its counts, made when the first
    copy asks and shared, and from what each copy covered since: markers added at once
    before its placing, texts and leaders during it, a copy of the copy. A copy that covers
    a line before its placing, covers cells less, or adds more markers than a hold looks at
    box by box, answers from a count, and its next placing makes tables of its own."""
    rng = np.random.default_rng(11)
    made = []
    from workbench.model.chart import held_tables as module
    summed = module._summed

    def counted(covered):
        made.append(covered.shape)
        return summed(covered)

    module._summed = counted
    try:
        base = Occupancy(FRAME)
        base.add_polyline([FRAME[0], FRAME[2]], [FRAME[3], FRAME[1]], 2.0)
        base.add_polyline([FRAME[0], FRAME[2]], [FRAME[3] - 40, FRAME[3] - 40], 1.0, soft=True)
        base.keep_drawn()
        base.hold_copies()
        before = base.grid.copy()
        _answers_as_counted(base, rng)  # (the base itself, from the same tables)
        for round_ in range(8):
            occ = base.copy()
            occ.add_rects(_boxes(rng, 25))  # (markers, before its placing)
            occ.add_rect((40.0, 40.0, 70.0, 55.0))  # (the legend)
            _answers_as_counted(occ, rng)
            again = occ.copy()  # (a key pass's copy of the drawn cells)
            for placing in (occ, again):
                with placing.held(kept=True):
                    for _ in range(5):
                        _change(placing, rng, False)
                        _answers_as_counted(placing, rng)
            assert len(made) == 1, round_  # (the base's tables, made once)
        assert np.array_equal(base.grid, before)  # (copies change their own counts)
        # what leaves the tables behind: a line before the placing, cells covered less,
        # markers by the thousand
        for spoil in (lambda o: o.add_polyline([50.0, 300.0], [40.0, 200.0], 1.5),
                      lambda o: (o.add_rect((60.0, 60.0, 70.0, 70.0)),
                                 o.add_rect((60.0, 60.0, 70.0, 70.0), -1)),
                      lambda o: o.add_rects(_boxes(rng, 400))):
            occ = base.copy()
            occ.add_rects(_boxes(rng, 10))
            spoil(occ)
            assert occ._held is None or not occ._held.more_only  # (let go, or no longer)
            _answers_as_counted(occ, rng)
            count = len(made)
            with occ.held():
                _change(occ, rng, False)
                _answers_as_counted(occ, rng)
            assert len(made) > count  # (its own tables)
    finally:
        module._summed = summed
