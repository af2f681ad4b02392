"""Training: a small loop that knows the model only through its interface (chapters 1, 6).

    python -m txl_mini.train --preset book --corpus offline --steps 2000 --run-dir runs/xl
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
from dataclasses import asdict, dataclass

import torch
import torch.distributed as dist
from tqdm import tqdm  # plain text bars: no widget warnings in notebooks

from .data import OFFLINE_CHARS, DataError, batchify, iter_segments, load_corpus_split  # noqa: F401
# re-exported for old callers: `from txl_mini.train import save_checkpoint, load_checkpoint`
from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint  # noqa: F401


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings, kept apart from the model's (chapter 6)."""

    steps: int = 500  # optimizer updates; one update per segment
    batch_size: int = 16  # B parallel streams
    lr: float = 1e-3  # peak learning rate of Adam
    warmup: int = 50  # linear warm-up steps, then cosine decay to 0 (as in the paper's code)
    clip: float = 0.25  # gradient-norm clipping, the paper's value
    seed: int = 0  # parameter init, dropout and everything else random


def lr_at(step: int, tc: TrainConfig) -> float:
    """Linear warm-up, then cosine annealing to zero."""
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    progress = (step - tc.warmup) / max(1, tc.steps - tc.warmup)
    return tc.lr * 0.5 * (1.0 + math.cos(math.pi * progress))


class NonFiniteLoss(FloatingPointError):
    """The loss of a step was NaN or infinite; raised before that step changes any weight."""


def train_step(model, opt, x, y, mems, lr: float, clip: float, autocast=None,
               check_finite=False):
    """One optimizer update on segment x -> y (B, L) with memory `mems`; returns ModelOutput.

    With check_finite (True, or a function loss -> bool that all ranks agree on), a NaN/inf loss
    raises NonFiniteLoss before backward, so the model and optimizer keep the last good state.
    `autocast` is an optional context (bf16 on CUDA).
    """
    for group in opt.param_groups:
        group["lr"] = lr
    with autocast if autocast is not None else contextlib.nullcontext():
        out = model(x, targets=y, mems=mems)
    finite = check_finite if callable(check_finite) else lambda t: torch.isfinite(t).item()
    if check_finite and not finite(out.loss.detach()):
        raise NonFiniteLoss(f"loss is {out.loss.item()}")
    opt.zero_grad(set_to_none=True)
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    return out


def train(model, tokens: torch.Tensor, tc: TrainConfig = TrainConfig(), progress: bool = True,
          log_every: int = 0) -> list[float]:
    """Train `model` on the token stream (N,) and return the training loss (nats) of every step.

    The stream is cut into B parallel streams and read segment after segment, so the memory a
    TransformerXL carries from one step to the next is the true preceding text (chapter 3). When
    the streams run out, reading starts again from the beginning with empty memory.
    For long runs (checkpoints, resume, Ctrl-C) use `python -m txl_mini.train`.
    """
    device = next(model.parameters()).device
    streams = batchify(tokens, tc.batch_size).to(device)  # (B, T)
    opt = torch.optim.Adam(model.parameters(), lr=tc.lr)
    model.train()
    losses: list[float] = []
    segments, mems = iter_segments(streams, model.cfg.seg_len), None
    for step in tqdm(range(tc.steps), disable=not progress, desc="train"):
        try:
            x, y = next(segments)
        except StopIteration:  # one pass over the data done: start again, memory reset
            segments, mems = iter_segments(streams, model.cfg.seg_len), None
            x, y = next(segments)
        out = train_step(model, opt, x, y, mems, lr_at(step, tc), tc.clip)
        mems = out.mems  # already detached: no gradient into the previous segment
        losses.append(out.loss.item())
        if log_every and (step + 1) % log_every == 0:
            tqdm.write(f"step {step + 1}: loss {out.loss.item():.3f} nats")
    return losses


