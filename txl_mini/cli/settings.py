"""Model settings checked against each other, by train and evaluate alike.

ModelConfig judges each setting on its own and lets through pairs where one does
nothing (untie_r without the relative encoding's u and v) or where every query sees
only itself (same_length without memory): a chapter may build them on purpose, and a
checkpoint trained with one must still load. The command lines refuse them up front,
and train and evaluate call the same `check_settings`, so train never makes a model
that evaluate, given the same options, refuses.
"""

from __future__ import annotations

import inspect

import torch

from ..text8 import TEXT8_CHARS
from .options import UsageError

# Adam's beta1 as cli/run.py builds it (torch's default), read from the signature:
# building an Adam as this module loads made two-rank torchrun runs hang now and then
BETA1 = inspect.signature(torch.optim.Adam).parameters["betas"].default[0]

# the farthest --clamp-len / --shaw-clip: no context that fits in memory reaches
# it (a key that far back is 8 GiB of scores per head and layer); torch's int64
# overflows far above it, and a Shaw table of that many rows is sized at once
MAX_DISTANCE = 2**31 - 1

def check_vocab(vocab_size: int | None) -> None:
    """--vocab-size: the corpus' characters, no more and no fewer. Fewer cannot encode
    the text; with more, sample drew ids that are no character at all."""
    if vocab_size is not None and vocab_size != len(TEXT8_CHARS):
        raise UsageError(f"--vocab-size must be {len(TEXT8_CHARS)}, the corpus' "
                         f"characters (a-z and space), got {vocab_size:,}")


def check_lr(lr: float) -> None:
    """Adam's first step is lr / (1 - beta1) and must fit in float32: else torch's
    traceback at step 1, and again on every --resume."""
    most = torch.finfo(torch.float32).max * (1 - BETA1)
    if lr > most:
        raise UsageError(f"--lr must be <= {most:.2g} (Adam's first step, lr / "
                         f"(1 - beta1) with beta1 = {BETA1}, must fit in float32), "
                         f"got {lr}")


def check_distances(clamp_len, shaw_clip) -> None:
    """--clamp-len and --shaw-clip at most MAX_DISTANCE (None: not given); the lower
    bounds are ModelConfig's (train) or evaluate's own."""
    for name, v, off in (("clamp-len", clamp_len, "never clamps"),
                         ("shaw-clip", shaw_clip, "L + M - 1")):
        if v is not None and v > MAX_DISTANCE:
            raise UsageError(f"--{name} must be <= {MAX_DISTANCE:,} (-1: {off}), "
                             f"got {v:,}")


def check_settings(model: str, pos_enc: str, M: int, *, vanilla: bool = False,
                   same_length: bool = False, clamp_len: int = -1, shaw_clip: int = -1,
                   untie_r: bool = False, sliding: bool = False,
                   own: bool = False) -> None:
    """A UsageError naming both sides of a pair that cannot work. `model` names the
    model as the command's user sees it ("the vanilla baseline (--vanilla)", "--pos-enc
    absolute", "a vanilla checkpoint"); M is the memory it runs with (`sliding`,
    evaluate's window: the checkpoint's mem_len, its same_length window's M; `own`:
    the checkpoint's mem_len, no --mem-len typed).
    Settings left at their defaults are never refused."""
    if same_length and (vanilla or M == 0):
        # a window of max(M, 1) = 1 key: each character predicted from itself alone
        why, fix = ((f"{model} has none, so", "") if vanilla else
                    ("in the sliding window (--mode sliding) it leaves each query "
                     "its last mem_len keys, and this checkpoint's mem_len is 0, so",
                     " or use --mode segments with --mem-len > 0") if sliding else
                    ("this checkpoint's mem_len is 0, so" if own else
                     "with --mem-len 0", " or give --mem-len > 0"))
        raise UsageError(f"same_length needs memory: {why} every query would see only "
                         f"itself; drop --same-length{fix}")
    if clamp_len != -1 and pos_enc == "shaw":  # evaluate's: train's ModelConfig
        # refuses the pair first, in like words
        raise UsageError(f"--clamp-len {clamp_len} does nothing with {model}; its "
                         "clipping distance is the shaw_clip it was trained with "
                         "(train's --shaw-clip); drop it")
    if clamp_len != -1 and pos_enc != "relative":
        raise UsageError(f"--clamp-len {clamp_len}: {model} has no relative positions "
                         "to clamp; drop it")
    if untie_r and pos_enc != "relative":
        raise UsageError(f"--untie-r: {model} has no u and v to untie; drop it")
    if shaw_clip != -1 and pos_enc != "shaw":
        raise UsageError(f"--shaw-clip {shaw_clip}: {model} has no Shaw et al. "
                         "distances to clip; drop it")


def check_model_options(args, cfg) -> None:
    """train's model options: what VanillaTransformer fixes (no memory, absolute
    positions) is no option of --vanilla, and every pair is one evaluate can run."""
    vanilla = "the vanilla baseline (--vanilla)"
    if args.vanilla:
        for name, why in (("mem_len", "has no memory"),
                          ("pos_enc", "has absolute positions")):
            if getattr(args, name) is not None:
                raise UsageError(f"--{name.replace('_', '-')}: {vanilla} {why}; "
                                 "drop it")
    check_settings(vanilla if args.vanilla else f"--pos-enc {cfg.pos_enc}",
                   "absolute" if args.vanilla else cfg.pos_enc,
                   0 if args.vanilla else cfg.mem_len, vanilla=args.vanilla,
                   same_length=cfg.same_length, clamp_len=cfg.clamp_len,
                   shaw_clip=cfg.shaw_clip, untie_r=cfg.untie_r)
