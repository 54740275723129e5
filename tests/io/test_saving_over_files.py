"""Saving over files and autosaving: another program's temporary files are left alone, a file
whose owner cannot be kept is still saved, an autosave that is not a file is named."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.io import atomic
from workbench.io.errors import InputError
from workbench.io.presets import get_preset
from workbench.model.session import HardwareEntry, Session


def test_asking_whether_a_process_runs_leaves_it_running():
    # the child answers a line once it has run again after the probe: a signal delivered by
    # the probe would end it before it could (a probe is signal 0: nothing is delivered)
    with subprocess.Popen([sys.executable, "-c", "import sys; print(sys.stdin.readline(), "
                           "end='', flush=True); sys.stdin.read()"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        try:
            assert atomic.process_alive(child.pid)
            child.stdin.write("still running\n")
            child.stdin.flush()
            assert child.stdout.readline() == "still running\n"
        finally:
            child.kill()
    assert not atomic.process_alive(child.pid)


def test_saving_over_a_file_whose_owner_cannot_be_kept_still_saves(tmp_path, monkeypatch):
    target = tmp_path / "s.yaml"
    target.write_text("old\n", encoding="utf-8")
    real = target.stat()
    fake = type("Stat", (), {"st_uid": real.st_uid + 1, "st_gid": real.st_gid + 1,
                             "st_mode": real.st_mode})()

    def refuse(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(atomic.os, "fchown", refuse)
    with open(target, "rb+") as handle:
        atomic._keep_owner_and_mode(handle.fileno(), fake)  # not root: keeps what it can
    assert target.read_text(encoding="utf-8") == "old\n"


def test_an_autosave_that_is_not_a_file_names_what_it_should_be(tmp_path):
    from workbench.io.autosave import Recoverable

    folder = tmp_path / "autosave-1-1.yaml"
    folder.mkdir()
    with pytest.raises(InputError) as err:
        Recoverable(folder, None, 0.0, 1).load()
    assert "is a folder, not a session file" in str(err.value)


def test_a_background_autosave_writes_the_session_and_it_can_be_recovered(tmp_path):
    from workbench.io.autosave import Autosave, Recoverable

    session = Session(title="unsaved work")
    session.hardware = [HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]
    saver = Autosave(tmp_path)
    saver.write_in_background(session, None)
    saver.wait()
    back = Recoverable(saver.path, None, 0.0, 0).load()
    assert back.title == "unsaved work" and back.hardware[0].preset == "h100-sxm"


@pytest.mark.parametrize("stop_after", [0, 1, 2])
def test_a_save_cancelled_before_its_file_is_written_leaves_the_file_as_it_was(
        tmp_path, stop_after):
    """Cancel is asked at each step of the formatting (every 2,048 measured points) and once
    more before the file is written: a save stopped at any of them writes nothing; one
    never stopped writes the file (``stop_after``: the questions answered "go on")."""
    from workbench.io.errors import SaveCancelled
    from workbench.io.sessions import dumps_session, save_snapshot, snapshot_session
    from workbench.model.measured import Measurement

    session = Session(title="t")
    session.hardware.append(HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm"))
    session.measurements = [Measurement(name=f"k{i}", time_s=1e-3, flops=1e9 + i, bytes=1e6)
                            for i in range(3000)]  # (two steps: at points 0 and 2,048)
    target = tmp_path / "s.yaml"
    target.write_text("old\n", encoding="utf-8")
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > stop_after

    snapshot = snapshot_session(session, target)
    with pytest.raises(SaveCancelled):
        save_snapshot(snapshot, target, cancelled=cancelled)
    assert target.read_text(encoding="utf-8") == "old\n"
    assert not target.with_name("s.yaml.bak").exists()
    assert len(asked) == stop_after + 1
    save_snapshot(snapshot, target, cancelled=lambda: False)
    assert target.read_text(encoding="utf-8") == dumps_session(session, target)
