"""One way to write a file, used for everything the product writes (sessions, autosaves,
machine files, figures, CSV tables), and the folders of the user's home it writes its own
files to (:func:`user_folder`).

:func:`write_atomic` writes a temporary file in the destination's folder, flushes it to disk
and renames it over the destination, so a crash, a full disk or a killed process leaves
either the old file or the new one, never a mixture and never nothing. It also leaves the
file as the user had it:

- a symbolic link is followed: its target is replaced (atomically) and the link stays a link;
- a file with other hard links is written in place after a safe copy (``NAME.bak``), so that
  every name keeps showing it; without the copy the save is refused (its own ``NAME.bak``,
  left linked to it by a save that was killed, is not such a link);
- an existing file keeps its permission bits, and its owner and group where the platform
  allows it (always when running as root, the group when it is one of the user's); when the
  owner cannot be kept, or no backup could be kept, the caller is told (``notes``);
- a new file gets ``0666`` less the umask (``0600`` for private files such as autosaves);
- a read-only file, or something that is not a regular file, is refused with
  :class:`WriteRefused` (a ``PermissionError``) and left untouched;
- every temporary name is unique (process id and a random part), so overlapping saves of one
  file never remove each other's temporary file; a temporary file left by a process that
  died is removed by the next save.

Errors are ``OSError`` whose ``filename`` is the path the caller gave (never a temporary
name), so ``f"{exc.filename}: {exc.strerror}"`` is a message a user can act on.
:func:`check_writable` raises the same errors without writing, for callers that want to
fail before long work (``measure -o``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time
from pathlib import Path

__all__ = ["WriteRefused", "check_writable", "write_atomic", "write_target", "user_folder"]

_STALE_AGE_S = 24 * 3600  # a temporary file this old is stale whoever made it
_PREFIX_BYTES = 100  # keeps temporary names under the usual 255-byte limit


def user_folder(kind: str) -> Path:
    """The product's own folder of ``kind`` in the user's home, as the platform names it:
    ``"data"`` (kept: presets measured here) or ``"cache"`` (anything in it may be deleted at
    any time). ``$XDG_DATA_HOME/roofline-workbench`` (default ``~/.local/share/…``) and
    ``$XDG_CACHE_HOME/roofline-workbench`` (default ``~/.cache/…``) on Linux;
    ``~/Library/Application Support/…`` and ``~/Library/Caches/…`` on macOS;
    ``%APPDATA%\\…`` and ``%LOCALAPPDATA%\\…`` on Windows."""
    if kind not in ("data", "cache"):
        raise ValueError(f"no user folder of kind {kind!r}")
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / ("Application Support" if kind == "data" else "Caches")
    elif sys.platform == "win32":
        if kind == "data":
            base = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
        else:
            base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif kind == "data":
        base = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    return base / "roofline-workbench"


class WriteRefused(PermissionError):
    """The destination must not be replaced: it is read-only or not a regular file."""


def write_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: ``path`` with symbolic links followed."""
    return Path(os.path.realpath(path))


def check_writable(path: str | os.PathLike[str]) -> Path:
    """Raise ``OSError`` (``filename`` = ``path``) when :func:`write_atomic` to ``path``
    would fail for a reason known in advance: a missing or unwritable folder, a read-only
    file, a destination that is not a regular file. Writes nothing. Returns the target."""
    target, _ = _inspect(path)
    folder = target.parent
    try:
        fd, tmp = _create_temp(folder, target.name, 0o600)
    except OSError as exc:
        raise _named(exc, path) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    return target


