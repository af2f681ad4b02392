"""Fixtures the command-line tests share."""

import signal

import pytest
from cli_text import words


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
