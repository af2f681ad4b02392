"""Probe 28b's findings (issue 31): a `--resume` soon after a kill -9 during a write
left the dead temporary for good (a sweep removed one only once 60 s old); a Ctrl-C or
SIGTERM during `data offline`'s renames said 'interrupted' alone, though both files
were written. Subprocesses, real signals; each test failed before its fix."""

import os
import signal
import subprocess
import sys
import time

import pytest
from test_cli_faults import ENV, py, tiny, txl

PROG = "python -m txl_mini"

# enters atomic_path(argv[1]), writes half a file and sleeps: a write in progress
WRITER = """
import sys, time
from txl_mini.files import atomic_path
with atomic_path(sys.argv[1]) as tmp:
    with open(tmp, "w") as f:
        f.write("half")
    print(tmp, flush=True)
    time.sleep(120)
"""

# `python -m txl_mini ARGV[3:]` whose rename to a file named argv[1] first makes the
# file argv[2] and sleeps: a signal sent then lands during the renames
SLOW_RENAME = """
import os, runpy, sys, time
target, mark = sys.argv[1], sys.argv[2]
def slow(rename):
    def wrapped(src, dst, *a, **k):
        if os.path.basename(os.fspath(dst)) == target:
            open(mark, "w").close()
            time.sleep(1.5)
        return rename(src, dst, *a, **k)
    return wrapped
os.replace, os.link = slow(os.replace), slow(os.link)
sys.argv = ["txl_mini", *sys.argv[3:]]
runpy.run_module("txl_mini", run_name="__main__", alter_sys=True)
"""


def writing(path):
    """A child process inside atomic_path(path): (the process, its temporary)."""
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], env=ENV,
                             stdout=subprocess.PIPE, text=True)
    tmp = child.stdout.readline().rstrip("\n")
    assert os.path.exists(tmp), tmp
    return child, tmp


def killed(child):
    child.kill()  # SIGKILL: no handler, no finally
    child.wait()


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One tiny run, trained to its end with --out o/a/m.pt: (its folder, --out)."""
    base = tmp_path_factory.mktemp("finished")
    text = base / "corpus.txt"
    text.write_text("the cat sat on the mat and the dog ran far away " * 40)
    out = base / "o" / "a" / "m.pt"
    res = txl("train", *tiny(text, base / "r"), "--out", out)
    assert res.returncode == 0, res.stderr
    return base / "r", out


def test_a_resume_right_after_a_kill_9_mid_write_removes_the_temporary(finished):
    """--out's write killed (kill -9) mid-way, then `--resume` at once: it wrote --out
    and the dead temporary stayed (swept only once 60 s old, which a finished run's
    resume never is). README: removed when the run resumes. Now at once."""
    r, out = finished
    out.unlink()
    child, tmp = writing(out)
    killed(child)
    res = txl("train", "--resume", r)
    assert res.returncode == 0, res.stderr
    assert f"{r} is finished: step 2 of 2; wrote {out} from its last.pt" in res.stderr
    assert sorted(os.listdir(out.parent)) == ["m.pt"], tmp


def test_a_live_writer_keeps_its_temporary_and_a_dead_one_loses_it(tmp_path):
    """Another process writing the same file (inside atomic_path) keeps its temporary
    through `data offline --out`'s sweep; once it is killed (kill -9), the next
    `data offline` removes it at once, not 60 s later."""
    out = tmp_path / "c.txt"
    child, tmp = writing(out)
    try:
        argv = ("data", "offline", "--chars", "1000", "--out", out, "--overwrite")
        assert txl(*argv).returncode == 0
        assert os.path.exists(tmp) and child.poll() is None  # a write in progress
    finally:
        killed(child)
    assert txl(*argv).returncode == 0
    assert sorted(os.listdir(tmp_path)) == ["c.txt"], tmp


@pytest.mark.parametrize("sig, words, code", [
    (signal.SIGINT, "\n" + PROG + " data offline: interrupted", 130),
    (signal.SIGTERM, PROG + " data offline: terminated (SIGTERM)", 143)],
    ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_the_renames_says_both_files_are_written(
        tmp_path, sig, words, code):
    """Ctrl-C or SIGTERM while `data offline` renames its files (held until both are
    renamed): it said 'interrupted' alone, though both are whole and new. Now it says
    so, with the same exit status."""
    out, deps, mark = tmp_path / "c.txt", tmp_path / "d.tsv", tmp_path / "mark"
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW_RENAME, "c.txt", str(mark), "data", "offline",
         "--chars", "2000", "--out", str(out), "--deps-out", str(deps)],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not mark.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(sig)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == code, stderr
    assert stderr == (f"{words} after writing {out} and {deps} (both complete)\n")
    # whole and new: what the same command writes without a signal
    again = tmp_path / "again"
    res = py("-m", "txl_mini", "data", "offline", "--chars", "2000", "--out",
             again / "c.txt", "--deps-out", again / "d.tsv")
    assert res.returncode == 0, res.stderr
    assert out.read_text() == (again / "c.txt").read_text()
    assert deps.read_text() == (again / "d.tsv").read_text()
