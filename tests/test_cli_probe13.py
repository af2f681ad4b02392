"""A thirteenth probe of issue 31: a signal in the second after a usage error or
--help, while Python and torch tear down. argparse's SystemExit left run_process
before exit_done, so the command's own SIGINT handler was still in place in torch's
exit handlers ('Exception ignored in atexit callback ... KeyboardInterrupt', 4 of 101
runs) or Python's default killed the process with no line (SIGINT, SIGTERM, SIGHUP:
10 to 13 runs of 30). The command's line is printed and its status decided there."""

import os
import signal
import subprocess
import sys

import pytest

ENV = {**os.environ, "PYTHONPATH": os.getcwd()}


def signalled_after_the_line(argv, sig):
    """Run `python -m txl_mini ARGV`, send `sig` as soon as its first stderr line (or
    stdout's, for --help) is out, and return (status, stdout, stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", *argv], env=ENV,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                             signal.SIG_DFL))
    stream = proc.stdout if "--help" in argv else proc.stderr
    first = stream.readline()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, (first + out if stream is proc.stdout else out), \
        (first + err if stream is proc.stderr else err)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_after_a_usage_error_keeps_its_line_and_status(sig):
    for _ in range(3):  # the window is most of a second: each run lands in it
        code, _, err = signalled_after_the_line(["train", "--steps", "x"], sig)
        assert code == 2, (sig, code, err)
        assert err.count("\n") == 1 and "--steps" in err, (sig, err)


def test_a_ctrl_c_after_help_keeps_its_status():
    for _ in range(3):
        code, out, err = signalled_after_the_line(["bench", "--help"], signal.SIGINT)
        assert code == 0 and err == "" and out.startswith("usage:"), (code, err)
