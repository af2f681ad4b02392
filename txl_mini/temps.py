"""The temporaries files.atomic_path writes, each locked while its writer lives.

A temporary left by a writer that died (kill -9, a power cut) is removed by the next
sweep beside the same file (files.remove_stale_temps), at once, while another
process's write in progress stays: its writer holds an exclusive `flock` on it from
the moment it is made until it is renamed or removed, and a flock ends with its
process, kill -9 included. (An age only guessed: a temporary 60 s old was dead, so
a `--resume` right after the kill left it for good.)
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; a sweep there goes by age (NO_LOCK_AGE_S)
    fcntl = None

NO_LOCK_AGE_S = 600  # without flock: a temporary untouched this long has no writer


def make_locked(tmp: str) -> int | None:
    """Make the new temporary `tmp`, 0600, and lock it: the descriptor holding its
    flock, to close once `tmp` is renamed or removed (None where no flock is had).
    FileExistsError if `tmp` is there (another writer's), or if a sweep removed it
    between our open and our lock: draw another name."""
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:  # a umask without the owner's write bit (0222) made it 0400:
        os.fchmod(fd, 0o600)  # the writer's open(tmp, "w") was refused
        if fcntl is not None:
            try:  # blocks only while a sweep holds it, to remove it
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:  # a file system without flock: unlocked (and unswept)
                pass
            else:
                if _same(fd, tmp):
                    return fd
                raise FileExistsError(errno.EEXIST, "swept before it was locked", tmp)
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


def _same(fd: int, tmp: str) -> bool:
    """`tmp` is still the file open as `fd` (no sweep removed it)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(tmp))
    except FileNotFoundError:
        return False


def sweep(folder: Path, ours: str) -> list[str]:
    """Remove the dead temporaries in `folder`: regular files (by lstat) whose whole
    name matches the pattern `ours`, whose writer is gone (remove_if_dead). Returns
    the removed paths. Listed, not globbed: a glob took `[` and `*` in the file's
    name as patterns, and a symlink, a FIFO or a folder so named is not one we made."""
    try:
        with os.scandir(folder) as entries:
            found = [Path(e.path) for e in entries if re.fullmatch(ours, e.name)
                     and e.is_file(follow_symlinks=False)]
    except OSError:  # no such folder (nothing to sweep), or not ours to list
        return []
    removed = []
    for tmp in found:
        try:
            if remove_if_dead(tmp):
                removed.append(str(tmp))
        except OSError:  # gone already, or not ours to remove
            pass
    return removed


def remove_if_dead(tmp: Path) -> bool:
    """Remove `tmp` if no process writes it now: its flock is free (and held while we
    unlink it, so a writer that has just made it sees it gone: make_locked). Without
    flock: if it is NO_LOCK_AGE_S old. True if removed; an OSError: left as it is."""
    if fcntl is None:
        if time.time() - tmp.stat().st_mtime < NO_LOCK_AGE_S:
            return False
        tmp.unlink()
        return True
    # never blocks: a FIFO put there since it was listed opens at once (a plain
    # O_RDONLY waited for a writer forever), and a symlink is refused (ELOOP)
    fd = os.open(tmp, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # not a temporary we made
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # its writer lives
            return False
        tmp.unlink()
        return True
    finally:
        os.close(fd)
