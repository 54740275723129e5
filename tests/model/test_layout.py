"""The chart's text layout on its own (device pixels, no Qt): texts go where they cover
nothing, in order of priority, and only where a reader pairs them with what they name; a
text with no clean place is left out; a moved marker frees its old cells."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.model.chart.placement import (
    Attribution,
    Candidate,
    Occupancy,
    Request,
    TextLayout,
    far_candidates,
    flat_candidates,
    free_corners,
    lead_from,
    point_candidates,
    same_spot,
    segment_gaps,
    sloped_candidates,
    wrap_title,
)
from workbench.model.chart.tagging import crowd_parts, crowd_text, crowds, figure_key

FRAME = (0.0, 0.0, 400.0, 300.0)


def meets(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_a_point_label_goes_beside_its_marker_off_the_roof():
    occ = Occupancy(FRAME)
    occ.add_polyline([0, 400], [300, 0], 2.5)  # a rising roof, corner to corner
    marker = (200 - 6, 150 - 6, 200 + 6, 150 + 6)
    occ.add_rects(np.array([marker]))
    layout = TextLayout(occ)
    placed = layout.place(Request("a", "operation", 60, 12,
                                  point_candidates(200, 150, 60, 12, 5)))
    assert placed is not None
    assert not meets(placed.rect, marker)
    # the box lies wholly on one side of the roof y = 300 - 0.75 x
    left, top, right, bottom = placed.rect
    sides = {np.sign(y - (300 - 0.75 * x)) for x in (left, right) for y in (top, bottom)}
    assert len(sides) == 1


def test_higher_priority_places_first_and_a_text_without_room_is_left_out():
    occ = Occupancy((0.0, 0.0, 120.0, 40.0))
    layout = TextLayout(occ)
    # two texts that both want the only place there is
    only = [(10.0, 10.0)]
    cands = np.array([[x, y, np.nan, np.nan, np.nan, np.nan] for x, y in only])
    result = layout.place_all([Request("sweep", "sweep", 90, 15, cands),
                               Request("op", "operation", 90, 15, cands.copy())])
    assert result["op"] is not None and result["sweep"] is None


def test_a_crossing_without_room_moves_a_roof_value_that_has_another_place():
    """A roof's value takes the place beside a ridge crossing, the only one the crossing
    has; the value has a second place, so the crossing is placed there and the value moves.
    A value with no second place keeps its place (the crossing is left out), and so does a
    less important text that has one (a sweep's end)."""
    occ = Occupancy((0.0, 0.0, 200.0, 60.0))

    def rows(*places):
        return np.array([[x, y, np.nan, np.nan, np.nan, np.nan] for x, y in places])

    beside = rows((10.0, 10.0))
    roof = Request("roof", "roof", 80, 12, rows((10.0, 10.0), (110.0, 40.0)), 0)
    crossing = Request("crossing", "crossing", 80, 12, beside, 0)
    result = TextLayout(occ.copy()).place_all([roof, crossing])
    assert result["crossing"].rect == (10.0, 10.0, 90.0, 22.0)
    assert result["roof"].rect == (110.0, 40.0, 190.0, 52.0)
    stuck = Request("roof", "roof", 80, 12, beside.copy(), 0)
    result = TextLayout(occ.copy()).place_all([stuck, crossing])
    assert result["crossing"] is None and result["roof"].rect == (10.0, 10.0, 90.0, 22.0)
    # (a sweep's end is less important: it is never placed first to make its room)
    sweep = Request("sweep", "sweep", 80, 12, beside.copy(), 0)
    result = TextLayout(occ.copy()).place_all([roof, sweep])
    assert result["sweep"] is None and result["roof"].rect == (10.0, 10.0, 90.0, 22.0)


def test_removing_a_text_frees_its_cells_for_another():
    occ = Occupancy((0.0, 0.0, 120.0, 40.0))
    layout = TextLayout(occ)
    cands = np.array([[10.0, 10.0, np.nan, np.nan, np.nan, np.nan]])
    assert layout.place(Request("a", "operation", 90, 15, cands)) is not None
    assert layout.place(Request("b", "operation", 90, 15, cands.copy())) is None
    layout.remove("a")
    assert layout.place(Request("b", "operation", 90, 15, cands.copy())) is not None


def test_flat_and_sloped_candidates_stay_clear_of_their_own_line():
    occ = Occupancy(FRAME)
    occ.add_polyline([100, 400], [80, 80], 2.0)
    occ.add_polyline([0, 100], [280, 80], 2.0)
    layout = TextLayout(occ)
    roof = layout.place(Request("flat", "roof", 80, 12, flat_candidates(100, 400, 80, 80, 12,
                                                                       FRAME)))
    slope = layout.place(Request("slope", "roof", 80, 12,
                                 sloped_candidates(0, 280, 100, 80, 80, 12, FRAME)))
    assert roof is not None and slope is not None
    assert not (roof.rect[1] < 80 < roof.rect[3])  # not across the flat roof


def test_the_legend_takes_a_free_corner_and_none_when_all_are_covered():
    occ = Occupancy(FRAME)
    occ.add_rects(np.array([[0, 0, 150, 80]]))  # the top-left corner is drawn on
    names = [name for name, _rect in free_corners(occ, 100, 50)]
    assert "top-left" not in names and names
    occ.add_rects(np.array([[0, 0, 400, 300]]))
    assert free_corners(occ, 100, 50) == []


def test_the_legend_keeps_off_guide_lines_and_takes_the_emptier_corner():
    # FRAME is 400 x 300 px; cells of 2 px. A ridge's drop line (a guide: texts keep off it)
    # down the top-left corner, and a box drawn twice beside the top-right corner's place.
    occ = Occupancy(FRAME)
    occ.add_polyline([30.0, 30.0], [0.0, 300.0], 1.0, soft=True)
    occ.add_polyline([30.0, 30.0], [0.0, 300.0], 1.0, soft=True)  # (a guide marks, once)
    occ.add_rect((200.0, 0.0, 220.0, 20.0))
    occ.add_rect((200.0, 0.0, 220.0, 20.0))
    # the drop line covers its own column of cells (x = 30: column 15) and the next one each
    # side (its 1 px half-width, rounded up to a cell): 3 x 150 cells, each counted once
    # however many guides cover it; the box 10 x 10 cells, twice
    assert occ.count((0.0, 0.0, 400.0, 300.0)) == 3 * 150 + 2 * 100
    assert occ.count((200.0, 0.0, 220.0, 20.0)) == 200
    names = [name for name, _rect in free_corners(occ, 100, 50)]
    assert "top-left" not in names  # (on the drop line)
    # the top-right corner has the box within its surroundings: the bottom ones come first
    assert names.index("top-right") > names.index("bottom-right")


def test_a_long_title_breaks_into_two_balanced_lines():
    def width(text):
        return 7.0 * len(text)

    lines = wrap_title(width, "Critical batch — sweeping a bf16 matmul across the ridge", 250)
    assert len(lines) == 2 and " ".join(lines) == ("Critical batch — sweeping a bf16 matmul "
                                                  "across the ridge")
    assert abs(len(lines[0]) - len(lines[1])) <= 8
    assert wrap_title(width, "Kernels", 250) == ["Kernels"]


def test_the_texts_hit_by_many_boxes_at_once_are_those_hit_by_each():
    occ = Occupancy(FRAME)
    layout = TextLayout(occ)
    rng = np.random.default_rng(7)
    for i in range(12):  # texts, some far from their anchor (with a leader)
        x, y = rng.uniform(20, 360), rng.uniform(20, 260)
        layout.place(Request(i, "operation", 40, 12, point_candidates(x, y, 40, 12, 5)))
    assert len(layout.placed) >= 6
    boxes = []
    for _ in range(200):
        x, y = rng.uniform(0, 400), rng.uniform(0, 300)
        boxes.append((x - 5, y - 5, x + 5, y + 5))
    one_by_one = {key for box in boxes for key in layout.hit_by(box)}
    assert one_by_one and one_by_one != set(layout.placed)  # some hit, some not
    assert layout.hit_by_any(np.array(boxes)) == one_by_one
    assert layout.hit_by_any(np.zeros((0, 4))) == set()


def test_the_key_numbers_each_operation_once_and_names_it():
    """Operations with no place for their names: a number each, "n — name" in the key."""
    tags, rows = figure_key([(4, "GEMM prefill"), (9, "decode attention")])
    assert tags == {4: "1", 9: "2"}
    assert [r.text for r in rows] == ["1 — GEMM prefill", "2 — decode attention"]
    assert [r.ids for r in rows] == [(4,), (9,)]


def test_the_key_says_a_models_name_once_and_one_row_per_kind_of_operation():
    """Two whole models (prefill and decode): a lettered heading each, and one row per kind
    of operation shared by both; an operation outside them keeps a plain number."""
    named = [(1, "8B prefill: QKV projection ×32"), (2, "8B prefill: lm_head"),
             (3, "8B decode: QKV projection ×32"), (4, "8B decode: lm_head"),
             (5, "GEMM: odd shape")]
    tags, rows = figure_key(named)
    assert tags == {1: "A1", 2: "A2", 3: "B1", 4: "B2", 5: "3"}
    assert [r.text for r in rows] == ["A — 8B prefill", "B — 8B decode",
                                      "1 — QKV projection ×32", "2 — lm_head",
                                      "3 — GEMM: odd shape"]
    assert [r.heading for r in rows] == [True, True, False, False, False]
    assert rows[2].ids == (1, 3)
    # one model alone: its name heads its rows, no letters
    tags, rows = figure_key(named[:2])
    assert tags == {1: "1", 2: "2"}
    assert [r.text for r in rows] == ["8B prefill:", "1 — QKV projection ×32", "2 — lm_head"]


# ---------------------------------------------------------------------------------------------
# crowds of markers and their tags

def test_touching_markers_are_one_crowd_and_their_neighbours_in_turn():
    """Markers 10 px apart with 11 px markers touch: a chain of three is one crowd; one 30 px
    off is its own; a row longer than the reach is cut into crowds a tag can stand for."""
    xy = [(0.0, 0.0), (10.0, 0.0), (20.0, 5.0), (50.0, 0.0)]
    assert crowds(xy, 11.0) == [[0, 1, 2], [3]]
    row = [(10.0 * i, 0.0) for i in range(8)]  # 70 px long; reach 2 × 11 = 22 px
    parts = crowds(row, 11.0)
    assert [i for p in parts for i in p] == list(range(8))
    assert all(max(row[i][0] for i in p) - min(row[i][0] for i in p) <= 22.0 for p in parts)
    assert len(parts) >= 3
    # a point not drawn (off a log axis) is a crowd of its own, never joined
    assert crowds([(0.0, 0.0), (math.nan, 0.0), (1.0, 1.0)], 11.0) == [[0, 2], [1]]


def test_a_crowds_tags_are_said_once_by_groups_then_parts():
    """Prefill (A) and decode (B) of one model share kinds of operation: the parts both
    have are said once for both, then those of one group; a single part in full."""
    text = crowd_text(["A1", "B1", "A3", "B3", "B2", "B5"])
    assert text.split("\n") == ["A, B: 1, 3", "B: 2, 5"]
    assert crowd_text(["A6", "B6"]) == "A6, B6"
    assert crowd_text(["12", "3", "5"]) == "3, 5, 12"
    # at most four to a line, the lines as even as they can be (no lone number)
    lines = crowd_text([f"A{n}" for n in (2, 4, 5, 8, 10)]).split("\n")
    assert lines == ["A: 2, 4, 5", "8, 10"]
    # every tag is said: read back, the text gives the tags it was made from
    tags = ["A1", "A3", "A7", "A9", "A12", "A13", "B1", "B2", "B3", "B5", "B7", "B8", "B9",
            "B10", "B12", "B13"]
    said, groups = set(), []
    for line in crowd_text(tags).split("\n"):
        head, sep, numbers = line.rpartition(": ")
        if sep:
            groups = head.split(", ")
        said.update(f"{g}{n}" for g in groups for n in numbers.split(", "))
    assert said == set(tags)


def test_a_crowd_without_room_is_said_in_parts():
    tags = ["A1", "B1", "B2", "B5"]
    assert crowd_parts(tags) == [[0, 1], [2, 3]]  # "A, B: 1" and "B: 2, 5"
    # one set of groups: its halves
    assert crowd_parts(["A2", "A4", "A5", "A8", "A10"]) == [[0, 1, 2], [3, 4]]
    assert crowd_parts(["7"]) == [[0]]
    # each answer is the caller's own: changing it changes no later one
    parts = crowd_parts(tags)
    parts[0].append(9)
    parts.pop()
    assert crowd_parts(tags) == [[0, 1], [2, 3]]


def test_far_places_are_nearest_first_within_reach_and_inside_the_frame():
    frame = (0.0, 0.0, 400.0, 200.0)
    cands = far_candidates(100.0, 100.0, 40.0, 10.0, 8.0, frame, most=90.0, step=6.0)
    assert len(cands)
    lefts, tops = cands[:, 0], cands[:, 1]
    assert (lefts >= 0).all() and (lefts + 40 <= 400).all()
    assert (tops >= 0).all() and (tops + 10 <= 200).all()
    # each box's nearest point lies beyond the marker and within reach, nearer ones first
    nx = np.clip(100.0, lefts, lefts + 40) - 100.0
    ny = np.clip(100.0, tops, tops + 10) - 100.0
    d = np.hypot(nx, ny)
    assert (d > 8.0).all() and (d <= 90.0).all()
    assert (np.diff(d) >= -0.6).all()
    # the leader runs from the marker's edge to the box
    start = np.hypot(cands[:, 2] - 100.0, cands[:, 3] - 100.0)
    assert np.allclose(start, 9.5)
    ends_on_box = ((cands[:, 4] >= lefts - 1e-9) & (cands[:, 4] <= lefts + 40 + 1e-9)
                   & (cands[:, 5] >= tops - 1e-9) & (cands[:, 5] <= tops + 10 + 1e-9))
    assert ends_on_box.all()


def test_a_leader_crosses_its_own_markers_only_when_nothing_else_is_left():
    """A tag whose markers stand in a column (its point over its measured point): its
    leader may cross its own markers, never another's, and only when no place is left
    whose leader crosses nothing."""
    top = np.array([[95.0, 95.0, 105.0, 105.0]])  # where the leader starts
    below = np.array([[95.0, 115.0, 105.0, 125.0]])  # on the way down
    occ = Occupancy((0.0, 0.0, 200.0, 200.0))
    occ.add_rects(np.vstack((top, below)))
    down = [90.0, 150.0, 100.0, 106.0, 100.0, 150.0]  # box below, leader straight down
    aside = [150.0, 150.0, 106.0, 106.0, 150.0, 150.0]  # box aside, leader clear of both

    def place(cands, own):
        request = Request("tag", "operation", 20.0, 10.0, np.array(cands), cross_lines=True,
                          own=own)
        return TextLayout(occ).place_all([request])["tag"]

    assert place([down], top) is None  # the marker below is another's
    placed = place([down], np.vstack((top, below)))  # both its own
    assert placed is not None and placed.leader == (100.0, 106.0, 100.0, 150.0)
    # a place whose leader crosses nothing comes first, though it is tried later
    assert place([down, aside], np.vstack((top, below))).rect[:2] == (150.0, 150.0)


def test_a_tag_led_past_other_marks_still_keeps_its_text_clear_of_them():
    """A tag whose leader can only leave its marker from inside another's (its marker
    hidden under that one) is still placed, rather than untold; but not with its text 3 px
    beside a third marker (read as that one's name, whatever the leader says): it goes to
    the place clear of it."""
    own = np.array([[95.0, 95.0, 105.0, 105.0]])
    over = np.array([[94.0, 94.0, 106.0, 106.0]])  # another's, drawn over it
    third = np.array([[173.0, 95.0, 183.0, 105.0]])
    names = Attribution(own, np.vstack((over, third)))
    beside = [150.0, 95.0, 100.0, 100.0, 150.0, 100.0]  # box 150–170: 3 px left of third
    below = [150.0, 150.0, 100.0, 100.0, 150.0, 150.0]

    def place(cands):
        request = Request("tag", "operation", 20.0, 10.0, np.zeros((0, 6)), cross_lines=True,
                          own=own, far=lambda: np.array(cands), names=names)
        return TextLayout(Occupancy((0.0, 0.0, 200.0, 200.0))).place_all([request])["tag"]

    assert place([beside]) is None
    assert place([beside, below]).rect[:2] == (150.0, 150.0)


def test_a_tag_keeps_its_air_from_other_texts_and_they_from_it():
    """A name and a tag side by side read as one label ("add_fp32 22"): a tag keeps ``air``
    pixels more from any text, whichever is placed first; texts without air keep the usual
    pad."""
    def layout():
        return TextLayout(Occupancy((0.0, 0.0, 300.0, 100.0)))

    name = Request("name", "operation", 60.0, 10.0, [Candidate(10.0, 10.0)])
    # 2 px right of the name's box: clear of it by the pad, not by the tag's air
    near_tag = Request("tag", "operation", 12.0, 10.0, [Candidate(72.0, 10.0)], air=3.0)
    far_tag = Request("tag", "operation", 12.0, 10.0, [Candidate(76.0, 10.0)], air=3.0)
    placed = layout().place_all([name, near_tag])
    assert placed["name"] is not None and placed["tag"] is None
    assert layout().place_all([name, far_tag])["tag"] is not None
    # the other way round: the tag first, the name 2 px from it is refused
    first = layout()
    assert first.place(Request("tag", "crowd", 12.0, 10.0, [Candidate(72.0, 10.0)], air=3.0))
    assert first.place(name) is None
    # two names 2 px apart: the usual pad only
    other = Request("other", "operation", 12.0, 10.0, [Candidate(72.0, 10.0)])
    assert all(layout().place_all([name, other]).values())


def _crowded(seed: int) -> tuple[Occupancy, list[Request]]:
    """A plot with random lines and markers, and texts to place around random points: names,
    and tags with air, leaders, far places and markers of their own."""
    rng = np.random.default_rng(seed)
    occ = Occupancy(FRAME)
    for _ in range(6):
        xs, ys = rng.uniform(-20, 420, 3), rng.uniform(-20, 320, 3)
        occ.add_polyline(xs, ys, 2.5, line=True)
    occ.add_polyline(rng.uniform(0, 400, 2), rng.uniform(0, 300, 2), 2.0, soft=True)
    x, y = rng.uniform(0, 400, 60), rng.uniform(0, 300, 60)
    occ.add_rects(np.column_stack((x - 4, y - 4, x + 4, y + 4)))
    requests = []
    for i in range(40):
        sx, sy = rng.uniform(0, 400), rng.uniform(0, 300)
        w, h = rng.uniform(10, 70), rng.uniform(8, 30)
        tag = i % 3 == 0
        own = np.array([[sx - 4, sy - 4, sx + 4, sy + 4]]) if tag else None

        def far(sx=sx, sy=sy, w=w, h=h):
            return far_candidates(sx, sy, w, h, 6.0, FRAME, 150.0, 8.0)
        requests.append(Request(("t", i), "crowd" if tag else "operation", w, h,
                                point_candidates(sx, sy, w, h, 6.0), order=float(i),
                                cross_lines=tag, own=own, far=far if tag else None,
                                air=3.0 if tag else 0.0))
    return occ, requests


def test_a_whole_placing_places_as_texts_placed_one_by_one():
    # a whole placing answers from tables of the grid made once, and what it placed since;
    # texts placed one by one count the grid afresh each time: the same places
    for seed in range(12):
        occ, requests = _crowded(seed)
        together = TextLayout(occ.copy()).place_all(requests)
        alone = TextLayout(occ.copy())
        ordered = sorted(requests, key=lambda r: (r.priority, r.order))
        one_by_one = {r.key: alone.place(r, own=False) for r in ordered}
        for r in ordered:
            if one_by_one[r.key] is None and r.own is not None:
                one_by_one[r.key] = alone.place(r)
        assert together == one_by_one
        assert sum(p is not None for p in together.values()) > 5


# ---------------------------------------------------------------------------------------------
# attribution: a text goes only where a reader pairs it with what it names

OWN = np.array([[100.0, 100.0, 110.0, 110.0]])  # its marker
OTHER = np.array([[60.0, 130.0, 70.0, 140.0]])  # another's, down and to the left


def test_a_name_beside_its_marker_but_over_another_is_not_placed_there():
    """A 40 × 12 name below-left of its marker, right over another's: 5.4 px from its own
    (5 across, 2 down: √29) and 6 px above the other (130 − 124): read as the other's. The
    next place, 6 px right of its own marker and 46 px from the other, is taken."""
    over = Candidate(55.0, 112.0)  # box 55..95 × 112..124
    beside = Candidate(116.0, 99.0)  # box 116..156 × 99..111
    names = Attribution(OWN, OTHER)
    placed = TextLayout(Occupancy(FRAME)).place(
        Request("name", "operation", 40.0, 12.0, [over, beside], names=names))
    assert placed.rect[:2] == (116.0, 99.0)
    assert names.paired(np.array([[55.0, 112.0, 95.0, 124.0]])).tolist() == [False]
    # a text that names no mark takes the first free place, as before
    plain = TextLayout(Occupancy(FRAME)).place(
        Request("title", "operation", 40.0, 12.0, [over, beside]))
    assert plain.rect[:2] == (55.0, 112.0)


def test_a_text_far_from_its_marker_needs_a_leader():
    """20 px right of its marker with nothing else near: too far to stand alone (the reach
    is 12 px); the same place with a leader line from the marker's edge is taken."""
    names = Attribution(OWN, np.zeros((0, 4)))
    alone = np.array([[130.0, 99.0, np.nan, np.nan, np.nan, np.nan]])
    led = np.array([[130.0, 99.0, 111.5, 105.0, 130.0, 105.0]])
    layout = TextLayout(Occupancy(FRAME))
    assert layout.place(Request("t", "operation", 20.0, 12.0, alone, names=names)) is None
    placed = layout.place(Request("t", "operation", 20.0, 12.0, led, names=names))
    assert placed.leader == (111.5, 105.0, 130.0, 105.0)


def test_a_roof_values_leader_does_not_cross_a_line_just_before_its_own():
    """Two parallel roofs 10 px apart (y = 200 and y = 190): a value led to the lower one
    from above crosses the upper one 10 px before its end and reads as naming either; from
    below, its last 16 px touch no other line, and it is placed. Without a place that
    keeps the rule it is left out (a roof's value has no markers of its own to excuse
    it)."""
    names = Attribution(own_lines=np.array([[0.0, 200.0, 400.0, 200.0]]),
                        other_lines=np.array([[0.0, 190.0, 400.0, 190.0]]), reach=20.0)
    from_above = np.array([[180.0, 120.0, 200.0, 196.5, 200.0, 132.0]])
    from_below = np.array([[180.0, 268.0, 200.0, 203.5, 200.0, 268.0]])
    assert names.led(np.array([[180.0, 120.0, 220.0, 132.0]]), from_above[:, 2:6]).tolist() \
        == [False]
    assert names.led(np.array([[180.0, 268.0, 220.0, 280.0]]), from_below[:, 2:6]).tolist() \
        == [True]
    layout = TextLayout(Occupancy(FRAME))
    roof = Request("v", "roof", 40.0, 12.0, np.zeros((0, 6)), names=names, cross_lines=True,
                   far=lambda: from_above)
    assert layout.place(roof) is None
    placed = layout.place(Request("v", "roof", 40.0, 12.0, np.zeros((0, 6)), names=names,
                                  cross_lines=True, far=lambda: np.vstack((from_above,
                                                                           from_below))))
    assert placed.leader == (200.0, 203.5, 200.0, 268.0)


def test_the_middle_of_a_long_name_is_not_over_another_marker():
    """A 100 px name whose end is 4 px left of its marker (box gap 4) and whose middle is
    right over another marker 13 px below it: the other is farther from the box (13 ≥ 1.6 ×
    4 + 3) but nearer its middle (146, 105): 19 px (124 − 105) against 54 (200 − 146), so
    it reads as the other's. One 49 px below is not read with it (past 30 px)."""
    own = np.array([[200.0, 100.0, 210.0, 110.0]])
    other = np.array([[140.0, 124.0, 150.0, 134.0]])
    box = np.array([[96.0, 99.0, 196.0, 111.0]])  # middle (146, 105)
    assert Attribution(own, other).paired(box).tolist() == [False]
    farther = np.array([[140.0, 160.0, 150.0, 170.0]])
    assert Attribution(own, farther).paired(box).tolist() == [True]


def test_a_roof_value_goes_beside_its_own_line_not_another():
    """Two flat roofs 30 px apart; a 12 px tall value 6 px over the lower one is 12 px
    under the upper one (30 − 6 − 12): too near the other line (12 < 1.6 × 6 + 3 = 12.6).
    One 6 px over the upper line names it; one 40 px over it is too far (reach 20)."""
    lower = np.array([[0.0, 200.0, 400.0, 200.0]])
    upper = np.array([[0.0, 170.0, 400.0, 170.0]])
    names = Attribution(own_lines=lower, other_lines=upper, reach=20.0)
    assert names.paired(np.array([[100.0, 182.0, 160.0, 194.0]])).tolist() == [False]
    names = Attribution(own_lines=upper, other_lines=lower, reach=20.0)
    assert names.paired(np.array([[100.0, 152.0, 160.0, 164.0]])).tolist() == [True]
    assert names.paired(np.array([[100.0, 118.0, 160.0, 130.0]])).tolist() == [False]


def test_gaps_to_segments():
    box = np.array([[0.0, 0.0, 10.0, 10.0]])
    # a flat segment 10 px right; a vertical one 5 px right; a slope whose nearest point to
    # the box is its end (20, 0), 10 px from the corner (10, 0); a flat one whose end (13,
    # 14) is 5 px from the corner (10, 10) (3-4-5)
    segs = np.array([[20.0, 5.0, 30.0, 5.0], [15.0, -10.0, 15.0, 30.0], [20.0, 0.0, 30.0, 10.0],
                     [13.0, 14.0, 17.0, 14.0]])
    assert segment_gaps(box, segs)[0].tolist() == pytest.approx([10.0, 5.0, 10.0, 5.0])


def test_a_leader_leaves_the_marker_nearest_the_text():
    """A tag placed around a crowd of two markers (centres (0, 0) and (40, 0), half-size 5)
    with its box at (60, 0): the leader starts on the nearer marker's edge, 6.5 px from its
    centre (5 + 1.5), not between the two."""
    cands = np.array([[60.0, -6.0, 26.5, 0.0, 60.0, 0.0],
                      [10.0, 20.0, np.nan, np.nan, np.nan, np.nan]])
    out = lead_from(cands, [0.0, 40.0], [0.0, 0.0], 5.0)
    assert out[0].tolist() == pytest.approx([60.0, -6.0, 46.5, 0.0, 60.0, 0.0])
    assert np.isnan(out[1, 2])  # a place without a leader keeps none


def test_marks_at_the_same_spot_among_thousands_are_those_found_pair_by_pair():
    """A model's thousands of markers, many drawn at one place: the marks at one of a
    crowd's spots are found among them as when every pair is compared (centres a quarter of
    the smaller size apart or less, each way, sizes less the air)."""
    rng = np.random.default_rng(7)

    def marks(n):
        centres = rng.integers(0, 60, size=(n, 2)) * 2.5 + rng.choice([0.0, 0.5, 1.0], (n, 2))
        half = rng.choice([1.0, 2.25, 3.0, 4.5], size=n)[:, None]
        out = np.hstack((centres - half, centres + half))
        out[rng.random(n) < 0.02] = np.nan  # (a point off a log axis)
        return out

    for air in (0.0, 1.5):
        rects, own = marks(3000), marks(200)
        own = np.vstack((own, rects[:40], rects[:40]))  # (and repeats: a model's layers)
        cx, cy = (rects[:, 0] + rects[:, 2]) / 2, (rects[:, 1] + rects[:, 3]) / 2
        ox, oy = (own[:, 0] + own[:, 2]) / 2, (own[:, 1] + own[:, 3]) / 2
        near = 0.25 * (np.minimum((rects[:, 2] - rects[:, 0])[:, None],
                                  (own[:, 2] - own[:, 0])[None, :]) - 2 * air)
        pairwise = ((np.abs(cx[:, None] - ox[None, :]) <= near)
                    & (np.abs(cy[:, None] - oy[None, :]) <= near)).any(axis=1)
        found = same_spot(rects, own, air)
        assert found.any() and not found.all()
        assert found.tolist() == pairwise.tolist()


def test_a_models_layers_drawn_at_one_place_are_one_crowd_with_their_neighbours():
    """126 layers each drawn at the same three places: the two places whose markers touch
    are one crowd of all their layers, the third place's layers another, in the order of
    their first points; a point off the axes is a crowd of its own."""
    places = [(0.0, 0.0), (100.0, 80.0), (5.0, 0.0)]
    xy = [places[i % 3] for i in range(378)]
    xy[7] = (math.nan, 0.0)
    out = crowds(xy, 6.0)
    touching = [i for i in range(378) if i % 3 != 1 and i != 7]
    apart = [i for i in range(378) if i % 3 == 1 and i != 7]
    assert out == [touching, apart, [7]]


def test_a_leader_does_not_cross_another_leader_near_their_markers():
    """Two markers side by side, each text led from its marker: a leader that crosses the
    other's just past its marker (within the first pixels, which are not looked at for
    what they cross) reads as each text naming the other's marker; the place whose leader
    crosses none is taken, though it is tried later."""
    occ = Occupancy((0.0, 0.0, 300.0, 200.0))
    a_marker = np.array([[95.0, 95.0, 105.0, 105.0]])
    b_marker = np.array([[101.0, 95.0, 111.0, 105.0]])
    occ.add_rects(np.vstack((a_marker, b_marker)))
    layout = TextLayout(occ)
    # a's text up and to the right, led from the top of its marker
    a = layout.place(Request("a", "operation", 20.0, 10.0,
                             np.array([[150.0, 30.0, 100.0, 94.0, 150.0, 40.0]]), own=a_marker))
    assert a is not None
    crossing = [40.0, 30.0, 106.0, 94.0, 60.0, 40.0]  # up and to the left: across a's leader
    clear = [200.0, 30.0, 106.0, 94.0, 200.0, 40.0]  # up and to the right, beside a's
    b = layout.place(Request("b", "operation", 20.0, 10.0, np.array([crossing, clear]),
                             own=b_marker))
    assert b is not None and b.rect[:2] == (200.0, 30.0)
