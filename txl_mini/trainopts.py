"""Options of `python -m txl_mini.train`: parsing, validation before any work, the run directory.

Every check here runs before the corpus is built or a step is trained, and every failure is
one line on stderr with a non-zero exit (chapter 6 shows the commands).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile

import torch

from .config import PRESETS, preset
from .data import CORPORA, OFFLINE_CHARS

# the only options a resumed run may change
RESUME_KEEPS = ("device", "quiet", "threads", "resume", "pause_at")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m txl_mini.train", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Train a char-level Transformer-XL (or the vanilla baseline) with "
                    "checkpoints, exact resume and clean Ctrl-C. Multi-GPU: "
                    "torchrun --nproc_per_node N -m txl_mini.train ...")
    a = p.add_argument
    a("--preset", default="book", choices=sorted(PRESETS), help="model size")
    a("--vanilla", action="store_true", help="train the vanilla baseline instead")
    a("--seg-len", type=int, default=None, help="L, override the preset's segment length")
    a("--mem-len", type=int, default=None, help="M, override the preset's memory length")
    a("--dropout", type=float, default=None, help="override the preset's dropout")
    a("--corpus", default="offline", choices=CORPORA,
      help="offline: generated here, no download; text8: downloaded and verified")
    a("--path", default=None, help="local text8(.zip) for --corpus text8; any text file for "
      "--corpus offline (normalized to a-z and space, split 90/5/5)")
    a("--offline-chars", type=int, default=OFFLINE_CHARS, help="size of the generated corpus")
    a("--steps", type=int, default=500, help="optimizer updates (one segment each)")
    a("--batch-size", type=int, default=16, help="B parallel streams (all processes together)")
    a("--lr", type=float, default=1e-3, help="peak learning rate of Adam")
    a("--warmup", type=int, default=50, help="linear warm-up steps, then cosine decay to 0")
    a("--clip", type=float, default=0.25, help="gradient-norm clipping")
    a("--seed", type=int, default=0, help="initial weights, dropout")
    a("--device", default="auto", choices=["auto", "cpu", "cuda", "mps"],
      help="auto: cuda, else mps, else cpu")
    a("--precision", default="bf16", choices=["bf16", "fp32"],
      help="bf16 autocast on CUDA (CPU and MPS always run fp32)")
    a("--eval-every", type=int, default=0, help="validation bpc every N steps (0: at the end)")
    a("--eval-chars", type=int, default=100_000, help="validation characters per evaluation")
    a("--save-every", type=int, default=500, help="write last.pt every N steps (and at the end)")
    a("--log-every", type=int, default=10, help="a metrics.jsonl line every N steps")
    a("--run-dir", default=None, help="directory for config, metrics, curves and checkpoints "
      "(default: --out without .pt)")
    a("--out", default=None, help="also write the final model to this .pt file")
    a("--resume", metavar="DIR", default=None, help="continue the run in DIR exactly")
    a("--overwrite", action="store_true", help="start over in an existing run directory")
    a("--pause-at", type=int, default=None, metavar="STEP", help="save and stop at this step, "
      "to --resume later (e.g. time-limited jobs)")
    a("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    a("--quiet", action="store_true", help="no progress bar")
    return p


class UsageError(Exception):
    """A bad option value; printed as `error: ...` with exit status 2."""


def explicit_options(argv) -> set[str]:
    """Names of the options given on the command line (not just left at their default)."""
    p = build_parser()
    for action in p._actions:
        action.default = argparse.SUPPRESS
    return set(vars(p.parse_args(argv)))


def check_values(args) -> None:
    """Sizes and values, each against its own rule, before anything is built."""
    def need(ok: bool, msg: str) -> None:
        if not ok:
            raise UsageError(msg)

    for name, low in (("steps", 1), ("batch_size", 1), ("warmup", 0), ("eval_every", 0),
                      ("eval_chars", 2), ("save_every", 1), ("log_every", 1),
                      ("offline_chars", 1000), ("seg_len", 1), ("mem_len", 0), ("threads", 1),
                      ("pause_at", 1)):
        v = getattr(args, name)
        need(v is None or v >= low, f"--{name.replace('_', '-')} must be >= {low}, got {v}")
    for name in ("lr", "clip"):
        v = getattr(args, name)
        need(math.isfinite(v) and v > 0, f"--{name} must be a finite number > 0, got {v}")


def pick_device(name: str, local_rank: int = 0) -> torch.device:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else (
            "mps" if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()
            else "cpu")
    if name == "cuda":
        if not torch.cuda.is_available():
            raise UsageError("--device cuda: no CUDA GPU is available to torch")
        return torch.device("cuda", local_rank % torch.cuda.device_count())
    if name == "mps" and not (getattr(torch.backends, "mps", None)
                              and torch.backends.mps.is_available()):
        raise UsageError("--device mps: the Apple GPU backend is not available")
    return torch.device(name)


def memory_estimate(cfg, batch_size: int, vanilla: bool) -> tuple[int, str]:
    """Rough bytes one training step needs (weights + Adam + activations), and how it splits.

    Activations dominate: per layer the attention scores (B, H, L, K) exist a few times over
    (scores, probabilities, their gradients), plus about a dozen (B, L, C)-sized tensors and the
    feed-forward's (B, L, d_inner). Good to a small factor, which is all a refusal needs.
    """
    B, L, H = batch_size, cfg.seg_len, cfg.n_head
    M = 0 if vanilla else cfg.mem_len
    K = L + M
    n_params = cfg.n_layer * (4 * cfg.d_model * H * cfg.d_head + 2 * cfg.d_model * cfg.d_inner)
    n_params += cfg.vocab_size * cfg.d_model
    weights = 16 * n_params  # fp32 weights, gradients and Adam's two moments
    attn = 4 * 4 * B * H * L * K * cfg.n_layer
    acts = 4 * B * L * (12 * cfg.d_model + 3 * cfg.d_inner + 3 * H * cfg.d_head) * cfg.n_layer
    mems = 4 * B * M * cfg.d_model * cfg.n_layer
    logits = 4 * 3 * B * L * cfg.vocab_size
    total = weights + attn + acts + mems + logits
    return total, (f"attention scores {attn / 2**30:.1f} GiB for B={B} x H={H} x L={L} x K={K} "
                   f"x {cfg.n_layer} layers, other activations {(acts + mems + logits) / 2**30:.1f}"
                   f" GiB, weights + Adam {weights / 2**30:.1f} GiB")


def memory_available(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 45  # unknown: do not refuse


def model_config(args):
    over = {k: getattr(args, k) for k in ("seg_len", "mem_len", "dropout")
            if getattr(args, k) is not None}
    try:
        return preset(args.preset, **over)
    except ValueError as e:
        raise UsageError(str(e)) from None


def prepare_run_dir(args, created: list) -> None:
    """Validate (and create) the run directory and --out before any training."""
    if args.resume:
        args.run_dir = args.resume  # checked by restore_options
        return
    if args.run_dir is None:
        if args.out is None:
            raise UsageError("give --run-dir DIR (where checkpoints and metrics go)")
        args.run_dir = os.path.splitext(args.out)[0]
    d = args.run_dir
    if os.path.exists(d) and not os.path.isdir(d):
        raise UsageError(f"--run-dir {d} is a file, not a directory")
    if os.path.isdir(d) and os.listdir(d):
        if not args.overwrite:
            raise UsageError(f"run directory {d} already exists; pass --resume {d} to continue "
                             "it or --overwrite to start over")
    if args.out:
        if os.path.isdir(args.out):
            raise UsageError(f"--out {args.out} is a directory; give a file name like "
                             f"{os.path.join(args.out, 'model.pt')}")
        if os.path.exists(args.out) and not args.overwrite:
            raise UsageError(f"--out {args.out} already exists; pass --overwrite to replace it")
    for folder in [d] + ([os.path.dirname(os.path.abspath(args.out))] if args.out else []):
        try:
            if not os.path.isdir(folder):
                os.makedirs(folder)
                created.append(folder)
            fd, probe = tempfile.mkstemp(dir=folder, prefix=".probe-")
            os.close(fd)
            os.remove(probe)
        except OSError as e:
            raise UsageError(f"cannot write to {folder}: {e.strerror or e}") from None


def clear_run_dir(d: str) -> None:
    """--overwrite: remove the old run's files (only ours), once every check has passed."""
    for f in ("config.json", "metrics.jsonl", "curves.png", "last.pt", "best.pt"):
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))


def restore_options(args, argv) -> None:
    """A resumed run takes every option from its config.json; only RESUME_KEEPS may change."""
    for f in ("config.json", "last.pt"):
        if not os.path.isfile(os.path.join(args.resume, f)):
            raise UsageError(f"--resume {args.resume}: no {f} there; is it a run directory "
                             "written by python -m txl_mini.train?")
    given = explicit_options(argv) - set(RESUME_KEEPS)
    if given:
        names = ", ".join("--" + g.replace("_", "-") for g in sorted(given))
        raise UsageError(f"--resume continues the run with its own settings; drop {names}")
    try:
        with open(os.path.join(args.resume, "config.json")) as f:
            saved = json.load(f)["args"]
    except (OSError, ValueError, KeyError) as e:
        raise UsageError(f"--resume {args.resume}: cannot read config.json ({e})") from None
    for k, v in saved.items():
        if k not in RESUME_KEEPS and k != "run_dir":
            setattr(args, k, v)


def fail(msg: str, code: int = 2) -> int:
    """Print one line (rank 0 only, under torchrun) and return the exit status."""
    if os.environ.get("RANK", "0") == "0":
        print(f"python -m txl_mini.train: {msg}", file=sys.stderr)
    return code
