"""Paths on the command line and the run directory's own files, as a hostile user
gives them (issue 31, probe 2): symlinks, loops, files where folders belong,
relative paths, read-only places. Subprocesses; each test failed before its fix."""

import os
import shutil
import subprocess
import sys

import pytest
from cli_text import words
from test_cli_faults import ENV, py, small_disk, tiny  # noqa: F401 (small_disk: a fixture)


def train(*argv, **kw):
    return py("-m", "txl_mini", "train", *argv, **kw)


def last_line(res) -> str:
    return res.stderr.strip().splitlines()[-1]


def test_a_symlinked_lock_is_refused_and_its_target_kept(tmp_path, text):
    """Finding 1: train opened DIR/.lock through the link, emptied the file it points
    to and wrote its pid there (exit 0; the link then removed)."""
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    d = tmp_path / "lk"
    d.mkdir()
    (d / ".lock").symlink_to(precious)
    res = train(*tiny(text, d))
    assert res.returncode == 2, res.stderr
    assert last_line(res) == (f"python -m txl_mini train: error: {d}/.lock is a "
                              "symbolic link, not train's lock file; remove it")
    assert precious.read_text() == "keep me\n" and (d / ".lock").is_symlink()
    assert sorted(os.listdir(d)) == [".lock"]


def test_a_refused_run_removes_every_folder_it_made(tmp_path, text):
    """Finding 10: only the last level made for --run-dir or --out was recorded, so a
    run refused before training left deep/a (and nd/) empty behind."""
    res = train(*tiny(text, tmp_path / "deep" / "a" / "b"), "--batch-size", "5000")
    assert res.returncode == 2 and "lower --batch-size" in res.stderr
    res = train(*tiny(text, tmp_path / "r"), "--out", str(tmp_path / "nd/x/m.pt"),
                "--batch-size", "5000")
    assert res.returncode == 2 and "lower --batch-size" in res.stderr
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]


