"""torchrun + DistributedDataParallel on the CPU (gloo, 2 processes): each rank owns
B/2 streams and their memory; one step equals one process with all B streams; rank 0
checkpoints and a paused DDP run resumes."""
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
import torch.distributed as dist
from cli_text import words

from txl_mini.checkpoint import read_checkpoint
from txl_mini.cli.train import main as train_main

torch.set_num_threads(1)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="torch.distributed with gloo is not available")


def args(text, run_dir, steps):
    return ["--preset", "tiny", "--path", str(text), "--steps", str(steps),
            "--batch-size", "8",
            "--warmup", "1", "--lr", "1e-2", "--eval-chars", "40", "--log-every", "1",
            "--threads", "1", "--quiet", "--device", "cpu", "--run-dir", str(run_dir)]


def torchrun(*argv):
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                          "--nproc_per_node", "2", "-m", "txl_mini", "train", *argv],
                         env=env, capture_output=True, text=True, timeout=300)
    return res


def assert_close(a, b, tol):
    sa, sb = read_checkpoint(a)["state_dict"], read_checkpoint(b)["state_dict"]
    assert sa.keys() == sb.keys()
    for k in sa:
        assert torch.allclose(sa[k], sb[k], atol=tol, rtol=0), (
            k, (sa[k] - sb[k]).abs().max())


def test_two_ranks_equal_one_process_and_resume(tmp_path):
    text = tmp_path / "corpus.txt"
    text.write_text(words(3000))
    assert train_main(args(text, tmp_path / "one", 1)) == 0
    res = torchrun(*args(text, tmp_path / "ddp", 1))
    assert res.returncode == 0, res.stderr[-3000:]
    assert "device: cpu x 2" in res.stdout
    assert_close(tmp_path / "one" / "last.pt", tmp_path / "ddp" / "last.pt", 1e-6)
    ranks = read_checkpoint(tmp_path / "ddp" / "last.pt")["extra"]["ranks"]
    # B/2 streams of memory each
    assert len(ranks) == 2 and ranks[0]["mems"][0].shape[0] == 4

    # pause a 2-process run after step 1, resume it with 2, compare with 1 process
    res = torchrun(*args(text, tmp_path / "paused", 3), "--pause-at", "1")
    assert res.returncode == 0 and "paused at step 1" in res.stdout, res.stderr[-3000:]
    # 1 process cannot resume it: bad input, as another changed option
    assert train_main(["--resume", str(tmp_path / "paused")]) == 2
    res = torchrun("--resume", str(tmp_path / "paused"), "--quiet")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "resuming at step 1" in res.stdout
    assert read_checkpoint(tmp_path / "paused" / "last.pt")["extra"]["step"] == 3
    assert train_main(args(text, tmp_path / "one3", 3)) == 0
    assert_close(tmp_path / "one3" / "last.pt", tmp_path / "paused" / "last.pt", 1e-5)


def test_sigterm_to_torchrun_prints_the_stop_line_once(tmp_path):
    """Every rank stops and saves, only rank 0 says so. (torchrun
    itself then raises its own SignalException; that traceback is its code's.)"""
    text = tmp_path / "corpus.txt"
    text.write_text(words(3000))
    run_dir = tmp_path / "r"
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "torch.distributed.run",
                             "--standalone", "--nproc_per_node", "2", "-m", "txl_mini",
                             "train",
                             *args(text, run_dir, 100000)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 200
    while time.time() < deadline and not (run_dir / "metrics.jsonl").exists():
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    # the stop line goes to stderr, with torchrun's own lines
    assert err.count("SIGTERM: saved") == 1 and "SIGTERM" not in out, err[-2000:]
    step = read_checkpoint(run_dir / "last.pt")["extra"]["step"]
    assert f"at step {step}/100000" in err
