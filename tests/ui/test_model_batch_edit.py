"""Editing a whole model's batch moves every one of its points on the chart, in one change,
to where the engine puts them (in the per-layer view and with every operation shown)."""

from __future__ import annotations

import math

import pytest

from workbench.document import new_operation
from workbench.io.model_configs import read_model_config
from workbench.model.analysis import evaluate_pair
from workbench.model.hardware import Hardware
from workbench.model.llm.architecture import Setup
from workbench.model.llm.session import ModelEntry


@pytest.fixture
def window(gpu_window, qtbot):
    gpu_window.resize(1200, 800)
    qtbot.waitExposed(gpu_window)
    return gpu_window


def _add_llama_8b(win, view: str):
    """Llama-3.1-8B decoding at batch 1 added to the window's session, shown as ``view``:
    the session's model."""
    win.add_model(ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                             Setup("decode", 1, 4096, 4096), view=view))
    (model,) = win.document.session.models
    return model


def _engine_points(win, op_ids):
    """(op, machine) → (intensity, attainable FLOP/s), evaluated afresh from the document
    (not through the app's result cache)."""
    doc = win.document
    out = {}
    for op_id in op_ids:
        entry = doc.operation(op_id)
        counts = entry.operation.counts()
        for hw in doc.session.hardware:
            r = evaluate_pair(entry, doc.machine(hw.id), counts).result
            if r is not None and math.isfinite(r.intensity) and r.intensity > 0 \
                    and r.attainable_flops > 0:
                out[(op_id, hw.id)] = (r.intensity, r.attainable_flops)
    return out


def _assert_named_by_highest_point(win, drawn) -> None:
    """Each operation's name (or tag) is said by its highest point where it is now."""
    points = win.canvas.points
    for op_id in {op for op, _hw in drawn}:
        heights = {hw: y for (op, hw), (_x, y) in drawn.items() if op == op_id}
        assert points.label_key(op_id) == (op_id, max(heights, key=heights.get))
        named = [k for k in points.keys_of(op_id) if points.marks[k].show_label]
        assert named in ([], [points.label_key(op_id)])


def _drawn(win, op_ids):
    ids = set(op_ids)
    return {(op, hw): (x, y) for op, hw, x, y in win.canvas.point_items() if op in ids}


@pytest.mark.parametrize("view", ["layers", "all"])
def test_batch_edit_moves_every_point_of_the_model(qtbot, window, view):
    win = window
    model = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup("decode", 1, 4096, 4096), view=view)
    other = win.document.add_operation(new_operation("gemm", "outside the model"))
    win.add_model(model)
    (model,) = win.document.session.models
    before = _drawn(win, model.op_ids)
    assert before and set(before) == set(_engine_points(win, model.op_ids))
    all_before = {(op, hw): (x, y) for op, hw, x, y in win.canvas.point_items()}
    assert {op for op, _ in all_before} - set(model.op_ids) == {other}
    changes = []
    win.document.subscribe(changes.append)

    win.document.set_model(model.id, batch=64)
    qtbot.wait(10)

    assert [c.what for c in changes].count("operation") == 1  # one change for the model
    expected = _engine_points(win, model.op_ids)
    after = _drawn(win, model.op_ids)
    assert set(after) == set(expected) == set(before)
    for key, (x, y) in expected.items():
        assert after[key] == pytest.approx((x, y), rel=1e-9), key
    moved = [k for k in before if before[k] != pytest.approx(after[k], rel=1e-6)]
    gemms = [k for k in before if win.document.operation(k[0]).operation.kind == "gemm"]
    assert gemms and set(gemms) <= set(moved)  # the weights are shared by 64 tokens now
    # every point is drawn once; the operation outside the model did not move
    drawn = win.canvas.point_items()
    keys = [(op, hw) for op, hw, _, _ in drawn]
    assert len(keys) == len(set(keys)) and set(keys) == set(all_before)
    for op, hw, x, y in drawn:
        if op == other:
            assert (x, y) == pytest.approx(all_before[(op, hw)], rel=1e-12)
    _assert_named_by_highest_point(win, after)


