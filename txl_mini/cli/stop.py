"""How a command ends early: Ctrl-C / SIGTERM, a second one, and the one line.

In the training loop the first SIGINT, SIGTERM or SIGHUP only sets a flag: the loop
finishes the step (or stops a validation within a segment), saves last.pt and exits
with one line. A second stops at once without saving; the last checkpoint on disk is
kept (writes are atomic). Elsewhere SIGTERM and SIGHUP are a Ctrl-C: they raise, so
that what a KeyboardInterrupt tidies (the run's lock, temporary files) is tidied. A
signal that would raise inside an import waits until it is done (`deferred`). The
first signal names the stop and its status; a second kind is the same request."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager

from .bars import close_bars
from .stdout import output_blocked


class Stop(Exception):
    """The run ends early; `code` is the exit status, the message the one line."""

    def __init__(self, msg: str, code: int):
        super().__init__(msg)
        self.code = code


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP outside the training loop: caught wherever Ctrl-C is."""

    def __init__(self, name: str = "SIGTERM"):
        super().__init__(name)
        self.name = name


class Abort(BaseException):
    """A second SIGINT / SIGTERM / SIGHUP: stop now, unsaved; `name` (the first's)
    sets the status, `again` says both."""

    def __init__(self, name: str, second: str | None = None):
        super().__init__(name)
        self.name = name
        self.again = (f"{name} again" if second in (None, name)
                      else f"{name}, then {second}")


# stop the loop with a checkpoint: Ctrl-C, SIGTERM (a scheduler), SIGHUP (ssh closed)
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
            stop_flag["abort"] = (stop_flag["signal"], stop_flag.pop("other", name))
            raise Abort(*stop_flag["abort"])
        if not first_stop(name):  # another came first; its handler runs next
            stop_flag["other"] = name
        stop_flag["signal"] = _first[0]

    old = {}  # one ignored by whoever started us (`trap '' TERM`, `cmd &`) stays so
    if threading.current_thread() is threading.main_thread():  # signals reach it only
        old = {sig: signal.signal(sig, handler) for sig in LOOP_SIGNALS
               if signal.getsignal(sig) != signal.SIG_IGN}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


@contextmanager
def held():
    """While inside, a signal that would raise waits (`deferred`), taken as it ends:
    DIR/.lock made but not yet where the run's tidying finds it (a signal there left
    it). A flag, not a signal mask: torch's threads take masked signals."""
    _holding.append(True)
    try:
        yield
    finally:
        _holding.pop()
        if _pending and not _holding and not in_import(sys._getframe()):
            _take_pending(sys._getframe())


def finishing() -> None:
    """The command's last text goes out next (--help, an error's line): a signal now
    waits for good, unless that text cannot go out (`output_blocked`); run_process's."""
    if _arrivals:
        _finishing.append(True)


def after_loop(stop_flag: dict, run) -> None:
    """A signal in the last step's saves or curves, after the loop's last look at the
    flag: the run is complete and asked to stop (it exited 0, as if nothing had come);
    on every rank (one alone exited 143, the others wrote --out and exited 0)."""
    from .ddp import any_rank  # torch: this module loads before it (cli/__init__.py)
    if any_rank(stop_flag.get("signal"), run.device):
        name = stop_flag.setdefault("signal", "SIGTERM")  # another rank got it
        raise Stop(f"{name} after the last step: {run.dir}/last.pt (step {run.step}/"
                   f"{run.tc.steps}) and best.pt are saved and complete",
                   exit_code(name))


def _bootstrap(frame) -> bool:  # a frame of Python's import machinery
    return frame.f_code.co_filename.startswith("<frozen importlib._bootstrap")


def in_import(frame) -> bool:
    """Is the main thread, interrupted at `frame`, inside an import statement?"""
    while frame is not None and not _bootstrap(frame):
        frame = frame.f_back
    return frame is not None


_pending: list[int] = []  # signals that landed inside an import, taken after it
_holding: list[bool] = []  # inside held(): signals wait too; _finishing, for good
_finishing: list[bool] = []
_held_since: list[float] = []  # when the first of them landed
_gave_up: list[bool] = []  # an import held a signal too long: raise inside it after all
STUCK_S = 5.0  # longer than any import takes (torch's: seconds; matplotlib spun on)


