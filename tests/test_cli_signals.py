"""A run stopped before its first metrics line, a metrics line that is not UTF-8
(issue 31, a fresh probe's findings 11 and 13). Real subprocesses and signals; each
test failed before its fix."""

import json
import signal
import time

import pytest
from test_cli_faults import py, start, tiny


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
