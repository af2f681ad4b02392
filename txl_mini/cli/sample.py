"""`python -m txl_mini sample`: generate text from a checkpoint (chapter 6)."""

from __future__ import annotations

import argparse
import sys
import time

import torch

from ..checkpoint import CheckpointError, load_checkpoint
from ..data import CharVocab
from ..model import VanillaTransformer
from ..sample import generate

PROG = "python -m txl_mini sample"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Generate text from a checkpoint written by python -m txl_mini "
        "train. Transformer-XL uses its memory cache (one position per character); "
        "the vanilla model re-runs its window.")
    p.add_argument("checkpoint", help="a .pt file written by python -m txl_mini train")
    p.add_argument("--prompt", default="the ", help="text to continue (a-z and space)")
    p.add_argument("--chars", type=int, default=200,
                   help="how many characters to generate")
    p.add_argument("--temperature", type=float, default=0.8,
                   help="0 = greedy; >1 = more random")
    p.add_argument("--top-k", type=int, default=None,
                   help="draw only among the k likeliest")
    p.add_argument("--seed", type=int, default=None,
                   help="random seed (default: unseeded)")
    p.add_argument("--no-cache", action="store_true",
                   help="re-run the window (slow, to compare)")
    return p


def main(argv=None) -> int:
    """`python -m txl_mini sample ...`; returns the exit status."""
    args = build_parser().parse_args(argv)
    vocab = CharVocab()
    if (args.chars < 0 or args.temperature < 0
            or (args.top_k is not None and args.top_k < 1)):
        raise SystemExit("error: --chars and --temperature must be >= 0, --top-k >= 1")
    try:
        prompt = vocab.encode(args.prompt)
    except ValueError as e:
        raise SystemExit(f"error: prompt: {e}") from None
    if prompt.numel() == 0:
        raise SystemExit("error: prompt: give at least one character")
    try:
        model, meta = load_checkpoint(args.checkpoint)
    except CheckpointError as e:
        raise SystemExit(f"error: cannot load checkpoint {e}") from None
    gen = torch.Generator().manual_seed(args.seed) if args.seed is not None else None
    use_cache = not args.no_cache and not isinstance(model, VanillaTransformer)
    how = "memory cache" if use_cache else "re-running the window"
    print(f"{type(model).__name__} from {args.checkpoint} "
          f"(corpus: {meta.get('corpus', '?')}); {how}", file=sys.stderr)
    sys.stdout.write(args.prompt)

    def stream(i: int) -> None:
        sys.stdout.write(vocab.chars[i])
        sys.stdout.flush()

    start = time.perf_counter()
    generate(model, prompt, args.chars, temperature=args.temperature, top_k=args.top_k,
             generator=gen, use_cache=use_cache, on_token=stream)
    sys.stdout.write("\n")
    seconds = time.perf_counter() - start
    print(f"{args.chars} characters in {seconds:.2f} s", file=sys.stderr)
    return 0
