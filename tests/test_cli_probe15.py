"""A fifteenth probe of the command lines: db1b37d's stop.finishing() held a signal
for good once --help or a usage error began to print, so a command blocked writing
that text (a reader stopped, a terminal paused) could no longer be stopped but by
kill -9; and our own error lines (fail()) were not covered by it at all: a signal
just after 'cannot read /nonexist' made exit 2 into 130 ('data: interrupted')."""

import fcntl
import os
import signal
import subprocess
import sys
import time

import pytest
from test_cli_probe14b import SLOW_FLUSH

ENV = {**os.environ, "PYTHONPATH": os.getcwd()}


def full_pipe():
    """A pipe with no room left: what a reader that stopped reading leaves."""
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
    try:
        while True:
            os.write(w, b"\0" * 4096)
    except BlockingIOError:
        pass
    fcntl.fcntl(w, fcntl.F_SETFL, 0)
    return r, w


@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_a_command_blocked_writing_its_help(sig, status):
    r, w = full_pipe()
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", "train", "--help"],
                            env=ENV, stdout=w, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                             signal.SIG_DFL))
    os.close(w)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until it waits in the pipe's write
            with open(f"/proc/{proc.pid}/wchan") as f:
                if "pipe" in f.read():
                    break
            time.sleep(0.05)
        else:
            pytest.fail("train --help never blocked on its full stdout")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)  # it waited for good: TimeoutExpired
        assert proc.returncode == status, err
        assert err.strip().endswith(("terminated (SIGTERM)", "interrupted")), err
    finally:
        proc.kill()
        os.close(r)


def test_a_signal_just_after_an_error_line_keeps_its_status(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", SLOW_FLUSH, "data", "stats",
                             str(tmp_path / "nonexist")], env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert "cannot read" in first and err == "", (first, err)
    assert proc.returncode == 2
