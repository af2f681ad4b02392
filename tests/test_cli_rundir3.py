"""The run directory under a hostile probe (issue 31): its files as FIFOs, devices or
sockets, a closed pipe at train's first line, a resume from a moved text, a run
directory named after --out, a checkpoint that is a dangling link (subprocesses;
each test failed before its fix)."""

import json
import os
import shutil
import socket
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, tiny, txl

PROG = "python -m txl_mini train"


def train(*argv, timeout=120):
    """`python -m txl_mini train ARGV`; a run blocked on a FIFO fails the test at
    `timeout` (the child is killed) instead of hanging the suite."""
    return subprocess.run([sys.executable, "-m", "txl_mini", "train",
                           *[str(a) for a in argv]], env=ENV, text=True,
                          capture_output=True, timeout=timeout)


def put(path, kind: str) -> str:
    """Make `path` a thing that is no regular file; returns how train names it."""
    if kind == "fifo":
        os.mkfifo(path)
        return "a FIFO (named pipe)"
    if kind == "zero":
        os.symlink("/dev/zero", path)
        return "a symbolic link to /dev/zero, a character device"
    with socket.socket(socket.AF_UNIX) as s:  # the file stays when it is closed
        s.bind(str(path))
    return "a socket"


def refused(res, path, what: str) -> None:
    assert one_line(res, 2) == (f"{PROG}: error: {path} is {what}, not a file of the "
                                "run; move it away")


@pytest.mark.parametrize("name,kind", [("config.json", "fifo"),
                                       ("config.json", "zero"),
                                       ("metrics.jsonl", "socket")])
def test_a_new_run_refuses_a_run_file_that_is_no_regular_file(tmp_path, text, name,
                                                             kind):
    """`mkfifo z1/config.json; train ... --run-dir z1` blocked forever opening it
    (a first SIGTERM ignored, a second killing it with no line); a link to /dev/zero
    there: a MemoryError traceback, exit 1."""
    z1 = tmp_path / "z1"
    z1.mkdir()
    what = put(z1 / name, kind)
    res = train(*tiny(text, z1), timeout=60)
    refused(res, z1 / name, what)
    assert os.listdir(z1) == [name] and res.stdout == ""


@pytest.mark.parametrize("name,kind", [("config.json", "fifo"),
                                       ("metrics.jsonl", "zero"),
                                       ("last.pt", "fifo"), ("best.pt", "zero"),
                                       (".lock", "fifo")])
def test_a_resume_refuses_a_run_file_that_is_no_regular_file(paused, tmp_path, name,
                                                             kind):
    """`--resume z1` with z1/config.json a FIFO said 'no config.json there' (it is
    there); metrics.jsonl -> /dev/zero: a MemoryError traceback, exit 1; last.pt a
    FIFO: blocked forever; best.pt -> /dev/zero or a FIFO .lock: trained on."""
    r = tmp_path / "r"
    shutil.copytree(paused, r)
    if (r / name).exists():
        (r / name).unlink()
    what = put(r / name, kind)
    res = train("--resume", r, timeout=60)
    refused(res, r / name, what)
    assert "no config.json there" not in res.stderr
    assert not (r / name).is_file()  # left as it was, not written over


def test_a_closed_pipe_at_the_first_line_leaves_no_empty_folders(tmp_path, text):
    """`train ... --run-dir hp4/a/b | true`: 141, and hp4, hp4/a, hp4/a/b were left
    empty (`>/dev/full` removed them)."""
    p = subprocess.Popen([sys.executable, "-m", "txl_mini", "train",
                          *tiny(text, tmp_path / "hp4" / "a" / "b")], env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.close()  # the reader is gone before train's first line
    err = p.stderr.read()
    assert p.wait(timeout=120) == 141, err
    assert err == "" and not (tmp_path / "hp4").exists()


def test_a_resume_from_a_moved_text_records_its_new_path(tmp_path):
    """train --path mv1.txt; mv mv1.txt mv2.txt; `--resume mvr --path mv2.txt` went
    on, but the next `--resume mvr` said mv1.txt 'is gone; give it with --resume mvr
    --path FILE': config.json still named mv1.txt, last.pt's meta mv2.txt."""
    from cli_text import words

    mv1, mv2, run = tmp_path / "mv1.txt", tmp_path / "mv2.txt", tmp_path / "mvr"
    mv1.write_text(words(2000))
    assert train(*tiny(mv1, run, steps=6), "--pause-at", "2").returncode == 0
    mv1.rename(mv2)
    res = train("--resume", run, "--path", mv2, "--pause-at", "3")
    assert res.returncode == 0, res.stderr
    config = json.loads((run / "config.json").read_text())
    assert config["args"]["path"] == config["corpus"]["path"] == str(mv2)
    res = train("--resume", run, "--pause-at", "4")
    assert res.returncode == 0, res.stderr
    res = train("--resume", run)  # to its end
    assert res.returncode == 0 and "trained 6 steps" in res.stdout, res.stderr
    res = train("--resume", run)
    assert res.returncode == 0, res.stderr
    assert f"{run} is finished: step 6 of 6" in res.stderr


def test_a_run_dir_from_out_is_named_as_such(tmp_path, text):
    """With only --out o.pt, the run directory o (a file, or someone else's folder)
    was blamed on '--run-dir', an option never given."""
    args = tiny(text, "x")[:-2]  # no --run-dir
    (tmp_path / "o").write_text("mine\n")
    res = txl("train", *args, "--out", "o.pt", cwd=tmp_path)
    assert one_line(res, 2) == (f"{PROG}: error: o, the run directory of --out o.pt, "
                                "is a file, not a directory")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "notes.txt").write_text("mine\n")
    res = txl("train", *args, "--out", "p.pt", cwd=tmp_path)
    assert one_line(res, 2) == (
        f"{PROG}: error: p, the run directory of --out p.pt, is not a run directory "
        "of python -m txl_mini train (it holds notes.txt); give a new or empty "
        "directory with --run-dir DIR")


@pytest.mark.parametrize("command", ["evaluate", "sample"])
def test_a_dangling_link_as_checkpoint_is_named_so(tmp_path, command):
    """`evaluate gone.pt` with gone.pt -> missing.pt said 'no such checkpoint file',
    exit 1, while `ls` shows gone.pt there."""
    link = tmp_path / "gone.pt"
    os.symlink("missing.pt", link)
    res = txl(command, link)
    assert one_line(res, 2) == (f"python -m txl_mini {command}: error: {link} is a "
                                "symbolic link to missing.pt, which is missing; give "
                                "a checkpoint")
