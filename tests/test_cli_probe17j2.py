"""Issue 31, the seventeenth probe: a Ctrl-C to torchrun in the first seconds, while
each rank imports torch, printed the stop line once per rank (the early handler of
txl_mini/__init__.py, and cli.main's, wrote on every rank); README promises one,
rank 0's."""

import os
import signal
import subprocess
import sys
import time

import pytest
import torch.distributed as dist
from cli_text import words

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="torch.distributed with gloo is not available")


def _ranks(parent: int) -> list[int]:
    """The processes torchrun started: its children that run txl_mini."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and b"txl_mini" in cmd:
            found.append(int(pid))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_an_early_ctrl_c_to_torchrun_is_one_line(tmp_path):
    text = tmp_path / "corpus.txt"
    text.write_text(words(3000))
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    # its own process group, SIGINT at its default: a terminal's foreground job
    proc = subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--standalone",
         "--nproc_per_node", "2", "-m", "txl_mini", "train", "--preset", "tiny",
         "--path", str(text), "--steps", "100000", "--batch-size", "8", "--threads",
         "1", "--quiet", "--device", "cpu", "--run-dir", str(tmp_path / "r")],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 120
        while len(_ranks(proc.pid)) < 2:
            assert time.time() < deadline and proc.poll() is None, "no ranks"
            time.sleep(0.01)
        time.sleep(0.3)  # Python is up, the early handler set; torch still imports
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: torchrun and both ranks get it
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    ours = [line for line in err.splitlines()
            if line.startswith("python -m txl_mini train: ")]
    assert len(ours) == 1, err[-3000:]
    assert ours[0].startswith("python -m txl_mini train: interrupted"), ours
