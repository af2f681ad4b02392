"""How a command ends early: Ctrl-C / SIGTERM, a second one, and the one line.

In the training loop the first SIGINT, SIGTERM or SIGHUP only sets a flag: the loop
finishes the current step (or stops a validation within a segment), saves last.pt and
exits with one line. A second one stops at once without saving; the last checkpoint on
disk is kept (writes are atomic). Anywhere else SIGTERM is a Ctrl-C: it raises, so that
what a KeyboardInterrupt tidies (the run's lock, temporary files) is tidied. A signal
that would raise inside an import waits until the import is done (`deferred`).
"""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager


class Stop(Exception):
    """The run ends early; `code` is the exit status, the message the one line."""

    def __init__(self, msg: str, code: int):
        super().__init__(msg)
        self.code = code


class Terminated(KeyboardInterrupt):
    """SIGTERM outside the training loop: caught wherever Ctrl-C is (`stopped`)."""


class Abort(BaseException):
    """A second SIGINT / SIGTERM: stop now, without saving."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


# what stops the loop with a checkpoint: Ctrl-C, SIGTERM (a scheduler), SIGHUP (the
# terminal or ssh session closed: by default it killed the run with no last.pt)
LOOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def signals_caught(stop_flag: dict):
    """While inside: SIGINT / SIGTERM / SIGHUP set stop_flag["signal"]; a second raises
    Abort (and, in case torch.save turns that into its own error, sets "abort")."""
    def handler(signum, frame):
        name = signal.Signals(signum).name
        if stop_flag.get("signal"):
            if deferred(signum, frame):
                return
            stop_flag["abort"] = name
            raise Abort(name)
        stop_flag["signal"] = name

    old = {}
    if threading.current_thread() is threading.main_thread():  # signals reach it only
        # one ignored by whoever started us (`trap '' TERM`, a script's `cmd &`) stays
        # ignored, as before and after the loop and in the other commands
        old = {sig: signal.signal(sig, handler) for sig in LOOP_SIGNALS
               if signal.getsignal(sig) != signal.SIG_IGN}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def after_loop(stop_flag: dict, run) -> None:
    """A signal that came in the last step's saves or curves, after the loop's last
    look at the flag: the run is complete, and asked to stop. Its line and status
    (it exited 0, with the summary, as if nothing had come)."""
    name = stop_flag.get("signal")
    if name:
        raise Stop(f"{name} after the last step: {run.dir}/last.pt (step {run.step}/"
                   f"{run.tc.steps}) and best.pt are saved and complete",
                   exit_code(name))


def _bootstrap(frame) -> bool:
    return frame.f_code.co_filename.startswith("<frozen importlib._bootstrap")


def in_import(frame) -> bool:
    """Is the main thread, interrupted at `frame`, inside an import statement?"""
    while frame is not None and not _bootstrap(frame):
        frame = frame.f_back
    return frame is not None


_pending: list[int] = []  # signals that landed inside an import, taken after it


def deferred(signum: int, frame) -> bool:
    """A signal that would raise inside an import waits until the outermost import
    returns; True if so. Raised inside an import, the exception can be swallowed by a
    bare except (torch imports numpy so, and a run went on training), or leave a
    module half-imported, so that its next import fails with an unrelated traceback
    (a RecursionError, an AttributeError of numpy's)."""
    if not in_import(frame):
        return False
    if not _pending:
        sys.setprofile(_after_import)  # this thread's: the handler runs on the main one
    _pending.append(signum)
    return True


def _after_import(frame, event, arg):
    """While signals wait: as the outermost import returns, their handlers run, as
    if the signals came just outside it (what they raise is raised there)."""
    if event == "return" and _bootstrap(frame) and not in_import(frame.f_back):
        sys.setprofile(None)
        while _pending:
            signum = _pending.pop(0)
            handler = signal.getsignal(signum)
            if callable(handler):
                handler(signum, frame.f_back)
            elif handler == signal.SIG_DFL:  # put back meanwhile: what it would do
                signal.raise_signal(signum)


def exit_code(name: str) -> int:
    return 128 + getattr(signal, name)


def stopped(e: KeyboardInterrupt) -> tuple[str, int, str]:
    """The words, exit status and line start for a Ctrl-C (130, after the terminal's
    ^C) or a SIGTERM (143)."""
    if isinstance(e, Terminated):
        return "terminated (SIGTERM)", exit_code("SIGTERM"), ""
    return "interrupted", exit_code("SIGINT"), "\n"


@contextmanager
def sigterm_raises():
    """While inside: SIGTERM raises Terminated, once; a second one ends the process
    as SIGTERM does by default. Not ignored: an import that swallows the exception
    (a bare except in a lazy import) must not leave a process SIGTERM cannot stop,
    and signals_caught, which takes over in the loop, would read SIG_IGN as ignored
    by whoever started us, which stays ignored, as SIGINT does in Python."""
    def handler(signum, frame):
        if deferred(signum, frame):
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated()

    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        yield
        return
    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
