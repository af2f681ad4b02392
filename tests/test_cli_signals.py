"""A full disk at the plot, a run stopped before its first metrics line, a metrics
line that is not UTF-8 (issue 31, a fresh probe's findings 9, 11 and 13). Real
subprocesses, real signals, a real tmpfs; each test failed before its fix."""

import json
import os
import signal
import time

import pytest
from test_cli_faults import (  # noqa: F401 (small_disk: a fixture)
    py,
    small_disk,
    start,
    tiny,
)

from txl_mini.checkpoint import read_checkpoint


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
    assert res.stderr == (f"note: {metrics} line 2 is not a metrics record; it is "
                          "left out, the lines after it are kept\n")
    steps = [json.loads(x)["step"] for x in metrics.read_text().splitlines()]
    assert steps == [1, 3, 4, 5, 6, 6]  # 6 twice: its loss and its validation
