"""Bits per character, segment by segment (XL with memory) or by sliding window (chapters 1, 2, 6).

Both evaluators score every target of the stream exactly once and return per-token losses, so
the two numbers they print are about the same characters.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from tqdm import tqdm  # plain text bars: no widget warnings in notebooks

from .data import OFFLINE_CHARS, DataError, batchify, iter_segments, n_segments


@dataclass
class EvalResult:
    """Result of an evaluation (chapter 1)."""

    bpc: float  # bits per character = mean nats / ln 2
    n_tokens: int  # targets scored
    seconds: float  # wall time of the evaluation
    token_nats: torch.Tensor  # (B, T) nats for predicting streams[b, t]; NaN where not scored

    def __str__(self) -> str:
        return f"{self.bpc:.3f} bpc over {self.n_tokens:,} characters in {self.seconds:.2f} s"


def bits_per_char(nats: float) -> float:
    """Mean cross-entropy in nats -> bits per character (chapter 1)."""
    return nats / math.log(2)


def _result(token_nats: torch.Tensor, start: float) -> EvalResult:
    scored = ~token_nats.isnan()
    n = int(scored.sum())
    return EvalResult(bits_per_char(token_nats[scored].sum().item() / n), n, time.perf_counter() - start,
                      token_nats)


def _device(model) -> torch.device:
    return next(model.parameters()).device


@torch.no_grad()
def evaluate_segments(model, tokens: torch.Tensor, seg_len: Optional[int] = None, batch_size: int = 1,
                      mem_len: Optional[int] = None, progress: bool = False) -> EvalResult:
    """Score `tokens` (N,) segment by segment, carrying memory between segments (ch. 1, 6).

    For TransformerXL every segment sees the previous segments' states through memory (up to
    `mem_len`, default the model's). For the vanilla model this is evaluation on non-overlapping
    segments: each segment starts from nothing, the context fragmentation of chapter 2.
    With batch_size B the stream is cut into B parallel streams; token_nats.reshape(-1) lines up
    with tokens[:B * (N // B)].
    """
    model.eval()
    start = time.perf_counter()
    L = seg_len or model.cfg.seg_len
    streams = batchify(tokens, batch_size).to(_device(model))  # (B, T)
    token_nats = torch.full(streams.shape, float("nan"))  # (B, T); t = 0 has no context
    mems, t = None, 1
    kwargs = {} if mem_len is None else {"mem_len": mem_len}
    for x, y in tqdm(iter_segments(streams, L), disable=not progress, desc="segments",
                     total=n_segments(streams.shape[1], L)):
        out = model(x, mems=mems, **kwargs)
        mems = out.mems
        nats = F.cross_entropy(out.logits.transpose(1, 2), y, reduction="none")  # (B, l)
        token_nats[:, t:t + y.shape[1]] = nats.float().cpu()
        t += y.shape[1]
    return _result(token_nats, start)


@torch.no_grad()
def evaluate_sliding_window(model, tokens: torch.Tensor, context: Optional[int] = None,
                            batch_size: int = 64, progress: bool = False) -> EvalResult:
    """The vanilla model's evaluation (Al-Rfou et al., 2019): one new prediction per window (ch. 1).

    The first window scores its `context` targets; after that the window slides by one and only
    its last position is scored, so every prediction has the full `context` characters behind it,
    at the price of a whole forward pass per character. Windows are batched `batch_size` at a time.
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

    first = model(tokens[None, :C], targets=None).logits[0]  # (C, V)
    token_nats[0, 1:C + 1] = F.cross_entropy(first, tokens[1:C + 1], reduction="none").float().cpu()

    windows = tokens.unfold(0, C + 1, 1)[1:]  # (N-C-1, C+1): window s covers tokens s .. s+C
    n_windows = windows.shape[0]
    for lo in tqdm(range(0, n_windows, batch_size), disable=not progress, desc="windows"):
        w = windows[lo:lo + batch_size]  # (b, C+1)
        logits = model(w[:, :-1]).logits[:, -1]  # (b, V): only the newest position is new
        nats = F.cross_entropy(logits, w[:, -1], reduction="none")
        token_nats[0, lo + C + 1:lo + C + 1 + w.shape[0]] = nats.float().cpu()
    return _result(token_nats, start)


def loss_by_position(token_nats: torch.Tensor, seg_len: int) -> torch.Tensor:
    """Mean nats at each position 0 ... L-1 inside a segment, from evaluate_segments (ch. 2).

    Position k of a segment predicts stream target t = 1 + s*L + k. The last, partial segment of
    each stream is left out so that every position averages over the same segments.
    """
    B, T = token_nats.shape
    n_full = (T - 1) // seg_len
    per_seg = token_nats[:, 1:1 + n_full * seg_len].reshape(B, n_full, seg_len)  # (B, S, L)
    return per_seg.mean(dim=(0, 1))  # (L,)


def _checkpoint_path(path: str) -> str:
    """A run directory stands for its best.pt (else last.pt)."""
    if os.path.isdir(path):
        for name in ("best.pt", "last.pt"):
            if os.path.isfile(os.path.join(path, name)):
                return os.path.join(path, name)
    return path


def _check_eval_args(args) -> None:
    from .trainopts import UsageError

    for name, low in (("chars", 2), ("batch_size", 1), ("seg_len", 1), ("mem_len", 0),
                      ("threads", 1)):
        v = getattr(args, name)
        if v is not None and v < low:
            raise UsageError(f"--{name.replace('_', '-')} must be >= {low}, got {v}")
    if args.clamp_len is not None and (args.clamp_len < -1 or args.clamp_len == 0):
        raise UsageError(f"--clamp-len must be -1 (off) or >= 1, got {args.clamp_len}")


def main(argv=None) -> int:
    """Entry point of `python -m txl_mini.evaluate`; returns the exit status (chapters 1, 6)."""
    from .checkpoint import CheckpointError, load_checkpoint
    from .data import CORPORA, load_corpus_split
    from .trainopts import UsageError, memory_available, pick_device

    p = argparse.ArgumentParser(prog="python -m txl_mini.evaluate",
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                                description="Bits per character of a trained checkpoint.")
    a = p.add_argument
    a("checkpoint", help="a .pt file, or a run directory (its best.pt), from "
      "python -m txl_mini.train")
    a("--corpus", default=None, choices=CORPORA, help="default: the training corpus")
    a("--path", default=None, help="corpus file (default: the one the run trained on)")
    a("--split", default="valid", choices=["valid", "test"])
    a("--chars", type=int, default=200_000, help="evaluate on the first N characters")
    a("--mode", default="auto", choices=["auto", "segments", "sliding"],
      help="segments with memory, or the vanilla sliding window; auto: sliding for a vanilla "
      "checkpoint, segments for Transformer-XL")
    a("--sliding-window", action="store_true", help="same as --mode sliding")
    a("--seg-len", type=int, default=None, help="L (sliding: the context); default: the model's")
    a("--mem-len", type=int, default=None, help="M, memory length (default: the model's)")
    a("--clamp-len", type=int, default=None, help="share R beyond this distance (-1: never)")
    a("--same-length", action="store_true", help="every query sees the same number of keys")
    a("--batch-size", type=int, default=1, help="B parallel streams (sliding: windows at once)")
    a("--device", default="auto", choices=["auto", "cpu", "cuda", "mps"])
    a("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    a("--json", action="store_true", help="print one JSON object instead of text")
    a("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)

    try:
        _check_eval_args(args)
        if args.threads:
            torch.set_num_threads(args.threads)
        device = pick_device(args.device)
        model, meta = load_checkpoint(_checkpoint_path(args.checkpoint), device)
        vanilla = type(model).__name__ == "VanillaTransformer"
        mode = "sliding" if args.sliding_window else args.mode
        mode = ("sliding" if vanilla else "segments") if mode == "auto" else mode
        if vanilla and args.mem_len:
            raise UsageError("--mem-len: a vanilla checkpoint has no memory")
        changes = {k: v for k, v in (("clamp_len", args.clamp_len),
                                     ("same_length", args.same_length or None)) if v is not None}
        model.cfg = model.cfg.replace(**changes)  # read by forward; weights unchanged
        cfg, L = model.cfg, args.seg_len or model.cfg.seg_len
        M = 0 if vanilla else (cfg.mem_len if args.mem_len is None else args.mem_len)
        B = args.batch_size
        need = 4 * B * (2 * cfg.n_head * L * (L + M) + 4 * (L + M) * cfg.d_model) * cfg.n_layer
        if need > memory_available(device):
            raise UsageError(f"this evaluation needs roughly {need / 2**30:,.1f} GiB (B={B}, "
                             f"L={L}, M={M}); lower --batch-size, --seg-len or --mem-len")
        corpus = args.corpus or meta.get("corpus", "offline")
        path = args.path if args.corpus or args.path else meta.get("corpus_path")
        tokens = load_corpus_split(corpus, args.split, path,
                                   meta.get("offline_chars", OFFLINE_CHARS))[: args.chars]
        if mode == "sliding" and len(tokens) <= L + 1:
            raise UsageError(f"--chars: the sliding window needs more than {L + 1} characters, "
                             f"got {len(tokens)}")
        if mode == "segments" and len(tokens) // B < 2:
            raise UsageError(f"--chars: {len(tokens)} characters cannot make {B} streams")
    except UsageError as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 2
    except (CheckpointError, OSError, ValueError, DataError) as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 1
    show = not (args.quiet or args.json)
    if mode == "sliding":
        res = evaluate_sliding_window(model, tokens, context=L, batch_size=max(B, 64)
                                      if args.batch_size == 1 else B, progress=show)
    else:
        res = evaluate_segments(model, tokens, seg_len=L, batch_size=B, mem_len=args.mem_len,
                                progress=show)
    if args.json:
        print(json.dumps({"checkpoint": args.checkpoint, "model": type(model).__name__,
                          "corpus": corpus, "split": args.split, "chars": len(tokens),
                          "mode": mode, "seg_len": L, "mem_len": M, "clamp_len": cfg.clamp_len,
                          "same_length": cfg.same_length, "batch_size": B,
                          "bpc": res.bpc, "n_tokens": res.n_tokens, "seconds": res.seconds,
                          "device": str(device)}))
    else:
        print(f"corpus: {corpus} ({args.split}, first {len(tokens):,} characters); "
              f"{type(model).__name__}, {mode}, L={L}, M={M}")
        print(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
