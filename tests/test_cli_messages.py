"""The command lines' one-line messages as a hostile probe read them (issue 31): the
right prefix, a count of one in the singular, sentences that say what is wrong, the
options' names (not Python's), an empty argument refused (subprocesses; each case
failed before its fix)."""

import pytest
from cli_text import words
from test_cli_faults import py, tiny

PROG = "python -m txl_mini"


def txl(*argv, **kw):
    return py("-m", "txl_mini", *[str(a) for a in argv], **kw)


def one_line(res, code: int) -> str:
    """The single stderr line of a command that must exit with `code`."""
    assert res.returncode == code and res.stderr.count("\n") == 1, res.stderr
    return res.stderr.rstrip("\n")


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    """A corpus, a short and a binary file, a trained run, one paused at 2 of 4."""
    d = tmp_path_factory.mktemp("messages")
    (d / "text.txt").write_text(words(2000))
    (d / "short.txt").write_text("hello world\n")  # its valid split: 0 characters
    (d / "binary.bin").write_bytes(bytes(range(256)) * 12)  # 52 of 256 are letters
    (d / "a.txt").write_text("a")
    assert txl("train", *tiny(str(d / "text.txt"), d / "r")).returncode == 0
    assert txl("train", *tiny(str(d / "text.txt"), d / "p", steps=4),
               "--pause-at", "2").returncode == 0
    return d


def refused(d, argv, line, code=2):
    """`argv` ({d}: the fixture's folder) ends with the one line `PROG line...`."""
    res = txl(*[str(a).replace("{d}", str(d)) for a in argv])
    got = one_line(res, code)
    assert got.startswith(f"{PROG} {line.replace('{d}', str(d))}"), got
    return got


# -- 1. the NaN stop line --------------------------------------------------------------

def test_a_nan_loss_line_carries_the_commands_prefix(d):
    """'error: loss is nan at step 1; ...' alone, where every other error line of
    train begins 'python -m txl_mini train: error: ...'."""
    res = txl("train", *tiny(str(d / "text.txt"), d / "nan"), "--init-std", "1e30")
    assert one_line(res, 1) == (
        f"{PROG} train: error: loss is nan at step 1; stopped, no checkpoint was "
        "written yet; start over with other options and --overwrite")
