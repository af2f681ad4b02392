"""Issue 31, the sixteenth probe: output options naming standard output or a pipe
(/dev/stdout, /dev/fd/N, /proc/self/fd/1, a shell's >(cat)) were taken as new files
in /proc/PID/fd ('cannot write to /proc/PID/fd', or train's 'already exists'); the
text a checkpoint recorded, now a FIFO, failed at run time (exit 1); train --path
/dev/stdin was recorded, and every evaluate or resume after it failed."""

import os

import pytest
from test_cli_faults import ENV, py, tiny, txl  # noqa: F401

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


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished tiny run on w.txt; (its folder, the text it recorded)."""
    from cli_text import words

    tmp = tmp_path_factory.mktemp("rec")
    path = tmp / "w.txt"
    path.write_text(words(2000))
    res = txl("train", *tiny(str(path), tmp / "f"))
    assert res.returncode == 0, res.stderr
    return tmp / "f", path


@pytest.mark.parametrize("kind", ["fifo", "dir", "zero"])
def test_the_recorded_text_now_no_regular_file(trained, kind):
    """evaluate was 'cannot read X: not a regular file', exit 1; --resume of a
    finished run said nothing to do, of another blamed a --path never given."""
    run, path = trained
    saved = path.read_bytes()
    path.unlink()
    {"fifo": os.mkfifo, "dir": os.mkdir,
     "zero": lambda p: os.symlink("/dev/zero", p)}[kind](path)
    try:
        ev = txl("evaluate", run, "--chars", "300")
        resumed = txl("train", "--resume", run, "--quiet")
    finally:
        os.rmdir(path) if kind == "dir" else path.unlink()
        path.write_bytes(saved)
    what = {"fifo": "a FIFO (named pipe)", "dir": "a directory",
            "zero": "a symbolic link to /dev/zero, a character device"}[kind]
    assert ev.returncode == 2, ev.stderr
    assert ev.stderr == (f"{PROG} evaluate: error: {path}, the text {run}/best.pt was "
                         f"trained on, is {what}, not a regular file; give it (or "
                         "another text) with --path FILE\n")
    assert resumed.returncode == 2, resumed.stderr
    assert resumed.stderr == (f"{PROG} train: error: {path}, the text {run} trained "
                              f"on, is {what}, not a regular file; give it with "
                              f"--resume {run} --path FILE\n")


@pytest.mark.parametrize("name", ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"])
def test_train_refuses_standard_input_as_its_recorded_text(tmp_path, text, name):
    """`train --path /dev/stdin < text` trained and recorded '/dev/stdin', which
    every evaluate and --resume after it could not find."""
    with open(text) as f:
        res = txl("train", *tiny(name, tmp_path / "r"), stdin=f)
    assert res.returncode == 2, res.stderr
    assert res.stderr == (f"{PROG} train: error: --path {name} is this process's own "
                          "name for its input, which no later evaluate or --resume "
                          "can read again (config.json records it); give the text "
                          "as a file name\n")
    assert not os.path.exists(tmp_path / "r")


def test_a_run_folder_moved_while_it_trains(tmp_path, text):
    """`mv r r2` mid-run ended 'r/metrics.jsonl: No such file or directory; no
    checkpoint was written yet', though r2/last.pt was there."""
    move = ("import os, sys; from txl_mini.cli.train import main; "
            "sys.exit(main(sys.argv[1:], on_step=lambda s: s == 2 and "
            "os.rename('r', 'r2')))")
    res = py("-c", move, *tiny(text, "r", steps=6), "--save-every", "2",
             "--log-every", "1", cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert res.stderr.endswith(f"{PROG} train: error: r/metrics.jsonl: No such file "
                               "or directory; the run folder r went away while it "
                               "trained (moved or removed?); its checkpoints, if any, "
                               "went with it\n"), res.stderr
    assert (tmp_path / "r2" / "last.pt").is_file()
