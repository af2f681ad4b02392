"""`python -m txl_mini evaluate`: bits per character of a trained checkpoint (ch. 6)."""

from __future__ import annotations

import argparse
import json
import os

import torch

from ..checkpoint import CheckpointError, load_checkpoint
from ..data import CORPORA, OFFLINE_CHARS, load_corpus_split
from ..evaluate import evaluate_segments, evaluate_sliding_window
from ..text8 import DataError
from .options import (DEVICES, UsageError, check_at_least, check_clamp_len,
                      check_memory, fail, pick_device)

PROG = "python -m txl_mini evaluate"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Bits per character of a trained checkpoint.")
    p.add_argument("checkpoint", help="a .pt file, or a run directory (its best.pt), "
                   "from python -m txl_mini train")
    p.add_argument("--corpus", default=None, choices=CORPORA,
                   help="default: the training corpus")
    p.add_argument("--path", default=None,
                   help="corpus file (default: the one the run trained on)")
    p.add_argument("--split", default="valid", choices=["valid", "test"])
    p.add_argument("--chars", type=int, default=200_000,
                   help="evaluate on the first N characters")
    p.add_argument("--mode", default="auto", choices=["auto", "segments", "sliding"],
                   help="segments with memory, or the vanilla sliding window; auto: "
                   "sliding for a vanilla checkpoint, segments for Transformer-XL")
    p.add_argument("--sliding-window", action="store_true",
                   help="same as --mode sliding")
    p.add_argument("--seg-len", type=int, default=None,
                   help="L (sliding: the context); default: the model's")
    p.add_argument("--mem-len", type=int, default=None,
                   help="M, memory length (default: the model's)")
    p.add_argument("--clamp-len", type=int, default=None,
                   help="share R beyond this distance (-1: never)")
    p.add_argument("--same-length", action="store_true",
                   help="every query sees the same number of keys")
    p.add_argument("--batch-size", type=int, default=1,
                   help="B parallel streams (sliding: windows at once)")
    p.add_argument("--device", default="auto", choices=DEVICES)
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default: torch's choice)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object instead of text")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def checkpoint_path(path: str) -> str:
    """A run directory stands for its best.pt (else last.pt)."""
    if os.path.isdir(path):
        for name in ("best.pt", "last.pt"):
            if os.path.isfile(os.path.join(path, name)):
                return os.path.join(path, name)
    return path


def main(argv=None) -> int:
    """`python -m txl_mini evaluate ...`; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        check_at_least(args, {"chars": 2, "batch_size": 1, "seg_len": 1, "mem_len": 0,
                              "threads": 1})
        check_clamp_len(args.clamp_len)
        if args.threads:
            torch.set_num_threads(args.threads)
        device = pick_device(args.device)
        model, meta = load_checkpoint(checkpoint_path(args.checkpoint), device)
        vanilla = type(model).__name__ == "VanillaTransformer"
        mode = "sliding" if args.sliding_window else args.mode
        mode = ("sliding" if vanilla else "segments") if mode == "auto" else mode
        if vanilla and args.mem_len:
            raise UsageError("--mem-len: a vanilla checkpoint has no memory")
        changes = {k: v for k, v in (("clamp_len", args.clamp_len),
                                     ("same_length", args.same_length or None))
                   if v is not None}
        model.cfg = model.cfg.replace(**changes)  # read by forward; weights unchanged
        cfg, L = model.cfg, args.seg_len or model.cfg.seg_len
        M = 0 if vanilla else (cfg.mem_len if args.mem_len is None else args.mem_len)
        B = args.batch_size
        check_memory(cfg.replace(seg_len=L), B, M, False, device)
        corpus = args.corpus or meta.get("corpus", "offline")
        path = args.path if args.corpus or args.path else meta.get("corpus_path")
        tokens = load_corpus_split(
            corpus, args.split, path, meta.get("offline_chars", OFFLINE_CHARS)
        )[: args.chars]
        if mode == "sliding" and len(tokens) <= L + 1:
            raise UsageError(f"--chars: the sliding window needs more than {L + 1} "
                             f"characters, got {len(tokens)}")
        if mode == "segments" and len(tokens) // B < 2:
            raise UsageError(
                f"--chars: {len(tokens)} characters cannot make {B} streams"
            )
    except UsageError as e:
        return fail(PROG, f"error: {e}", 2)
    except (CheckpointError, OSError, ValueError, DataError) as e:
        return fail(PROG, f"error: {e}", 1)
    show = not (args.quiet or args.json)
    if mode == "sliding":
        res = evaluate_sliding_window(
            model, tokens, context=L,
            batch_size=max(B, 64) if args.batch_size == 1 else B, progress=show,
        )
    else:
        res = evaluate_segments(model, tokens, seg_len=L, batch_size=B,
                                mem_len=args.mem_len, progress=show)
    if args.json:
        print(json.dumps({"checkpoint": args.checkpoint, "model": type(model).__name__,
                          "corpus": corpus, "split": args.split, "chars": len(tokens),
                          "mode": mode, "seg_len": L, "mem_len": M,
                          "clamp_len": cfg.clamp_len,
                          "same_length": cfg.same_length, "batch_size": B,
                          "bpc": res.bpc, "n_tokens": res.n_tokens,
                          "seconds": res.seconds, "device": str(device)}))
    else:
        print(f"corpus: {corpus} ({args.split}, first {len(tokens):,} characters); "
              f"{type(model).__name__}, {mode}, L={L}, M={M}")
        print(res)
    return 0
