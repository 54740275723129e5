"""Results of pairs are ordinary Result objects: equal to one built from their fields."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model.hardware import Hardware, UnknownLevel
from workbench.model.operations import Counts, Term, counts_for
from workbench.model.roofline import BOUND_NAMES, Result, evaluate_counts, evaluate_scalars

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


def test_a_renamed_result_is_a_plain_result_with_the_new_name():
    r = evaluate_counts(counts_for("gemm", m=64), MACHINES[0], None, "layer 0 up")
    other = r.renamed("layer 7 up")
    assert other == Result(**{**r.as_dict(), "operation": "layer 7 up"})
    assert repr(other) == repr(Result(**{**r.as_dict(), "operation": "layer 7 up"}))
    assert r.operation == "layer 0 up" and other is not r  # the original is unchanged
    assert r.renamed("layer 0 up") is r
    with pytest.raises(dataclasses.FrozenInstanceError):
        other.operation = "x"


def test_points_are_plain_point_marks():
    from workbench.model.analysis import evaluate_session
    from workbench.model.chart.scene import PointMark, build_scene
    from workbench.model.operations import Operation
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


_NUMBERS = st.one_of(st.sampled_from([0.0, 1.0, 1e-300, 1e300, math.inf]),
                     st.floats(min_value=0.0, max_value=1e30, allow_nan=False),
                     st.integers(min_value=0, max_value=10**24))


@settings(max_examples=200, deadline=None)
@given(f=_NUMBERS, b=_NUMBERS,
       p=st.one_of(st.floats(1e-3, 1e18), st.integers(1, 10**18)),
       w=st.one_of(st.floats(0.0, 1e16), st.integers(0, 10**16)),
       overhead=st.one_of(st.none(), st.floats(0.0, 1e-3), st.integers(0, 2)),
       efficiency=st.one_of(st.none(), st.floats(0.05, 1.0), st.just(1)))
def test_result_fields_are_the_scalar_evaluation(f, b, p, w, overhead, efficiency):
    """Every field is what evaluate_scalars gives, as a float (the bound by name)."""
    hw = Hardware("m", compute={"bf16": p}, memory={"hbm": w}, launch_overhead=overhead,
                  efficiency=efficiency)
    counts = Counts([Term("flop", "f", "F", "F", f)], [Term("read", "b", "B", "B", b)], "bf16")
    r = evaluate_counts(counts, hw, None, "op")
    s = evaluate_scalars(f, b, p, w, overhead, efficiency)
    for key, value in s.items():
        got = getattr(r, key)
        if key == "bound":
            assert got == BOUND_NAMES[value]
            continue
        assert type(got) is float, key
        assert got == float(value) or (math.isnan(got) and math.isnan(value)), key
    assert (r.precision, r.precision_used, r.level) == ("bf16", "bf16", "hbm")
    assert (r.efficiency, r.launch_overhead_s) == (efficiency, overhead)