def write_atomic(path: str | os.PathLike[str], payload: bytes, backup: bool = False,
                 new_mode: int = 0o666, notes: list[str] | None = None) -> Path:
    """Replace the file at ``path`` (its target, for a symbolic link) with ``payload`` in
    one step. With ``backup`` the previous version is kept as ``NAME.bak`` beside the target.
    ``new_mode`` is the mode a new file gets, less the umask. ``notes``, when given, gets one
    line for each thing the user should know: the file's owner could not be kept, no backup
    could be kept. A file with other hard links is written in place after a safe copy
    (:func:`_write_in_place`), so that every name keeps showing it. Returns the file
    written."""
    notes = [] if notes is None else notes
    target, old = _inspect(path)
    folder = target.parent
    _remove_stale_temporaries(folder, target.name)
    if old is not None and old.st_nlink > 1 and not _linked_to_own_backup(target, old):
        _write_in_place(path, target, payload, backup, notes)
        return target
    tmp = None
    try:
        fd, tmp = _create_temp(folder, target.name, new_mode if old is None else 0o600)
        try:
            if old is not None:
                _keep_owner_and_mode(fd, old, path, notes)
            _write_all(fd, payload)
        finally:
            os.close(fd)
        if backup and old is not None:
            bak = target.with_name(target.name + ".bak")
            try:
                _copy_for_backup(target, bak)
            except OSError as exc:
                notes.append(f"{path}: no backup was kept ({_bak_problem(bak, exc)})")
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise _named(exc, path) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _fsync_dir(folder)
    return target


def _linked_to_own_backup(target: Path, old: os.stat_result) -> bool:
    """Whether the target's one other name is its own ``NAME.bak``: a save keeps the backup
    as a hard link and then renames the new file over the target, so a save killed between
    the two leaves them one file. That is no hard link of the user's: the next save
    replaces the target as ever (written in place, a save killed in the middle would leave
    the target half written)."""
    if old.st_nlink != 2:
        return False
    try:
        bak = os.stat(target.with_name(target.name + ".bak"), follow_symlinks=False)
    except OSError:
        return False
    return (bak.st_ino, bak.st_dev) == (old.st_ino, old.st_dev)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def _bak_problem(bak: Path, exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return f"the name {bak.name!r} is too long for this folder"
    return f"{bak.name}: {exc.strerror or exc}"


def _write_in_place(path: str | os.PathLike[str], target: Path, payload: bytes, backup: bool,
                    notes: list[str]) -> None:
    """Write a file that has other hard links: a rename would leave them showing the old
    version, so the file is first copied to ``NAME.bak`` (a copy, not a link), then written
    in place; a write that fails puts the copy's contents back. Without the safe copy
    the save is refused with :class:`WriteRefused`: nothing is written. The copy stays as
    the backup when ``backup``."""
    import shutil

    bak = target.with_name(target.name + ".bak")
    try:
        with contextlib.suppress(FileNotFoundError):
            bak.unlink()
        shutil.copy2(target, bak)
        with open(bak, "rb+") as handle:
            os.fsync(handle.fileno())
    except OSError as exc:
        links = os.stat(target).st_nlink - 1
        raise WriteRefused(
            exc.errno or errno.EIO,
            f"the file has {links} other hard link{'s' * (links != 1)}; it is written in "
            f"place after a safe copy, and the copy could not be made "
            f"({_bak_problem(bak, exc)}); nothing was written", str(path)) from None
    try:
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_BINARY", 0))
        try:
            _write_all(fd, payload)
            os.ftruncate(fd, len(payload))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        with contextlib.suppress(OSError):  # the old contents back, from the safe copy
            fd = os.open(target, os.O_WRONLY | getattr(os, "O_BINARY", 0))
            try:
                _write_all(fd, bak.read_bytes())
                os.ftruncate(fd, bak.stat().st_size)
            finally:
                os.close(fd)
        raise _named(exc, path) from None
    if not backup:
        with contextlib.suppress(OSError):
            bak.unlink()


# ---------------------------------------------------------------------------------------------


def _inspect(path: str | os.PathLike[str]) -> tuple[Path, os.stat_result | None]:
    """The target and its status (None when it does not exist yet); refuses what must not
    be replaced."""
    target = write_target(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        if not target.parent.is_dir():
            folder = target.parent if os.path.islink(path) else Path(path).parent
            raise FileNotFoundError(errno.ENOENT, f"the folder {folder} does not exist",
                                    str(path)) from None
        return target, None
    except OSError as exc:
        raise _named(exc, path) from None
    if not stat.S_ISREG(st.st_mode):
        what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise WriteRefused(errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL,
                           f"it is {what}; choose a file name", str(path))
    if not st.st_mode & 0o222:
        raise WriteRefused(errno.EACCES, "the file is read-only; save under another name or "
                           "make it writable first", str(path))
    if not _is_root() and not os.access(target, os.W_OK):
        raise WriteRefused(errno.EACCES, "you do not have permission to change this file",
                           str(path))
    return target, st


def _user(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (user {uid})"
    except (ImportError, KeyError):
        return f"user {uid}"


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _named(exc: OSError, path: str | os.PathLike[str]) -> OSError:
    """``exc`` naming the caller's path (not a temporary file or a link target)."""
    if isinstance(exc, WriteRefused) or exc.filename == str(path):
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))  # a subclass by errno


def _temp_prefix(name: str) -> str:
    while len(os.fsencode(name)) > _PREFIX_BYTES:
        name = name[:-1]
    return f".{name}."


def _create_temp(folder: Path, name: str, mode: int) -> tuple[int, str]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f"{_temp_prefix(name)}{os.getpid()}-"
                                   f"{os.urandom(8).hex()}.tmp")
        try:
            return os.open(tmp, flags, mode), tmp  # the umask applies to ``mode``
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unique temporary name", str(folder))


