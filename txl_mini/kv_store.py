"""What the key/value cache (txl_mini.kv_cache) keeps between segments.

Appending a segment's keys and values to the cached ones with torch.cat copies all
K = M + L of them, in every layer, for every segment: 5 to 10% of a segment's time
at M = 3,800 on a CPU (measured, `text8_base`, interleaved on a busy machine). A
`Room` keeps space after the cached ones, so only the L new ones are written.
`cached_rel_keys` keeps W_{k,R} R per layer, made once for the longest K. Shapes: H
heads, B streams, M cached, K keys, D head dim."""

from __future__ import annotations

import torch

from .fast_attention import FastAttention, padded


class Room:
    """Per layer one buffer (2, H, B, capacity, D), keys then values, filled left to
    right: a segment's new keys and values go in at `used`, and a cache is a view of
    [used - M, used). Nothing is ever written below `used`, so every cache handed out
    stays as it was; a branch from an older cache, a full room or a new dtype gets a
    new room (one copy of the M kept)."""

    def __init__(self, keys, values, spare: int, dtype):  # keys, values: (H, B, M, D)
        H, B, M, D = keys[0].shape
        self.bufs = [k.new_empty(2, H, B, M + spare, D, dtype=dtype) for k in keys]
        for buf, k, v in zip(self.bufs, keys, values):
            buf[0, :, :, :M], buf[1, :, :, :M] = k, v
        self.used = M  # positions written

    def fits(self, cache, L: int, dtype) -> bool:
        """Whether L new positions can go in right after `cache`, the newest view."""
        return (self.used == cache.end and self.used + L <= self.bufs[0].shape[3]
                and self.bufs[0].dtype == dtype)


def kv_dtype(model, device) -> torch.dtype:
    """The dtype the model's key/value projection gives: autocast's when it is on (it
    leaves float64 alone), else the weights'."""
    w = model.blocks[0].attn.W_v.weight.dtype
    on = torch.is_autocast_enabled(device.type) and w != torch.float64
    return torch.get_autocast_dtype(device.type) if on else w


def cached_rel_keys(model, cache, K: int, want: int, clamp_len: int, h) -> list:
    """Per layer `attend`'s position keys for K keys, (H, Kp, D), or None: views of
    the LAST Kp = padded(K + 1) rows of the table `cache.pos_keys` (`rel_keys` for
    `cache.pos_len` keys; row p is distance P-p; those of distance >= K, the pad, meet
    only masked entries). Rebuilt only when K outgrows the table (then for `want` >= K
    keys) or the clamp changes."""
    if model.cfg.pos_enc == "absolute":  # positions are inside the keys already
        return [None] * len(model.blocks)
    table = cache.pos_keys
    if not table or cache.pos_len < K or cache.pos_clamp != clamp_len:
        R = model.position_table(want, clamp_len, h)  # (P, C); None for Shaw's rows
        table[:] = [FastAttention.rel_keys(b.attn, R, want) for b in model.blocks]
        cache.pos_len, cache.pos_clamp = want, clamp_len
    Kp = padded(K + 1)
    return [t[:, t.shape[1] - Kp:] for t in table]  # (H, Kp, D) views
