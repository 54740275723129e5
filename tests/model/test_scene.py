"""The chart as data: roofs, ridges, regions, points, labels, legend and ranges (no Qt).

Expected numbers are worked out by hand from the roofline formulas, not taken from the code.
"""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, fields

import pytest

from tests.conftest import EXAMPLES
from workbench.io.presets import get_preset
from workbench.io.sessions import load_session
from workbench.model.analysis import evaluate_session
from workbench.model.chart.scene import (
    MAX_LABELS,
    MAX_LEGEND_OPERATIONS,
    X_TITLE,
    Y_TITLE,
    PointMark,
    Scene,
    build_scene,
    decade_range,
)
from workbench.model.hardware import Hardware
from workbench.model.operations import Operation
from workbench.model.session import HardwareEntry, OperationEntry, Session


def teaching() -> Hardware:
    """The seeds' round-number machine: 100 TFLOP/s fp16, 1 TB/s, ridge 100 FLOP/byte."""
    return Hardware("Teaching", compute={"fp16": 100e12}, memory={"hbm": 1e12})


def custom(name: str, flops: float, nbytes: float, precision: str = "fp16") -> Operation:
    return Operation("custom", {"flops": flops, "bytes": nbytes, "precision": precision}, name)


def make(hardware: list[Hardware], operations: list[Operation], **view) -> Session:
    session = Session(title="t")
    session.hardware = [HardwareEntry(hw) for hw in hardware]
    session.operations = [OperationEntry(op) for op in operations]
    for key, value in view.items():
        setattr(session.view, key, value)
    return session


def scene_of(session: Session) -> Scene:
    return build_scene(session, evaluate_session(session, visible_only=True))


def roofs(scene: Scene, kind: str, derated: bool = False):
    return [r for r in scene.roofs if r.kind == kind and r.derated == derated]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9)


# --------------------------------------------------------------------------------------
# the teaching machine


def test_teaching_machine_ridge_roofs_and_points():
    session = make([teaching()], [custom("I = 0.25", 250e9, 1e12),
                                  custom("I = 20", 20e12, 1e12),
                                  custom("I = 200", 200e12, 1e12)])
    scene = scene_of(session)

    assert [(r.x, r.y) for r in scene.ridges] == [(100.0, 1e14)]
    assert scene.ridges[0].label == "ridge 100 FLOP/B"

    (memory,) = roofs(scene, "memory")
    # y = 1e12 · x: passes through (1, 1e12) and ends at the ridge (100, 1e14)
    assert close(memory.ys[0] / memory.xs[0], 1e12)
    assert memory.xs[0] < 1 < memory.xs[1]
    assert (memory.xs[1], memory.ys[1]) == (100.0, 1e14)
    (compute,) = roofs(scene, "compute")
    assert compute.ys == (1e14, 1e14)
    assert compute.xs[0] == 100.0 and compute.xs[1] > 1000

    where = {p.label: (p.x, p.y, p.bound) for p in scene.points}
    assert where["I = 0.25"][:2] == pytest.approx((0.25, 2.5e11))
    assert where["I = 0.25"][2] == "memory"
    assert where["I = 20"][:2] == pytest.approx((20, 2e13))
    assert where["I = 200"][:2] == pytest.approx((200, 1e14))
    assert where["I = 200"][2] == "compute"


def test_data_range_is_whole_decades_covering_points_and_ridges():
    session = make([teaching()], [custom("low", 250e9, 1e12), custom("high", 200e12, 1e12)])
    scene = scene_of(session)
    # points at 0.25 and 200, ridge at 100 (a decade either side: 10 … 1000)
    assert scene.x_range == (0.1, 1000.0)
    # points 2.5e11 … 1e14, ridge 1e14 (a decade of slope below it: 1e13); the top sits
    # just above the highest roof (1e14 × 3), not a whole decade above it
    assert scene.y_range == (1e11, pytest.approx(3e14))
    for lo, hi in (scene.x_range,):
        assert math.log10(lo).is_integer() and math.log10(hi).is_integer()
    assert math.log10(scene.y_range[0]).is_integer()
    assert scene.extent[0] < scene.x_range[0] and scene.extent[1] > scene.x_range[1]


