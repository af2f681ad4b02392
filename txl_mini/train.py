"""Training: a small loop that knows the model only through its interface.

Long runs (run directory, checkpoints, exact resume, Ctrl-C, several GPUs) go through
`python -m txl_mini train`, which calls `train_step` from here.
"""

from __future__ import annotations

if __name__ == "__main__":  # run as a file, before its imports fail: say where to go
    raise SystemExit("use: python -m txl_mini train ...")

import contextlib
import math
from dataclasses import dataclass

import torch
from tqdm import tqdm  # plain text bars: no widget warnings in notebooks

from .data import batchify, segment_at


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings, kept apart from the model's."""

    steps: int = 500  # optimizer updates; one update per segment
    batch_size: int = 16  # B parallel streams
    lr: float = 1e-3  # peak learning rate of Adam
    # linear warm-up steps, then cosine decay to 0 (as in the paper's code)
    warmup: int = 50
    clip: float = 0.25  # gradient-norm clipping, the paper's value
    seed: int = 0  # parameter init, dropout and everything else random


def lr_at(step: int, tc: TrainConfig) -> float:
    """Linear warm-up, then cosine annealing to zero."""
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    progress = (step - tc.warmup) / max(1, tc.steps - tc.warmup)
    return tc.lr * 0.5 * (1.0 + math.cos(math.pi * progress))


class NonFiniteLoss(FloatingPointError):
    """The loss of a step was NaN or infinite; raised before that step changes any
    weight."""


def train_step(model, opt, x, y, mems, lr: float, clip: float, autocast=None,
               check_finite=False):
    """One optimizer update on segment x -> y (B, L) with memory `mems`; returns
    ModelOutput.

    With check_finite (True, or a function loss -> bool that all ranks agree on), a
    NaN/inf loss raises NonFiniteLoss before backward, so the model and optimizer keep
    the last good state. `autocast` is an optional context (bf16 on CUDA).
    """
    for group in opt.param_groups:
        group["lr"] = lr
    with autocast if autocast is not None else contextlib.nullcontext():
        out = model(x, targets=y, mems=mems)
    finite = (check_finite if callable(check_finite)
              else lambda t: torch.isfinite(t).item())
    if check_finite and not finite(out.loss.detach()):
        raise NonFiniteLoss(f"loss is {out.loss.item()}")
    opt.zero_grad(set_to_none=True)
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    return out


def train(model, tokens: torch.Tensor, tc: TrainConfig = TrainConfig(),
          progress: bool = True, log_every: int = 0) -> list[float]:
    """Train `model` on the token stream (N,) and return the training loss (nats) of
    every step.

    The stream is cut into B parallel streams and read segment after segment, so the
    memory a TransformerXL carries from one step to the next is the true preceding text
. When the streams run out, reading starts again from the beginning with
    empty memory.
    For long runs (checkpoints, resume, Ctrl-C) use `python -m txl_mini train`.
    """
    losses: list[float] = []
    steps = tqdm(train_steps(model, tokens, tc), total=tc.steps, disable=not progress,
                 desc="train")
    for step, _, out in steps:
        losses.append(out.loss.item())
        if log_every and (step + 1) % log_every == 0:
            tqdm.write(f"step {step + 1}: loss {out.loss.item():.3f} nats")
    return losses


def train_steps(model, tokens: torch.Tensor, tc: TrainConfig, targets=None):
    """`train`'s loop one step at a time, for scripts that watch it: yields
    (step, pos, out) after each update, the segment trained being
    streams[:, pos:pos + l] of `batchify(tokens, tc.batch_size)`; `targets(y) -> y`
    may change a segment's targets (B, l) before its step (-100: not scored)."""
    device = next(model.parameters()).device
    streams = batchify(tokens, tc.batch_size).to(device)  # (B, T)
    opt = torch.optim.Adam(model.parameters(), lr=tc.lr)
    model.train()
    pos, mems = 0, None
    for step in range(tc.steps):
        if pos >= streams.shape[1] - 1:  # one pass over the data done: memory reset
            pos, mems = 0, None
        x, y = segment_at(streams, pos, model.cfg.seg_len)
        y = y if targets is None else targets(y)
        out = train_step(model, opt, x, y, mems, lr_at(step, tc), tc.clip)
        mems = out.mems  # already detached: no gradient into the previous segment
        yield step, pos, out
        pos += x.shape[1]
