"""Probe 29b's findings (issue 31): a FIFO named like a temporary (or a link to one)
hung every sweep beside it for good; the sweep removed files named like temporaries
that were not ours (`.c.txt.backup.tmp`, a symlink), and took `[`, `*` in --out's
name as a glob's; two `data offline --out` the same file at once both said 'wrote',
and one corpus silently replaced the other. Subprocesses with timeouts (a hang
fails), real FIFOs, real concurrent processes; each test failed before its fix."""

import os
import subprocess
import sys
import time

import pytest
from test_cli_faults import ENV, tiny, txl

PROG = "python -m txl_mini data offline"
DEAD = "0232b0fb"  # a name atomic_path draws: 8 lowercase hex


def run(*argv, timeout=60):
    """`python -m txl_mini ARGV`; a sweep that hangs fails the test (TimeoutExpired,
    the child killed) instead of blocking it."""
    return subprocess.run([sys.executable, "-m", "txl_mini", *map(str, argv)],
                          env=ENV, text=True, capture_output=True, timeout=timeout)


def offline(out, *more):
    res = run("data", "offline", "--chars", "2000", "--out", out, *more)
    assert res.returncode == 0, res.stderr
    return res


def dead(path):
    """A temporary a kill -9 left (nobody holds its flock)."""
    path.write_text("half")
    return path


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One tiny run, trained to its end."""
    base = tmp_path_factory.mktemp("run")
    text = base / "corpus.txt"
    text.write_text("the cat sat on the mat and the dog ran far away " * 40)
    r = base / "r1"
    assert txl("train", *tiny(text, r)).returncode == 0
    return r


def test_a_fifo_named_like_a_temporary_hangs_no_data_offline(tmp_path):
    """Finding 1: `mkfifo .c.txt.abcd1234.tmp; data offline --out c.txt` never
    returned (the sweep's open waited for a writer); a link to a FIFO likewise."""
    fifo, link = tmp_path / ".c.txt.abcd1234.tmp", tmp_path / ".c.txt.abcd5678.tmp"
    os.mkfifo(fifo)
    os.mkfifo(tmp_path / "ff")
    link.symlink_to(tmp_path / "ff")
    offline(tmp_path / "c.txt")
    assert (tmp_path / "c.txt").stat().st_size == 2000
    assert fifo.exists() and link.is_symlink()  # not ours: left as they are


def test_a_fifo_in_a_run_folder_hangs_no_resume(finished):
    """Finding 1 in a run folder, and 3 there: `train --resume r1` with a FIFO
    `r1/.last.pt.deadbeef.tmp` never returned; a symlink `.best.pt.lnk.tmp` (to
    someone's file) was removed; a dead temporary of ours still goes."""
    r = finished
    fifo, link = r / ".last.pt.deadbeef.tmp", r / ".best.pt.lnk.tmp"
    os.mkfifo(fifo)
    mine = r.parent / "mine.txt"
    mine.write_text("mine")
    link.symlink_to(mine)
    ours = dead(r / f".best.pt.{DEAD}.tmp")
    try:
        res = run("train", "--resume", r)
        assert res.returncode == 0, res.stderr
        assert fifo.exists() and link.is_symlink() and mine.read_text() == "mine"
        assert not ours.exists()
    finally:  # the module's run stays as it was
        for p in (fifo, link):
            p.unlink()


def test_names_like_temporaries_that_are_not_ours_are_left(tmp_path):
    """Finding 3: the sweep removed `.c.txt.backup.tmp`, `.c.txt.my notes.tmp` and a
    symlink `.c.txt.lnk12345.tmp` at any age. Ours are `.c.txt.` + 8 lowercase hex
    + `.tmp`, regular files: only a dead one of those goes."""
    theirs = [tmp_path / f".c.txt.{n}.tmp" for n in
              ("backup", "my notes", "ABCD1234", "0232b0fb0", "0232b0f")]
    for p in theirs:
        p.write_text("someone's")
    link = tmp_path / ".c.txt.lnk12345.tmp"
    link.symlink_to(theirs[0])
    folder = tmp_path / f".c.txt.{DEAD[::-1]}.tmp"
    folder.mkdir()
    ours = dead(tmp_path / f".c.txt.{DEAD}.tmp")
    offline(tmp_path / "c.txt")
    assert not ours.exists()
    assert all(p.read_text() == "someone's" for p in theirs)
    assert link.is_symlink() and folder.is_dir()


def test_out_is_no_glob_pattern(tmp_path):
    """Finding 4: `--out 'a[1].txt'` never swept its dead `.a[1].txt.XXXX.tmp` and
    removed `.a1.txt.mine.tmp`; `--out '*.txt'` removed `.notes.txt.bak.tmp`."""
    ours = dead(tmp_path / f".a[1].txt.{DEAD}.tmp")
    theirs = [tmp_path / n for n in (".a1.txt.mine.tmp", f".a1.txt.{DEAD}.tmp",
                                     ".notes.txt.bak.tmp", f".notes.txt.{DEAD}.tmp")]
    for p in theirs:
        p.write_text("someone's")
    offline(tmp_path / "a[1].txt")
    offline(tmp_path / "*.txt")
    assert not ours.exists()
    assert all(p.read_text() == "someone's" for p in theirs)


# `python -m txl_mini ARGV[4:]` whose txl_mini.files._publish (the rename) or
# data_offline._renaming (before both renames) first makes the file argv[2], then
# waits for a file at argv[1]: another process's, written meanwhile
WAITS = """
import os, runpy, sys, time
import txl_mini.cli.data_offline as offline, txl_mini.files as files
out, mark, where = sys.argv[1:4]
module = files if where == "_publish" else offline
def waiting(f):
    def wrapped(*a, **k):
        open(mark, "w").close()
        t0 = time.time()
        while not os.path.exists(out) and time.time() - t0 < 60:
            time.sleep(0.01)
        return f(*a, **k)
    return wrapped
setattr(module, where, waiting(getattr(module, where)))
sys.argv = ["txl_mini", *sys.argv[4:]]
runpy.run_module("txl_mini", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("where,deps", [("_publish", False), ("_renaming", True)])
def test_two_data_offline_to_one_file_replace_nothing_silently(tmp_path, where, deps):
    """Finding 2: two `data offline --out same.txt` at once (other seeds) both said
    'wrote ...', exit 0, the later one's corpus silently over the other's. The later
    now leaves the file that appeared as it is (exit 1, as bench --json's), and with
    --deps-out neither of its files: no corpus beside another's plantings."""
    out, mark = tmp_path / "new" / "same.txt", tmp_path / "mark"
    more = ["--deps-out", tmp_path / "new" / "d.tsv"] if deps else []
    argv = ["data", "offline", "--chars", "2000", "--out", out, *more]
    first = subprocess.Popen([sys.executable, "-c", WAITS, out, mark, where, *argv,
                              "--seed", "1"], env=ENV, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        t0 = time.time()
        while not mark.exists():  # the first has written, and waits to rename
            assert first.poll() is None and time.time() - t0 < 60, first.stderr.read()
            time.sleep(0.01)
        offline(*argv[5:], "--seed", "2")  # the second, start to end meanwhile
        theirs = {p: p.read_bytes() for p in (tmp_path / "new").iterdir()}
        stdout, stderr = first.communicate(timeout=60)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 1 and stdout == "", (stdout, stderr)
    assert stderr == (f"{PROG}: error: cannot write {out}: a file appeared there "
                      "while we ran; it is left as it is\n")
    assert {p: p.read_bytes() for p in (tmp_path / "new").iterdir()} == theirs
    assert len(theirs) == 1 + deps  # no temporary left
