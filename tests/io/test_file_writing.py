"""Every file the product writes stays as the user had it: mode, owner and group kept, links
followed, read-only files refused, new files by the umask, whole or not at all, overlapping
saves that never break each other; and CSV cells a spreadsheet would run are made text."""

from __future__ import annotations

import errno
import os
import stat
import threading

import pytest

from workbench.io import atomic
from workbench.io.atomic import WriteRefused, check_writable, write_atomic
from workbench.io.autosave import Autosave
from workbench.io.sessions import dumps_session, load_session, save_session
from workbench.io.tables import spreadsheet_cell
from workbench.io.user_presets import save_machine
from workbench.model.hardware import Hardware
from workbench.model.operations import Operation
from workbench.model.session import OperationEntry, Session


def _session(title: str, ops: int = 1) -> Session:
    s = Session(title=title)
    for i in range(ops):
        s.operations.append(OperationEntry(Operation("gemm", {"m": i + 1, "n": 64, "k": 64},
                                                     f"op {i}")))
    return s


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """Set the umask for one test, and put the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def test_a_read_only_session_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "frozen.yaml"
    save_session(_session("the original"), path)
    os.chmod(path, 0o444)
    before = path.read_bytes()
    with pytest.raises(PermissionError) as info:
        save_session(_session("an edit"), path)
    assert info.value.filename == str(path)
    assert "read-only" in info.value.strerror
    assert path.read_bytes() == before and _mode(path) == 0o444
    assert load_session(path).title == "the original"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frozen.yaml"]  # no temp, no .bak


def test_an_existing_file_keeps_its_mode(tmp_path):
    path = tmp_path / "shared.yaml"
    save_session(_session("first"), path)
    for mode in (0o640, 0o644, 0o664, 0o600):
        os.chmod(path, mode)
        save_session(_session(f"mode {mode:o}"), path)
        assert _mode(path) == mode, oct(_mode(path))
        assert load_session(path).title == f"mode {mode:o}"


def test_another_users_file_keeps_its_owner_and_group(tmp_path):
    assert os.geteuid() == 0, "this check changes a file's owner: run the tests as root"
    path = tmp_path / "theirs.yaml"
    save_session(_session("theirs"), path)
    os.chown(path, 1234, 1234)
    os.chmod(path, 0o664)
    save_session(_session("edited by root"), path)
    st = os.stat(path)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 1234, 0o664)
    assert load_session(path).title == "edited by root"


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_new_files_follow_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    save_session(_session("new"), tmp_path / "new.yaml")
    write_atomic(tmp_path / "figure.svg", b"<svg/>")
    save_machine(Hardware(name="Box", compute={"fp32": 1e12}, memory={"dram": 1e11}),
                 path=tmp_path / "box.yaml")
    for name in ("new.yaml", "figure.svg", "box.yaml"):
        assert _mode(tmp_path / name) == expected, (name, oct(_mode(tmp_path / name)))


def test_an_autosave_is_private_whatever_the_umask(tmp_path, umask):
    umask(0o022)
    path = Autosave(tmp_path / "autosave").write(_session("unsaved"), None)
    assert _mode(path) == 0o600


def test_a_symlinked_session_stays_a_link_and_its_target_gets_the_save(tmp_path):
    real = tmp_path / "projects" / "run.yaml"
    real.parent.mkdir()
    save_session(_session("old content"), real)
    os.chmod(real, 0o640)
    link = tmp_path / "run.yaml"
    link.symlink_to(real)
    save_session(_session("new content"), link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert load_session(real).title == "new content"
    assert _mode(real) == 0o640
    assert load_session(real.with_name("run.yaml.bak")).title == "old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["projects", "run.yaml"]


def test_a_link_to_a_read_only_file_is_refused(tmp_path):
    real = tmp_path / "real.yaml"
    real.write_text("title: kept\n")
    os.chmod(real, 0o444)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    with pytest.raises(WriteRefused):
        save_session(_session("nope"), link)
    assert real.read_text() == "title: kept\n" and link.is_symlink()


def test_a_folder_or_device_is_never_replaced(tmp_path):
    folder = tmp_path / "fig.png"
    folder.mkdir()
    with pytest.raises(WriteRefused) as info:
        write_atomic(folder, b"png")
    assert info.value.filename == str(folder) and "folder" in info.value.strerror
    assert folder.is_dir()
    with pytest.raises(WriteRefused):
        write_atomic("/dev/null", b"x")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_failed_write_keeps_the_old_file_and_names_the_users_path(tmp_path, monkeypatch):
    """A full disk in the middle of the write: the old file stays whole, no temporary file
    is left, the error names the file the user chose (not a hidden temporary name)."""
    path = tmp_path / "results.csv"
    path.write_bytes(b"old,table\n")
    real_write = os.write

    def full_disk(fd, data):
        real_write(fd, bytes(data[:4096]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "write", full_disk)
    with pytest.raises(OSError) as info:
        write_atomic(path, b"x" * 100_000)
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(path)
    assert path.read_bytes() == b"old,table\n"
    assert [p.name for p in tmp_path.iterdir()] == ["results.csv"]


def test_a_folder_that_refuses_new_files_is_reported_with_the_users_path(tmp_path,
                                                                        monkeypatch):
    real_open = os.open

    def refuse(name, flags, mode=0o777, **kw):
        if str(name).endswith(".tmp"):
            raise PermissionError(errno.EACCES, "Permission denied", name)
        return real_open(name, flags, mode, **kw)

    monkeypatch.setattr(atomic.os, "open", refuse)
    target = tmp_path / "m.yaml"
    for call in (lambda: check_writable(target), lambda: write_atomic(target, b"x")):
        with pytest.raises(PermissionError) as info:
            call()
        assert info.value.filename == str(target)
    assert not target.exists()


def test_check_writable_refuses_a_read_only_file_without_touching_it(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("id: m\n")
    os.chmod(path, 0o444)
    with pytest.raises(WriteRefused):
        check_writable(path)
    os.chmod(path, 0o644)
    assert check_writable(path) == path.resolve()
    assert [p.name for p in tmp_path.iterdir()] == ["m.yaml"] and path.read_text() == "id: m\n"


def test_overlapping_saves_of_one_file_never_break_each_other(tmp_path, monkeypatch):
    """Several saves of one file at once (threads of one app, or two apps): each keeps its
    own temporary file, every save succeeds and the file is one of the versions, whole."""
    path = tmp_path / "busy.yaml"
    sessions = [_session(f"version {i}", 40 + i) for i in range(4)]
    real_fsync = os.fsync
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (real_fsync(fd), os.sched_yield()))
    errors: list[BaseException] = []
    start = threading.Barrier(len(sessions))

    def saver(session):
        start.wait()
        try:
            for _ in range(25):
                save_session(session, path, backup=False)
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=saver, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    loaded = load_session(path)
    assert dumps_session(loaded) in {dumps_session(s) for s in sessions}
    assert [p.name for p in tmp_path.iterdir()] == ["busy.yaml"]


def test_a_temporary_file_of_a_running_save_is_kept_and_one_of_a_dead_process_removed(
        tmp_path):
    path = tmp_path / "s.yaml"
    live = tmp_path / f".s.yaml.{os.getpid()}-0123456789abcdef.tmp"  # a save in progress
    dead = tmp_path / ".s.yaml.999999999-0123456789abcdef.tmp"  # no such process
    live.write_text("being written")
    dead.write_text("half a file")
    save_session(_session("saved"), path)
    assert live.read_text() == "being written"
    assert not dead.exists()


@pytest.mark.parametrize("value, expected", [
    ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
    ("+1+2", "'+1+2"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\t=1"), ("\r=1", "'\r=1"),
    ("FFN up", "FFN up"), ("a=b", "a=b"), ("", ""),
    (-1.5, -1.5), (-3, -3), (float("-inf"), float("-inf")), (None, None),
])
def test_spreadsheet_cells_make_formulas_text_and_keep_numbers(value, expected):
    assert spreadsheet_cell(value) == expected
    assert type(spreadsheet_cell(value)) is type(value)


def test_every_file_is_written_by_the_one_atomic_writer():
    """Only workbench/io/atomic.py creates, renames or copies files: any other writer would
    skip the mode, owner, link and read-only rules above."""
    import re

    from conftest import ROOT

    writes = re.compile(r"os\.replace\(|os\.rename\(|mkstemp\(|NamedTemporaryFile\(|"
                        r"\.write_text\(|\.write_bytes\(|shutil\.copy|"
                        r"open\([^)]*[\"'](?:w|a|x|wb|ab|xb|r\+|w\+)[\"']")
    found = []
    for path in sorted((ROOT / "workbench").rglob("*.py")):
        if path.name == "atomic.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if writes.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []


# -- a save never writes a session it could not open again -----------------------------------


def _session_of_size(megabytes: float) -> Session:
    """A session whose file is about ``megabytes`` large: measured points with long sources
    (each within the limits a user can enter)."""
    from workbench.model.measured import Measurement

    per_point = 1_950  # a source near its 2,000-character limit
    count = int(megabytes * 2**20 / per_point) + 1
    session = Session(title="big")
    session.measurements = [
        Measurement(name=f"kernel {i}", flops=1e9, bytes=1e6, time_s=1e-3,
                    source="profiler run " + "x" * (per_point - 40))
        for i in range(count)]
    return session


def test_a_session_over_the_old_5_mb_cap_saves_and_opens_again(tmp_path):
    session = _session_of_size(6)
    path = tmp_path / "big.yaml"
    save_session(session, path)
    assert path.stat().st_size > 5 * 2**20
    again = load_session(path)
    assert len(again.measurements) == len(session.measurements)
    assert again.measurements[-1].source == session.measurements[-1].source


def test_a_session_too_large_to_open_is_refused_at_save_and_the_file_kept(tmp_path, monkeypatch):
    from workbench.io import sessions

    path = tmp_path / "kept.yaml"
    path.write_text("schema_version: 2\ntitle: kept\n", encoding="utf-8")
    monkeypatch.setattr(sessions, "MAX_SESSION_BYTES", 2**20)  # 1 MB, to stay quick
    with pytest.raises(OSError) as refused:
        sessions.save_session(_session_of_size(1.5), path)
    assert refused.value.errno == errno.EFBIG
    assert "at most 1 MB" in str(refused.value) and "1.5 MB" in str(refused.value)
    assert path.read_text(encoding="utf-8") == "schema_version: 2\ntitle: kept\n"
    assert [p.name for p in tmp_path.iterdir()] == ["kept.yaml"]  # no temporary left
