"""Bits per character, by segments (XL with memory) or by sliding window.

Both evaluators score every target of the stream exactly once and return per-token
losses, so the two numbers they print are about the same characters.
"""

from __future__ import annotations

if __name__ == "__main__":  # run as a file, before its imports fail: say where to go
    raise SystemExit("use: python -m txl_mini evaluate ...")

import math
import time
from dataclasses import dataclass
from typing import Callable, Optional

import torch
import torch.nn.functional as F
from tqdm import tqdm  # plain text bars: no widget warnings in notebooks

from .data import batchify, iter_segments, n_segments
from .kv_cache import forward_cached


@dataclass
class EvalResult:
    """Result of an evaluation."""

    bpc: float  # bits per character = mean nats / ln 2
    n_tokens: int  # targets scored
    seconds: float  # wall time of the evaluation
    # (B, T) nats for predicting streams[b, t]; NaN where not scored
    token_nats: torch.Tensor
    # scored targets whose loss is NaN or infinite: then bpc is NaN too, never a
    # mean over the finite ones only
    n_nonfinite: int = 0

    def __str__(self) -> str:
        chars = "character" if self.n_tokens == 1 else "characters"
        return (f"{self.bpc:.3f} bpc over {self.n_tokens:,} {chars} "
                f"in {self.seconds:.2f} s")


class EvaluationStopped(Exception):
    """`on_segment` asked an evaluation to stop before its end (e.g. Ctrl-C)."""


def bits_per_char(nats: float) -> float:
    """Mean cross-entropy in nats -> bits per character."""
    return nats / math.log(2)


def _result(token_nats: torch.Tensor, scored: torch.Tensor,
            start: float) -> EvalResult:
    """Mean over every scored target; a NaN or infinite loss makes the mean NaN."""
    n = int(scored.sum())
    nats = token_nats[scored]  # (n,)
    bad = int((~torch.isfinite(nats)).sum())
    bpc = bits_per_char(nats.sum().item() / n) if n and not bad else float("nan")
    return EvalResult(bpc, n, time.perf_counter() - start, token_nats, bad)


def _device(model) -> torch.device:
    return next(model.parameters()).device


@torch.no_grad()
def evaluate_segments(model, tokens: torch.Tensor, seg_len: Optional[int] = None,
                      batch_size: int = 1, mem_len: Optional[int] = None,
                      progress: bool = False,
                      on_segment: Optional[Callable[[int, int], bool]] = None,
                      cache: bool = False, same_length: Optional[bool] = None,
                      clamp_len: Optional[int] = None) -> EvalResult:
    """Score `tokens` (N,) segment by segment, memory carried between them.

    For TransformerXL every segment sees the previous segments' states through memory
    (up to `mem_len`, default the model's). For the vanilla model this is evaluation on
    non-overlapping segments: each segment starts from nothing (context
    fragmentation).
    With batch_size B the stream is cut into B parallel streams; token_nats.reshape(-1)
    lines up with tokens[:B * (N // B)]. `on_segment(done, total)` is called after
    each segment; if it returns True the evaluation raises EvaluationStopped.
    mem_len, same_length, clamp_len: the evaluation settings, passed to every call
    (default: the model's config; `TransformerXL.settings` validates them).
    cache=True (TransformerXL) keeps each layer's projected keys and values instead of
    its states (txl_mini.kv_cache): the same numbers, each state projected once.
    """
    model.eval()
    start = time.perf_counter()
    L = seg_len or model.cfg.seg_len
    streams = batchify(tokens, batch_size).to(_device(model))  # (B, T)
    # (B, T); t = 0 has no context
    token_nats = torch.full(streams.shape, float("nan"))
    scored = torch.zeros(streams.shape, dtype=torch.bool)  # (B, T)
    mems, kv, t = None, None, 1
    kwargs = {k: v for k, v in (("mem_len", mem_len), ("same_length", same_length),
                                ("clamp_len", clamp_len)) if v is not None}
    total = n_segments(streams.shape[1], L)
    for k, (x, y) in enumerate(tqdm(iter_segments(streams, L), disable=not progress,
                                    desc="segments", total=total)):
        if cache:  # the memory as projected keys and values
            out = forward_cached(model, x, kv, **kwargs)
            kv = out.cache
        else:
            out = model(x, mems=mems, **kwargs)
            mems = out.mems
        # (B, l)
        nats = F.cross_entropy(out.logits.transpose(1, 2), y, reduction="none")
        token_nats[:, t:t + y.shape[1]] = nats.float().cpu()
        scored[:, t:t + y.shape[1]] = True
        t += y.shape[1]
        if on_segment is not None and on_segment(k + 1, total):
            raise EvaluationStopped(f"stopped after {k + 1} of {total} segments")
    return _result(token_nats, scored, start)


@torch.no_grad()
def evaluate_sliding_window(model, tokens: torch.Tensor, context: Optional[int] = None,
                            batch_size: int = 64, progress: bool = False,
                            clamp_len: Optional[int] = None) -> EvalResult:
    """The vanilla model's evaluation (Al-Rfou et al., 2019): one prediction per window.

    The first window scores its `context` targets; after that the window
    slides by one and only its last position is scored, so every prediction has the full
    `context` characters behind it, at the price of a whole forward pass per character.
    Windows are batched `batch_size` at a time; clamp_len: as for the model's calls.
    """
    model.eval()
    start = time.perf_counter()
    C = context or model.cfg.seg_len
    device = _device(model)
    tokens = tokens.to(device)
    N = tokens.shape[0]
    if N <= C + 1:
        raise ValueError(f"need more than context + 1 = {C + 1} tokens, got {N}")
    token_nats = torch.full((1, N), float("nan"))
    scored = torch.zeros((1, N), dtype=torch.bool)
    scored[0, 1:] = True  # every target but the first character's

    first = model(tokens[None, :C], clamp_len=clamp_len).logits[0]  # (C, V)
    token_nats[0, 1:C + 1] = F.cross_entropy(
        first, tokens[1:C + 1], reduction="none"
    ).float().cpu()

    # (N-C-1, C+1): window s covers tokens s .. s+C
    windows = tokens.unfold(0, C + 1, 1)[1:]
    n_windows = windows.shape[0]
    for lo in tqdm(range(0, n_windows, batch_size), disable=not progress,
                   desc="windows"):
        w = windows[lo:lo + batch_size]  # (b, C+1)
        # (b, V): only the newest position is new
        logits = model(w[:, :-1], clamp_len=clamp_len).logits[:, -1]
        nats = F.cross_entropy(logits, w[:, -1], reduction="none")
        token_nats[0, lo + C + 1:lo + C + 1 + w.shape[0]] = nats.float().cpu()
    return _result(token_nats, scored, start)


def loss_by_position(token_nats: torch.Tensor, seg_len: int) -> torch.Tensor:
    """Mean nats per position 0 ... L-1 in a segment, from evaluate_segments.

    Position k of a segment predicts stream target t = 1 + s*L + k. The last, partial
    segment of each stream is left out so that every position averages over the same
    segments.
    """
    B, T = token_nats.shape
    n_full = (T - 1) // seg_len
    # (B, S, L)
    per_seg = token_nats[:, 1:1 + n_full * seg_len].reshape(B, n_full, seg_len)
    return per_seg.mean(dim=(0, 1))  # (L,)
