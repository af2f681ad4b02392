"""One process per run directory: an advisory lock held for the life of a run.

Two `train --resume DIR` at once would both train, log every step twice and race on
last.pt. The lock is `flock` on DIR/.lock: the kernel drops it when the process ends,
kill -9 included, so a crashed run never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os

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
                owner = os.read(fd, 32).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise UsageError(
                    f"{run_dir} is in use by another train process (pid {owner}); "
                    "wait for it or stop it first") from None
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
