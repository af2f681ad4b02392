"""Probe 26's run-end findings (issue 31): a full disk at --out in a folder the run
made left a --resume that said the folder was 'gone (moved?)' (exit 0, 'nothing
written' beside 'drew its curves.png'); a --out gone at several levels named the
outermost; a run killed before config.json left a folder --resume called 'no run
directory'; a stop while a finished run's resume wrote --out said 'before training
started'. Subprocesses; each test failed before its fix."""

import importlib.util
import os
import shutil

import pytest
import test_cli_faults
from test_cli_faults import one_line, py, start, tiny, txl, wait_for

small_disk = test_cli_faults.small_disk  # a fixture: a real tmpfs (root only)

PROG = "python -m txl_mini train"
HAS_MPL = importlib.util.find_spec("matplotlib") is not None
DREW = "; drew its curves.png, which was missing" if HAS_MPL else ""


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    """A finished run trained as proj/r with --out proj/m/m.pt, then proj moved away
    (to 'stash'): (the old proj, stash). Tests resume copies of stash/r."""
    base = tmp_path_factory.mktemp("moved")
    text = base / "corpus.txt"
    text.write_text("the cat sat on the mat and the dog ran far away " * 40)
    proj = base / "proj"
    res = txl("train", *tiny(str(text), proj / "r"), "--out", proj / "m" / "m.pt")
    assert res.returncode == 0, res.stderr
    proj.rename(base / "stash")
    return proj, base / "stash"


def test_a_full_disk_at_out_keeps_the_folder_its_resume_writes_into(small_disk, text,
                                                                    tmp_path):
    """After 'cannot write DISK/new/m.pt: No space left on device; ... (--resume r)',
    the run's end removed the empty DISK/new it had made, and the --resume it named
    then said 'its folder DISK/new is gone (moved?)' and wrote nothing. The run keeps
    the folders it made for --out once it began: the resume writes --out there."""
    disk = small_disk(64)
    (disk / "fill").write_bytes(bytes(50_000))  # the model (32 kB) does not fit
    r, out = tmp_path / "r", disk / "new" / "m.pt"
    line = one_line(txl("train", *tiny(text, r), "--out", out), 1)
    assert f"cannot write {out}: No space left on device" in line, line
    assert line.endswith(f"(--resume {r})"), line
    assert sorted(os.listdir(disk)) == ["fill", "new"]  # kept, still empty
    (disk / "fill").unlink()
    line = one_line(txl("train", "--resume", r), 0)
    assert line == (f"{PROG}: {r} is finished: step 2 of 2; wrote {out} from its "
                    f"last.pt{DREW}"), line
    assert out.read_bytes()[:2] == b"PK"


def test_an_out_not_written_says_what_was_and_exits_2(moved, tmp_path):
    """'--out ... not written: its folder ... is gone (moved?); nothing written; ...;
    drew its curves.png, which was missing', exit 0: 'nothing written' beside what
    was, and `train --resume r && use m.pt` went on without the file. Now the line
    says only what was done, and the exit status is 2 (README: input to fix)."""
    old, stash = moved
    r = tmp_path / "r"
    shutil.copytree(stash / "r", r)
    (r / "curves.png").unlink(missing_ok=True)
    res = txl("train", "--resume", r)
    line = one_line(res, 2)
    assert "nothing written" not in line, line
    assert f"--out {old / 'm' / 'm.pt'} not written" in line, line
    assert line.endswith(f"writes it there{DREW}"), line
    assert not old.exists()


def test_an_out_gone_at_several_levels_names_its_own_folder(moved, tmp_path):
    """`mv proj proj2; train --resume proj2/r` named '/.../proj' (the outermost folder
    gone), so 'make the folder again' took one resume per level. Now it names --out's
    own folder and `mkdir -p` it: one step, then one resume writes --out."""
    old, stash = moved
    r, folder = tmp_path / "r", old / "m"
    shutil.copytree(stash / "r", r)
    line = one_line(txl("train", "--resume", r), 2)
    assert line == (
        f"{PROG}: {r} is finished: step 2 of 2; --out {folder / 'm.pt'} not written: "
        f"its folder {folder} is gone (moved?); the model is {r}/last.pt (evaluate "
        f"and sample take {r}/last.pt); --resume cannot change --out: make the folder "
        f"again (mkdir -p {folder}) and --resume {r} writes it there"), line
    assert not old.exists()
    try:
        os.makedirs(folder)  # the way the line names, in one step
        line = one_line(txl("train", "--resume", r), 0)
        assert line.endswith(f"; wrote {folder / 'm.pt'} from its last.pt"), line
    finally:
        shutil.rmtree(old, ignore_errors=True)


def test_a_run_killed_before_its_config_says_to_start_it_again(tmp_path):
    """A run killed (kill -9) before it wrote config.json left only .lock, and
    `--resume` asked 'no config.json there; is it a run directory written by python
    -m txl_mini train?', while the same command again works (a folder holding only
    .lock is taken as empty). Now it says the run never began and that way on."""
    r = tmp_path / "run"
    proc = start(["train", "--preset", "tiny", "--steps", "10", "--offline-chars",
                  "20000000", "--threads", "1", "--quiet", "--run-dir", str(r)])
    wait_for(lambda: (r / ".lock").exists())
    proc.kill()  # before the corpus is built: config.json comes after it
    proc.communicate(timeout=60)
    assert os.listdir(r) == [".lock"]
    line = one_line(txl("train", "--resume", r), 2)  # fix-31ah: the command named
    assert line == (f"{PROG}: error: --resume {r}: its run was stopped before it "
                    f"began (no config.json yet); run it again with --run-dir {r} (and "
                    f"its other options) in place of --resume {r}"), line


STOP_IN_OUT = """
import os, signal, sys
import txl_mini.cli.resume_out as ro
from txl_mini import cli
write = ro.save_checkpoint
def stopped_in(*a, **k):  # SIGTERM as the resume writes --out (milliseconds, else)
    os.kill(os.getpid(), signal.SIGTERM)
    return write(*a, **k)
ro.save_checkpoint = stopped_in
cli.run_process(["train", "--resume", sys.argv[1]])
"""


def test_a_stop_while_a_finished_run_writes_out_says_so(moved, tmp_path):
    """SIGTERM while the resume of a finished run wrote its missing --out said
    'terminated (SIGTERM) before training started; r/last.pt ... is kept': the run
    had trained all its steps. Now the line says it stopped writing --out, and
    that the same --resume writes it."""
    old, stash = moved
    r, out = tmp_path / "r", old / "m" / "m.pt"
    shutil.copytree(stash / "r", r)
    try:
        os.makedirs(out.parent)  # --out's folder there, the file missing
        res = py("-c", STOP_IN_OUT, str(r))
        line = one_line(res, 143)
        assert line == (f"{PROG}: {r} is finished: step 2 of 2; terminated (SIGTERM) "
                        f"while writing --out {out}, not written; --resume {r} "
                        "writes it"), line
        assert not out.exists()
        line = one_line(txl("train", "--resume", r), 0)  # the way on it names
        assert line.endswith(f"; wrote {out} from its last.pt"), line
    finally:
        shutil.rmtree(old, ignore_errors=True)