def test_name_moves_to_the_point_that_is_highest_after_a_batch_edit(open_window, qtbot):
    """Of a machine with more compute and one with more memory bandwidth, the first draws
    a GEMM higher once a larger batch makes it compute bound: its name goes there."""
    win = open_window(size=(1200, 800))
    win.document.add_machine(Hardware("Compute", compute={"bf16": 1000e12},
                                      memory={"hbm": 1e12}))
    win.document.add_machine(Hardware("Bandwidth", compute={"bf16": 100e12},
                                      memory={"hbm": 4e12}))
    model = _add_llama_8b(win, "layers")
    compute, bandwidth = (e.id for e in win.document.session.hardware)
    highest = {}
    for batch in (1, 512):
        win.document.set_model(model.id, batch=batch)
        qtbot.wait(10)
        drawn = _drawn(win, model.op_ids)
        _assert_named_by_highest_point(win, drawn)
        highest[batch] = {win.canvas.points.label_key(op)[1] for op, _hw in drawn}
    assert bandwidth in highest[1] and compute in highest[512]


def test_every_layer_keeps_its_own_name_and_coincident_points_are_one_spot(qtbot, window):
    """With every operation shown, a batch edit evaluates a model's identical layers once:
    each point still names its own operation and carries that operation's figures, and
    the points that coincide exactly are drawn as one spot per machine."""
    win = window
    model = _add_llama_8b(win, "all")
    win.document.set_model(model.id, batch=16)
    qtbot.wait(10)

    canvas = win.canvas
    doc = win.document
    expected = _engine_points(win, model.op_ids)
    assert len(expected) > 32 * 9 * 2  # 32 layers of about ten operations, two machines
    for op_id, hw_id in expected:
        name = doc.operation(op_id).operation.name
        tip = canvas.hover.tooltip_of((op_id, hw_id)).splitlines()
        assert tip[0] == name, (tip[0], name)
        counts = doc.operation(op_id).operation.counts()
        r = evaluate_pair(doc.operation(op_id), doc.machine(hw_id), counts).result
        assert canvas.points.marks[(op_id, hw_id)].result.t_predicted_s == r.t_predicted_s
    # a hovered point names the others drawn exactly there (the other layers' copies)
    for (op_id, hw_id), xy in expected.items():
        name = doc.operation(op_id).operation.name
        others = [k for k, v in expected.items() if v == xy and k != (op_id, hw_id)]
        tip = canvas.hover.tooltip_of((op_id, hw_id))
        if not others:
            assert "Also at this point" not in tip
            continue
        head, listed = tip.splitlines()[-1].split(": ", 1)
        assert head == f"Also at this point ({len(others)})"
        if len(others) > 3:
            listed, more = listed.rsplit(" and ", 1)
            assert more == f"{len(others) - 3} more"
        named = {doc.operation(k[0]).operation.name if k[1] == hw_id else
                 f"{doc.operation(k[0]).operation.name} (on {doc.machine(k[1]).hardware.label})"
                 for k in others}
        assert listed.split(", ")[0] in named and set(listed.split(", ")) <= named
        assert name not in listed.split(", ")
    layer_names = {doc.operation(op).operation.name.split(": ")[1].split(" ")[0]
                   for op, _ in expected}
    assert {"L0", "L17", "L31"} <= layer_names
    # one spot for each distinct place and style; every point is still listed as drawn
    for hw in doc.session.hardware:
        points = [canvas.points.marks[k] for k in expected if k[1] == hw.id]
        distinct = {(p.x, p.y, p.color, p.overhead) for p in points}
        assert len(distinct) < len(points) / 10
        assert canvas.points.machine_spots(hw.id) == len(distinct)
    drawn = {(op, hw) for op, hw, _, _ in canvas.point_items()}
    assert set(expected) <= drawn


