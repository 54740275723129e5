"""A session's snapshot (what a save or an autosave writes, taken on the window's thread)
takes the values of the measured points it took last time again for the same points, and
works out those of the points that were replaced, added or moved: the text it makes is the
text a fresh snapshot makes, whatever changed in between."""

from __future__ import annotations

import dataclasses

import pytest

from workbench.io import sessions
from workbench.io.presets import get_preset
from workbench.io.sessions import PointValues, dumps_session, snapshot_session, snapshot_text
from workbench.model.measured import Measurement
from workbench.model.session import HardwareEntry, Session


def _session(n: int) -> Session:
    session = Session(title="profile")
    session.hardware.append(HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm"))
    session.measurements = [
        Measurement(name=f"kernel {i}", time_s=(i + 1) * 1e-6, flops=1e9 + i, bytes=1e6,
                    levels={"l2": 2e6, "dram": 1e6} if i % 2 else None, run="r1")
        for i in range(n)]
    return session


def _renamed(ms, i):
    return ms[:i] + [dataclasses.replace(ms[i], name="renamed")] + ms[i + 1:]


CHANGES = {
    "nothing": lambda ms: list(ms),
    "one renamed": lambda ms: _renamed(ms, 3),
    "one edited in place of another": lambda ms: _renamed(ms, 0),
    "one removed": lambda ms: ms[:2] + ms[3:],
    "one added": lambda ms: ms + [Measurement(name="new", time_s=1e-3, flops=1.0, bytes=2.0)],
    "reordered": lambda ms: ms[::-1],
    "all new": lambda ms: [m.copy() for m in ms],
    "none left": lambda ms: [],
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_snapshot_after_any_change_of_the_points_is_a_fresh_one(change, monkeypatch):
    session = _session(12)
    values = PointValues()
    first = snapshot_session(session, values=values)
    assert snapshot_text(first) == dumps_session(session)
    before = list(session.measurements)
    session.measurements = CHANGES[change](before)
    fresh = snapshot_session(session)
    made = []
    count = sessions._point_values

    def counted(m):
        made.append(m)
        return count(m)

    monkeypatch.setattr(sessions, "_point_values", counted)
    again = snapshot_session(session, values=values)
    monkeypatch.undo()
    assert again == fresh  # (the points' values too)
    assert snapshot_text(again) == dumps_session(session)
    # only the points it had not seen are looked at
    assert {id(m) for m in made} == {id(m) for m in session.measurements
                                     if not any(m is b for b in before)}
