"""How a training run ends early: Ctrl-C / SIGTERM, a second one, and the one line.

The first SIGINT or SIGTERM only sets a flag: the loop finishes the current step (or
stops a validation within a segment), saves last.pt and exits with one line. A second
one stops at once without saving; the last checkpoint on disk is kept (writes are
atomic).
"""

from __future__ import annotations

import os
import signal
import threading


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


def is_rank0() -> bool:
    """Under torchrun only rank 0 prints the run's lines."""
    return os.environ.get("RANK", "0") == "0"


def install_signal_handlers(stop_flag: dict) -> dict:
    """SIGINT / SIGTERM set stop_flag["signal"]; a second one raises Abort."""
    def handler(signum, frame):
        name = signal.Signals(signum).name
        if stop_flag.get("signal"):
            stop_flag["abort"] = name  # torch.save may turn Abort into its own error
            raise Abort(name)
        stop_flag["signal"] = name

    old = {}
    if threading.current_thread() is not threading.main_thread():
        return old  # signals reach only the main thread; a thread handles its own
    for sig in (signal.SIGINT, signal.SIGTERM):
        old[sig] = signal.signal(sig, handler)
    return old


def restore_signal_handlers(old: dict) -> None:
    for sig, h in old.items():
        signal.signal(sig, h)


def exit_code(name: str) -> int:
    return 128 + getattr(signal, name)
