"""How a training run ends early: Ctrl-C / SIGTERM, a second one, and the one line.

The first SIGINT or SIGTERM only sets a flag: the loop finishes the current step (or
stops a validation within a segment), saves last.pt and exits with one line. A second
one stops at once without saving; the last checkpoint on disk is kept (writes are
atomic).
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


class Stop(Exception):
    """The run ends early; `code` is the exit status, the message the one line."""

    def __init__(self, msg: str, code: int):
        super().__init__(msg)
        self.code = code


class Abort(BaseException):
    """A second SIGINT / SIGTERM: stop now, without saving."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


@contextmanager
def signals_caught(stop_flag: dict):
    """While inside: SIGINT / SIGTERM set stop_flag["signal"]; a second one raises
    Abort (and, in case torch.save turns that into its own error, sets "abort")."""
    def handler(signum, frame):
        name = signal.Signals(signum).name
        if stop_flag.get("signal"):
            stop_flag["abort"] = name
            raise Abort(name)
        stop_flag["signal"] = name

    old = {}
    if threading.current_thread() is threading.main_thread():  # signals reach it only
        old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT,
                                                             signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def exit_code(name: str) -> int:
    return 128 + getattr(signal, name)