def _keep_owner_and_mode(fd: int, old: os.stat_result, path: str | os.PathLike[str] = "",
                         notes: list[str] | None = None) -> None:
    notes = [] if notes is None else notes
    if hasattr(os, "fchown"):
        me = os.fstat(fd)
        if (me.st_uid, me.st_gid) != (old.st_uid, old.st_gid):
            try:
                os.fchown(fd, old.st_uid, old.st_gid)
            except OSError:  # not root: the group still, when it is one of ours
                with contextlib.suppress(OSError):
                    os.fchown(fd, -1, old.st_gid)
                if me.st_uid != old.st_uid:
                    notes.append(f"{path}: the file belonged to {_user(old.st_uid)}; saved, "
                                 f"it belongs to you now (only an administrator can keep "
                                 f"another user's file theirs)")
    if hasattr(os, "fchmod"):  # after chown, which may clear set-id bits
        with contextlib.suppress(OSError):
            os.fchmod(fd, stat.S_IMODE(old.st_mode))


def _remove_stale_temporaries(folder: Path, name: str) -> None:
    """Temporary files of this name left by a save that was killed: those of a process that
    no longer runs (or in an older naming), or older than a day."""
    prefix = _temp_prefix(name)
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(".tmp")):
            continue
        owner = entry.name[len(prefix):-4].split("-", 1)[0]
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > _STALE_AGE_S
        except OSError:
            continue
        if old or (os.name == "posix" and not (owner.isdigit() and process_alive(int(owner)))):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` is running (a zombie, exited but not yet reaped, is not; one
    that cannot be asked about is taken to be)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True


def _copy_for_backup(src: Path, dst: Path) -> None:
    # A folder of that name is left alone (a copy would go inside it); a link of that name
    # is replaced, not written through (it may point anywhere, or at nothing yet).
    if dst.is_dir() and not dst.is_symlink():
        raise IsADirectoryError(errno.EISDIR, "a folder has that name", str(dst))
    with contextlib.suppress(FileNotFoundError):
        dst.unlink()
    # A hard link is instant and leaves ``src`` in place until the atomic rename.
    try:
        os.link(src, dst)
    except OSError:
        import shutil

        shutil.copy2(src, dst)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):  # (a folder that cannot be synced: the file is)
            os.fsync(fd)
    finally:
        os.close(fd)
