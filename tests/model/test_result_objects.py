"""Results of pairs are ordinary Result objects: equal to one built from their fields."""

from __future__ import annotations

import dataclasses

import pytest

from workbench.model.hardware import Hardware, UnknownLevel
from workbench.model.operations import counts_for
from workbench.model.roofline import Result, evaluate_counts

MACHINES = [
    Hardware("floats", compute={"bf16": 1e15}, memory={"hbm": 3e12}, launch_overhead=5e-6,
             efficiency=0.8),
    Hardware("whole numbers", compute={"bf16": 10**15}, memory={"hbm": 3 * 10**12},
             launch_overhead=1, efficiency=1),
    Hardware("shared name", compute={"bf16": 1e15}, memory={"hbm": 3e12, "ici": 1e11},
             interconnect={"ici": 5e10}),
]


@pytest.mark.parametrize("hw", MACHINES, ids=lambda h: h.name)
@pytest.mark.parametrize("level", [None, "hbm", "ici"])
def test_result_is_a_plain_result(hw, level):
    counts = counts_for("gemm", m=64)
    if level is not None and level not in hw.levels:
        with pytest.raises(UnknownLevel):
            evaluate_counts(counts, hw, level, "op")
        return
    r = evaluate_counts(counts, hw, level, "op")
    fields = [f.name for f in dataclasses.fields(Result)]
    assert list(r.as_dict()) == fields
    rebuilt = Result(**r.as_dict())
    assert r == rebuilt and hash(r) == hash(rebuilt) and repr(r) == repr(rebuilt)
    assert all(type(getattr(r, f)) is type(getattr(rebuilt, f)) for f in fields)
    assert r.bandwidth == hw.levels[level or hw.main_memory]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.flops = 0.0


def test_points_are_plain_point_marks():
    from workbench.model.analysis import evaluate_session
    from workbench.model.operations import Operation
    from workbench.model.scene import PointMark, build_scene
    from workbench.model.session import HardwareEntry, OperationEntry, Session

    session = Session()
    for hw in MACHINES[:2]:
        session.hardware.append(HardwareEntry(hw))
    session.operations.append(OperationEntry(Operation("gemm", {"m": 64}, "g")))
    points = build_scene(session, evaluate_session(session)).points
    assert len(points) == 2
    fields = [f.name for f in dataclasses.fields(PointMark)]
    for point in points:
        rebuilt = PointMark(**{f: getattr(point, f) for f in fields})
        assert list(vars(point)) == fields
        assert point == rebuilt and hash(point) == hash(rebuilt) and repr(point) == repr(rebuilt)
        assert point.result is rebuilt.result
        with pytest.raises(dataclasses.FrozenInstanceError):
            point.x = 0.0
