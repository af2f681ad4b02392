"""A fifth probe of the command lines: a signal ignored by whoever started train, and
sample's --no-cache on a vanilla checkpoint (subprocesses; each failed before)."""
import signal
import subprocess
import sys
import time

from test_cli_faults import ENV, one_line, tiny, txl, wait_for


def ignore_sigterm():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # as `trap '' TERM` hands it on
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as a terminal starts it


def test_a_sigterm_ignored_by_the_parent_stays_ignored_in_the_loop(tmp_path, text):
    """`(trap '' TERM; exec python -m txl_mini train ...)`: the loop's handler took
    SIGTERM over anyway and the run stopped (143) where sample, and train outside its
    loop, kept it ignored. Now the run trains on; Ctrl-C still stops it."""
    r = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, "-m", "txl_mini", "train", *tiny(text, r, steps=100000)],
        env=ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=ignore_sigterm)
    wait_for(lambda: (r / "metrics.jsonl").exists())  # inside the loop
    proc.send_signal(signal.SIGTERM)
    time.sleep(2)
    running = proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=240)
    assert running and proc.returncode == 130, err
    assert err.startswith("SIGINT: saved") and "SIGTERM" not in err, err


def test_sample_refuses_no_cache_on_a_vanilla_checkpoint(tmp_path, text):
    """evaluate refused --no-cache for a vanilla checkpoint; sample ignored it."""
    r = tmp_path / "v"
    assert txl("train", *tiny(text, r), "--vanilla").returncode == 0
    res = txl("sample", r, "--chars", "5", "--no-cache")
    assert one_line(res, 2).endswith(
        "sample: error: --no-cache: a vanilla checkpoint has no key/value cache; "
        "drop it"), res.stderr
    assert res.stdout == ""


def test_out_is_not_another_runs_file(tmp_path, text):
    """`train ... --run-dir other --out victim/last.pt --overwrite` replaced another
    run's last.pt (a running one's too): its training state was gone, and
    `--resume victim` said 'weights only'. Now refused before any work."""
    victim = tmp_path / "victim"
    assert txl("train", *tiny(text, victim, steps=4), "--pause-at", "2").returncode == 0
    before = (victim / "last.pt").read_bytes()
    res = txl("train", *tiny(text, tmp_path / "other"), "--overwrite", "--out",
              victim / "last.pt")
    assert one_line(res, 2).endswith(
        f"--out {victim}/last.pt is the last.pt of another run, {victim}; give a file "
        "outside it"), res.stderr
    assert (victim / "last.pt").read_bytes() == before
    assert not (tmp_path / "other").exists()


def test_sighup_in_the_loop_saves_last_pt(tmp_path, text):
    """A closed terminal or a dropped ssh session (SIGHUP) killed train silently, with
    everything since the last save lost (exit 129, no line). Now it stops as SIGTERM
    does: last.pt saved, one line, 129; --resume continues it."""
    r = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, "-m", "txl_mini", "train", *tiny(text, r, steps=100000)],
        env=ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        # as a terminal starts it: under `nohup` (SIGHUP ignored) the run rightly
        # goes on, and this test, run so, waited out its timeout
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    wait_for(lambda: (r / "metrics.jsonl").exists())  # inside the loop
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 129 and err.count("\n") == 1, err
    assert err.startswith(f"SIGHUP: saved {r}/last.pt at step "), err
    assert (r / "last.pt").exists()
