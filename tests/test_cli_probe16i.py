"""Issue 31, the sixteenth probe: output options naming standard output or a pipe
(/dev/stdout, /dev/fd/N, /proc/self/fd/1, a shell's >(cat)) were taken as new files
in /proc/PID/fd ('cannot write to /proc/PID/fd', or train's 'already exists'); the
text a checkpoint recorded, now a FIFO, failed at run time (exit 1); train --path
/dev/stdin was recorded, and every evaluate or resume after it failed."""

import os

import pytest
from test_cli_faults import ENV, tiny, txl  # noqa: F401

PROG = "python -m txl_mini"
NOT_REGULAR = "is not a regular file (a device, FIFO or socket); give a file name\n"


@pytest.mark.parametrize("argv", [
    ["data", "offline", "--chars", "2000", "--out", "/dev/stdout"],
    ["data", "offline", "--chars", "2000", "--out", "/proc/self/fd/1"],
    ["data", "offline", "--chars", "2000", "--out", "OUT", "--deps-out", "/dev/fd/1"],
    ["bench", "--quick", "--device", "cpu", "--json", "/dev/stdout"],
])
def test_an_output_that_is_standard_output_is_not_a_regular_file(tmp_path, argv):
    argv = [str(tmp_path / "c.txt") if a == "OUT" else a for a in argv]
    res = txl(*argv, cwd=tmp_path)  # its standard output: a pipe, as with `| cat`
    cmd = " ".join(argv[:2]) if argv[0] == "data" else argv[0]
    opt, path = argv[-2], argv[-1]
    assert res.returncode == 2, res.stderr
    assert res.stderr == f"{PROG} {cmd}: error: {opt} {path} {NOT_REGULAR}"
    assert res.stdout == "" and os.listdir(tmp_path) == []


def test_an_output_that_is_a_process_substitution_pipe(tmp_path):
    r, w = os.pipe()  # what `--out >(cat)` gives: /dev/fd/63, a pipe's end
    try:
        res = txl("data", "offline", "--chars", "2000", "--out", f"/dev/fd/{w}",
                  pass_fds=(w,), cwd=tmp_path)
    finally:
        os.close(r), os.close(w)
    assert res.returncode == 2, res.stderr
    assert res.stderr == (f"{PROG} data offline: error: --out /dev/fd/{w} "
                          f"{NOT_REGULAR}")


@pytest.mark.parametrize("over", [[], ["--overwrite"]])
def test_train_out_standard_output(tmp_path, text, over):
    """Was '--out /dev/stdout already exists; pass --overwrite', then with it the
    /proc/PID/fd line."""
    res = txl("train", *tiny(text, tmp_path / "r"), "--out", "/dev/stdout", *over)
    assert res.returncode == 2, res.stderr
    assert res.stderr == f"{PROG} train: error: --out /dev/stdout {NOT_REGULAR}"
    assert not os.path.exists(tmp_path / "r")