def test_a_relative_out_is_written_where_it_was_given(tmp_path, text):
    """Finding 11: config.json recorded --out po.pt as given, so a run resumed from
    another folder wrote its final weights there (b/po.pt), not beside the run."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    res = train(*tiny(text, "po"), "--out", "po.pt", "--pause-at", "1", cwd=a)
    assert res.returncode == 0 and "paused at step 1" in res.stdout, res.stderr
    res = train("--resume", "../a/po", cwd=b)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith(f"and {a}/po.pt")
    assert (a / "po.pt").is_file() and os.listdir(b) == []


def test_overwrite_takes_an_out_inside_the_run_dir(tmp_path, text):
    """Finding 16: `--run-dir inr --out inr/model.pt` trained, and then the same with
    --overwrite said inr 'is not a run directory ... (it holds model.pt)'."""
    d = tmp_path / "inr"
    argv = [*tiny(text, d), "--out", str(d / "model.pt")]
    assert train(*argv).returncode == 0
    res = train(*argv, "--overwrite")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith(f"and {d}/model.pt")
    (d / "model.pt").rename(tmp_path / "model.pt")  # now a file nobody recorded
    (d / "mine.txt").write_text("x")
    res = train(*tiny(text, d), "--overwrite")
    assert res.returncode == 2 and "(it holds mine.txt)" in res.stderr


@pytest.fixture(scope="module")
def paused(tmp_path_factory):
    """A run paused at step 1 of 2, for tests to spoil copies of."""
    d = tmp_path_factory.mktemp("paused")
    (d / "text.txt").write_text(words(2000))
    res = train(*tiny(str(d / "text.txt"), d / "r"), "--log-every", "1",
                "--pause-at", "1")
    assert res.returncode == 0, res.stderr
    return d / "r"


@pytest.mark.parametrize("name", [".lock", "metrics.jsonl"])
def test_a_folder_in_place_of_a_run_file_is_refused(paused, tmp_path, name):
    """Finding 18: '--resume lk1' with lk1/.lock (or metrics.jsonl) a directory said
    'lk1/.lock: Is a directory; lk1/last.pt ... is kept (--resume lk1)', exit 1: the
    advice was the command that had just failed."""
    r = tmp_path / "r"
    shutil.copytree(paused, r)
    if (r / name).exists():
        (r / name).unlink()
    (r / name).mkdir()
    res = train("--resume", str(r))
    assert res.returncode == 2, res.stderr
    assert last_line(res) == (f"python -m txl_mini train: error: {r}/{name} is a "
                              "directory, not a file of the run; move it away")
    assert (r / name).is_dir() and "--resume" not in last_line(res)


def test_a_read_only_run_dir_is_refused_as_input(paused, small_disk):  # noqa: F811
    """Finding 18: '--resume DIR' on a read-only file system said 'cannot write
    DIR/.lock: Read-only file system; ... (--resume DIR)', exit 1 (a new run there
    was refused with exit 2)."""
    disk = small_disk(2048)
    shutil.copytree(paused, disk / "r")
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    res = train("--resume", str(disk / "r"))
    assert res.returncode == 2, res.stderr
    assert last_line(res) == ("python -m txl_mini train: error: --resume: cannot "
                              f"write to {disk}/r: Read-only file system")


def test_path_errors_name_what_is_wrong(tmp_path, text):
    """Finding 21: a symlink loop as --run-dir was 'cannot write to loop: File
    exists', a file on the way to --out 'File exists' (or, for data offline, 'directory
    af does not exist'), a folder as text8's --path 'no such file: ..', a checkpoint
    with a '/' after it 'no such checkpoint file'."""
    loop, afile = tmp_path / "loop", tmp_path / "afile"
    loop.symlink_to("loop")
    afile.write_text("x")
    err = "python -m txl_mini {}: error: "
    cases = [
        (["train", *tiny(text, loop)], "train", f"--run-dir: cannot write to {loop}: "
         "it is a symbolic link loop"),
        (["train", *tiny(text, afile / "sub")], "train", "--run-dir: cannot write "
         f"to {afile}/sub: {afile} is a file, not a directory"),
        (["train", *tiny(text, tmp_path / "r"), "--out", f"{afile}/m.pt"], "train",
         f"--out: cannot write to {afile}: it is a file, not a directory"),
        (["data", "offline", "--out", f"{afile}/c.txt", "--chars", "2000"],
         "data offline", f"--out {afile}/c.txt: {afile} is a file, not a directory"),
        (["data", "text8", "--path", str(tmp_path)], "data text8",
         f"{tmp_path} is a directory. Give --path text8.zip"),
        (["evaluate", f"{afile}/"], "evaluate",
         f"{afile}/: {afile} is a file, not a directory"),
    ]
    for argv, prog, line in cases:
        res = py("-m", "txl_mini", *argv)
        assert res.returncode != 0 and last_line(res).startswith(
            err.format(prog) + line), (argv, res.stderr)
    assert sorted(os.listdir(tmp_path)) == ["afile", "corpus.txt", "loop"]


def test_an_output_that_is_a_symlink_loop_is_refused(tmp_path, text):
    """Finding 22: 'data offline --out lp', lp a symlink to itself, replaced the link
    with a regular file (exit 0), where the shell's '>' refuses; train's --out too."""
    lp = tmp_path / "lp"
    lp.symlink_to("lp")
    for prog, argv in (("data offline", ["data", "offline", "--chars", "2000",
                                         "--out", str(lp)]),
                       ("train", ["train", *tiny(text, tmp_path / "r"), "--out",
                                  str(lp)])):
        res = py("-m", "txl_mini", *argv)
        assert res.returncode == 2, res.stderr
        assert last_line(res) == (f"python -m txl_mini {prog}: error: --out {lp} is "
                                  "a symbolic link loop; give a file name")
        assert lp.is_symlink() and os.readlink(lp) == "lp"
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt", "lp"]


def test_a_run_dir_with_a_tilde_or_only_spaces(tmp_path, text):
    """Finding 17: 'train --run-dir=~/x' (no shell expands a ~ after '=') made ./~/x,
    while --path=~/x was expanded; --run-dir ' ' trained into a folder named ' '."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir(), cwd.mkdir()
    env = dict(ENV, HOME=str(home))
    res = subprocess.run([sys.executable, "-m", "txl_mini", "train",
                          *tiny(text, "x")[:-2], "--run-dir=~/x"], cwd=cwd, env=env,
                         text=True, capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert (home / "x" / "last.pt").is_file() and os.listdir(cwd) == []
    for blank in (" ", "\t"):
        res = train(*tiny(text, blank), cwd=cwd)
        assert res.returncode == 2 and last_line(res) == (
            "python -m txl_mini train: error: --run-dir is blank; give a path")
        res = py("-m", "txl_mini", "data", "offline", "--out", blank, cwd=cwd)
        assert res.returncode == 2 and last_line(res) == (
            "python -m txl_mini data offline: error: --out is blank; give a path")
    assert os.listdir(cwd) == []


def test_the_same_fault_has_the_same_exit_status(tmp_path, text):
    """Finding 24: a missing output folder was exit 1 for 'data offline --out' but 2
    for 'bench --json'; 'train --corpus cue --path f' was exit 1 without naming
    --path. Bad input is exit 2 and names the option."""
    afile = tmp_path / "afile"  # a missing folder is made now, as train makes it
    afile.write_text("x")
    for argv in (["data", "offline", "--chars", "2000", "--out", f"{afile}/c.txt"],
                 ["bench", "--quick", "--json", f"{afile}/x.json"]):
        res = py("-m", "txl_mini", *argv)
        assert res.returncode == 2 and "is a file, not a directory" in last_line(
            res), res.stderr
    res = train(*tiny(text, tmp_path / "r"), "--corpus", "cue")  # --path from tiny
    assert res.returncode == 2 and last_line(res) == (
        "python -m txl_mini train: error: --path: corpus 'cue' is generated from its "
        "recorded settings; it reads no file (drop --path)")
    assert sorted(os.listdir(tmp_path)) == ["afile", "corpus.txt"]
