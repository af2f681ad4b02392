"""Issue 31, the eighteenth probe, items 3, 5 and 6, as a user's shell runs them.

3. A run whose final --out write failed (a full disk) or was killed never got its
   curves.png: the resume that writes --out from last.pt drew nothing. It now draws a
   missing curves.png too, as the run's end would have.
5. The note for a metrics.jsonl line that is no record lacked the command's prefix.
6. A record put in by hand out of order was dropped without a note."""

import json

from test_cli_faults import py, tiny

PROG = "python -m txl_mini train"


def test_the_resume_that_writes_out_draws_a_missing_curves_png(tmp_path, text):
    r, out = tmp_path / "r", tmp_path / "m.pt"
    res = py("-m", "txl_mini", "train", *tiny(text, r), "--out", str(out))
    assert res.returncode == 0, res.stderr
    for f in (out, r / "curves.png"):  # killed as it wrote --out: neither is there
        f.unlink()
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0 and res.stderr == (
        f"{PROG}: {r} is finished: step 2 of 2; wrote {out} from its last.pt; drew "
        "its curves.png, which was missing\n"), res.stderr
    assert out.is_file()
    assert (r / "curves.png").read_bytes().startswith(b"\x89PNG")
    res = py("-m", "txl_mini", "train", "--resume", str(r))  # all there: as before
    assert res.returncode == 0 and res.stderr == (
        f"{PROG}: {r} is finished: step 2 of 2; nothing to do (its last.pt, best.pt "
        f"and {out} are unchanged)\n"), res.stderr


def test_a_finished_run_without_out_gets_its_curves_png_back(tmp_path, text):
    r = tmp_path / "r"
    assert py("-m", "txl_mini", "train", *tiny(text, r)).returncode == 0
    (r / "curves.png").unlink()  # killed as it drew the plot
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0 and res.stderr.endswith(
        "nothing to do (its last.pt and best.pt are unchanged); drew its curves.png, "
        "which was missing\n"), res.stderr
    assert (r / "curves.png").is_file()


def _paused(tmp_path, text):
    """A run of 6 steps paused at step 4, a metrics line for each step."""
    r = tmp_path / "r"
    argv = [*tiny(text, r, steps=6), "--log-every", "1", "--eval-every", "100"]
    res = py("-m", "txl_mini", "train", *argv, "--pause-at", "4")
    assert res.returncode == 0, res.stderr
    return r, r / "metrics.jsonl"


def _resumed_after(tmp_path, text, edit):
    """The paused run resumed after `edit(lines)` changed its metrics.jsonl in place:
    (the resume's result, metrics.jsonl)."""
    r, metrics = _paused(tmp_path, text)
    lines = metrics.read_text().splitlines()
    edit(lines)
    metrics.write_text("\n".join(lines) + "\n")
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0, res.stderr
    return res, metrics


def test_the_note_on_a_bad_metrics_line_has_the_commands_prefix(tmp_path, text):
    def cut_off(lines):  # line 2 ends mid-record
        lines[1] = '{"step": 2, "lo'

    res, metrics = _resumed_after(tmp_path, text, cut_off)
    assert res.stderr.startswith(
        f"{PROG}: note: {metrics} line 2 is not a metrics record; it is left out, "
        "the lines after it are kept\n"), res.stderr


def test_a_record_out_of_order_is_left_out_with_a_note(tmp_path, text):
    res, metrics = _resumed_after(  # sed -i '3i ...'
        tmp_path, text, lambda lines: lines.insert(2, '{"step": 90, "loss": 1}'))
    assert res.stderr.startswith(
        f"{PROG}: note: {metrics} line 3 is out of order (step 90, before step 4's "
        "line); it is left out, the lines after it are kept\n"), res.stderr
    steps = [json.loads(x)["step"] for x in metrics.read_text().splitlines()]
    assert steps == sorted(steps) and 90 not in steps and {1, 2, 3, 4, 5} <= set(steps)
