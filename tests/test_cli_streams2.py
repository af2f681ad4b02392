"""Issue 31, a hostile probe: standard error that cannot be written (`2>/dev/full`)
or is closed (`2>&-`), and the name data's errors give (each test failed before its
fix)."""

import os
import re
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, tiny, txl
from test_cli_streams import trained  # noqa: F401 (a fixture: a finished run d/r)

from txl_mini.checkpoint import read_checkpoint


def err_into(stderr, argv):
    """`python -m txl_mini ARGV 2>/dev/full` (stderr="full"), `2>&-` ("closed") or
    `2> >(true)`, a pipe whose reader has left ("left"); stdout is captured.
    (stderr=DEVNULL would be an open descriptor, not a closed one: the child
    closes its descriptor 2 itself before it starts Python.)"""
    close = (lambda: os.close(2)) if stderr == "closed" else None
    read, write = os.pipe()
    os.close(read)
    try:
        with open("/dev/full", "w") as full:
            return subprocess.run(
                [sys.executable, "-m", "txl_mini", *map(str, argv)], env=ENV,
                text=True, stdout=subprocess.PIPE, preexec_fn=close, timeout=300,
                stderr=write if stderr == "left" else full)
    finally:
        os.close(write)


def timeless(out: str) -> str:
    return re.sub(r"in \d+\.\d+ s", "in T s", out)


STDERR = ["full", "closed"]


@pytest.mark.parametrize("stderr", [*STDERR, "left"])
def test_train_finishes_when_stderr_cannot_be_written(tmp_path, text, stderr):
    """`train ... 2>/dev/full` (the bar on): exit 1, only r/config.json, its line
    'cannot write No space left on device' naming no file; `2>&-`: exit 1 from
    tqdm's "'NoneType' object has no attribute 'write'"; a stderr pipe whose
    reader left: 141, no checkpoint. Now the run finishes, its result on stdout,
    exit 0."""
    r = tmp_path / "r"
    argv = [a for a in tiny(text, r) if a != "--quiet"]  # the bar writes to stderr
    res = err_into(stderr, ["train", *argv])
    assert res.returncode == 0, res.stdout
    lines = res.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("corpus: offline"), lines
    assert lines[1].startswith("trained 2 steps; validation "), lines
    assert read_checkpoint(r / "last.pt")["extra"]["step"] == 2


@pytest.mark.parametrize("stderr", STDERR)
@pytest.mark.parametrize("argv", [
    ["evaluate", "{d}/r", "--chars", "100"],
    ["sample", "{d}/r", "--chars", "5", "--seed", "0"]])
def test_the_result_is_on_stdout_when_stderr_cannot_be_written(
        trained, stderr, argv):  # noqa: F811
    """`evaluate r --chars 100 2>/dev/full`: its header, no bpc line, exit 1;
    `sample r ... 2>/dev/full`: nothing, exit 1. With `2>&-` sample's stdout held
    the header and timing lines that belong on stderr, before the text. Now stdout
    is what it is with stderr open, exit 0."""
    argv = [a.format(d=trained) for a in argv]
    want = txl(*argv)
    assert want.returncode == 0 and want.stderr, want.stderr  # some stderr to lose
    res = err_into(stderr, argv)
    assert res.returncode == 0
    assert timeless(res.stdout) == timeless(want.stdout)


@pytest.mark.parametrize("stderr", STDERR)
@pytest.mark.parametrize("argv", [
    ["train", "--steps", "0"],
    ["data", "offline", "--chars", "5", "--out", "o.txt"],
    ["sample", "{d}/nothing-here"]])
def test_an_error_stays_off_stdout_with_its_status(trained, stderr,  # noqa: F811
                                                   argv):
    """`train --steps 0 2>/dev/full`: exit 1, not 2; with `2>&-` the error line
    went to stdout. Now the line is dropped, stdout empty, the status the error's."""
    argv = [a.format(d=trained) for a in argv]
    want = txl(*argv)
    assert want.returncode in (1, 2) and want.stderr.count("\n") == 1, want.stderr
    res = err_into(stderr, argv)
    assert (res.returncode, res.stdout) == (want.returncode, "")


@pytest.mark.parametrize("argv, line", [
    (["data", "offline", "--chars", "5", "--out", "o.txt"],
     "error: --chars must be between 1,000 and 100,000,000 (text8's size), got 5"),
    (["data", "offline", "--bogus", "--out", "o.txt"],
     "error: unrecognized arguments: --bogus (see --help)"),
    (["data", "stats", "no-such.txt"], "error: cannot read no-such.txt: no such "
     "file"),
    (["data", "stats"], "error: the following arguments are required: file (see "
     "--help)"),
])
def test_data_errors_name_the_subcommand(tmp_path, argv, line):
    """`data offline --chars 5` said 'python -m txl_mini data: error: ...', while
    argparse's errors said 'python -m txl_mini data offline: error: ...'."""
    res = txl(*argv, cwd=tmp_path)
    prog = "python -m txl_mini " + " ".join(argv[:2])
    assert one_line(res, 2) == f"{prog}: {line}"  # bad input, all (a missing file too)
