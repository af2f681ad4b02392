"""`python -m txl_mini sample`: generate text from a checkpoint."""

from __future__ import annotations

import argparse
import math
import sys
import time

import torch

from ..data import CharVocab
from ..model import VanillaTransformer
from ..sample import generate
from . import plural
from .checkpoints import corpus_name, open_checkpoint
from .errors import printable
from .options import (
    Parser,
    UsageError,
    add_common,
    check_at_least,
    check_seed,
    command,
)
from .paths import expand, refuse_empty
from .saved import note_last

PROG = "python -m txl_mini sample"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description="Generate text from a checkpoint written by "
               "python -m txl_mini train. Transformer-XL uses its memory cache (one "
               "position per character); the vanilla model re-runs its window.")
    add = p.add_argument
    add("--prompt", default="the ", help="text to continue (a-z and space)")
    add("--chars", type=int, default=200, help="how many characters to generate")
    add("--temperature", type=float, default=0.8, help="0 = greedy; >1 = more random")
    add("--top-k", type=int, help="draw only among the k likeliest")
    add("--seed", type=int, help="random seed (default: unseeded)")
    add("--no-cache", action="store_true", help="re-run the window (slow, to compare)")
    add_common(p, checkpoint=True,
               quiet="only the text: no line about the model or the time")
    return p


@command(PROG, errors=(ValueError,))
def main(argv=None) -> int:
    """`python -m txl_mini sample ...`; returns the exit status."""
    args = build_parser().parse_args(argv)
    refuse_empty(("the checkpoint argument", args.checkpoint))
    vocab = CharVocab()
    check_at_least(args, {"chars": 0, "top_k": 1})
    args.prompt = args.prompt.lower()  # as train and evaluate read their text
    if not (math.isfinite(args.temperature) and args.temperature >= 0):
        raise UsageError(f"--temperature must be a finite number >= 0, got "
                         f"{args.temperature}")
    check_seed(args.seed)
    bad = [c for c in args.prompt if c not in vocab.chars]
    if bad:
        raise UsageError(f"--prompt: {bad[0]!r} is not in text8's alphabet; write "
                         "the prompt in letters a-z and spaces")
    prompt = vocab.encode(args.prompt)
    if prompt.numel() == 0:
        raise UsageError("--prompt: give at least one character")
    model, meta, path, device = open_checkpoint(args)
    # train refuses another --vocab-size; a checkpoint from before, or forged, drew
    # ids past 'z' that are no character (an IndexError halfway through the text)
    V = len(vocab.chars)
    if model.cfg.vocab_size != V:
        raise UsageError(f"{path} has config.vocab_size = {model.cfg.vocab_size:,}, "
                         f"not {V}, the characters sample writes (a-z and space)")
    if args.top_k is not None and args.top_k > V:  # else all V, silently
        raise UsageError(f"--top-k must be <= {V}, the checkpoint's vocabulary size, "
                         f"got {args.top_k:,}")
    gen = None
    if args.seed is not None:
        gen = torch.Generator(device=device).manual_seed(args.seed)
    vanilla = isinstance(model, VanillaTransformer)  # the cache serves XL only
    if args.no_cache and vanilla:  # else ignored in silence (evaluate refuses it too)
        raise UsageError("--no-cache: a vanilla checkpoint has no key/value cache; "
                         "drop it")
    use_cache = not args.no_cache and not vanilla
    how = "key/value cache" if use_cache else "re-running the window"
    if not args.quiet:  # a run's last.pt said, with the line about the model
        note_last(path, meta, expand(args.checkpoint), PROG)
        corpus = _shown(corpus_name(meta.get("corpus", "?")))
        print(printable(f"{type(model).__name__} from {path} (corpus: {corpus}); "
                        f"{how}", sys.stderr), file=sys.stderr)
    first = prompt_start(len(prompt), model.cfg, use_cache)
    if first and not args.quiet:
        print(f"--prompt: reading its last {len(prompt) - first:,} of "
              f"{len(prompt):,} characters, all the next one can depend on",
              file=sys.stderr)
    shown = []  # the prompt, with the first character: NaN logits from broken

    def stream(i: int) -> None:  # weights come at once, and leave stdout empty
        if not shown:
            shown.append(sys.stdout.write(args.prompt))
        sys.stdout.write(vocab.chars[i])
        sys.stdout.flush()

    if args.chars == 0:  # the prompt alone: no character, so no NaN, to wait for
        shown.append(sys.stdout.write(args.prompt))
    start = time.perf_counter()
    try:
        generate(model, prompt[first:], args.chars, temperature=args.temperature,
                 top_k=args.top_k, generator=gen, use_cache=use_cache, on_token=stream)
    except ValueError as e:  # NaN logits (the rest is checked before): weights
        raise UsageError(f"{path}: {e}") from None  # that are broken, exit 2
    finally:  # NaN logits (a broken checkpoint) end the text too
        print(end="\n" if shown else "", flush=True)
    if not args.quiet:
        seconds = time.perf_counter() - start
        print(f"{plural(args.chars, 'character')} in {seconds:.2f} s", file=sys.stderr)
    return 0


def prompt_start(P: int, cfg, use_cache: bool) -> int:
    """Where the part of a P-character prompt begins that can change the text: the
    rest is not read. A 20,000-character prompt took minutes on a busy machine, read
    in segments of L through the whole model. Re-running the window reads its last
    L. With the cache, a layer reaches back over the cache's M + L positions (generate
    keeps that many) and its segment's L, so n_layer x (M + 2L) bounds what the next
    character depends on; cut at a segment boundary of the whole prompt, each position
    sees the keys it saw before, and the text is the same to the bit."""
    L = cfg.seg_len
    if not use_cache:
        return max(0, P - L)
    return max(0, P - cfg.n_layer * (cfg.mem_len + 2 * L)) // L * L


def _shown(corpus) -> str:
    """A corpus name, or a record of another's settings cut to a readable length."""
    text = str(corpus)
    return text if len(text) <= 60 else text[:57] + "..."


if __name__ == "__main__":  # python -m txl_mini.cli.sample: the same command
    from . import run_module  # through the package's main (Ctrl-C, a closed pipe)

    run_module("sample")
