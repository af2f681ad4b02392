"""Probe 27b's findings (issue 31): `--resume DIR` said a live run building its corpus
(DIR holding only .lock) and an empty folder were runs 'stopped before it began', with
advice naming no command; a full disk at config.json left --out's new folders for good;
a full disk met at an output's folder check exited 2 (bad input), not 1; a finished
run's --out line said evaluate takes the run (it takes best.pt first). Subprocesses;
each test failed before its fix."""

import os
import subprocess
import sys

import pytest
import test_cli_faults
from test_cli_faults import ENV, one_line, tiny, txl

small_disk = test_cli_faults.small_disk  # a fixture: a real tmpfs (root only)

PROG = "python -m txl_mini train"

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, str(os.getpid()).encode())
print("held", flush=True)
time.sleep(120)
"""


def test_resume_of_a_live_run_before_its_config_says_it_is_in_use(tmp_path):
    """A run building its corpus holds DIR/.lock and nothing else for seconds; a
    `--resume DIR` then said 'its run was stopped before it began'. Now the line a
    second run gets: in use by another train process (its pid)."""
    r = tmp_path / "k4"
    r.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(r / ".lock")],
                              env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        line = one_line(txl("train", "--resume", r), 2)
        assert line == (f"{PROG}: error: {r} is in use by another train process "
                        f"(pid {holder.pid}); wait for it or stop it first"), line
    finally:
        holder.kill()
        holder.wait()
    assert os.listdir(r) == [".lock"]  # untouched


def test_resume_of_an_empty_folder_says_no_config(tmp_path):
    """An empty folder no run ever used was 'its run was stopped before it began'."""
    r = tmp_path / "E"
    r.mkdir()
    line = one_line(txl("train", "--resume", r), 2)
    assert line == (f"{PROG}: error: --resume {r}: no config.json there; is it a run "
                    "directory written by python -m txl_mini train?"), line


@pytest.fixture(scope="module")
def advised(tmp_path_factory):
    """A folder holding only .lock, held by nobody (a run killed before config.json),
    `--resume`d, then the command that line advises run (with --out m/o.pt): (the
    run directory, the --resume's line, the advised run's result)."""
    base = tmp_path_factory.mktemp("advised")
    text = base / "corpus.txt"
    text.write_text("the cat sat on the mat and the dog ran far away " * 40)
    r = base / "k4"
    r.mkdir()
    (r / ".lock").write_text("12345")
    line = one_line(txl("train", "--resume", r), 2)
    return r, line, txl("train", *tiny(text, r), "--out", base / "m" / "o.pt")


def test_a_run_killed_before_its_config_names_the_command_that_starts_it(advised):
    """Only .lock, held by nobody (a run killed before config.json): the advice was
    'run the same command again without --resume', which asks for --run-dir. Now it
    names --run-dir DIR, and that command (with its options) starts the run there."""
    r, line, res = advised
    assert line == (f"{PROG}: error: --resume {r}: its run was stopped before it "
                    f"began (no config.json yet); run it again with --run-dir {r} (and "
                    f"its other options) in place of --resume {r}"), line
    assert res.returncode == 0, res.stderr  # as advised: the run starts there
    assert (r / "config.json").is_file() and (r / "last.pt").is_file()


def test_a_full_disk_at_config_json_leaves_no_out_folder(small_disk, text, tmp_path):
    """--out's new folders were kept (leftover.KEPT) once the run's first line was
    out, before config.json: a full disk there removed the run directory but left
    nf2/a for good, though no --resume could ever write into it."""
    disk = small_disk(20)
    with open(disk / "fill", "wb") as f:  # the disk full: config.json cannot go
        try:
            f.write(bytes(100_000))
        except OSError:
            pass
    out = tmp_path / "nf2" / "a" / "m.pt"
    res = txl("train", *tiny(text, disk / "r", steps=4), "--out", out)
    assert res.returncode == 1 and "config.json" in res.stderr, res.stderr
    assert "No space left on device" in res.stderr, res.stderr
    assert not (disk / "r").exists() and not (tmp_path / "nf2").exists()


@pytest.fixture
def no_inodes(tmp_path):
    """A real tmpfs with no inode left (root only): DISK/x is there, and full."""
    d = tmp_path / "fi"
    d.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k,nr_inodes=3",
                          "tmpfs", str(d)], capture_output=True, text=True)
    if res.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        (d / "x").mkdir()
        (d / "x" / "f").touch()  # the last inode
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=True)


@pytest.mark.parametrize("argv, opt, folder", [
    (["train", "--preset", "tiny", "--steps", "2", "--offline-chars", "20000",
      "--run-dir", "{d}/x/r"], "--run-dir", "{d}/x/r"),  # a folder to make
    (["data", "offline", "--chars", "2000", "--out", "{d}/x/c.txt"],
     "--out {d}/x/c.txt", "{d}/x"),  # a folder there: its probe file
    (["bench", "--quick", "--json", "{d}/x/new/b.json"], "--json {d}/x/new/b.json",
     "{d}/x/new")])
def test_a_full_disk_at_an_outputs_folder_exits_1(no_inodes, argv, opt, folder):
    """A full disk (no inode left) met as an output's folder was checked or made
    exited 2, 'bad input you can fix'; met in the write a moment later, 1, the
    machine failed, as README says of a full disk. Now 1 wherever it is met."""
    d = str(no_inodes)
    res = txl(*[a.replace("{d}", d) for a in argv])
    opt, folder = opt.replace("{d}", d), folder.replace("{d}", d)
    line = one_line(res, 1)
    assert line.endswith(f": error: {opt}: cannot write to {folder}: No space left "
                         "on device"), line
    assert os.listdir(no_inodes / "x") == ["f"]


def test_a_finished_runs_out_gone_names_the_file_evaluate_is_given(advised):
    """'the model is R/last.pt (evaluate and sample take R)': but `evaluate R` reads
    R/best.pt first, another model than last.pt. Now it names R/last.pt to give."""
    r, _, res = advised
    assert res.returncode == 0, res.stderr
    folder = r.parent / "m"
    (folder / "o.pt").unlink()
    folder.rmdir()  # gone (moved?)
    line = one_line(txl("train", "--resume", r), 2)
    assert (f"; the model is {r}/last.pt (evaluate and sample take {r}/last.pt); "
            in line), line
