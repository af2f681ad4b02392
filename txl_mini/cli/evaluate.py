"""`python -m txl_mini evaluate`: bits per character of a trained checkpoint."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import torch

from ..data import CORPORA, OFFLINE_CHARS, load_corpus_split
from ..evaluate import evaluate_segments, evaluate_sliding_window
from ..text8 import DataError
from .checkpoints import corpus_name, open_checkpoint
from .corpus import (
    check_not_empty,
    check_recorded,
    check_text_file,
    option_names,
    refuse_path,
    short_streams,
)
from .errors import printable
from .eval_settings import Pinned, settings
from .memory import check_memory
from .options import Parser, UsageError, add_common, check_at_least, command, flag
from .paths import expand, refuse_empty, refuse_stdin
from .saved import note_last
from .settings import MAX_DISTANCE, check_distances

PROG = "python -m txl_mini evaluate"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description="Bits per character of a trained checkpoint.")
    add_common(p, checkpoint=True)
    add = p.add_argument
    add("--corpus", choices=CORPORA, help="default: the training corpus (the book's "
        "checkpoints: theirs by name, cue or names)")
    add("--path", help="corpus file (default: the one the run trained on; with "
        "--corpus, that corpus as it comes: offline is the generated one)")
    add("--split", default="valid", choices=["valid", "test"],
        help="which 5%% of the corpus (text8: the standard 5M characters)")
    add("--chars", type=int, default=200_000, help="evaluate on the first N characters")
    add("--mode", default="auto", choices=["auto", "segments", "sliding"],
        help="segments with memory, or the vanilla sliding window; auto: sliding for "
        "a vanilla checkpoint, segments for Transformer-XL")
    add("--seg-len", type=int, help="L (sliding: the context); default: the model's")
    add("--mem-len", type=int, help="M, memory length (default: the model's)")
    add("--clamp-len", type=int, help="share R beyond this distance (-1: never; "
        "default: the model's; Transformer-XL only)")
    add("--same-length", action=argparse.BooleanOptionalAction, help="every query "
        "sees only its last max(M, 1) keys (sliding: M is the checkpoint's mem_len); "
        "default: the checkpoint's setting")
    add("--batch-size", type=int, default=1, help="B parallel streams (sliding: "
        "windows at once; 1 means 64 windows); more streams at once is usually faster "
        "on a CPU, by a factor that depends on the machine (the time is printed)")
    add("--no-cache", action="store_true", help="Transformer-XL: re-project the "
        "memory every segment instead of keeping its keys and values (the same bpc, "
        "slower)")
    add("--json", action="store_true", help="print one JSON object instead of text")
    return p


def corpus_of(args, meta: dict, path: str) -> tuple[str, str | None]:
    """(corpus name, file) to evaluate on: the options', else the checkpoint's; the
    book's checkpoints record their corpus' generator settings, one of BOOK_CORPORA."""
    if args.corpus or args.path:
        return args.corpus or "offline", args.path
    corpus = corpus_name(meta.get("corpus", "offline"))
    if corpus not in CORPORA:
        what = str(corpus) if len(str(corpus)) <= 60 else str(corpus)[:57] + "..."
        raise UsageError(f"{path} was trained on a corpus evaluate cannot rebuild "
                         f"({what}); pass --corpus and --path")
    return corpus, meta.get("corpus_path")


def check_length(args, mode: str, L: int, n_split: int, n: int, text: str) -> None:
    """Enough characters, else the one to blame: the text (its split too short for
    any run), --batch-size (too many streams for the split) or --chars (it cut the
    split too short). B > 1 streams each hold a segment, as in train: each stream's
    first character and the N % B past the last go unscored (400 streams of 2: 599
    of 999)."""
    B = args.batch_size
    least, need = (L + 2,) * 2 if mode == "sliding" else (2, 2 if B < 2 else B * L + B)
    if n >= need:
        return
    what = (f"the sliding window of L={L} needs at least {L + 2}" if mode == "sliding"
            else "the evaluation needs at least 2")
    if n_split < least:
        where = f"--path {text}" if args.path else text
        shorter = " or a smaller --seg-len" if args.seg_len else ""
        raise UsageError(f"{where}: its {args.split} split (5% of the text) has "
                         f"{n_split} characters; {what}; give a longer text{shorter}")
    if mode == "sliding":
        raise UsageError(f"--chars {args.chars}: {what}")
    if n_split < need:
        raise UsageError(f"--batch-size {B}: the {args.split} split's {n_split:,} "
                         f"characters make {short_streams(n_split, B, L)}; lower "
                         "--batch-size")
    raise UsageError(f"--chars {args.chars} with --batch-size {B}: "
                     f"{short_streams(n, B, L)}; lower --batch-size or raise --chars")


@command(PROG, errors=(OSError, ValueError, DataError))  # CheckpointError: a ValueError
def main(argv=None) -> int:
    """`python -m txl_mini evaluate ...`; returns the exit status."""
    args = build_parser().parse_args(argv)
    refuse_empty(("the checkpoint argument", args.checkpoint), ("--path", args.path))
    refuse_stdin(args.path, "text")
    args.path = expand(args.path, "--path")  # the checkpoint: open_checkpoint's
    check_at_least(args, {"chars": 2, "batch_size": 1, "seg_len": 1, "mem_len": 0})
    if args.clamp_len is not None and (args.clamp_len < -1 or args.clamp_len == 0):
        raise UsageError(f"--clamp-len must be -1 (off) or >= 1, got {args.clamp_len}")
    check_distances(args.clamp_len, None)
    for name in ("seg_len", "mem_len"):  # as --clamp-len and a checkpoint's lengths
        if (v := getattr(args, name)) is not None and v > MAX_DISTANCE:
            raise UsageError(f"{flag(name)} must be <= {MAX_DISTANCE:,}, got {v:,}")
    model, meta, path, device = open_checkpoint(args)
    cfg, B = model.cfg, args.batch_size
    mode, L, M, changes, window = settings(args, model)
    if args.same_length is None and changes.get("same_length") is False:
        # the 0: --mem-len's (segments) or the checkpoint's (sliding: its mem_len
        # sets the window; segments without --mem-len)
        what = ("--mem-len 0" if mode == "segments" and args.mem_len is not None else
                "its mem_len 0", "window" if mode == "sliding" else "segment")
        if not args.json:  # the checkpoint's same_length, dropped: no memory
            print(f"{PROG}: note: {path} was trained with same_length, which needs "
                  f"memory: with {what[0]} it runs without it (each query sees the "
                  f"whole {what[1]} up to itself)", file=sys.stderr)
    corpus, corpus_path = corpus_of(args, meta, path)
    refuse_path(corpus, args.path)  # --corpus cue --path F: exit 2, as train's
    if corpus_path and not (args.path or args.corpus):  # the one it trained on
        check_recorded(corpus, corpus_path, meta, path)
    check_not_empty(corpus_path)
    if corpus == "offline" and corpus_path and os.path.isfile(corpus_path):
        check_text_file(corpus_path, PROG)  # a warning, as train gives
    with option_names(args.path):
        split = load_corpus_split(corpus, args.split, corpus_path,
                                  meta.get("offline_chars", OFFLINE_CHARS))
    tokens = split[: args.chars]
    check_length(args, mode, L, len(split), len(tokens), corpus_path or corpus)
    # no segment and its memory together span more than a stream's T inputs: a
    # --mem-len past them holds them all, as T does, and needs no more memory (the
    # key/value cache would make a position table of mem_len + L rows at once)
    T = len(tokens) // B - 1
    seg, mem = (min(L, T), min(M, T - min(L, T))) if mode == "segments" else (L, M)
    # a same_length window that holds every key a query has (the sliding window's L;
    # each stream's T inputs) leaves each query all of them: no window to claim
    if window >= (L if mode == "sliding" else T):
        if args.same_length and not args.json:  # typed, so said
            keys, has = (("the checkpoint's mem_len", f"the window has L={L}")
                         if mode == "sliding" else
                         ("M", f"each stream has {T:,} inputs"))
            print(f"{PROG}: note: --same-length changes nothing here: it leaves each "
                  f"query its last {window} keys ({keys}), and no query has more: "
                  f"{has}", file=sys.stderr)
        window = 0
    # the sliding window runs `wide` windows at once, never more than the text has
    wide = 64 if B == 1 else B
    rows = B if mode == "segments" else max(1, min(wide, len(tokens) - L - 1))
    check_memory(cfg.replace(seg_len=seg), rows, mem, False, device)
    show = not (args.quiet or args.json)
    # the key/value cache serves XL's segments
    cache = (mode == "segments" and not args.no_cache and M > 0
             and type(model).__name__ == "TransformerXL")
    if not args.json:  # a run's last.pt said, as the same_length note: not for --json
        note_last(path, meta, expand(args.checkpoint), PROG)
    memory = "" if mode == "sliding" else f", M={M}"  # the window has none
    same = f", same_length window {window}" if window else ""
    text = f"{corpus_path}, " if corpus_path else ""  # a file, as train names it
    header = printable(f"{path}: {type(model).__name__}, {mode}, L={L}{memory}{same}"
                       f"{', key/value cache' if cache else ''}; corpus: {corpus} "
                       f"({text}{args.split}, first {len(tokens):,} characters)",
                       sys.stdout)  # one line, whatever the names hold
    # first (a stdout that fails stops us before the work), unless a weight is NaN
    # or infinite: the loss then is, and the error came after this line on stdout
    early = not args.json and all(torch.isfinite(p).all() for p in model.parameters())
    if early:
        print(header, flush=True)
    if mode == "sliding":
        fixed = {k: v for k, v in changes.items() if k == "same_length"}
        res = evaluate_sliding_window(Pinned(model, **fixed), tokens, context=L,
                                      batch_size=wide, progress=show,
                                      clamp_len=changes.get("clamp_len"))
    else:
        res = evaluate_segments(model, tokens, seg_len=L, batch_size=B,
                                mem_len=None if args.mem_len is None else
                                min(args.mem_len, T), progress=show, cache=cache,
                                **changes)
    if res.n_nonfinite or not math.isfinite(res.bpc):
        raise UsageError(f"{path} gives a NaN or infinite loss{where_nan(res)}; its "
                         "weights are broken, so there is no bpc to report")
    if args.json:
        print(json.dumps({"checkpoint": path, "model": type(model).__name__,
                          "corpus": corpus, "path": corpus_path,
                          "split": args.split, "chars": len(tokens),
                          "mode": mode, "seg_len": L, "mem_len": M,
                          "clamp_len": changes.get("clamp_len", cfg.clamp_len),
                          "same_length": changes.get("same_length", cfg.same_length),
                          "window": window,
                          "batch_size": B, "cache": cache,
                          "bpc": res.bpc, "n_tokens": res.n_tokens,
                          "seconds": res.seconds, "device": str(device)}))
    else:
        print(*([] if early else [header]), res, sep="\n")
    return 0


def where_nan(res) -> str:
    """How many characters' losses are NaN or infinite, and the first one's number in
    the text evaluated: 'at 99 of 99 characters' read as the last one."""
    bad = ~torch.isfinite(res.token_nats)  # (B, T), lined up with the text
    bad[:, 0] = False  # each stream's first character: never scored (NaN)
    first = bad.reshape(-1).nonzero()
    if not len(first):  # each loss finite, their sum not
        return f" over {res.n_tokens:,} characters"
    return (f" for {res.n_nonfinite:,} of {res.n_tokens:,} characters, the first at "
            f"character {int(first[0]) + 1:,}")


if __name__ == "__main__":  # python -m txl_mini.cli.evaluate: the same command
    from . import run_module  # through the package's main (Ctrl-C, a closed pipe)

    run_module("evaluate")
