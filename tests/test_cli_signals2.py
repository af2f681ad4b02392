"""Signals at the edges of a command: inside an import (a third probe's SIGTERM 0.3 s
into train was swallowed there, or left a half-imported module and a traceback), during
Python's teardown after the result, and during a text8 download."""
import os
import signal
import time

import pytest
from cli_text import words
from test_cli_data import terminated_mid_download
from test_cli_faults import py, start, tiny, wait_for
from test_cli_signals import needs_proc

# A module whose import takes a second and swallows what is raised meanwhile, as a
# bare except in a lazy import of torch's does; the signal is sent 0.3 s into it, and
# is taken as the import statement ends, the module whole in sys.modules.
SLOW = "import time\ntry:\n    time.sleep(1.0)\nexcept BaseException:\n    pass\n"
IMPORT = ("import os, signal, sys, threading, time\n"
          "sys.path.insert(0, sys.argv[1])\n"
          "threading.Timer(0.3, os.kill, (os.getpid(), signal.{sig})).start()\n"
          "try:\n"
          "    import slow_import\n"
          "    print('imported', flush=True)\n"
          "    time.sleep(3)\n"
          "    print('ran on', flush=True)\n"
          "except KeyboardInterrupt as e:\n"
          "    print(type(e).__name__, 'slow_import' in sys.modules, flush=True)\n")


def test_a_sigterm_inside_an_import_is_raised_once_it_is_done(tmp_path):
    (tmp_path / "slow_import.py").write_text(SLOW)
    code = ("from txl_mini.cli import stop\n"
            "with stop.sigterm_raises():\n"
            + "".join("    " + line + "\n"
                      for line in IMPORT.format(sig="SIGTERM").splitlines()))
    res = py("-c", code, str(tmp_path))
    assert res.returncode == 0 and res.stdout == "Terminated True\n", res


def test_a_ctrl_c_inside_an_import_is_raised_once_it_is_done(tmp_path):
    (tmp_path / "slow_import.py").write_text(SLOW)
    code = ("from txl_mini.cli import interrupt_once\ninterrupt_once()\n"
            + IMPORT.format(sig="SIGINT"))
    res = py("-c", code, str(tmp_path))
    assert res.returncode == 0 and res.stdout == "KeyboardInterrupt True\n", res


def test_a_sigterm_during_teardown_keeps_the_commands_status():
    """The result is printed and the files are complete; Python and torch then take a
    second to tear down, and a SIGTERM there killed the process with no line."""
    code = ("import atexit, os, signal, time\n"
            "from txl_mini.cli import exit_done\n"
            "atexit.register(lambda: (os.kill(os.getpid(), signal.SIGTERM),"
            " time.sleep(0.5)))\n"
            "print('result', flush=True)\n"
            "exit_done(0)\n")
    res = py("-c", code)
    assert res.returncode == 0 and res.stdout == "result\n", res


def catches_sigterm(pid: int) -> bool:
    """Has the process set a handler for SIGTERM (the command's, set before its
    imports; Python sets none of its own)?"""
    with open(f"/proc/{pid}/status") as f:
        mask = next(line for line in f if line.startswith("SigCgt:")).split()[1]
    return bool(int(mask, 16) >> (signal.SIGTERM - 1) & 1)


@needs_proc
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_early_in_train_is_one_line(tmp_path, sig):
    """The first second of train is imports (torch, numpy, matplotlib): a signal
    anywhere in it, from the moment the command takes signals, ends the run with one
    line and its status, and leaves no empty run dir for a new run to refuse."""
    (tmp_path / "text.txt").write_text(words(2000))
    # every 0.05 s of the first 0.6, the two signals on alternate 0.025 s steps (25
    # starts in all): 0.35-0.5 s is torch's lazy imports (numpy, dynamo), where a
    # probe saw tracebacks and a lost signal
    first = 0.0 if sig == "SIGTERM" else 0.025
    for i, delay in enumerate(first + 0.05 * k for k in range(13)):
        run = tmp_path / f"r{i}"
        proc = start(["train", *tiny(str(tmp_path / "text.txt"), run, steps=200)])
        wait_for(lambda: catches_sigterm(proc.pid))
        time.sleep(delay)
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 128 + getattr(signal, sig), (delay, err)
        line = "terminated (SIGTERM)" if sig == "SIGTERM" else "interrupted"
        lines = err.strip().splitlines()  # (a Ctrl-C's line starts a line of its own)
        assert len(lines) == 1, (delay, err)  # stopped in the loop: `SIGINT: saved ...`
        assert lines[0].startswith((f"python -m txl_mini train: {line}",
                                    f"{sig}: saved")), (delay, err)
        assert not run.exists() or any(run.iterdir()), (delay, "empty run dir left")


def test_a_sigterm_during_a_download_is_one_line_and_143(tmp_path):
    """SIGTERM while `data text8` downloads: the download's own handler made it exit 1
    with its own words; now the command's handler takes it, as everywhere else."""
    code = ("import functools, sys\n"
            "from txl_mini.cli import data, exit_done, interrupt_once, main\n"
            "data.load_text8 = functools.partial(data.load_text8, url=sys.argv[1])\n"
            "interrupt_once()\n"
            "argv = ['data', 'text8', '--quiet', '--cache-dir', sys.argv[2]]\n"
            "exit_done(main(argv))\n")
    rc, err = terminated_mid_download(code, tmp_path)
    assert rc == 143 and "Traceback" not in err, err
    assert err == "python -m txl_mini data text8: terminated (SIGTERM)\n", err
    assert os.listdir(tmp_path) == []
