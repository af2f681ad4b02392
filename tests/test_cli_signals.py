"""A metrics line that is not UTF-8 (issue 31, a fresh probe's finding 13). Real
subprocesses; each test failed before its fix."""

import json

from test_cli_faults import py, tiny


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
