"""Fixtures the command-line tests share."""

import os
import shutil
import signal
import subprocess

import pytest
from cli_text import words

# The suite's expectations (device lines, checkpoint sizes on a small disk) are a CPU's:
# on a machine with a GPU, --device auto picked CUDA and two command-line tests failed
# there (an H200). So every test and subprocess runs on the CPU; tests/test_cuda.py, the
# GPU's own, gives its subprocesses the GPU back (the variable's value kept below).
os.environ.setdefault("TXL_TESTS_CUDA_VISIBLE_DEVICES",
                      os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
os.environ["CUDA_VISIBLE_DEVICES"] = ""


@pytest.fixture
def sigint_default():
    """SIGINT at Python's default, as a terminal starts a program: a suite run in the
    background hands it on ignored, and the training loop leaves an ignored signal
    alone (for tests that send SIGINT to their own process)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.fixture
def text(tmp_path):
    """A 2,000-character corpus file: 1,800 training characters, 16 streams x 112,
    14 segments of the tiny preset's L = 8."""
    path = tmp_path / "corpus.txt"
    path.write_text(words(2000))
    return str(path)


@pytest.fixture(scope="module")
def paused(tmp_path_factory):
    """A run paused at step 2 of 4, for tests to edit copies of (its config.json,
    its last.pt)."""
    from test_cli_faults import py, tiny

    d = tmp_path_factory.mktemp("paused")
    (d / "text.txt").write_text(words(2000))
    assert py("-m", "txl_mini", "train", *tiny(str(d / "text.txt"), d / "r", steps=4),
              "--pause-at", "2").returncode == 0
    return d / "r"


@pytest.fixture
def chattr():
    """chattr(path, flag): `chattr +flag path` (a: append-only, i: immutable), undone
    at teardown; the test is skipped where the tool, the user or the file system
    cannot."""
    done = []

    def set_flag(path, flag):
        if not shutil.which("chattr"):
            pytest.skip("no chattr here")
        res = subprocess.run(["chattr", f"+{flag}", str(path)], capture_output=True,
                             text=True)
        if res.returncode:
            pytest.skip(f"chattr +{flag} failed here: {res.stderr.strip()}")
        done.append((path, flag))

    yield set_flag
    for path, flag in done:
        subprocess.run(["chattr", f"-{flag}", str(path)], check=True)
