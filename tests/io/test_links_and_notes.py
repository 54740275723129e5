"""Saving keeps a session's hard links (written in place after a safe copy, or refused
when no copy can be made), and says what it could not keep: another user's ownership, a
backup whose name is too long."""

from __future__ import annotations

import os

import pytest

from workbench.io import atomic
from workbench.io.atomic import WriteRefused
from workbench.io.sessions import load_session, save_session
from workbench.model.session import Session


def _session(title: str) -> Session:
    return Session(title=title)


def test_a_hard_linked_session_keeps_its_link(tmp_path):
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    save_session(_session("before"), first)
    os.link(first, second)
    save_session(_session("after"), first)
    assert os.path.samefile(first, second) and os.stat(first).st_nlink == 2
    assert load_session(second).title == "after"  # the other name shows the save
    assert load_session(tmp_path / "a.yaml.bak").title == "before"  # the safe copy, kept
    assert not os.path.samefile(first, tmp_path / "a.yaml.bak")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_backup_left_linked_by_a_killed_save_is_no_hard_link_of_the_users(tmp_path):
    """A save keeps the backup as a hard link, then renames the new file over the target: a
    save killed between the two leaves NAME and NAME.bak one file. The next save replaced
    it in place as if the user had linked it (a kill in the middle of that leaves the
    target half written; the file-safety test that kills saves at random met it); it is
    replaced by a rename, as ever, the old version kept as the backup."""
    target, bak = tmp_path / "a.yaml", tmp_path / "a.yaml.bak"
    save_session(_session("before"), target)
    os.link(target, bak)  # (where the killed save stopped)
    was = os.stat(target).st_ino
    save_session(_session("after"), target)
    assert os.stat(target).st_ino != was  # (a new file renamed over it, not written in)
    assert os.stat(target).st_nlink == 1
    assert load_session(target).title == "after"
    assert load_session(bak).title == "before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "a.yaml.bak"]


def test_without_a_backup_the_safe_copy_goes(tmp_path):
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    save_session(_session("before"), first)
    os.link(first, second)
    save_session(_session("after"), first, backup=False)
    assert load_session(second).title == "after"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]


def test_a_hard_linked_session_without_room_for_a_safe_copy_is_refused(tmp_path):
    first = tmp_path / ("s" * 247 + ".yaml")  # 252 bytes: NAME.bak would be 256
    second = tmp_path / "b.yaml"
    save_session(_session("before"), first)
    os.link(first, second)
    with pytest.raises(WriteRefused) as caught:
        save_session(_session("after"), first)
    message = str(caught.value)
    assert "1 other hard link" in message and "too long" in message
    assert "nothing was written" in message
    assert load_session(first).title == load_session(second).title == "before"
    assert os.path.samefile(first, second)


def test_a_backup_name_too_long_is_said(tmp_path):
    path = tmp_path / ("s" * 247 + ".yaml")
    save_session(_session("before"), path)
    notes: list[str] = []
    save_session(_session("after"), path, notes=notes)
    assert load_session(path).title == "after"
    (note,) = notes
    assert "no backup was kept" in note and "too long" in note


def test_a_backup_name_taken_by_a_folder_is_said_and_the_folder_left_alone(tmp_path):
    path = tmp_path / "s.yaml"
    save_session(_session("before"), path)
    (tmp_path / "s.yaml.bak").mkdir()
    notes: list[str] = []
    save_session(_session("after"), path, notes=notes)
    assert load_session(path).title == "after"
    assert list((tmp_path / "s.yaml.bak").iterdir()) == []  # no copy put inside it
    (note,) = notes
    assert "no backup was kept" in note and "s.yaml.bak" in note and "folder" in note


def test_a_backup_name_taken_by_a_link_replaces_the_link_not_what_it_points_to(tmp_path):
    path = tmp_path / "s.yaml"
    save_session(_session("before"), path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    pointed = elsewhere / "other.yaml"  # not there yet: a dangling link
    os.symlink(pointed, tmp_path / "s.yaml.bak")
    save_session(_session("after"), path)
    assert not pointed.exists()  # nothing written through the link
    assert not (tmp_path / "s.yaml.bak").is_symlink()
    assert load_session(tmp_path / "s.yaml.bak").title == "before"


def test_an_owner_that_cannot_be_kept_is_said(tmp_path, monkeypatch):
    assert os.geteuid() == 0, "this check changes a file's owner: run the tests as root"
    path = tmp_path / "theirs.yaml"
    save_session(_session("theirs"), path)
    os.chown(path, 1234, 1234)
    real = os.fchown

    def not_root(fd, uid, gid):  # as for a user who is not an administrator
        if uid != -1:
            raise PermissionError(1, "Operation not permitted")
        real(fd, uid, gid)

    monkeypatch.setattr(atomic.os, "fchown", not_root)
    notes: list[str] = []
    save_session(_session("mine now"), path, notes=notes)
    assert load_session(path).title == "mine now"
    (note,) = notes
    assert "belonged to user 1234" in note and "belongs to you now" in note
    assert os.stat(path).st_gid == 1234  # the group is kept
