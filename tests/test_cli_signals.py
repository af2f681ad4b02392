"""SIGTERM outside the training loop, a full disk at the plot, a run stopped before its
first metrics line, a metrics line that is not UTF-8 (issue 31, a fresh probe's
findings 9 and 11-13). Real subprocesses, real signals, a real tmpfs; each test failed
before its fix."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from cli_text import WORDS, words
from test_cli_faults import (  # noqa: F401 (run_dir, small_disk: fixtures)
    ENV,
    py,
    run_dir,
    small_disk,
    start,
    tiny,
    wait_for,
)

from txl_mini.checkpoint import read_checkpoint

TERMINATED = "terminated (SIGTERM)"
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"),
                                reason="needs /proc (Linux)")


def pages(path) -> int:
    """The 4 KiB pages a file takes on a tmpfs."""
    return -(-os.path.getsize(path) // 4096)


def test_a_full_disk_at_the_plot_keeps_the_finished_run(small_disk, text,  # noqa: F811
                                                        tmp_path):
    """Finding 9: a disk that fills with curves.png, the last file of a finished run,
    failed the run: exit 1, no summary. Now one warning line and exit 0: the
    checkpoints and metrics.jsonl are all written, only the plot is missing."""
    ref = tmp_path / "ref"  # the same run on a roomy disk: the sizes of its files
    assert py("-m", "txl_mini", "train", *tiny(text, ref)).returncode == 0
    kept = ["best.pt", "config.json", "last.pt", "metrics.jsonl"]
    need = sum(pages(ref / n) for n in kept) + 1  # + the lock's page (its pid)
    assert pages(ref / "curves.png") > 1  # it cannot fit in the one page to spare
    r = small_disk(4 * (need + 1)) / "r"
    res = py("-m", "txl_mini", "train", *tiny(text, r))
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr == (f"python -m txl_mini train: warning: cannot write "
                          f"{r}/curves.png: No space left on device; the checkpoints "
                          "and metrics.jsonl are written, only the plot is not\n")
    assert "trained 2 steps" in res.stdout and "matplotlib" not in res.stdout
    assert sorted(os.listdir(r)) == kept  # no temporary, no lock
    assert read_checkpoint(r / "last.pt")["extra"]["step"] == 2
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0 and "is finished" in res.stderr, res.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_before_the_first_metrics_line_is_quiet(tmp_path, text, sig):
    """Finding 11: a stop before any metrics line printed matplotlib's two-line
    'No artists with labels found to put in legend' warning with the stop line."""
    r = tmp_path / "r"
    big = str(10 ** 6)  # never reached: no metrics line is written
    proc = start(["train", *tiny(text, r, steps=10 ** 6), "--log-every", big])
    assert "run dir:" in proc.stdout.readline()  # printed just before the loop
    time.sleep(1)  # inside the loop: its handler catches the signal
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    name = sig.name
    assert proc.returncode == 128 + sig and err.count("\n") == 1, err
    assert err.startswith(f"{name}: saved {r}/last.pt at step "), err
    assert (r / "curves.png").read_bytes().startswith(b"\x89PNG")  # empty axes
    assert not (r / "metrics.jsonl").exists() and not list(r.glob(".*.tmp"))


@needs_proc
@pytest.mark.parametrize("argv", [["train", "--steps", "100000"], ["evaluate", "x.pt"],
                                  ["sample", "x.pt"], ["data", "stats", "x"],
                                  ["bench", "--quick"]])
def test_sigterm_while_torch_imports_is_one_line(tmp_path, argv):
    """Finding 12: SIGTERM before a command's work (here: while torch loads) ended
    it silently with 143. Now one line, as Ctrl-C gives; 143 still."""
    proc = start(argv, cwd=tmp_path)
    wait_for(lambda: "libtorch" in open(f"/proc/{proc.pid}/maps").read())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err, err
    prog = " ".join(argv[:2] if argv[0] == "data" else argv[:1])  # 'data stats'
    assert err == f"python -m txl_mini {prog}: {TERMINATED}\n"
    assert os.listdir(tmp_path) == []


def test_sigterm_while_train_builds_its_corpus_unlocks(tmp_path):
    """Finding 12: SIGTERM while the corpus was generated (lock held, before the
    loop) died silently and left DIR/.lock. Now one line, 143, no lock; the run
    directory, made for this run and still empty, goes too (as after Ctrl-C)."""
    r = tmp_path / "r"
    proc = start(["train", "--preset", "tiny", "--offline-chars", "100000000",
                  "--threads", "1", "--quiet", "--run-dir", str(r)])
    wait_for(lambda: (r / ".lock").exists())
    time.sleep(1)  # generating 100M characters takes a minute
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err == (
        f"python -m txl_mini train: {TERMINATED} before training started; no "
        "checkpoint was written yet\n"), err
    assert os.listdir(tmp_path) == []


def test_sigterm_before_a_resumed_run_trains_keeps_it(tmp_path):
    """Finding 12: a resumed run terminated before its loop (here: while it generates
    its corpus again) left DIR/.lock and said nothing. Now the line says last.pt is
    kept, and the run resumes and finishes."""
    r = tmp_path / "r"
    assert py("-m", "txl_mini", "train", "--preset", "tiny", "--offline-chars",
              "20000000", "--steps", "4", "--pause-at", "2", "--eval-chars", "60",
              "--threads", "1", "--quiet", "--run-dir", str(r)).returncode == 0
    proc = start(["train", "--resume", str(r)])
    wait_for(lambda: (r / ".lock").exists())
    time.sleep(1)  # generating 20M characters takes seconds
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err == (
        f"python -m txl_mini train: {TERMINATED} before training started; "
        f"{r}/last.pt, the last checkpoint written, is kept (--resume {r})\n"), err
    assert sorted(os.listdir(r)) == ["config.json", "last.pt"]  # no lock, no temp
    assert read_checkpoint(r / "last.pt")["extra"]["step"] == 2
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0 and "trained 4 steps" in res.stdout, res.stderr


def test_sigterm_while_data_offline_writes_leaves_no_temp(tmp_path):
    """Finding 12: SIGTERM while the corpus was written left .o.txt.XXXX.tmp."""
    out = tmp_path / "o.txt"
    proc = start(["data", "offline", "--chars", "10000000", "--out", str(out)])
    wait_for(lambda: list(tmp_path.glob(".o.txt.*.tmp")))  # the write is under way
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err == (f"python -m txl_mini data offline: "
                                        f"{TERMINATED}\n")
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("command", ["evaluate", "sample", "bench"])
def test_sigterm_during_the_work_is_one_line(run_dir, tmp_path, command):  # noqa: F811
    """Finding 12: evaluate, sample and bench died silently on SIGTERM, 143."""
    argv = {"evaluate": [run_dir / "r", "--chars", "100000000", "--batch-size", "1",
                         "--path", tmp_path / "long.txt", "--quiet"],
            "sample": [run_dir / "r", "--chars", "100000000"],
            "bench": ["--quick", "--quiet"]}[command]
    (tmp_path / "long.txt").write_text(words(20000 * len(WORDS)))
    env = dict(ENV, PYTHONUNBUFFERED="1")  # bench's first line is not flushed
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", command,
                             *map(str, argv)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stream = proc.stderr if command == "sample" else proc.stdout
    stream.readline()  # the line printed just before the work starts
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err, err
    assert err.splitlines()[-1] == f"python -m txl_mini {command}: {TERMINATED}"


def test_resume_takes_a_line_that_is_not_utf8_as_a_corrupt_one(tmp_path, text):
    """Finding 13: a byte that is not UTF-8 in metrics.jsonl stopped --resume with
    "error: 'utf-8' codec can't decode byte 0xff ...". Now it is a corrupt line like
    any other: left out with a note, the lines after it kept."""
    r = tmp_path / "r"
    argv = [*tiny(text, r, steps=6), "--log-every", "1", "--eval-every", "100"]
    assert py("-m", "txl_mini", "train", *argv, "--pause-at", "4").returncode == 0
    metrics = r / "metrics.jsonl"
    lines = metrics.read_bytes().splitlines()
    lines[1] = b'{"step": 2, "loss": \xff\xfe}'  # steps 1-4 logged; step 2's damaged
    metrics.write_bytes(b"\n".join(lines) + b"\n")
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0, res.stderr
    assert res.stderr == (f"python -m txl_mini train: note: {metrics} line 2 is not "
                          "a metrics record; it is left out, the lines after it are "
                          "kept\n")
    steps = [json.loads(x)["step"] for x in metrics.read_text().splitlines()]
    assert steps == [1, 3, 4, 5, 6, 6]  # 6 twice: its loss and its validation


def test_a_sigterm_an_import_swallows_leaves_sigterm_working():
    """A third probe: SIGTERM 0.3 s into train landed in a lazy import whose bare
    except swallowed the Terminated raised for it; the handler had set SIGTERM to
    ignored, so the run trained on, and a second SIGTERM was ignored too (only kill -9
    stopped it). Now the first raises once and a second ends the process (143)."""
    code = ("import os, signal, time\n"
            "from txl_mini.cli import stop\n"
            "with stop.sigterm_raises():\n"
            "    try:\n"
            "        os.kill(os.getpid(), signal.SIGTERM)\n"
            "        time.sleep(1)\n"
            "    except BaseException:  # what a bare except in an import does\n"
            "        pass\n"
            "    print('swallowed', flush=True)\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    time.sleep(5)\n"
            "print('still running')\n")
    res = py("-c", code)
    assert res.stdout == "swallowed\n" and res.returncode == -signal.SIGTERM, res
