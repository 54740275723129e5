"""Files you can trust: atomic saves under kill -9, backups, frozen old files, migrations,
autosave and recovery after a crash."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import ROOT

from workbench.io import sessions as sessions_module
from workbench.io.autosave import Autosave, find_recoverable
from workbench.io.errors import InputError
from workbench.io.sessions import dumps_session, load_session, loads_session, save_session
from workbench.model.operations import Operation
from workbench.model.session import OperationEntry, Session

FROZEN = ROOT / "tests" / "fixtures" / "session_v1_frozen.yaml"


def test_frozen_v1_session_loads_forever():
    s = load_session(FROZEN)
    assert s.title == "Frozen v1 session"
    assert [e.operation.kind for e in s.operations] == [
        "gemm", "gemm", "attention", "attention", "elementwise", "norm", "softmax", "reduction",
        "custom"]
    h100, toy = s.hardware
    assert h100.preset == "h100-sxm" and h100.hardware.efficiency == 0.8
    assert toy.hardware.memory == {"hbm": 1e12, "l2": 5e12}
    assert toy.hardware.interconnect == {"link": 50e9}
    assert toy.hardware.launch_overhead == pytest.approx(5e-6)
    assert not toy.visible and toy.marker == "s"
    saxpy = s.operations[4].operation
    assert saxpy.params["n"] == 100_000_000  # "1e8" is a string to YAML, a number to us
    c = saxpy.counts()
    assert c.bytes == pytest.approx(1e8 * 16)  # x, y read, y written, write-allocate read
    assert s.operations[8].operation.memory_level == "l2"
    assert s.operations[8].operation.counts().flops == 20e12
    assert s.operations[3].visible is False and s.operations[6].label is False
    assert s.view.theme == "dark" and s.view.regions and s.view.x_range == (0.01, 100000)


def test_newer_schema_is_refused_naming_the_version_this_app_reads(tmp_path):
    path = tmp_path / "future.yaml"
    path.write_text("schema_version: 7\noperations: []\n")
    with pytest.raises(InputError) as info:
        load_session(path)
    message = str(info.value)
    assert "future.yaml:1: schema_version" in message
    assert "schema_version 7" in message and "reads schema_version 2" in message


def test_migrations_run_in_order_as_plain_dict_functions(monkeypatch):
    calls = []

    def one_to_two(data):
        calls.append(1)
        data = dict(data)
        data["title"] = data.get("old_title", "")
        data.pop("old_title", None)
        return data

    def two_to_three(data):
        calls.append(2)
        return {**data, "notes": "migrated"}

    monkeypatch.setattr(sessions_module, "SCHEMA_VERSION", 3)
    monkeypatch.setattr(sessions_module, "MIGRATIONS", {1: one_to_two, 2: two_to_three})
    s = loads_session("schema_version: 1\nold_title: Old name\noperations: []\n")
    assert calls == [1, 2]
    assert s.title == "Old name" and s.notes == "migrated"


def _session(title: str, ops: int) -> Session:
    s = Session(title=title)
    for i in range(ops):
        s.operations.append(OperationEntry(Operation("gemm", {"m": i + 1, "n": 64, "k": 64},
                                                     f"op {i}")))
    return s


def test_save_keeps_a_backup_and_cleans_stale_temporaries(tmp_path):
    path = tmp_path / "s.yaml"
    save_session(_session("first", 1), path)
    (tmp_path / ".s.yaml.abc123.tmp").write_text("half a file")
    save_session(_session("second", 2), path)
    assert load_session(path).title == "second"
    assert load_session(tmp_path / "s.yaml.bak").title == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml", "s.yaml.bak"]


_WRITER = textwrap.dedent("""
    import os, stat, sys
    sys.path.insert(0, {root!r})
    _fsync = os.fsync
    held = [True]
    def held_fsync(fd):
        # the temporary file is written and not yet renamed over the target: the middle of a
        # save. Say so and wait to go on (or be killed); after "run", every save runs freely.
        if held[0] and stat.S_ISREG(os.fstat(fd).st_mode):
            print("written", flush=True)
            held[0] = sys.stdin.readline().strip() != "run"
        _fsync(fd)
    os.fsync = held_fsync
    from workbench.io.sessions import save_session, loads_session
    a = loads_session(open({a!r}).read())
    b = loads_session(open({b!r}).read())
    print("ready", flush=True)
    i = 0
    while True:
        save_session(a if i % 2 else b, {target!r})
        i += 1
