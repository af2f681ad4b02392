"""`python -m txl_mini train`: long training runs with a run directory (chapter 6).

Options are parsed and every value checked before any corpus is built; the run itself
(checkpoints, exact resume, Ctrl-C, several processes) is cli/run.py.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from dataclasses import asdict

import torch
import torch.distributed as dist

from ..checkpoint import CheckpointError
from ..config import PRESETS, preset
from ..data import CORPORA, OFFLINE_CHARS, load_corpus_split
from ..text8 import DataError
from ..train import TrainConfig
from .options import (DEVICES, UsageError, check_at_least, check_memory,
                      check_positive_finite, fail, pick_device)
from .run import Run, RunError, Stop, any_rank, install_signal_handlers, rank_world
from .rundir import (clear_run_dir, prepare_run_dir, remove_created,
                     rewrite_metrics, sha1_tokens, write_json)

PROG = "python -m txl_mini train"
# the only options a resumed run may change
RESUME_KEEPS = ("device", "quiet", "threads", "resume", "pause_at")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Train a char-level Transformer-XL (or the vanilla baseline) with "
        "checkpoints, exact resume and clean Ctrl-C. Several GPUs: "
        "torchrun --nproc_per_node N -m txl_mini train ...")
    add = p.add_argument
    add("--preset", default="book", choices=sorted(PRESETS), help="model size")
    add("--vanilla", action="store_true", help="train the vanilla baseline instead")
    add("--seg-len", type=int, default=None,
        help="L, override the preset's segment length")
    add("--mem-len", type=int, default=None,
        help="M, override the preset's memory length")
    add("--dropout", type=float, default=None, help="override the preset's dropout")
    add("--corpus", default="offline", choices=CORPORA,
        help="offline: generated here, no download; text8: downloaded and verified")
    add("--path", default=None, help="local text8(.zip) for --corpus text8; any "
        "text file for --corpus offline (normalized to a-z and space, split 90/5/5)")
    add("--offline-chars", type=int, default=OFFLINE_CHARS,
        help="size of the generated corpus")
    add("--steps", type=int, default=500, help="optimizer updates (one segment each)")
    add("--batch-size", type=int, default=16,
        help="B parallel streams (all processes together)")
    add("--lr", type=float, default=1e-3, help="peak learning rate of Adam")
    add("--warmup", type=int, default=50,
        help="linear warm-up steps, then cosine decay to 0")
    add("--clip", type=float, default=0.25, help="gradient-norm clipping")
    add("--seed", type=int, default=0, help="initial weights, dropout")
    add("--device", default="auto", choices=DEVICES,
        help="auto: cuda, else mps, else cpu")
    add("--precision", default="bf16", choices=["bf16", "fp32"],
        help="bf16 autocast on CUDA (CPU and MPS always run fp32)")
    add("--eval-every", type=int, default=0,
        help="validation bpc every N steps (0: at the end)")
    add("--eval-chars", type=int, default=100_000,
        help="validation characters per evaluation")
    add("--save-every", type=int, default=500,
        help="write last.pt every N steps (and at the end)")
    add("--log-every", type=int, default=10, help="a metrics.jsonl line every N steps")
    add("--run-dir", default=None, help="directory for config, metrics, curves and "
        "checkpoints (default: --out without .pt)")
    add("--out", default=None, help="also write the final model to this .pt file")
    add("--resume", metavar="DIR", default=None, help="continue the run in DIR exactly")
    add("--overwrite", action="store_true",
        help="start over in an existing run directory")
    add("--pause-at", type=int, default=None, metavar="STEP", help="save and stop at "
        "this step, to --resume later (e.g. time-limited jobs)")
    add("--threads", type=int, default=None,
        help="torch CPU threads (default: torch's choice)")
    add("--quiet", action="store_true", help="no progress bar")
    return p


def check_values(args) -> None:
    """Sizes and values, each against its own rule, before anything is built."""
    check_at_least(args, {
        "steps": 1, "batch_size": 1, "warmup": 0, "eval_every": 0, "eval_chars": 2,
        "save_every": 1, "log_every": 1, "offline_chars": 1000, "seg_len": 1,
        "mem_len": 0, "threads": 1, "pause_at": 1})
    check_positive_finite(args, ("lr", "clip"))


def model_config(args):
    over = {k: getattr(args, k) for k in ("seg_len", "mem_len", "dropout")
            if getattr(args, k) is not None}
    try:
        return preset(args.preset, **over)
    except ValueError as e:
        raise UsageError(str(e)) from None


def explicit_options(argv) -> set[str]:
    """Names of the options given on the command line (not left at their default)."""
    p = build_parser()
    for action in p._actions:
        action.default = argparse.SUPPRESS
    return set(vars(p.parse_args(argv)))


def restore_options(args, argv) -> None:
    """A resumed run takes every option from its config.json but RESUME_KEEPS."""
    for f in ("config.json", "last.pt"):
        if not os.path.isfile(os.path.join(args.resume, f)):
            raise UsageError(f"--resume {args.resume}: no {f} there; is it a run "
                             "directory written by python -m txl_mini train?")
    given = explicit_options(argv) - set(RESUME_KEEPS)
    if given:
        names = ", ".join("--" + g.replace("_", "-") for g in sorted(given))
        raise UsageError("--resume continues the run with its own settings; "
                         f"drop {names}")
    try:
        with open(os.path.join(args.resume, "config.json")) as f:
            saved = json.load(f)["args"]
    except (OSError, ValueError, KeyError) as e:
        raise UsageError(
            f"--resume {args.resume}: cannot read config.json ({e})") from None
    for k, v in saved.items():
        if k not in RESUME_KEEPS and k != "run_dir":
            setattr(args, k, v)


def main(argv=None, on_step=None) -> int:
    """`python -m txl_mini train ...`; returns the exit status. `on_step(step) -> True`
    requests a stop like Ctrl-C does (tests interrupt at an exact step with it)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    created: list[str] = []
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    try:
        if args.resume:
            restore_options(args, argv)
        check_values(args)
        if args.threads:
            torch.set_num_threads(args.threads)
        cfg = model_config(args)
        device = pick_device(args.device, int(os.environ.get("LOCAL_RANK", "0")))
        if device.type == "cuda":
            torch.cuda.set_device(device)  # NCCL collectives use the current device
        if distributed and not dist.is_initialized():
            dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        rank, world = rank_world()
        if args.batch_size % world:
            raise UsageError(f"--batch-size {args.batch_size} must be divisible by "
                             f"the {world} processes")
        M = 0 if args.vanilla else cfg.mem_len
        check_memory(cfg, args.batch_size // world, M, True, device)
        refused = None
        if rank == 0:
            try:
                prepare_run_dir(args, created)
            except UsageError as e:
                refused = e
        if any_rank(refused is not None, device):  # all ranks stop together
            raise refused or RunError("rank 0 refused the run directory")
        args.run_dir = args.resume or args.run_dir or os.path.splitext(args.out)[0]
        tokens = load_corpus_split(args.corpus, "train", args.path, args.offline_chars)
        valid = load_corpus_split(args.corpus, "valid", args.path, args.offline_chars)
        valid = valid[:args.eval_chars]
        T = len(tokens) // args.batch_size
        if T < cfg.seg_len + 1 or len(valid) < 2:
            raise UsageError(
                f"the training split has {len(tokens):,} chars: {args.batch_size} "
                f"streams of {T:,}, too short for segments of {cfg.seg_len} (need > "
                f"{cfg.seg_len} per stream); lower --batch-size or --seg-len, or use "
                "a longer corpus")
        corpus = {"name": args.corpus, "path": args.path, "chars": len(tokens),
                  "sha1": sha1_tokens(tokens)}
        if args.resume:
            with open(os.path.join(args.run_dir, "config.json")) as f:
                was = json.load(f)["corpus"]
            if was["sha1"] != corpus["sha1"]:
                raise RunError(
                    f"the corpus differs from the one {args.run_dir} was trained on "
                    f"(sha1 {corpus['sha1'][:12]} vs {was['sha1'][:12]})")
        tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                         warmup=args.warmup, clip=args.clip, seed=args.seed)
        if args.overwrite and not args.resume and rank == 0:
            clear_run_dir(args.run_dir)
        run = Run(args, cfg, tc, tokens, valid, corpus, device, args.vanilla)
        if rank == 0:
            _announce(args, run, corpus, tokens, device, world)
        stop_flag: dict = {}
        old = install_signal_handlers(stop_flag)
        try:
            run.train(stop_flag, on_step)
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)
        if rank == 0:
            last = run.history[-1].get("val_bpc", 0)
            print(f"trained {tc.steps} steps; validation {last:.3f} bpc on "
                  f"{len(valid):,} {args.corpus} chars (best {run.best:.3f}); wrote "
                  f"{run.dir}/last.pt and best.pt"
                  + (f" and {args.out}" if args.out else ""))
            if not os.path.exists(os.path.join(run.dir, "curves.png")):
                print("note: matplotlib is not installed, so no curves.png was drawn")
        return 0
    except Stop as e:
        print(str(e), file=sys.stderr if e.code == 1 else sys.stdout, flush=True)
        return e.code
    except KeyboardInterrupt:
        remove_created(created)
        return fail(PROG, "interrupted before training started; nothing was saved", 130)
    except UsageError as e:
        remove_created(created)
        return fail(PROG, f"error: {e}")
    except (RunError, DataError, CheckpointError, ValueError) as e:
        remove_created(created)
        return fail(PROG, f"error: {e}", 1)
    finally:
        if distributed and dist.is_initialized():
            dist.destroy_process_group()


def _announce(args, run, corpus, tokens, device, world) -> None:
    """config.json (a new run) or the trimmed metrics (a resumed one), and one line."""
    if args.resume:
        rewrite_metrics(run.dir, run.history)
    else:
        write_json(os.path.join(run.dir, "config.json"),
                   {"args": vars(args), "model": asdict(run.model.cfg),
                    "model_class": type(run.model).__name__, "corpus": corpus,
                    "world_size": world})
    where = f" ({args.path})" if args.path else ""
    again = f"; resuming at step {run.step}" if args.resume else ""
    print(f"corpus: {args.corpus}{where}, {len(tokens):,} training chars; device: "
          f"{device} x {world}; {type(run.model).__name__} with "
          f"{run.model.num_params():,} parameters; run dir: {run.dir}{again}",
          flush=True)
