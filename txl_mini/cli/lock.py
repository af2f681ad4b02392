"""One process per run directory: an advisory lock held for the life of a run.

Two `train --resume DIR` at once would both train, log every step twice and race on
last.pt. The lock is `flock` on DIR/.lock: the kernel drops it when the process ends,
kill -9 included, so a crashed run never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os

from .errors import typed
from .options import UsageError

LOCK_NAME = ".lock"


class RunLock:
    """Hold DIR/.lock (exclusive, non-blocking); `release()` removes it again."""

    def __init__(self, run_dir: str):
        self.path = os.path.join(run_dir, LOCK_NAME)
        while True:
            fd = _open(self.path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                refused = _in_use(run_dir, fd)
                os.close(fd)
                raise refused from None
            try:  # a holder that released and removed the file in between: try again
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        try:  # who holds it, for the refusal's message; a full disk only loses that
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        except OSError:
            pass
        self.fd = fd

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.path)  # still locked: nobody else holds this inode
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


def refuse_unborn(run_dir: str) -> None:
    """`--resume DIR` where DIR holds only .lock: a live run building its corpus
    (config.json comes after it) is refused as RunLock refuses it, else the run was
    stopped before it began, and a new run there takes the folder (rundir._check_new
    reads one holding only .lock as empty). The lock is tried shared and let go."""
    try:
        fd = os.open(os.path.join(run_dir, LOCK_NAME), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:  # gone since, or a link: 'stopped before it began' all the same
        fd = None
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _in_use(run_dir, fd) from None
    finally:
        if fd is not None:
            os.close(fd)
    raise UsageError(f"--resume {run_dir}: its run was stopped before it began (no "
                     f"config.json yet); run it again with --run-dir {typed(run_dir)} "
                     f"(and its other options) in place of --resume {typed(run_dir)}")


def _in_use(run_dir: str, fd: int) -> UsageError:
    """The refusal for `run_dir`, whose lock (open at `fd`) another process holds."""
    owner = os.read(fd, 32).decode(errors="replace").strip() or "?"
    return UsageError(f"{run_dir} is in use by another train process (pid {owner}); "
                      "wait for it or stop it first")


def _open(path: str) -> int:
    """DIR/.lock opened for the pid; never through a symlink: the pid (and release's
    unlink) would land on whatever file the link points to."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError:
        if os.path.islink(path):
            raise UsageError(f"{path} is a symbolic link, not train's lock file; "
                             "remove it") from None
        raise