def test_each_marker_lies_within_its_items_bounds_after_edits_and_a_zoom(qtbot, window):
    """Qt draws an item only within its bounding rectangle: after a batch edit moves the
    markers, its undo, and a zoom, each scatter item's rectangle is the one worked out
    afresh for its markers as they are now, and holds every one of them."""
    import pyqtgraph as pg

    from workbench.ui.chart.items import Spots

    win = window
    model = _add_llama_8b(win, "layers")
    canvas = win.canvas

    def check() -> int:
        items = [item for item in canvas.view_box.childGroup.childItems()
                 if isinstance(item, Spots) and item.isVisible()]
        seen = 0
        for item in items:
            rect = item.boundingRect()
            assert rect == pg.ScatterPlotItem.boundingRect(item)
            xs, ys = item.getData()
            for x, y in zip(xs, ys, strict=True):
                assert rect.contains(float(x), float(y))
                seen += 1
        return seen

    assert check()
    first = {id(item): item.boundingRect() for item in canvas.view_box.childGroup.childItems()
             if isinstance(item, Spots) and item.isVisible()}
    win.document.set_model(model.id, batch=512)
    qtbot.wait(10)
    assert check()
    assert any(item.boundingRect() != first[id(item)]
               for item in canvas.view_box.childGroup.childItems() if id(item) in first)
    win.undo_action.trigger()
    qtbot.wait(10)
    assert check()
    (x0, x1), (y0, y1) = canvas.view_box.viewRange()
    canvas.view_box.setRange(xRange=(x0 - 1, x1 + 1), yRange=(y0 - 1, y1 + 1), padding=0)
    qtbot.wait(10)
    assert check()


def _spots_in_order(points, hw_id, selected):
    """The keys of machine ``hw_id``'s points by the spot that draws them: points that
    coincide (place and style) are one spot, where the last of them comes in the points'
    order; each spot's keys in that order. The ``selected`` operation's points are drawn
    by an item of their own, on top."""
    spots: dict = {}
    for key in points.keys:
        if key[1] != hw_id or key[0] == selected:
            continue
        p = points.marks[key]
        spot = (p.x, p.y, p.color, p.overhead)
        spots[spot] = [*spots.pop(spot, []), key]
    return [key for keys in spots.values() for key in keys]


def test_spots_follow_each_edit_in_the_order_of_their_last_points(qtbot, window):
    """With every operation shown, the spots of each machine stand for the points as they
    are after each batch edit, its undo and redo, in the points' order (a spot drawn where
    the last of its points would be: what lies on top is the same as with one spot each)."""
    win = window
    model = _add_llama_8b(win, "all")
    canvas = win.canvas
    points = canvas.points
    win.document.set_model(model.id, batch=16)
    qtbot.wait(10)
    seen = []
    for step in ("edit", "undo", "redo"):
        if step == "undo":
            win.undo_action.trigger()
        elif step == "redo":
            win.redo_action.trigger()
        qtbot.wait(10)
        drawn = canvas.point_items()
        expected = _engine_points(win, model.op_ids)
        selected = win.workspace.selection.current
        for hw in win.document.session.hardware:
            order = [(op, h) for op, h, _x, _y in drawn if h == hw.id and op != selected]
            assert order == _spots_in_order(points, hw.id, selected)
            assert len(order) > points.machine_spots(hw.id) * 10  # (spots shared)
            for op, h, x, y in drawn:
                if h == hw.id and (op, h) in expected:
                    # (a spot drawn where its points are: the same place for each)
                    assert (x, y) == pytest.approx(expected[(op, h)], rel=1e-9)
        seen.append(sorted(points.marks[k].y for k in points.keys))
    assert seen[0] == seen[2] != seen[1]  # (the undo moved them back, the redo again)