def test_decade_range():
    assert decade_range(0.25, 200) == (0.1, 1000.0)
    assert decade_range(10, 10) == (10, 100)
    assert decade_range(1e12, 9.9e14) == (1e12, 1e15)


def test_axis_titles_have_units():
    scene = scene_of(make([teaching()], [custom("a", 1e12, 1e12)]))
    assert scene.x_title == X_TITLE == "Arithmetic intensity [FLOP/byte]"
    assert scene.y_title == Y_TITLE == "Attainable performance [FLOP/s]"


# --------------------------------------------------------------------------------------
# roofs per machine


def h100_gemm(dtype: str = "bf16", **extra) -> Operation:
    return Operation("gemm", {"m": 4096, "n": 4096, "k": 4096, "dtype": dtype, **extra}, "GEMM")


def test_compute_roofs_only_for_precisions_used_unless_all_precisions():
    h100 = get_preset("h100-sxm")
    scene = scene_of(make([h100], [h100_gemm("bf16")]))
    assert [r.name for r in roofs(scene, "compute")] == ["bf16"]
    assert [r.ys[0] for r in roofs(scene, "compute")] == [989.4e12]

    scene = scene_of(make([h100], [h100_gemm("bf16"), h100_gemm("fp32")]))
    assert {r.name: r.ys[0] for r in roofs(scene, "compute")} == {"bf16": 989.4e12,
                                                                  "fp32": 67e12}
    # two precisions: the ridges say which is which (989.4/3.35 = 295, 67/3.35 = 20)
    assert sorted(r.label for r in scene.ridges) == ["ridge 20 FLOP/B (fp32)",
                                                     "ridge 295 FLOP/B (bf16)"]
    # precisions drawn together with the same peak share one roof
    scene = scene_of(make([h100], [h100_gemm("bf16"), h100_gemm("fp16")]))
    assert [r.name for r in roofs(scene, "compute")] == ["bf16/fp16"]
    assert [r.label for r in scene.ridges] == ["ridge 295 FLOP/B"]

    # every roof the machine has: its matrix peaks and (named "… vector") its vector peaks
    scene = scene_of(make([h100], [h100_gemm("bf16")], all_precisions=True))
    peaks = sorted({r.ys[0] for r in roofs(scene, "compute")})
    assert peaks == [33.5e12, 34e12, 67e12, 133.8e12, 494.7e12, 989.4e12, 1979e12]
    names = {r.name for r in roofs(scene, "compute")}
    assert "bf16/fp16 vector" in names and "bf16/fp16" in names


def test_memory_roofs_clipped_at_highest_compute_roof_main_memory_emphasised():
    gh200 = get_preset("gh200")  # hbm 4 TB/s (main), l2 9.8 TB/s and lpddr5x 512 GB/s
    # by default only main memory and the levels an operation is measured across
    plain = scene_of(make([gh200], [h100_gemm("bf16")]))
    assert [r.name for r in roofs(plain, "memory")] == ["hbm"]
    across_l2 = h100_gemm("bf16")
    across_l2.memory_level = "l2"
    used = scene_of(make([gh200], [h100_gemm("bf16"), across_l2]))
    assert sorted(r.name for r in roofs(used, "memory")) == ["hbm", "l2"]
    # every level with view.all_levels
    scene = scene_of(make([gh200], [h100_gemm("bf16")], all_levels=True))
    top = max(r.ys[0] for r in roofs(scene, "compute"))
    by_name = {r.name: r for r in roofs(scene, "memory")}
    assert set(by_name) == {"hbm", "l2", "lpddr5x"}
    assert by_name["hbm"].emphasis == "main"
    assert by_name["lpddr5x"].emphasis == by_name["l2"].emphasis == "minor"
    for roof in by_name.values():
        assert roof.ys[1] == pytest.approx(top)
        assert roof.xs[1] == pytest.approx(top / roof.value)
    assert by_name["lpddr5x"].value == 512e9