def deferred(signum: int, frame) -> bool:
    """A signal that would raise inside an import waits until the outermost import
    returns; True if so. Raised there, a bare except can swallow it (torch imports
    numpy so: a run trained on) or a module is left half-imported (its next import an
    unrelated traceback). A second signal STUCK_S after the first finds the import
    stuck: the waiting ones are taken there and then. So do held() and finishing()."""
    if _holding or (_finishing and not output_blocked()):
        _pending.append(signum)
        return True
    if not in_import(frame) or _gave_up:
        return False
    if not _pending:
        sys.setprofile(_after_import)  # this thread's: the handler runs on the main one
        _held_since[:] = [time.monotonic()]
    _pending.append(signum)
    if time.monotonic() - _held_since[0] > STUCK_S:
        _gave_up.append(True)
        sys.setprofile(None)
        _take_pending(frame)  # the first one's handler raises, inside the import
    return True


def _after_import(frame, event, arg):
    """While signals wait: as the outermost import returns, their handlers run, as
    if the signals came just outside it (what they raise is raised there)."""
    if event == "return" and _bootstrap(frame) and not in_import(frame.f_back):
        sys.setprofile(None)
        _take_pending(frame.f_back)


def _take_pending(frame) -> None:
    taken, _pending[:] = _pending[:], []  # those after one that raises: the same stop
    for signum in taken:
        handler = signal.getsignal(signum)
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:  # put back meanwhile: what it would do
            signal.raise_signal(signum)


def exit_code(name: str) -> int:  # 130, 143, 129: as the shell shows a killed one
    return 128 + getattr(signal, name)


_first: list[str] = []  # the signal that stopped the command, once one has
_arrivals: list[int] = []  # the pipe's read end that Python writes signals to


def watch_arrivals() -> None:
    """Signals are written to a pipe as they arrive (their order). Python runs the
    handlers of signals pending together by number, SIGINT (2) before SIGTERM (15):
    SIGTERM, then a Ctrl-C 10 ms later while a library loaded, said 'interrupted'."""
    if threading.current_thread() is threading.main_thread() and not _arrivals:
        r, w = os.pipe()
        for fd in (r, w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        _arrivals.append(r)


def _first_arrived() -> str | None:
    """The first stop signal arrived since last asked, if the pipe is watched."""
    try:
        got = os.read(_arrivals[0], 4096) if _arrivals else b""
    except BlockingIOError:  # nothing arrived (a handler run by hand)
        got = b""
    return next((signal.Signals(n).name for n in got if n in LOOP_SIGNALS), None)


def first_stop(name: str) -> bool:
    """Is signal `name` the first to stop the command (or the same again)? The first
    sets the status and words; a second kind is the same request (it replaced the
    first's exception while that was handled: SIGTERM said 'interrupted')."""
    if not _first:
        _first.append(_first_arrived() or name)
    return _first[0] == name


WORDS = {"SIGTERM": "terminated (SIGTERM)", "SIGHUP": "hung up (SIGHUP)"}


def stopped(e: KeyboardInterrupt) -> tuple[str, int, str]:
    """The words (then the exception's notes: what got done all the same), the exit
    status and line start for a Ctrl-C (130; after ^C, a new line), SIGTERM, SIGHUP."""
    closed = close_bars()  # else one freed later drew itself below our line (bench)
    done = "".join(f" {note}" for note in getattr(e, "__notes__", ()))
    if isinstance(e, Terminated):
        return WORDS[e.name] + done, exit_code(e.name), ""
    return "interrupted" + done, exit_code("SIGINT"), "" if closed else "\n"


@contextmanager
def sigterm_raises():
    """While inside: SIGTERM or SIGHUP raises Terminated, once; a second one ends the
    process as the signal does by default (SIGHUP killed `data offline` with no line,
    a temporary file left). Not ignored: a bare except in a lazy import must not leave
    a process SIGTERM cannot stop, and signals_caught would read SIG_IGN as ignored by
    whoever started us (`nohup`), which stays ignored, as SIGINT does in Python."""
    def handler(signum, frame):
        if deferred(signum, frame):
            return
        name = signal.Signals(signum).name
        if not first_stop(name):  # another signal is stopping us: the same request
            return
        signal.signal(signum, signal.SIG_DFL)
        raise Terminated(name)

    _first.clear()
    _first_arrived()  # what came before is not this command's (tests run several)
    old = {}
    if threading.current_thread() is threading.main_thread():
        old = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM,
               signal.SIGHUP) if signal.getsignal(sig) != signal.SIG_IGN}
    try:
        yield
    finally:  # the last line out (finishing): ignored until exit_done ignores them
        for sig, h in old.items():
            signal.signal(sig, signal.SIG_IGN if _finishing else h)
