"""Probe 24b's run-directory findings (issue 31): a finished run's --resume and a
user's file at --out, a NaN after the first checkpoint, a Ctrl-C inside
--overwrite's clear, a metrics.jsonl saved with a BOM, a config.json without
"saved", curves on a full disk, bench --json's refusal, and the exit statuses.
Subprocesses; each test failed before its fix."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from test_cli_faults import ENV, one_line, small_disk, tiny, txl  # noqa: F401

ERR = "python -m txl_mini train: error: "


def test_resuming_a_finished_run_leaves_a_users_file_at_out(tmp_path, text):
    """`echo mine > b2.pt` after a finished run with --out b2.pt: --resume said 'wrote
    b2.pt again from its last.pt (it was not a txl_mini checkpoint ...)' and the
    text was gone. --out is written atomically, so a non-checkpoint there is never
    the run's own: it is refused and kept, and written once moved away."""
    r, out = tmp_path / "b2", tmp_path / "b2.pt"
    assert txl("train", *tiny(text, r), "--out", out).returncode == 0
    for mine in (b"mine\n", b""):  # a text, an empty file
        out.write_bytes(mine)
        res = txl("train", "--resume", r)
        line = one_line(res, 2)
        assert line.startswith(ERR + f"--out {out} is not a checkpoint the run wrote (")
        assert line.endswith(f"); it is left as it is; move it away, and --resume {r} "
                             "writes the model there")
        assert out.read_bytes() == mine
    out.unlink()  # moved away: written, as the run's end would
    res = txl("train", "--resume", r)
    assert one_line(res, 0).endswith(f"; wrote {out} from its last.pt")
    assert out.read_bytes()[:2] == b"PK"


NAN = ["--preset", "tiny", "--offline-chars", "20000", "--steps", "100", "--warmup",
       "50", "--lr", "1e6", "--clip", "1e9", "--eval-chars", "200", "--save-every", "2",
       "--threads", "1", "--quiet"]


def test_a_nan_after_the_first_checkpoint_names_the_way_out(tmp_path):
    """'loss is nan at step 13; stopped, last good checkpoint nan1/last.pt kept': its
    weights were already broken (~1.5e6), --resume repeated the same NaN and
    --resume --lr was refused; the line named no way on."""
    r = tmp_path / "nan1"
    res = txl("train", *NAN, "--run-dir", r, cwd=tmp_path)
    line = one_line(res, 1)
    assert "good" not in line
    head = line.split("; stopped, ")[0]  # loss is nan at step N
    tail = (f"; stopped, {r}/last.pt, the last checkpoint saved before it, is kept, "
            f"but --resume {r} repeats the same steps; start over with other "
            "options and --overwrite")
    assert re.fullmatch(re.escape(ERR) + r"loss is (nan|inf) at step \d+", head)
    assert line == head + tail
    again = one_line(txl("train", "--resume", r), 1)  # true: the same NaN again
    assert again == line


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


@pytest.mark.skipif(not shutil.which("strace"), reason="no strace here")
def test_ctrl_c_inside_overwrites_clear_leaves_a_run_it_takes(tmp_path, text):
    """A Ctrl-C while --overwrite removed the old run's files (config.json first):
    'interrupted before training started; w1/last.pt, the last checkpoint written,
    is kept (--resume w1)', and no config.json: --resume said 'no config.json
    there', --overwrite 'not a run directory'. config.json now goes last, and the
    line says the clear was cut short; the same command finishes it."""
    r = tmp_path / "w1"
    argv = [*tiny(text, r), "--overwrite"]
    assert txl("train", *tiny(text, r)).returncode == 0
    for name in ("last.pt", "config.json"):  # a signal in the clear, then at its end
        assert (r / "last.pt").exists()
        tracer = subprocess.Popen(
            ["strace", "-f", "-o", "/dev/null", "-P", str(r / name), "-e",
             "inject=unlink:delay_exit=3s", sys.executable, "-m", "txl_mini", "train",
             *map(str, argv)], env=ENV, text=True, stderr=subprocess.PIPE,
            stdout=subprocess.PIPE, preexec_fn=lambda: signal.signal(
                signal.SIGINT, signal.SIG_DFL))
        t0 = time.time()
        while (r / name).exists() or not _children(tracer.pid):  # in the delay now
            assert time.time() - t0 < 120 and tracer.poll() is None
            time.sleep(0.01)
        os.kill(_children(tracer.pid)[0], signal.SIGINT)
        _, err = tracer.communicate(timeout=120)
        assert tracer.returncode == 130, err
        assert err == ("python -m txl_mini train: interrupted before training "
                       f"started; --overwrite had begun removing the old run's files "
                       f"from {r}; the same command again finishes that\n")
        assert name == "config.json" or (r / "config.json").exists()
        res = txl("train", *argv)  # as the line says
        assert res.returncode == 0, res.stderr