def test_interconnect_roof_only_when_an_operation_uses_it():
    h100 = get_preset("h100-sxm")
    scene = scene_of(make([h100], [h100_gemm()]))
    assert roofs(scene, "interconnect") == []

    op = h100_gemm()
    op.memory_level = "nvlink"
    scene = scene_of(make([h100], [op]))
    (link,) = roofs(scene, "interconnect")
    assert link.name == "nvlink" and link.value == 450e9 and link.line == "dashdot"
    # the point is judged against the link: intensity 4096/3 · 2 … on 450 GB/s
    point = scene.points[0]
    assert point.y == pytest.approx(min(989.4e12, point.x * 450e9))


def test_derated_roofs_at_efficiency_when_asked_and_known():
    h100 = get_preset("h100-sxm")  # efficiency 0.78
    plain = scene_of(make([h100], [h100_gemm()]))
    assert [r for r in plain.roofs if r.derated] == []

    scene = scene_of(make([h100], [h100_gemm()], derated=True))
    (mem,) = roofs(scene, "memory", derated=True)
    (comp,) = roofs(scene, "compute", derated=True)
    assert mem.value == pytest.approx(0.78 * 3.35e12)
    assert comp.ys[0] == pytest.approx(0.78 * 989.4e12)
    assert mem.line == comp.line == "dashed"

    scene = scene_of(make([teaching()], [custom("a", 1e12, 1e12)], derated=True))
    assert [r for r in scene.roofs if r.derated] == []  # no efficiency: nothing to derate


def test_regions_refer_to_first_visible_machine():
    session = make([teaching(), get_preset("h100-sxm")], [custom("a", 1e12, 1e12)],
                   regions=True)
    scene = scene_of(session)
    kinds = {r.kind: r for r in scene.regions}
    assert set(kinds) == {"memory", "compute"}
    assert kinds["memory"].xs[1] == 100.0 and kinds["compute"].xs[0] == 100.0
    assert kinds["compute"].ys == (1e14, 1e14)
    assert {r.label for r in scene.regions} == {"memory-bound", "compute-bound"}

    session.hardware[0].visible = False  # now the H100 is the first visible machine
    scene = scene_of(session)
    assert {r.hw_id for r in scene.regions} == {session.hardware[1].id}
    assert scene_of(make([teaching()], [custom("a", 1e12, 1e12)])).regions == ()


def test_machine_without_operations_still_has_a_roofline():
    scene = scene_of(make([get_preset("tpu-v5e")], []))
    assert [r.name for r in roofs(scene, "compute")] == ["bf16"]
    assert len(scene.ridges) == 1 and scene.points == ()


# --------------------------------------------------------------------------------------
# points, labels, tooltips, legend


def test_points_take_operation_colour_and_machine_marker():
    session = make([teaching(), get_preset("h100-sxm")],
                   [custom("a", 1e12, 1e12), custom("b", 1e13, 1e12)])
    session.operations[1].color = "#123456"
    session.hardware[1].marker = "star"
    scene = scene_of(session)
    assert len(scene.points) == 4
    for point in scene.points:
        op = next(e for e in session.operations if e.id == point.op_id)
        hw = next(e for e in session.hardware if e.id == point.hw_id)
        assert point.color == session.color_of(op)
        assert point.marker == session.marker_of(hw)
    assert {p.color for p in scene.points if p.label == "b"} == {"#123456"}
    assert {p.marker for p in scene.points if p.hw_id == session.hardware[1].id} == {"star"}


def test_points_are_whole_point_marks():
    """Each point has every field of a point mark, and is equal to (and hashes as) the
    mark made from those fields."""
    session = make([teaching(), get_preset("h100-sxm")],
                   [custom("a", 1e12, 1e12), custom("b", 1e13, 1e12)])
    names = [f.name for f in fields(PointMark)]
    for point in scene_of(session).points:
        assert list(vars(point)) == names
        made = PointMark(**{name: getattr(point, name) for name in names})
        assert point == made and hash(point) == hash(made)
        with pytest.raises(FrozenInstanceError):
            point.x = 1.0


