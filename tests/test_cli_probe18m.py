"""Issue 31, the eighteenth probe (m): a folder's name too long said as --out's is, a
finished run in a read-only folder, and a best.pt that became a folder mid-run.

1. `train --run-dir <256 bytes>` said 'File name too long' (the OSError's words),
   where `--out` with such a name says '(N bytes; at most M)'; so did --resume (as
   'no config.json there'), evaluate's and sample's checkpoint, and --cache-dir.
2. `train --resume R` of a finished run whose folder cannot be written said 'cannot
   write to R', where a writable one says it is finished, nothing to do, exit 0.
3. A folder put at R/best.pt while the run trained: the end line said 'R/last.pt ...
   is kept (--resume R)', and that --resume refused the folder.

Each test runs `python -m txl_mini` in a subprocess, as a user would, and failed
before its fix.
"""

import os
import shutil
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, py, tiny, txl

PROG = "python -m txl_mini"
NAME = "n" * 256  # one byte over NAME_MAX (255) on every common file system


def _name_max(folder) -> int:
    return os.pathconf(folder, "PC_NAME_MAX")


@pytest.mark.parametrize("argv, opt", [
    (["train", "--run-dir", NAME], "--run-dir"),
    (["train", "--run-dir", f"x/{NAME}/y"], "--run-dir"),
    (["train", "--resume", NAME], "--resume"),
    (["data", "text8", "--cache-dir", NAME], "--cache-dir"),
])
def test_a_folder_name_too_long_says_its_length(tmp_path, text, argv, opt):
    """One line naming the option and the name's length, as --out's, exit 2, and
    nothing made (the corpus file is all there is)."""
    if _name_max(tmp_path) != 255:
        pytest.skip("a file system whose NAME_MAX is not 255")
    extra = tiny(text, "r")[:-2] if argv[0] == "train" and opt == "--run-dir" else []
    line = one_line(txl(*argv, *extra, cwd=tmp_path), 2)
    assert f"error: {opt} {argv[-1]}: a folder's name is too long (256 bytes; at " \
           "most 255); give a shorter one" in line, line
    assert "File name too long" not in line
    assert os.listdir(tmp_path) == ["corpus.txt"]


def test_a_cache_variable_too_long_says_its_length(tmp_path):
    """TXL_MINI_CACHE=<256 bytes>: the same, naming the variable."""
    env = dict(ENV, TXL_MINI_CACHE=NAME, XDG_CACHE_HOME="")
    res = subprocess.run([sys.executable, "-m", "txl_mini", "data", "text8"], env=env,
                         cwd=tmp_path, text=True, capture_output=True, timeout=300)
    assert one_line(res, 2) == (
        f"{PROG} data text8: error: TXL_MINI_CACHE={NAME!r} in the environment: a "
        "folder's name is too long (256 bytes; at most 255); give a shorter one")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", ["evaluate", "sample"])
@pytest.mark.parametrize("path, line", [
    (NAME + ".pt", "the file name is too long (259 bytes; at most 255 here)"),
    (f"{NAME}/best.pt", "a folder's name is too long (256 bytes; at most 255)")])
def test_a_checkpoint_name_too_long_says_its_length(tmp_path, command, path, line):
    """evaluate's and sample's checkpoint (a file, or in a run folder): no
    checkpoint can be there, said with the length, not 'File name too long'."""
    res = txl(command, path, cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG} {command}: error: {path}: {line}"


# -- 2. a finished run in a folder that cannot be written ---------------------------

@pytest.fixture
def finished(tmp_path, text):
    res = txl("train", *tiny(text, "r"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    return tmp_path / "r"


def _read_only(how, run, chattr):
    if how == "immutable":
        chattr(run, "i")  # root too (root ignores the permission bits)
    elif os.geteuid() == 0:
        pytest.skip("root ignores permission bits; the chattr +i case covers root")
    else:
        os.chmod(run, 0o555)


@pytest.mark.parametrize("how", ["immutable", "chmod a-w"])
def test_a_finished_run_that_cannot_be_written_is_finished(finished, chattr, how):
    """The same answer as for the writable run, exit 0, and nothing changed."""
    writable = txl("train", "--resume", "r", cwd=finished.parent)
    assert writable.returncode == 0 and "is finished: step 2 of 2; nothing to do" in \
        writable.stderr, writable.stderr
    before = sorted(os.listdir(finished))
    _read_only(how, finished, chattr)
    try:
        res = txl("train", "--resume", "r", cwd=finished.parent)
    finally:
        if how != "immutable":  # chattr's teardown undoes its own
            os.chmod(finished, 0o755)
    assert (res.returncode, res.stdout, res.stderr) == (
        writable.returncode, writable.stdout, writable.stderr)
    assert sorted(os.listdir(finished)) == before


def test_a_finished_run_with_its_out_in_a_read_only_folder_is_finished(tmp_path, text,
                                                                       chattr):
    """Its --out in the run folder, there and unchanged: nothing to write either (it
    said '--out: cannot write to R' first)."""
    res = txl("train", *tiny(text, "r"), "--out", "r/m.pt", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    chattr(tmp_path / "r", "i")
    res = txl("train", "--resume", "r", cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == (
        f"{PROG} train: r is finished: step 2 of 2; nothing to do (its last.pt, "
        "best.pt and r/m.pt are unchanged)\n"), res.stderr


def test_an_unfinished_run_that_cannot_be_written_is_still_refused(tmp_path, text,
                                                                    chattr):
    """Guards: with steps left, a read-only folder is refused before any work."""
    res = txl("train", *tiny(text, "r", steps=4), "--pause-at", "2", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    chattr(tmp_path / "r", "i")
    line = one_line(txl("train", "--resume", "r", cwd=tmp_path), 2)
    assert line == (f"{PROG} train: error: --resume: cannot write to r: Operation not "
                    "permitted")


# -- 3. best.pt made a folder while the run trained ---------------------------------

def test_best_pt_made_a_folder_mid_run_says_to_move_it(tmp_path, text):
    """The end line names the folder and says to move it away, as --resume does;
    then --resume goes on from last.pt, as the line says."""
    swap = ("import os, sys; from txl_mini.cli.train import main; "
            "sys.exit(main(sys.argv[1:], on_step=lambda s: s == 2 and "
            "(os.remove('r/best.pt'), os.mkdir('r/best.pt')) and False))")
    res = py("-c", swap, *tiny(text, "r", steps=6), "--eval-every", "1",
             "--save-every", "1", cwd=tmp_path)
    line = one_line(res, 2)
    assert line.endswith(
        "r/last.pt, the last checkpoint written, is kept; r/best.pt is a directory, "
        "not a file of the run: move it away, and --resume r goes on from that"), line
    refused = txl("train", "--resume", "r", cwd=tmp_path)
    assert "r/best.pt is a directory, not a file of the run; move it away" in \
        one_line(refused, 2)
    shutil.move(tmp_path / "r" / "best.pt", tmp_path / "best.pt.folder")
    again = txl("train", "--resume", "r", cwd=tmp_path)
    assert again.returncode == 0 and "resuming at step 2" in again.stdout, again.stderr
