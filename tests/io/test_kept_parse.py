"""What a shipped file reads as is kept in the user's cache folder, and taken from there only
while the file's bytes are the same: the same data and lines as a parse, never stale, and a
cache that cannot be read or written is no error."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.io import yaml_parser, yamlio
from workbench.io.errors import InputError
from workbench.io.presets import examples_dir, presets_dir
from workbench.io.sessions import load_session

ROOT = Path(__file__).resolve().parents[2]


def _kept_files() -> list[Path]:
    folder = yamlio.kept_folder()
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _no_parse(monkeypatch) -> None:
    def refuse(*_args, **_kwargs):
        raise AssertionError("parsed again")
    monkeypatch.setattr(yaml_parser, "compose", refuse)


@pytest.mark.parametrize("path", sorted(examples_dir().glob("*.yaml"))
                         + sorted(presets_dir().glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_file_reads_back_as_parsed(path, monkeypatch):
    parsed = yamlio.read_yaml(path, limit=yamlio.MAX_SESSION_BYTES)
    assert yamlio.read_yaml(path, limit=yamlio.MAX_SESSION_BYTES, keep=True) == parsed
    assert len(_kept_files()) == 1
    _no_parse(monkeypatch)
    again = yamlio.read_yaml(path, limit=yamlio.MAX_SESSION_BYTES, keep=True)
    assert (again.data, again.lines, again.file) == (parsed.data, parsed.lines, str(path))
    assert again.line(("title",)) == parsed.line(("title",))


def test_a_file_changed_in_place_is_read_again(tmp_path, monkeypatch):
    path = tmp_path / "m.yaml"
    path.write_text("a: 1\nb: [x, y]\n", encoding="utf-8")
    assert yamlio.read_yaml(path, keep=True).data == {"a": 1, "b": ["x", "y"]}
    # the same size, the same modification time: only the bytes differ
    stat = path.stat()
    path.write_text("a: 2\nb: [x, z]\n", encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    doc = yamlio.read_yaml(path, keep=True)
    assert doc.data == {"a": 2, "b": ["x", "z"]}
    assert len(_kept_files()) == 2  # (one for each content)
    _no_parse(monkeypatch)
    assert yamlio.read_yaml(path, keep=True).data == {"a": 2, "b": ["x", "z"]}


def test_a_damaged_or_foreign_kept_file_is_ignored(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    yamlio.read_yaml(path, keep=True)
    (kept,) = _kept_files()
    for damaged in (b"", b"\x00garbage", kept.read_bytes()[:-3],
                    marshal.dumps(("other key", b"a: 1\n", {"a": 5}, {}))):
        kept.write_bytes(damaged)
        assert yamlio.read_yaml(path, keep=True).data == {"a": 1}


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path, monkeypatch):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    path = tmp_path / "m.yaml"
    path.write_text("a: [1, 2]\n", encoding="utf-8")
    assert yamlio.read_yaml(path, keep=True).data == {"a": [1, 2]}
    assert yamlio.read_yaml(path, keep=True).data == {"a": [1, 2]}


def test_a_bad_file_is_refused_every_time_and_not_kept(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("a: 1\na: 2\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(InputError, match="appears twice") as caught:
            yamlio.read_yaml(path, keep=True)
        assert caught.value.file == str(path) and caught.value.line == 2
    assert _kept_files() == []


def test_a_user_file_is_not_kept(tmp_path):
    example = examples_dir() / "llama_ffn.yaml"
    path = tmp_path / "mine.yaml"
    path.write_text(example.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    load_session(path)
    kept = [marshal.loads(f.read_bytes())[1] for f in _kept_files()]
    assert path.read_bytes() not in kept
    load_session(example.parent / ".." / "examples" / example.name)
    kept = [marshal.loads(f.read_bytes())[1] for f in _kept_files()]
    assert example.read_bytes() in kept  # (the shipped example, however its path is written)


def test_the_second_start_on_the_example_does_not_import_pyyaml(tmp_path):
    """The application's start on its built-in example: the first parses (and keeps) the
    session and its machines; the next reads them back and never imports PyYAML."""
    script = ("import sys\n"
              f"sys.path.insert(0, {str(ROOT)!r})\n"
              "from workbench.ui.window.launch import start\n"
              "session = start().document.session\n"
              "print(repr(session.operations), repr(session.hardware))\n"
              "print('yaml' in sys.modules, flush=True)\n"
              "import os; os._exit(0)\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CACHE_HOME=str(tmp_path / "cache"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), HOME=str(tmp_path))
    first, second = (subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                    capture_output=True, text=True).stdout.splitlines()
                     for _ in range(2))
    assert (first[-1], second[-1]) == ("True", "False")
    assert first[0] == second[0] and "NVIDIA H100" in first[0]  # (the same session)
    assert len(list((tmp_path / "cache" / "roofline-workbench" / "parsed").iterdir())) >= 2


def test_the_cache_keeps_the_newest_files_only(tmp_path, monkeypatch):
    monkeypatch.setattr(yamlio, "MOST_KEPT", 3)
    paths = []
    for i in range(5):
        path = tmp_path / f"m{i}.yaml"
        path.write_text(f"a: {i}\n", encoding="utf-8")
        yamlio.read_yaml(path, keep=True)
        paths.append(path)
    kept = [marshal.loads(f.read_bytes())[1] for f in _kept_files()]
    assert sorted(kept) == [b"a: 2\n", b"a: 3\n", b"a: 4\n"]
    assert yamlio.read_yaml(paths[0], keep=True).data == {"a": 0}  # (read, and kept again)
    assert len(_kept_files()) == 3


def test_nothing_is_kept_where_the_reader_cannot_see_its_own_files(tmp_path, monkeypatch):
    monkeypatch.setattr(yamlio, "__file__", str(tmp_path / "frozen" / "yamlio.py"))
    path = tmp_path / "m.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    assert yamlio.read_yaml(path, keep=True).data == {"a": 1}
    assert _kept_files() == []


def test_no_home_folder_is_no_error(tmp_path, monkeypatch):
    def no_home():
        raise RuntimeError("Could not determine home directory.")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    path = tmp_path / "m.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    assert yamlio.read_yaml(path, keep=True).data == {"a": 1}