def test_one_label_per_operation_on_its_highest_point():
    session = make([teaching(), get_preset("h100-sxm")], [custom("a", 1e12, 1e12)])
    scene = scene_of(session)
    labelled = [p for p in scene.points if p.show_label]
    assert len(labelled) == 1
    assert labelled[0].hw_id == session.hardware[1].id  # 3.35 TB/s beats 1 TB/s at I = 1

    session.operations[0].label = False
    assert not any(p.show_label for p in scene_of(session).points)
    session.operations[0].label = True
    session.view.labels = False
    assert not any(p.show_label for p in scene_of(session).points)


def test_labels_skipped_above_the_limit_and_said_so():
    ops = [custom(f"op {i}", 1e12 * (i + 1), 1e12) for i in range(MAX_LABELS + 1)]
    scene = scene_of(make([teaching()], ops))
    assert not any(p.show_label for p in scene.points)
    assert scene.labels_suppressed == MAX_LABELS + 1
    assert any(e.kind == "note" and "labels off" in e.text for e in scene.legend)
    # the legend lists the first operations and summarises the rest
    assert len([e for e in scene.legend if e.kind == "operation"]) == MAX_LEGEND_OPERATIONS
    assert any(e.text == f"and {MAX_LABELS + 1 - MAX_LEGEND_OPERATIONS} more operations"
               for e in scene.legend)


def test_tooltip_text():
    scene = scene_of(make([teaching()], [custom("I = 0.25", 250e9, 1e12)]))
    text = scene.points[0].tooltip
    assert text.splitlines()[:2] == ["I = 0.25", "on Teaching"]
    for part in ("Intensity: 0.250 FLOP/B", "Attainable: 250 GFLOP/s", "(0.250 % of peak)",
                 "Bound: memory", "Precision: fp16, peak 100 TFLOP/s",
                 "T_lower: 1 s", "Predicted time: 1 s"):
        assert part in text, part


def test_overhead_bound_points_are_flagged():
    h100 = get_preset("h100-sxm")  # 8 µs launch overhead
    tiny = custom("tiny", 1e6, 1e6, "bf16")  # 1 MB at 3.35 TB/s = 0.3 µs
    big = custom("big", 1e15, 1e12, "bf16")
    scene = scene_of(make([h100], [tiny, big]))
    flags = {p.label: p.overhead for p in scene.points}
    assert flags == {"tiny": True, "big": False}
    assert "overhead" in next(p.tooltip for p in scene.points if p.label == "tiny")
    assert any(e.marker and "overhead" in e.text for e in scene.legend)


def test_legend_lists_visible_machines_and_operations():
    session = make([teaching(), get_preset("h100-sxm")],
                   [custom("a", 1e12, 1e12), custom("b", 1e13, 1e12)])
    session.operations[1].visible = False
    scene = scene_of(session)
    # "a" is named on the chart (its label is shown): machines only
    assert [(e.kind, e.text) for e in scene.legend] == [
        ("machine", "Teaching"), ("machine", "NVIDIA H100 SXM5 80GB")]
    session.view.labels = False
    assert [(e.kind, e.text) for e in scene_of(session).legend] == [
        ("machine", "Teaching"), ("machine", "NVIDIA H100 SXM5 80GB"), ("operation", "a")]
    assert [e.marker for e in scene.legend[:2]] == ["o", "s"]
    assert {p.label for p in scene.points} == {"a"}


def test_hidden_machine_draws_nothing():
    session = make([teaching(), get_preset("h100-sxm")], [custom("a", 1e12, 1e12)])
    session.hardware[1].visible = False
    scene = scene_of(session)
    assert {r.hw_id for r in scene.roofs} == {session.hardware[0].id}
    assert {p.hw_id for p in scene.points} == {session.hardware[0].id}
    assert [m.style_index for m in scene.machines] == [0]


def test_unplaceable_pairs_are_noted_not_drawn():
    # fp64 work cannot run at an fp32 peak (a fallback only goes to a wider precision)
    cpu = Hardware("fp32 only", compute={"fp32": 1e12}, memory={"ddr": 1e11})
    scene = scene_of(make([cpu], [custom("double", 1e12, 1e9, "fp64")]))
    assert scene.points == ()
    assert any("fp32 only" in note for note in scene.notes)


