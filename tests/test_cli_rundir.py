"""python -m txl_mini train: nothing left behind, one run per directory, a full disk.

Kill -9 during a write leaves no temporary file for good,
two resumes of one run cannot both train, a directory that is not a run is never
overwritten, a full disk is one line, and files are created with ordinary modes.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from txl_mini.checkpoint import read_checkpoint
from txl_mini.cli import rundir
from txl_mini.cli.lock import RunLock
from txl_mini.cli.train import main as train_main
from txl_mini.files import atomic_path

torch.set_num_threads(1)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def base(text, run_dir, steps=6):
    return ["--preset", "tiny", "--path", text, "--steps", str(steps), "--batch-size",
            "16", "--warmup", "1", "--eval-chars", "40", "--threads", "1", "--quiet",
            "--run-dir", str(run_dir)]


def env():
    return dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")


def test_kill_9_leaves_no_temporary_file_after_resume(tmp_path, text):
    """Item 1: a temporary file of a killed write is swept when the run resumes."""
    run_dir = tmp_path / "r"
    args = base(text, run_dir, steps=100000) + ["--save-every", "1", "--log-every", "1"]
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", "train", *args],
                            env=env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not (run_dir / "last.pt").exists():
        time.sleep(0.05)
    time.sleep(0.3)  # saving every step: a kill now often lands mid-write
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    # whether or not this kill hit a write, plant what one leaves behind
    (run_dir / ".last.pt.c0ffee99.tmp").write_bytes(b"PK\x03\x04" + b"\0" * 1000)
    step = read_checkpoint(run_dir / "last.pt")["extra"]["step"]  # still whole
    assert train_main(["--resume", str(run_dir), "--pause-at", str(step + 1)]) == 0
    assert not [n for n in os.listdir(run_dir) if n.endswith(".tmp")]
    assert read_checkpoint(run_dir / "last.pt")["extra"]["step"] == step + 1


def test_second_resume_of_a_running_run_is_refused(tmp_path, text, capsys):
    """Item 3: the run directory is locked while a run trains in it."""
    run_dir = tmp_path / "r"
    assert train_main(base(text, run_dir, steps=6) + ["--pause-at", "2"]) == 0
    capsys.readouterr()
    held = RunLock(str(run_dir))  # as a running `train --resume` holds it
    try:
        assert train_main(["--resume", str(run_dir)]) == 2
        err = capsys.readouterr().err
        pid = os.getpid()
        assert f"{run_dir} is in use by another train process (pid {pid})" in err
        assert read_checkpoint(run_dir / "last.pt")["extra"]["step"] == 2
    finally:
        held.release()
    assert train_main(["--resume", str(run_dir)]) == 0  # free again: it trains
    assert sorted(os.listdir(run_dir)) == sorted(rundir.FILES)  # no lock file left


def test_overwrite_never_replaces_a_directory_that_is_not_a_run(tmp_path, text, capsys):
    """Item 4: a user's own config.json is not a run's, even with --overwrite."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.json").write_text('{"my": "settings"}')
    assert train_main(base(text, mine) + ["--overwrite"]) == 2
    assert "is not a run directory" in capsys.readouterr().err
    assert (mine / "config.json").read_text() == '{"my": "settings"}'
    (mine / "notes.txt").write_text("x")
    (mine / "config.json").unlink()
    assert train_main(base(text, mine) + ["--overwrite"]) == 2
    assert "notes.txt" in capsys.readouterr().err and os.listdir(mine) == ["notes.txt"]


@pytest.fixture
def tmpfs(tmp_path):
    """A 64 KiB filesystem (root only; skipped elsewhere)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                         capture_output=True)
    if res.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def train_cli(*args):
    return subprocess.run([sys.executable, "-m", "txl_mini", "train", *args], env=env(),
                          capture_output=True, text=True, timeout=240)


def test_full_disk_is_one_line_and_leaves_no_half_file(tmpfs, text):
    """Item 2: the checkpoints (~120 KB) do not fit in 64 KiB; at start-up not even
    config.json fits next to a filler file."""
    run_dir = tmpfs / "r"
    res = train_cli(*base(text, run_dir, steps=2))
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    line = res.stderr.strip().splitlines()[-1]
    assert "cannot write" in line and "No space left on device" in line
    assert not [n for n in os.listdir(run_dir) if n.endswith(".tmp")]
    filler = tmpfs / "filler"
    with open(filler, "wb") as f:
        try:
            f.write(b"\0" * (1 << 17))
        except OSError:
            pass
    res = train_cli(*base(text, tmpfs / "r2", steps=2))
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert "config.json: No space left on device" in res.stderr
    assert not (tmpfs / "r2").exists()  # nothing left that would "already exist"


def test_files_get_ordinary_modes(tmp_path, text):
    """Item 21: checkpoints and corpora are not created 0600 (mkstemp's mode)."""
    old = os.umask(0o022)
    try:
        with atomic_path(tmp_path / "a.txt") as tmp:
            open(tmp, "w").close()
        assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644
        assert train_main(base(text, tmp_path / "r", steps=1)) == 0
        for name in ("last.pt", "best.pt", "config.json"):
            assert (tmp_path / "r" / name).stat().st_mode & 0o777 == 0o644, name
    finally:
        os.umask(old)


def test_failed_start_leaves_no_directory(tmp_path, text, capsys):
    """Item 21 (and 15): a refusal after the directory check removes what it made."""
    for extra in (["--threads", "100000"], ["--path", "/dev/zero"]):
        code = train_main(base(text, tmp_path / "r") + extra)
        err = capsys.readouterr().err
        assert code in (1, 2) and "Traceback" not in err
        assert not (tmp_path / "r").exists(), extra
    assert "not a regular file" in err


def test_relative_path_works_from_another_directory(tmp_path, text, monkeypatch):
    """Item 16: --path is stored absolute, so resume and evaluate work elsewhere."""
    from txl_mini.cli.evaluate import main as evaluate_main

    monkeypatch.chdir(tmp_path)
    assert train_main(base("corpus.txt", "r", steps=4) + ["--pause-at", "2"]) == 0
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["args"]["path"] == text
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    assert train_main(["--resume", "../r", "--path", "../corpus.txt",
                       "--pause-at", "3"]) == 0  # the same text may be named again
    assert train_main(["--resume", "../r"]) == 0
    assert evaluate_main(["../r", "--quiet", "--chars", "40"]) == 0
