"""Training: a small loop that knows the model only through its interface (chapters 1, 6).

    python -m txl_mini.train --preset book --corpus offline --steps 2000 --out runs/xl.pt
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass
import torch
from tqdm import tqdm  # plain text bars: no widget warnings in notebooks

from .config import ModelConfig, preset
from .data import CharVocab, DataError, batchify, iter_segments, load_text8
from .corpus import offline_splits
from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint  # noqa: F401 (old callers)


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


def default_device() -> torch.device:
    """CUDA when present, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model, tokens: torch.Tensor, tc: TrainConfig = TrainConfig(), progress: bool = True,
          log_every: int = 0) -> list[float]:
    """Train `model` on the token stream (N,) and return the training loss (nats) of every step.

    The stream is cut into B parallel streams and read segment after segment, so the memory a
    TransformerXL carries from one step to the next is the true preceding text (chapter 3). When
    the streams run out, reading starts again from the beginning with empty memory.
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
        for group in opt.param_groups:
            group["lr"] = lr_at(step, tc)
        out = model(x, targets=y, mems=mems)
        mems = out.mems  # already detached: no gradient into the previous segment
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tc.clip)
        opt.step()
        losses.append(out.loss.item())
        if log_every and (step + 1) % log_every == 0:
            tqdm.write(f"step {step + 1}: loss {out.loss.item():.3f} nats")
    return losses


OFFLINE_CHARS = 2_000_000  # size of the generated offline corpus the CLIs use (seed 0)


def load_corpus_split(corpus: str, split: str = "train") -> torch.Tensor:
    """Token ids (N,) of one split of "text8" (downloaded and verified) or "offline" (generated)."""
    if corpus == "text8":
        splits = load_text8()
    elif corpus == "offline":
        splits = offline_splits(OFFLINE_CHARS, seed=0)
    else:
        raise ValueError(f"unknown corpus {corpus!r}; choose 'offline' or 'text8'")
    return CharVocab().encode(getattr(splits, split))


def main(argv=None) -> None:
    from .model import TransformerXL, VanillaTransformer

    p = argparse.ArgumentParser(prog="python -m txl_mini.train",
                                description="Train a char-level Transformer-XL (or the vanilla baseline).")
    p.add_argument("--preset", default="book", help="model preset: tiny, book, text8_base, text8_large")
    p.add_argument("--corpus", default="offline", choices=["offline", "text8"],
                   help="offline: generated here, no download; text8: downloaded and verified")
    p.add_argument("--vanilla", action="store_true", help="train the vanilla baseline instead")
    p.add_argument("--mem-len", type=int, default=None, help="override the preset's memory length")
    p.add_argument("--seg-len", type=int, default=None, help="override the preset's segment length")
    p.add_argument("--steps", type=int, default=TrainConfig.steps)
    p.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    p.add_argument("--lr", type=float, default=TrainConfig.lr)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="checkpoint path (.pt), written when training ends")
    args = p.parse_args(argv)

    overrides = {k: v for k, v in (("mem_len", args.mem_len), ("seg_len", args.seg_len)) if v is not None}
    cfg = preset(args.preset, **overrides)
    tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr, seed=args.seed)
    torch.manual_seed(tc.seed)
    device = default_device()
    model = (VanillaTransformer if args.vanilla else TransformerXL)(cfg).to(device)
    try:
        tokens = load_corpus_split(args.corpus, "train")
    except (OSError, ValueError, DataError) as e:
        raise SystemExit(f"error: {e}") from None
    print(f"corpus: {args.corpus}, {len(tokens):,} training characters; device: {device}; "
          f"{type(model).__name__} with {model.num_params():,} parameters")
    start = time.perf_counter()
    losses = train(model, tokens, tc, log_every=max(1, tc.steps // 10))
    print(f"trained {tc.steps} steps in {time.perf_counter() - start:.1f} s; "
          f"last loss {sum(losses[-20:]) / len(losses[-20:]):.3f} nats")
    save_checkpoint(args.out, model, {"corpus": args.corpus, "preset": args.preset, "steps": tc.steps})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