def test_a_metrics_file_saved_with_a_bom_keeps_its_first_record(tmp_path, text):
    """metrics.jsonl saved by an editor with a UTF-8 BOM: --resume said 'line 1 is
    not a metrics record' and dropped that valid record."""
    r = tmp_path / "r"
    argv = [*tiny(text, r, steps=6), "--log-every", "1", "--eval-every", "100"]
    assert txl("train", *argv, "--pause-at", "4").returncode == 0
    metrics = r / "metrics.jsonl"
    metrics.write_bytes(b"\xef\xbb\xbf" + metrics.read_bytes())
    res = txl("train", "--resume", r)
    assert res.returncode == 0 and "note" not in res.stderr, res.stderr
    steps = [json.loads(x)["step"] for x in metrics.read_text().splitlines()]
    assert steps == [1, 2, 3, 4, 5, 6, 6]  # 6 twice: its loss and its validation


def test_a_deleted_last_pt_without_a_saved_record_is_refused(tmp_path, text):
    """config.json without "saved" (an older version's, or edited) and last.pt
    deleted: --resume said 'resuming at step 0' and replaced best.pt and the metrics
    of a run that had saved. metrics.jsonl past the first save tells it now."""
    r = tmp_path / "r"
    argv = [*tiny(text, r, steps=4), "--save-every", "1", "--log-every", "1",
            "--eval-every", "1"]
    assert txl("train", *argv, "--pause-at", "3").returncode == 0
    config = json.loads((r / "config.json").read_text())
    config.pop("saved")
    (r / "config.json").write_text(json.dumps(config))
    (r / "last.pt").unlink()
    best, metrics = (r / "best.pt").read_bytes(), (r / "metrics.jsonl").read_bytes()
    res = txl("train", "--resume", r)
    assert one_line(res, 2) == ERR + (
        f"{r}/last.pt is missing, but the run wrote it (metrics.jsonl records step "
        f"3, past its first save); put it back to continue, or start the run again "
        f"with --run-dir {r} --overwrite and its options")
    assert (r / "best.pt").read_bytes() == best
    assert (r / "metrics.jsonl").read_bytes() == metrics


def test_curves_on_a_full_disk_and_nothing_to_do_agree(small_disk, text):  # noqa: F811
    """A finished run's curves.png missing on a full disk: --resume warned 'cannot
    write R/curves.png: No space left on device' and then said 'nothing to do (its
    last.pt and best.pt are unchanged); drew its curves.png, which was missing'."""
    r = small_disk(4096) / "r"
    assert txl("train", *tiny(text, r)).returncode == 0
    (r / "curves.png").unlink()
    with open(r.parent / "filler", "wb") as f:  # the disk full
        with pytest.raises(OSError):
            while True:
                f.write(b"\0" * 65536)
                f.flush()
    for _ in range(2):
        res = txl("train", "--resume", r)
        assert res.returncode == 0 and "nothing to do" not in res.stderr, res.stderr
        warning, line = res.stderr.splitlines()
        assert warning == (f"python -m txl_mini train: warning: cannot write "
                           f"{r}/curves.png: No space left on device; the "
                           "checkpoints and metrics.jsonl are written, only the "
                           "plot is not")
        assert line == (f"python -m txl_mini train: {r} is finished: step 2 of 2; "
                        "its last.pt and best.pt are unchanged; its curves.png is "
                        "still missing (not drawn: see above)")
        assert not (r / "curves.png").exists()


def test_bench_json_refusal_names_the_empty_file_it_replaces_too(tmp_path):
    """'exists and is not an earlier bench result (the only file --json replaces)':
    an empty file is replaced too (README says so); the line left it out."""
    path = tmp_path / "notes.txt"
    path.write_text("mine\n")
    res = txl("bench", "--quick", "--quiet", "--threads", "1", "--json", path)
    assert one_line(res, 2) == (
        f"python -m txl_mini bench: error: --json {path} exists and is neither an "
        "earlier bench result nor an empty file (the only files --json replaces); "
        "give a new file name, or move it away")
    assert path.read_text() == "mine\n"


def test_a_read_only_output_folder_is_exit_2_as_readme_lists(tmp_path, text):
    """A folder that cannot be written (a read-only mount) is one line, exit 2; the
    README's list of exit statuses did not say so (1: 'the machine failed')."""
    ro = tmp_path / "ro"
    ro.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", ro],
                         capture_output=True, text=True)
    if res.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        res = txl("train", *tiny(text, ro / "r"))
    finally:
        subprocess.run(["umount", str(ro)], check=True)
    assert one_line(res, 2) == ERR + (f"--run-dir: cannot write to {ro / 'r'}: "
                                      "Read-only file system")
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    statuses = " ".join(readme.split("- Exit statuses:")[1].split("; 1 the")[0].split())
    assert "an output's folder that cannot be written: read-only" in statuses
