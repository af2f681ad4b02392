"""The command lines on a CUDA GPU. Skipped without one: CI has none, so these run only
where a GPU is lent (the project's device machine, an H200 with torch 2.11). The resume
test failed there before its two fixes; the out-of-memory one guards what no CPU has."""

import os
import shutil
import subprocess
import sys

import pytest
import torch
from cli_text import words
from test_cli_faults import ENV, one_line, tiny

# conftest.py hides the GPU from the rest of the suite; these commands get it back
GPUS = os.environ["TXL_TESTS_CUDA_VISIBLE_DEVICES"]
GPU_ENV = {k: v for k, v in ENV.items() if k != "CUDA_VISIBLE_DEVICES"}
if GPUS != "unset":
    GPU_ENV["CUDA_VISIBLE_DEVICES"] = GPUS
NO_GPU = torch.version.cuda is None or not shutil.which("nvidia-smi")
pytestmark = pytest.mark.skipif(NO_GPU, reason="needs a CUDA GPU and CUDA torch")


def txl(*argv):
    """`python -m txl_mini ARGV` in a subprocess that sees the GPU."""
    return subprocess.run([sys.executable, "-m", "txl_mini", *map(str, argv)],
                          env=GPU_ENV, text=True, capture_output=True, timeout=300)


def _tensors(obj, prefix=""):
    """Every tensor in a checkpoint's nested dicts and lists, by its path."""
    if torch.is_tensor(obj):
        yield prefix, obj
    elif isinstance(obj, (dict, list, tuple)):
        items = obj.items() if isinstance(obj, dict) else enumerate(obj)
        for k, v in items:
            yield from _tensors(v, f"{prefix}.{k}")


@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_a_paused_run_resumes_bitwise_on_cuda(tmp_path, text, precision):
    """bf16: torch 2.11's cuDNN attention failed on the strided bias at the first
    validation (a traceback); fp32: --resume raised TypeError (an RNG state loaded onto
    the GPU). Bitwise only because the run is tiny and short: over 200 steps of the book
    preset two uninterrupted CUDA runs already differ (memory-efficient attention's
    backward is not deterministic; measured on an H100, see the README)."""
    def train(run_dir, *extra):
        args = tiny(text, run_dir, steps=6)
        args[args.index("--eval-chars") + 1] = "2000"
        return txl("train", *args, "--device", "cuda", "--precision", precision,
                   "--eval-every", "3", *extra)

    assert train(tmp_path / "a").returncode == 0
    assert train(tmp_path / "b", "--pause-at", "3").returncode == 0
    res = txl("train", "--resume", tmp_path / "b", "--quiet")
    assert res.returncode == 0, res.stderr
    a, b = (dict(_tensors(torch.load(tmp_path / r / "last.pt", map_location="cpu",
                                        weights_only=True)))
            for r in "ab")
    assert a.keys() == b.keys() and len(a) > 100
    assert all(torch.equal(a[k], b[k]) for k in a)
    for cmd in (["evaluate", tmp_path / "b", "--quiet"],
                ["sample", tmp_path / "b" / "last.pt", "--chars", "20", "--quiet"]):
        res = txl(*cmd)
        assert res.returncode == 0 and res.stdout.strip(), res.stderr


def test_out_of_memory_on_the_gpu_is_one_line(tmp_path):
    """Another process holds all but 2 GiB: train's first steps run out of memory.
    Its own corpus: 1,024 streams need more than 64 training characters each, which
    the shared 2,000-character one has not (refused as bad input, exit 2)."""
    text = tmp_path / "corpus.txt"
    text.write_text(words(90_000))  # 81,000 training characters: 1,024 streams of 79
    hog = subprocess.Popen([sys.executable, "-c", (
        "import sys, time, torch; free, _ = torch.cuda.mem_get_info();"
        "x = torch.empty(free - 2 * 2**30, dtype=torch.uint8, device='cuda');"
        "print('held', flush=True); time.sleep(300)")],
        stdout=subprocess.PIPE, text=True, env=GPU_ENV)
    try:
        assert hog.stdout.readline().strip() == "held"
        res = txl("train", "--preset", "book", "--corpus", "offline", "--path", text,
                  "--steps", "4", "--warmup", "1", "--quiet", "--batch-size", "1024",
                  "--run-dir", tmp_path / "r", "--device", "cuda")
    finally:
        hog.kill()
        hog.wait()
    line = one_line(res, 1)
    assert "out of memory" in line and "--batch-size" in line