# --------------------------------------------------------------------------------------
# cursor read-out


def test_cursor_text_names_regime_of_first_visible_machine():
    scene = scene_of(make([teaching()], [custom("a", 1e12, 1e12)]))
    assert scene.cursor_text(12.3, 4.56e12) == (
        "I = 12.3 FLOP/B, 4.56 TFLOP/s — memory-bound on Teaching")
    assert scene.cursor_text(500, 1e13).endswith("compute-bound on Teaching")
    # at I = 12.3 the roof is 12.3 TFLOP/s: 45.6 TFLOP/s is above it
    assert scene.cursor_text(12.3, 45.6e12) == (
        "I = 12.3 FLOP/B, 45.6 TFLOP/s — above the roof of Teaching")
    assert scene.references[0].ridge == 100.0


def test_cursor_text_off_a_point_speaks_of_every_machine():
    """Two machines: the read-out gives each one's regime at the cursor, not the first's
    alone. Teaching: 100 TFLOP/s over 1 TB/s, ridge 100 FLOP/B; Small: 1 TFLOP/s over
    100 GB/s, ridge 10 FLOP/B."""
    small = Hardware("Small", compute={"fp32": 1e12}, memory={"dram": 1e11})
    scene = scene_of(make([teaching(), small], [custom("a", 1e12, 1e12)]))
    # I = 50: left of Teaching's ridge (memory-bound), right of Small's (compute-bound);
    # 0.5 TFLOP/s is under both roofs
    assert scene.cursor_text(50, 5e11) == (
        "I = 50.0 FLOP/B, 500 GFLOP/s — memory-bound on Teaching; compute-bound on Small")
    # 2 TFLOP/s at I = 50: under Teaching's roof (50 TFLOP/s), above Small's (1 TFLOP/s)
    assert scene.cursor_text(50, 2e12).endswith(
        "memory-bound on Teaching; above the roof of Small")
    # both memory-bound at I = 5: said once for both
    assert scene.cursor_text(5, 1e11).endswith("memory-bound on Teaching, Small")


# --------------------------------------------------------------------------------------
# every example session


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_sessions_draw_every_pair(path):
    session = load_session(path)
    pairs = evaluate_session(session, visible_only=True)
    scene = build_scene(session, pairs)
    drawn = {(p.op_id, p.hw_id): (p.x, p.y) for p in scene.points}
    expected = {(p.operation.id, p.hardware.id): (p.result.intensity, p.result.attainable_flops)
                for p in pairs if p.result is not None}
    assert drawn == expected
    lo, hi = scene.x_range
    ylo, yhi = scene.y_range
    assert all(lo < x < hi and ylo < y < yhi for x, y in drawn.values())
    assert all(lo < r.x < hi for r in scene.ridges)
    for mark in scene.machines:
        (main,) = [r for r in scene.roofs if r.hw_id == mark.hw_id and r.kind == "memory"
                   and r.emphasis == "main" and not r.derated]
        assert main.value == mark.bandwidth


def test_roof_names_do_not_depend_on_the_hash_seed():
    # the H100's fp32 matrix and vector peaks are equal (67 TFLOP/s): one roof named for
    # both, in the same order in every process ("fp32/fp32 vector"), so two exports of one
    # session are the same file; the order followed a set's, which the hash seed decides
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = ("from workbench.io.sessions import load_session\n"
            "from workbench.model.analysis import evaluate_session\n"
            "from workbench.model.chart.scene import build_scene\n"
            f"s = load_session({str(EXAMPLES[0].parent / 'real_kernels_h100_h200.yaml')!r})\n"
            "scene = build_scene(s, evaluate_session(s, visible_only=True))\n"
            "print(sorted(r.label for r in scene.roofs if 'fp32' in r.label))\n")
    root = str(Path(__file__).resolve().parents[2])
    seen = set()
    for seed in range(1, 7):
        env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": root}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout
        seen.add(out)
    assert seen == {"['fp32/fp32 vector 67 TFLOP/s', 'fp32/fp32 vector 67 TFLOP/s']\n"}