""")


def test_killing_a_save_at_random_moments_never_leaves_a_broken_file(tmp_path):
    """A writer saves version B, A, B, … over one file until it is killed: half the time at
    a random moment, half the time in the middle of a save (its file written, not yet renamed)
    after a chosen number of whole saves. The file is always one whole version, and the one
    the last whole save wrote. The writer says where it is, so that no kill depends on how
    fast this machine saves."""
    a, b = _session("version A", 1500), _session("version B", 1000)
    (tmp_path / "a.yaml").write_text(dumps_session(a))
    (tmp_path / "b.yaml").write_text(dumps_session(b))
    target = tmp_path / "target.yaml"
    save_session(a, target)
    script = _WRITER.format(root=str(ROOT), a=str(tmp_path / "a.yaml"),
                            b=str(tmp_path / "b.yaml"), target=str(target))
    rng = random.Random(1234)
    titles = []
    expected = "version A"
    for n in range(16):
        proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        mid_save = n % 2 == 0
        whole_saves = n // 2 % 3 if mid_save else 0  # 0, 1, 2, 0, …: each version last
        for _ in range(whole_saves):
            assert proc.stdout.readline().strip() == "written"
            proc.stdin.write("go\n")
            proc.stdin.flush()
        assert proc.stdout.readline().strip() == "written"
        if not mid_save:
            proc.stdin.write("run\n")
            proc.stdin.flush()
            time.sleep(rng.uniform(0.0, 0.8))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
        loaded = load_session(target)  # raises if the file were half-written
        assert loaded.title in ("version A", "version B")
        assert len(loaded.operations) == (1500 if loaded.title == "version A" else 1000)
        if mid_save:
            # the writer saved B first: the last of 1 or 2 whole saves was B or A
            if whole_saves:
                expected = "version B" if whole_saves % 2 else "version A"
            assert loaded.title == expected, (n, whole_saves)
            # the interrupted save's temporary file is left behind, beside the whole target
            assert list(tmp_path.glob(".target.yaml.*.tmp")), n
        expected = loaded.title
        titles.append(loaded.title)
    assert set(titles) == {"version A", "version B"}


def test_autosave_of_a_crashed_process_is_offered_and_recovers_the_edits(tmp_path):
    folder = tmp_path / "autosave"
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from workbench.io.autosave import Autosave
        from workbench.io.sessions import loads_session
        s = loads_session("schema_version: 1\\ntitle: unsaved work\\noperations:\\n"
                          "  - {{kind: gemm, name: edited, m: 77, n: 8, k: 8}}\\n")
        Autosave(Path({str(folder)!r})).write(s, Path("/somewhere/original.yaml"))
        os._exit(1)  # a crash: no clean close, the autosave stays
    """)
    assert subprocess.run([sys.executable, "-c", script]).returncode == 1
    mine = Autosave(folder)
    mine.write(_session("still running", 1), None)  # a live app's autosave is not offered
    found = find_recoverable(folder)
    assert len(found) == 1
    assert found[0].original == "/somewhere/original.yaml"
    recovered = found[0].load()
    assert recovered.title == "unsaved work"
    assert recovered.operations[0].operation.params["m"] == 77
    found[0].discard()
    assert find_recoverable(folder) == []
    mine.remove()
    assert not os.listdir(folder)


@pytest.mark.parametrize("damage", [{"pid": None}, {"saved_at": "soon"}, {"saved_at": None}])
def test_an_autosave_with_a_damaged_header_does_not_stop_the_others(tmp_path, damage):
    """The start-up looks for autosaves: one whose first line was damaged is passed over,
    the others are still offered."""
    import json

    folder = tmp_path / "autosave"
    good, bad = Autosave(folder), Autosave(folder)
    for slot, title in ((good, "good"), (bad, "damaged")):
        slot.write(_session(title, 1), None)
        header, _, rest = slot.path.read_text(encoding="utf-8").partition("\n")
        prefix, _, meta = header.partition("{")
        meta = json.loads("{" + meta) | {"pid": 0}
        if slot is bad:
            meta |= damage
        slot.path.write_text(f"{prefix}{json.dumps(meta)}\n{rest}", encoding="utf-8")
    assert [item.load().title for item in find_recoverable(folder)] == ["good"]


def test_an_autosave_whose_process_number_went_to_another_program_is_offered(tmp_path):
    """After a restart of the computer the crashed app's process number may belong to a
    program started since: its autosave is still offered."""
    import json

    folder = tmp_path / "autosave"
    left = Autosave(folder)
    left.write(_session("unsaved before the restart", 5), tmp_path / "work.yaml")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        header, _, rest = left.path.read_text(encoding="utf-8").partition("\n")
        prefix, _, meta = header.partition("{")
        # written a minute before the program now holding its number started
        meta = json.loads("{" + meta) | {"pid": other.pid, "saved_at": time.time() - 60}
        left.path.write_text(f"{prefix}{json.dumps(meta)}\n{rest}", encoding="utf-8")
        found = find_recoverable(folder)
        assert [item.path for item in found] == [left.path]
        assert found[0].load().title == "unsaved before the restart"
        # with no time of writing, a live process is taken for its writer: its window's
        # work is not offered to another window
        del meta["saved_at"]
        left.path.write_text(f"{prefix}{json.dumps(meta)}\n{rest}", encoding="utf-8")
        assert find_recoverable(folder) == []
    finally:
        other.kill()
        other.wait()
