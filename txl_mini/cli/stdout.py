"""Standard output and error that cannot be written: `>/dev/full`, or closed (`>&-`).

A command's own `except OSError` is about its files; a write to stdout that fails
raises StdoutFailed instead, which is no OSError, so that no command takes it for a
full disk ('cannot write No space left on device' said train) and cli/__init__.py
says it in one line, exit 1. A closed pipe stays a BrokenPipeError (quiet, 141).

Standard error (`2>/dev/full`, `2>&-`, a reader that left) is only for progress and
notes: what cannot be written there is dropped (QuietStderr), and the command goes
on to its result on stdout and its own exit status.
"""

from __future__ import annotations

import codecs
import os
import select
import sys
from contextlib import contextmanager


class StdoutFailed(Exception):
    """Standard output could not be written; the message says why."""


def _escape(e: UnicodeEncodeError) -> tuple[str, int]:
    """What a stream's encoding cannot write, escaped as cli/errors.py's printable
    escapes it: a byte of a file name the locale could not decode (os.fsdecode's
    surrogate) as \\xff, any other character as \\xe9, \\u4e2d."""
    bad = e.object[e.start:e.end]
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff" else
                   c.encode("ascii", "backslashreplace").decode() for c in bad), e.end


codecs.register_error("txl_mini_escape", _escape)


def writable(text: str, stream) -> str:
    """`text` as `stream` can write it (see _escape). Under PYTHONIOENCODING=ascii a
    run folder named é ended train with "'ascii' codec can't encode character"; and
    a file name's byte 0xff showed as \\udcff on stderr, \\xff where printable had
    escaped it, and raw on stdout."""
    if text.isascii():
        return text
    enc = getattr(stream, "encoding", None) or "utf-8"
    return text.encode(enc, "txl_mini_escape").decode(enc)


class GuardedStdout:
    """sys.stdout while a command runs: writes that fail raise StdoutFailed."""

    def __init__(self, stream):
        self._stream = stream  # None: Python found file descriptor 1 closed

    def write(self, text: str) -> int:
        return self._call("write", writable(text, self._stream))

    def flush(self) -> None:
        if self._stream is not None:  # closed: nothing was written, nothing to flush
            self._call("flush")

    def _call(self, name: str, *args):
        if self._stream is None:
            raise StdoutFailed("cannot write to standard output: it is closed")
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise StdoutFailed("cannot write to standard output: "
                               f"{e.strerror or e}") from None

    def __getattr__(self, name: str):  # isatty, encoding, fileno ...
        return getattr(self._stream, name)


class QuietStderr:
    """sys.stderr while a command runs: a write that fails sends descriptor 2 to
    /dev/null, so that this line and all that follow are dropped, and no OSError
    reaches a command (train took one from its bar for a full disk and stopped)."""

    def __init__(self, stream):  # None: main() called where descriptor 2 is closed
        self._stream = (stream if stream is not None else
                        open(os.devnull, "w", encoding="utf-8"))

    def write(self, text: str) -> int:
        try:
            return self._stream.write(writable(text, self._stream))
        except OSError:
            self._drop()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            self._drop()

    def _drop(self) -> None:
        try:
            silence(self._stream.fileno())
            self._stream.flush()  # what is still buffered goes to /dev/null now
        except (OSError, ValueError):  # no descriptor: each write is dropped alone
            pass

    def __getattr__(self, name: str):  # isatty, encoding, fileno ...
        return getattr(self._stream, name)


def _hold(fd: int) -> bool:
    """With descriptor `fd` closed, the next file opened (the run's lock, a checkpoint)
    would get it, and whatever writes to `fd` would write into that file: it is held
    on /dev/null instead. True if it was closed."""
    try:
        os.fstat(fd)
        return False
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        return True


def hold_fd_1() -> None:
    """Descriptor 1 held if closed (`>&-`): see _hold."""
    _hold(1)


def hold_fd_2() -> None:
    """As hold_fd_1, for descriptor 2 (`2>&-`), and sys.stderr, None then, becomes
    /dev/null: print(..., file=None) writes to stdout, and tqdm cannot write to None.
    What would be shown on stderr is dropped."""
    if _hold(2):
        sys.stderr = open(2, "w", buffering=1, encoding="locale",
                          errors="backslashreplace", closefd=False)


def silence(fd: int) -> None:
    """What is still buffered for `fd` goes nowhere (no second error at exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


@contextmanager
def fd_2_hushed():
    """Descriptor 2 on /dev/null for the block, then back as it was, even if a signal
    ends the block. For C++ that writes there itself, past sys.stderr and --quiet
    (torch.profiler's kineto: 'USDT:... profiler_start'); keep the block short, as
    what Python writes to stderr inside it is dropped too."""
    sys.stderr.flush()  # what was written before still shows
    saved = os.dup(2)
    try:
        silence(2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def output_blocked() -> bool:
    """Can standard output or error take no byte now (a pipe whose reader stopped, a
    terminal paused with Ctrl-S)? A command blocked writing its last text must still
    end on a signal (stop.finishing)."""
    for fd in (1, 2):
        try:
            if not select.select([], [fd], [], 0)[1]:
                return True
        except (OSError, ValueError):  # closed: nothing waits on it
            pass
    return False
