"""evaluate's settings: its options checked against the checkpoint, and the model
to call with them.

same_length limits each query to its last max(M, 1) keys. The sliding window has
no memory but passes no mem_len, so there M is the checkpoint's mem_len: each
query, the scored last one too, sees only its last max(mem_len, 1) of the window's
L characters (a --same-length checkpoint of mem_len 8 reads at most 8 of them, at
any --seg-len); --no-same-length lets it see all L."""

from __future__ import annotations

import torch

from .options import UsageError
from .settings import check_settings


class Pinned(torch.nn.Module):
    """`model` called with `fixed` arguments too: evaluate_sliding_window passes the
    model only clamp_len, so --same-length / --no-same-length reach it this way."""

    def __init__(self, model, **fixed):
        super().__init__()
        self.model, self.fixed, self.cfg = model, fixed, model.cfg

    def forward(self, idx, **kw):
        return self.model(idx, **self.fixed, **kw)


def settings(args, model) -> tuple[str, int, int, dict, int]:
    """(mode, L, M, the model's evaluation settings to pass to each call, the keys
    each query sees at most: 0 for all); an option that would be ignored or silently
    wrong is refused."""
    vanilla = type(model).__name__ == "VanillaTransformer"
    mode = ("sliding" if vanilla else "segments") if args.mode == "auto" else args.mode
    if vanilla and args.mem_len:
        raise UsageError("--mem-len: a vanilla checkpoint has no memory")
    if mode == "sliding" and args.mem_len:  # else shown as M=4, and never used
        raise UsageError("--mem-len: the sliding window has no memory; drop it")
    cfg, sliding = model.cfg, mode == "sliding"
    M = 0 if vanilla or sliding else (
        cfg.mem_len if args.mem_len is None else args.mem_len)
    if args.no_cache:  # the cache holds XL's memory: else --no-cache does nothing
        none = ("a vanilla checkpoint has no key/value cache" if vanilla else
                "the sliding window has no key/value cache" if sliding else
                "with M=0 there is no memory to cache" if M == 0 else None)
        if none:
            raise UsageError(f"--no-cache: {none}; drop it")
    reach = cfg.mem_len if sliding else M  # the M of same_length's window
    # the checkpoint's same_length, left to itself, needs memory: with none it is
    # dropped (--mem-len 0; the sliding window of a mem_len 0 checkpoint), as
    # evaluate's note says
    dropped = cfg.same_length and args.same_length is None and reach == 0
    # the checks train makes of its options (cli/settings.py), here of these options
    # and the checkpoint's same_length; a no-op it was trained with is no reason to
    # refuse it
    check_settings("a vanilla checkpoint" if vanilla else
                   f"a --pos-enc {cfg.pos_enc} checkpoint", cfg.pos_enc, reach,
                   vanilla=vanilla, same_length=cfg.same_length and not dropped
                   if args.same_length is None else args.same_length,
                   clamp_len=-1 if args.clamp_len is None else args.clamp_len,
                   sliding=sliding, own=args.mem_len is None)
    same = False if dropped else args.same_length
    changes = {k: v for k, v in (("clamp_len", args.clamp_len), ("same_length", same))
               if v is not None}
    # the arguments of every call, validated once here, and the same_length window
    # they give: the sliding window passes no mem_len, so the checkpoint's applies
    window = model.settings(None if sliding else args.mem_len, **changes)[1]
    return mode, args.seg_len or cfg.seg_len, M, changes, window