def main(argv=None, on_step=None) -> int:
    """`python -m txl_mini.train`; returns the exit status. Options: txl_mini.trainopts; run
    directory, checkpoints, resume, DDP: txl_mini.runner. `on_step(step) -> True` requests a
    stop like Ctrl-C does (tests interrupt at an exact step with it)."""
    from . import trainopts as o
    from .runner import (Run, RunError, Stop, any_rank, install_signal_handlers, rank_world,
                         remove_created, rewrite_metrics, sha1_tokens, write_json)

    argv = sys.argv[1:] if argv is None else list(argv)
    args = o.build_parser().parse_args(argv)
    created: list[str] = []
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    try:
        if args.resume:
            o.restore_options(args, argv)
        o.check_values(args)
        if args.threads:
            torch.set_num_threads(args.threads)
        cfg = o.model_config(args)
        device = o.pick_device(args.device, int(os.environ.get("LOCAL_RANK", "0")))
        if device.type == "cuda":
            torch.cuda.set_device(device)  # NCCL collectives use the current device
        if distributed and not dist.is_initialized():
            dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        rank, world = rank_world()
        if args.batch_size % world:
            raise o.UsageError(f"--batch-size {args.batch_size} must be divisible by the "
                               f"{world} processes")
        need, detail = o.memory_estimate(cfg, args.batch_size // world, args.vanilla)
        have = o.memory_available(device)
        if need > have:
            raise o.UsageError(f"this run needs roughly {need / 2**30:,.1f} GiB ({detail}), more "
                               f"than the {have / 2**30:,.1f} GiB of {device.type} memory here; "
                               "lower --batch-size, --seg-len or --mem-len")
        refused = None
        if rank == 0:
            try:
                o.prepare_run_dir(args, created)
            except o.UsageError as e:
                refused = e
        if any_rank(refused is not None, device):  # all ranks stop together
            raise refused or RunError("rank 0 refused the run directory")
        args.run_dir = args.resume or args.run_dir or os.path.splitext(args.out)[0]
        tokens = load_corpus_split(args.corpus, "train", args.path, args.offline_chars)
        valid = load_corpus_split(args.corpus, "valid", args.path, args.offline_chars)
        valid = valid[:args.eval_chars]
        T = len(tokens) // args.batch_size
        if T < cfg.seg_len + 1 or len(valid) < 2:
            raise o.UsageError(f"the training split has {len(tokens):,} chars: "
                               f"{args.batch_size} streams of {T:,}, too short for segments of "
                               f"{cfg.seg_len} (need > {cfg.seg_len} per stream); lower "
                               "--batch-size or --seg-len, or use a longer corpus")
        corpus = {"name": args.corpus, "path": args.path, "chars": len(tokens),
                  "sha1": sha1_tokens(tokens)}
        if args.resume:
            with open(os.path.join(args.run_dir, "config.json")) as f:
                was = json.load(f)["corpus"]
            if was["sha1"] != corpus["sha1"]:
                raise RunError(f"the corpus differs from the one {args.run_dir} was trained on "
                               f"(sha1 {corpus['sha1'][:12]} vs {was['sha1'][:12]})")
        tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                         warmup=args.warmup, clip=args.clip, seed=args.seed)
        if args.overwrite and not args.resume and rank == 0:
            o.clear_run_dir(args.run_dir)
        run = Run(args, cfg, tc, tokens, valid, corpus, device, args.vanilla)
        if rank == 0:
            if args.resume:
                rewrite_metrics(run.dir, run.history)
            else:
                write_json(os.path.join(run.dir, "config.json"),
                           {"args": vars(args), "model": asdict(run.model.cfg),
                            "model_class": type(run.model).__name__, "corpus": corpus,
                            "world_size": world})
            print(f"corpus: {args.corpus}{' (' + args.path + ')' if args.path else ''}, "
                  f"{len(tokens):,} training chars; device: {device} x {world}; "
                  f"{type(run.model).__name__} with {run.model.num_params():,} parameters; "
                  f"run dir: {run.dir}" + (f"; resuming at step {run.step}" if args.resume
                                           else ""), flush=True)
        stop_flag: dict = {}
        old = install_signal_handlers(stop_flag)
        try:
            run.train(stop_flag, on_step)
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)
        if rank == 0:
            print(f"trained {tc.steps} steps; validation {run.history[-1].get('val_bpc', 0):.3f}"
                  f" bpc on {len(valid):,} {args.corpus} chars (best {run.best:.3f}); wrote "
                  f"{run.dir}/last.pt and best.pt" + (f" and {args.out}" if args.out else ""))
            if not os.path.exists(os.path.join(run.dir, "curves.png")):
                print("note: matplotlib is not installed, so no curves.png was drawn")
        return 0
    except Stop as e:
        print(str(e), file=sys.stderr if e.code == 1 else sys.stdout, flush=True)
        return e.code
    except KeyboardInterrupt:
        remove_created(created)
        return o.fail("interrupted before training started; nothing was saved", 130)
    except o.UsageError as e:
        remove_created(created)
        return o.fail(f"error: {e}")
    except (RunError, DataError, CheckpointError, ValueError) as e:
        remove_created(created)
        return o.fail(f"error: {e}", 1)
    finally:
        if distributed and dist.is_initialized():
            dist.destroy_process_group()


if __name__ == "__main__":
    raise SystemExit(main())
