"""Issue 31, fifth probe (b): bench --compile on a CPU, and running out of memory
(real subprocesses under a real address-space limit; each test failed before its fix).

Out of memory is made as `ulimit -v` makes it: RLIMIT_AS, set before the command
starts (preexec_fn) or lowered while it runs (prlimit, to what it maps already, so that
its next large allocation fails).
"""

import glob
import os
import re
import resource
import subprocess
import sys
import time

from cli_text import words
from test_cli_faults import ENV, one_line, tiny, txl

from txl_mini.checkpoint import read_checkpoint
from txl_mini.cli.memory import memory_estimate
from txl_mini.config import preset


def vm_size(pid) -> int:
    """Bytes of address space process `pid` maps (VmSize)."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(x.split()[1]) * 1024 for x in f if x.startswith("VmSize:"))


def squeeze(p) -> None:
    """`ulimit -v` of a running process lowered to what it maps now."""
    vm = vm_size(p.pid)
    resource.prlimit(p.pid, resource.RLIMIT_AS, (vm, vm))


def start(argv):
    return subprocess.Popen([sys.executable, "-m", "txl_mini", *map(str, argv)],
                            env=ENV, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def finish(p) -> subprocess.CompletedProcess:
    out, err = p.communicate(timeout=120)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def squeezed_after(p, marker: bytes) -> subprocess.CompletedProcess:
    """Process p run to its end with its memory squeezed once `marker` is on its
    stderr (a progress bar: the work has begun, the memory check is past)."""
    seen = b""
    while marker not in seen:
        got = os.read(p.stderr.fileno(), 100)
        assert got, f"ended before {marker!r} appeared on stderr"
        seen += got
    squeeze(p)
    return finish(p)


def test_bench_compile_on_a_cpu_is_refused():
    """`bench --compile` on a CPU printed a 96-line aot_autograd traceback with
    garbage shapes ('invalid shape dimension -2797994466021908009'), or segfaulted:
    torch's CPU compiler (inductor), not the shapes. Refused up front: CUDA only."""
    res = txl("bench", "--quick", "--compile", "--device", "cpu", "--quiet")
    line = one_line(res, 2)
    assert line.startswith("python -m txl_mini bench: error: --compile is for CUDA")
    assert "segfault" in line and res.stdout == ""


def test_the_memory_check_counts_ulimit_v(tmp_path):
    """The check read physical RAM only: under `ulimit -v` a run it should refuse
    started, then died in a std::bad_alloc traceback. Now the limit, less what the
    process maps already, is what it checks against, and the refusal says so."""
    (tmp_path / "c.txt").write_text(words(40_000))
    cfg = preset("tiny", seg_len=128, mem_len=2048)
    need = memory_estimate(cfg, 16, 2048, True)[0]
    base = subprocess.run(  # what a train process maps before its check
        [sys.executable, "-c", "import txl_mini.cli.train, re; print(re.search("
         "r'VmSize:\\s+(\\d+)', open('/proc/self/status').read())[1])"],
        env=ENV, text=True, capture_output=True, check=True)
    limit = int(base.stdout) * 1024 + need // 2  # room for half of it
    res = subprocess.run(
        [sys.executable, "-m", "txl_mini", "train",
         *tiny(tmp_path / "c.txt", tmp_path / "r", steps=2), "--batch-size", "16",
         "--seg-len", "128", "--mem-len", "2048"],
        env=ENV, text=True, capture_output=True, timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    line = one_line(res, 2)
    assert "train: error: this needs roughly" in line
    assert "left under this process's address-space limit (ulimit -v" in line
    assert line.endswith("lower --batch-size, --seg-len, --mem-len or --n-layer")
    assert not (tmp_path / "r").exists()


def test_out_of_memory_in_the_training_loop_is_one_line(tmp_path):
    """Out of memory in a training step printed a 20-line DefaultCPUAllocator
    traceback. Now one line (what to lower, the limit, the checkpoint kept), exit 1,
    and last.pt is whole, as its last save left it."""
    (tmp_path / "c.txt").write_text(words(40_000))
    r = tmp_path / "r"
    p = start(["train", *tiny(tmp_path / "c.txt", r, steps=1000), "--save-every", "1",
               "--eval-every", "100000", "--batch-size", "16", "--seg-len", "64",
               "--mem-len", "256"])
    while not (r / "last.pt").exists() and p.poll() is None:
        time.sleep(0.005)
    assert p.poll() is None, p.communicate()
    squeeze(p)
    res = finish(p)
    line = one_line(res, 1)
    m = re.fullmatch(r"python -m txl_mini train: error: out of memory after step "
                     r"(\d+) \(lower --batch-size, --seg-len, --mem-len or --n-layer, "
                     r"or the model's size; ulimit -v limits this process to [\d,]+ "
                     r"MiB\); "
                     rf"{r}/last.pt, the last checkpoint written, is kept "
                     rf"\(--resume {r}\)", line)
    assert m, line
    assert 1 <= read_checkpoint(r / "last.pt")["extra"]["step"] <= int(m[1])
    assert glob.glob(str(r / ".*.tmp")) == []  # nothing half-written


def test_out_of_memory_in_evaluate_is_one_line(tmp_path):
    """evaluate's segments out of memory: a traceback before; one line now, exit 1.
    (The same handler takes sample's and bench's, and CUDA's OutOfMemoryError, a
    RuntimeError that says 'out of memory': not testable on a CPU.)"""
    (tmp_path / "c.txt").write_text(words(400_000))
    assert txl("train", *tiny(tmp_path / "c.txt", tmp_path / "r")).returncode == 0
    # attention scores of 16 x 2 x 256 x 2304 floats (72 MiB) per segment: each a
    # fresh mapping, which the lowered limit refuses
    p = start(["evaluate", tmp_path / "r", "--path", tmp_path / "c.txt", "--split",
               "test", "--batch-size", "16", "--seg-len", "256", "--mem-len", "2048",
               "--threads", "1"])
    res = squeezed_after(p, b"segments")  # its progress bar: the loop has begun
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    last = res.stderr.splitlines()[-1]  # after the progress bar's
    assert re.fullmatch(r"python -m txl_mini evaluate: error: out of memory \(lower "
                        r"--batch-size, --seg-len or --mem-len; ulimit -v limits this "
                        r"process to [\d,]+ MiB\)", last), last
    assert "bpc" not in res.stdout  # no result claimed
