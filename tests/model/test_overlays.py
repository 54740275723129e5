"""Sweep paths, measured marks and pair links as scene data (no Qt).

Expected numbers come from the roofline formulas worked by hand, on the seeds' round-number
teaching machine (100 TFLOP/s fp16, 1 TB/s: ridge 100 FLOP/byte) where possible.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from workbench.io.sessions import load_session
from workbench.model.analysis import evaluate_session
from workbench.model.chart.overlay_data import (
    VERDICT_COLORS,
    crossing_label,
    pair_label,
    value_text,
)
from workbench.model.chart.scene import build_scene
from workbench.model.hardware import Hardware
from workbench.model.measured import Measurement
from workbench.model.operations import Operation
from workbench.model.session import Comparison, HardwareEntry, OperationEntry, Session
from workbench.model.sweeps import Sweep, log

EXAMPLES = Path(__file__).resolve().parents[2] / "workbench" / "examples"


def teaching() -> Hardware:
    return Hardware("Teaching", compute={"fp16": 100e12}, memory={"hbm": 1e12})


def gemm(m: int, n: int = 8192, k: int = 8192, name: str = "g") -> Operation:
    return Operation("gemm", {"m": m, "n": n, "k": k, "dtype": "fp16"}, name)


def scene_of(session: Session):
    return build_scene(session, evaluate_session(session, visible_only=True))


def test_sweep_path_through_samples_and_the_exact_crossing():
    session = Session(hardware=[HardwareEntry(teaching())])
    entry = OperationEntry(gemm(128), sweep=Sweep("m", log(1, 4096, 13)))
    session.operations.append(entry)
    (path,) = scene_of(session).sweeps
    d = 8192
    # intensity m·d / (2m + d) = 100 ⇒ m* = 100·d / (d − 200)
    m_star = 100 * d / (d - 200)
    assert m_star == pytest.approx(102.5025, rel=1e-6)
    (crossing,) = path.crossings
    assert crossing.value == pytest.approx(m_star, rel=1e-12)
    assert crossing.integer == 103 and crossing.direction == "to_compute"
    assert (crossing.x, crossing.y) == pytest.approx((100.0, 100e12), rel=1e-9)
    assert crossing.label == "m* = 102.5"
    assert "Compute-bound from m = 103" in crossing.tooltip
    assert path.values == pytest.approx([2.0**i for i in range(13)])
    assert path.xs == pytest.approx([m * d / (2 * m + d) for m in path.values])
    assert path.ys == pytest.approx([min(100e12, 1e12 * x) for x in path.xs])
    assert len(path.path_xs) == 14 and path.path_xs[7] == pytest.approx(100.0)  # 64 < m* < 128
    assert (path.start_label, path.end_label) == ("m = 1", "m = 4096")
    assert path.sample_tooltip(0).splitlines()[1] == "m = 1"


def test_each_machines_sweep_path_crosses_its_own_ridge_and_follows_an_edit():
    """Machines of different ridges, evaluated together (each step's FLOPs and bytes counted
    once for both): each path crosses at its own machine's critical batch, also after an
    edit of the operation; a machine that cannot run the operation draws no path and
    leaves the others as they are."""
    slow = Hardware("Half bandwidth", compute={"fp16": 100e12}, memory={"hbm": 0.5e12})
    session = Session(hardware=[HardwareEntry(teaching()), HardwareEntry(slow)])
    entry = OperationEntry(gemm(128), sweep=Sweep("m", log(1, 4096, 13)))
    session.operations.append(entry)

    def crossings_by_machine():
        return {p.machine: [c.value for c in p.crossings] for p in scene_of(session).sweeps}

    # intensity m·d / (2m + d) = R  ⇒  m* = R·d / (d − 2R), ridges 100 and 200 FLOP/B
    for d in (8192, 4096, 2048):
        if d == 2048:  # a machine with no fp16 peak: no path of its own
            session.hardware.append(HardwareEntry(
                Hardware("Integers only", compute={"int8": 100e12}, memory={"hbm": 1e12})))
        entry.operation = gemm(128, n=d, k=d)
        found = crossings_by_machine()
        assert set(found) == {"Teaching", "Half bandwidth"}
        assert found["Teaching"] == [pytest.approx(100 * d / (d - 200), rel=1e-12)]
        assert found["Half bandwidth"] == [pytest.approx(200 * d / (d - 400), rel=1e-12)]


def test_crossings_evaluated_for_all_machines_together_lie_where_each_alone_puts_them():
    """The crossings' marks of several machines come from one evaluation (every machine at
    every machine's crossing): each mark is, float for float, its own machine's evaluation
    at its own crossing; a machine that cannot run the operation leaves the others so."""
    import numpy as np

    from workbench.io.presets import get_preset
    from workbench.model.roofline import sweep as alone
    from workbench.model.sweeps import sweep_crossings

    machines = [get_preset(p) for p in ("h100-sxm", "a100-80gb", "tpu-v5e")]
    machines.append(Hardware("Half bandwidth", compute={"bf16": 100e12},
                             memory={"hbm": 0.5e12}))
    session = Session(hardware=[HardwareEntry(hw) for hw in machines])
    for n in (8192, 3000):
        session.operations.append(OperationEntry(
            Operation("gemm", {"m": 128, "n": n, "k": 8192, "dtype": "bf16"}, f"n{n}"),
            sweep=Sweep("m", log(1, 4096, 13))))
    session.operations.append(OperationEntry(
        Operation("attention", {"batch": 1, "heads": 32, "kv_heads": 8, "seq_q": 1,
                                "seq_kv": 4096, "head_dim": 128, "dtype": "bf16"}, "decode"),
        sweep=Sweep("seq_q", log(1, 8192, 14))))
    for add_int8_only in (False, True):
        if add_int8_only:
            session.hardware.append(HardwareEntry(
                Hardware("Integers only", compute={"int8": 100e12}, memory={"hbm": 1e12})))
        paths = scene_of(session).sweeps
        by_name = {hw.label: hw for hw in machines}
        seen = 0
        for path in paths:
            entry = next(e for e in session.operations if e.id == path.op_id)
            hw = by_name[path.machine]
            found = sweep_crossings(entry.operation, hw, entry.sweep)
            assert [c.value for c in path.crossings] == [c.value for c in found]
            for mark in path.crossings:
                at = alone(entry.operation, hw, **{mark.param: np.asarray([mark.value])})
                assert mark.x == float(np.ravel(at["intensity"])[0])
                assert mark.y == float(np.ravel(at["attainable_flops"])[0])
                seen += 1
        assert {p.machine for p in paths} == set(by_name)
        assert seen >= 8


def test_sweep_that_stays_on_one_side_has_no_crossing_and_view_flag_hides_paths():
    session = Session(hardware=[HardwareEntry(teaching())])
    session.operations.append(OperationEntry(gemm(8), sweep=Sweep("m", [1, 2, 4, 8])))
    (path,) = scene_of(session).sweeps
    assert path.crossings == ()
    session.view.sweeps = False
    assert scene_of(session).sweeps == ()


def test_invalid_sweep_is_a_note_not_a_crash():
    session = Session(hardware=[HardwareEntry(teaching())])
    session.operations.append(OperationEntry(gemm(8), sweep=Sweep("dtype", [1, 2])))
    scene = scene_of(session)
    assert scene.sweeps == ()
    assert any("sweep of g" in note for note in scene.notes)


def test_sweep_paths_widen_the_data_range():
    session = Session(hardware=[HardwareEntry(teaching())])
    session.operations.append(OperationEntry(gemm(128)))
    # the point (I = 124) and the ridge (100, a decade either side) fit in 10 … 1000
    assert scene_of(session).x_range == (10.0, 1000.0)
    session.operations[0].sweep = Sweep("m", [1, 1_000_000])
    # m = 1: I = 8192 / 8194 ≈ 1; m = 10⁶: I = 8192·10⁶ / (2·10⁶ + 8192) ≈ 4080 (× 1.25 pad)
    assert scene_of(session).x_range == (0.1, 10000.0)


def test_a_chart_of_many_measurements_draws_the_first_thousand_and_says_so():
    from workbench.model.chart.overlay_data import MAX_MEASURED_DRAWN

    session = Session(hardware=[HardwareEntry(teaching(), preset="teach"),
                                HardwareEntry(Hardware("Half", compute={"fp16": 50e12},
                                                       memory={"hbm": 0.5e12}))])
    # 3,000 standalone kernels on two machines: 6,000 measured points
    session.measurements = [Measurement(f"k{i}", flops=1e9 * (1 + i % 9), bytes=1e8,
                                        time_s=1e-3, precision="fp16") for i in range(3000)]
    scene = scene_of(session)
    assert MAX_MEASURED_DRAWN == 1_000
    assert len(scene.measured) == 1_000
    # the first ones in the session's order (the Measurements table's), on both machines
    assert {m.name for m in scene.measured} == {f"k{i}" for i in range(500)}
    notes = [e.text for e in scene.legend if e.kind == "measured" and e.color is None]
    assert notes == ["1,000 of 6,000 measured points drawn — the Measurements table lists all"]
    # a few: all drawn, no note
    session.measurements = session.measurements[:10]
    scene = scene_of(session)
    assert len(scene.measured) == 20
    assert not [e for e in scene.legend if e.kind == "measured" and e.color is None]


def test_measured_marks_fraction_verdict_and_link():
    hw = teaching()
    session = Session(hardware=[HardwareEntry(hw, preset="teach")])
    op = Operation("custom", {"flops": 1e12, "bytes": 1e10, "precision": "fp16"}, "k")
    session.operations.append(OperationEntry(op))
    # I = 100 on the ridge: T_lower = 10 ms, and T_predicted too (no derating, no launch
    # cost). Runs of 11 ms (1.1 × predicted, 90.9 % of the roof) and 40 ms (4 ×, 25 %).
    session.measurements = [Measurement("fast", operation="k", time_s=11e-3),
                            Measurement("slow", operation="k", time_s=40e-3),
                            Measurement("alone", flops=1e9, bytes=1e9, time_s=0.7e-3,
                                        precision="fp16")]
    scene = scene_of(session)
    marks = {m.name: m for m in scene.measured}
    assert marks["fast"].fraction == pytest.approx(10 / 11)
    assert marks["fast"].verdict == "as-predicted"
    assert marks["fast"].label == "90.9 % · as predicted"
    assert (marks["fast"].px, marks["fast"].py) == pytest.approx((100.0, 100e12))
    assert (marks["fast"].x, marks["fast"].y) == pytest.approx((100.0, 1e12 / 11e-3))
    assert marks["slow"].verdict == "likely-bug"
    assert marks["slow"].color == VERDICT_COLORS["likely-bug"]
    # standalone: I = 1, predicted 1 TFLOP/s, T_lower 1 ms, measured 0.7 ms: faster than
    # predicted (0.7 ×), 143 % of the roof
    alone = marks["alone"]
    assert alone.standalone and alone.verdict == "re-measure"
    assert alone.label == f"alone: {100 / 0.7:.0f} % · re-measure"
    assert (alone.px, alone.py) == pytest.approx((1.0, 1e12))
    # the verdict scale: a time r × T_predicted sits at 1/r of the ceiling here, so as
    # predicted spans 1/1.2 … 1 (1/0.8 is above the roof), below prediction 1/2 … 1/1.2,
    # likely a bug 1/4 … 1/2 (the scale reaches down to 4 × the predicted time)
    bands = marks["fast"].bands
    assert [key for key, _lo, _hi in bands] == ["as-predicted", "below-prediction",
                                                "likely-bug"]
    edges = [v / 100e12 for _key, lo, hi in bands for v in (lo, hi)]
    assert edges == pytest.approx([1 / 1.2, 1.0, 0.5, 1 / 1.2, 0.25, 0.5])
    legend = [e.text for e in scene.legend if e.kind == "measured"]
    assert legend == ["measured, re-measure (< 0.8 × predicted)",
                      "measured, as predicted (0.8–1.2 × predicted)",
                      "measured, likely a bug (> 2 × predicted)"]
    session.view.measured = False
    assert scene_of(session).measured == ()


def test_a_measurement_judged_on_two_machines_names_each_in_one_text():
    """A kernel measured on its own with no machine is judged on both: drawn twice at one
    spot (I = 1, 1 GFLOP in 0.7 ms: 1.43 TFLOP/s on either), with a verdict each. The spot
    has one text, the kernel's name then a line per machine; an operation's measurement
    whose figures differ has no name line; the same text on two machines alike is said as
    it is."""
    slow = Hardware("Slow", compute={"fp16": 100e12}, memory={"hbm": 1e12})
    fast = Hardware("Fast", compute={"fp16": 400e12}, memory={"hbm": 4e12})
    session = Session(hardware=[HardwareEntry(slow, preset="slow"),
                                HardwareEntry(fast, preset="fast")])
    op = Operation("custom", {"flops": 1e12, "bytes": 1e8, "precision": "fp16"}, "k")
    session.operations.append(OperationEntry(op))
    session.measurements = [Measurement("alone", flops=1e9, bytes=1e9, time_s=0.7e-3,
                                        precision="fp16"),
                            # I = 10 000, compute-bound on both: 10 ms on Slow, 2.5 ms on
                            # Fast; 50 ms is 5 × and 20 × the prediction, a bug on both
                            Measurement("k run", operation="k", time_s=50e-3)]
    marks = list(scene_of(session).measured)
    alone = [m for m in marks if m.name == "alone"]
    assert len(alone) == 2 and len({(m.x, m.y) for m in alone}) == 1
    # T_lower 1 ms on Slow (1 GB at 1 TB/s), 0.25 ms on Fast: 0.7 ms is 143 % of Slow's
    # roof and 35.7 % of Fast's
    said = ("alone\nSlow: 143 % · re-measure\nFast: 35.7 % · likely a bug")
    assert [m.label for m in alone] == [said, said]
    # each one's tooltip (the pointer finds one of the two) says what the other says
    assert alone[0].tooltip.endswith("\nAlso at this point (1): Fast: 35.7 % · likely a bug")
    assert alone[1].tooltip.endswith("\nAlso at this point (1): Slow: 143 % · re-measure")
    assert "on Slow," in alone[0].tooltip and "on Fast," in alone[1].tooltip
    # an operation's measurement: its name is the operation's, beside its own point
    run = [m for m in marks if m.name == "k run"]
    assert [m.label for m in run] == ["Slow: 20 % · likely a bug\nFast: 5 % · likely a bug"] * 2
    # two machines alike: the same text on both, said as it is
    session.hardware[1] = HardwareEntry(slow.copy(), preset="twin")
    session.hardware[1].hardware.name = "Twin"
    again = [m for m in scene_of(session).measured if m.name == "k run"]
    assert [m.label for m in again] == ["20 % · likely a bug"] * 2


def test_fusion_pair_saves_16_bytes_per_element_and_is_2_33x_faster():
    session = load_session(EXAMPLES / "fusion.yaml")
    (link,) = scene_of(session).links
    n = 16777216
    assert link.bytes_saved == (28 - 12) * n
    # the session names no prediction: calibrated, each kernel timed alone (3.83 µs launch,
    # streaming at 0.87 of 3.35 TB/s); unfused is three kernels, fused one
    bw = 0.87 * 3.35e12
    unfused, fused = 3 * 3.83e-6 + 28 * n / bw, 3.83e-6 + 12 * n / bw
    assert link.speedup == pytest.approx(unfused / fused)  # 172.7 µs / 72.9 µs
    assert link.label == "−268 MB, 2.37× faster"
    assert link.mid == pytest.approx((math.sqrt(link.x0 * link.x1),
                                      math.sqrt(link.y0 * link.y1)))
    session.view.pairs = False
    assert scene_of(session).links == ()


def test_pair_with_a_hidden_side_is_not_drawn():
    session = load_session(EXAMPLES / "fusion.yaml")
    session.operations[1].visible = False
    assert scene_of(session).links == ()


def test_labels():
    assert value_text(4096.0, True) == "4096"
    assert value_text(255.5000001) == "255.5"
    assert value_text(0.125) == "0.125"
    assert value_text(1.5e6) == "1.5e6"
    assert crossing_label("batch", 240.0) == "batch* = 240"
    assert crossing_label("d", 26267.3) == "d* = 26267"  # whole, as the tables write counts
    assert pair_label(268435456, 28 / 12) == "−268 MB, 2.33× faster"
    assert pair_label(-1e9, 0.5) == "+1 GB, 2× slower"
    assert pair_label(0, 1.0) == "same bytes, same time"
    assert Comparison("a", "b").first == "a"
