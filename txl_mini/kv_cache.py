"""Inference with a key/value cache: each state is projected once, on arrival.

The standard path keeps each layer's input states m and projects all K = M + L of
[m; h] again for every segment. Their keys and values never change (position enters
only through the position keys, terms b and d), so this path keeps them, projects the
L new positions only, and trims to the last M as `update_mems` does. Bookkeeping only:
each `Block` runs its `residual` wiring around the fused attention's `kv` and `attend`
(whose head-first layout the cache shares); `TransformerXL` gives the settings,
embedding, R and read-out; `kv_store` the buffers and the position table it keeps. Any
pos_enc; not `VanillaTransformer` (its window re-encodes every position). Shapes: B
batch, L segment, M cached, K = M + L, P the position table's longest distance, H
heads, D head dim, C d_model, V vocab."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from .attention import causal_mask
from .fast_attention import FastAttention
from .kv_store import Room, cached_rel_keys, kv_dtype
from .model import TransformerXL, VanillaTransformer


@dataclass
class KVCache:
    """Per layer, what the next segment needs of the remembered states (one model,
    one batch of streams). keys[i], values[i]: (H, B, M, D), W_{k,E} m and W_v m of
    layer i's last M input states m (pre-LN: of LN(m)), views of `room` ending at
    position `end`. pos_keys[i]: (H, P, D), `rel_keys` for `pos_len` keys (distances
    P-1 ... 0, the first ones pad), made with clamp_len `pos_clamp`."""

    keys: list
    values: list
    pos_keys: list = field(default_factory=list)
    pos_clamp: int = -1
    pos_len: int = 0
    room: Room | None = None
    end: int = 0

    @property
    def length(self) -> int:  # M, remembered positions (the same in every layer)
        return self.keys[0].shape[2] if self.keys else 0


@dataclass
class CachedOutput:
    """What forward_cached returns: ModelOutput with the cache for mems."""

    logits: torch.Tensor  # (B, L, V)
    loss: torch.Tensor | None  # mean cross-entropy in nats, if targets were given
    cache: KVCache  # to pass back in with the next segment


def _check(model) -> None:
    if isinstance(model, VanillaTransformer) or not isinstance(model, TransformerXL):
        raise TypeError(f"forward_cached needs a TransformerXL, not a vanilla model "
                        f"({type(model).__name__}): its window re-encodes everything")
    if model.training:  # dropout would differ from the standard path
        raise RuntimeError("forward_cached is for inference: call model.eval() first")


def _trim(x: torch.Tensor, mem_len: int) -> torch.Tensor:
    """The last mem_len positions of x (H, B, K, D), as update_mems keeps."""
    K = x.shape[2]
    return x[:, :, K - min(mem_len, K):]  # (H, B, M, D); mem_len 0 keeps nothing


def _cached_attention(block, buf, start, end, r, mask, mem_len, kept):
    """The attention `block.residual` calls, over [cache; x]: projects the L new
    positions only and writes them into `buf` at `end`, after the cache's [start, end);
    appends the next memory's keys and values to `kept`."""
    def attend(x):  # x: what the attention reads of the segment, (B, L, C)
        k_new, v_new = FastAttention.kv(block.attn, x)  # (H, B, L, D) each
        new = end + x.shape[1]
        buf[0, :, :, end:new], buf[1, :, :, end:new] = k_new, v_new  # no copy of the M
        k, values = buf[:, :, :, start:new]  # (H, B, K, D) views each
        kept.append((_trim(k, mem_len), _trim(values, mem_len)))
        q = FastAttention.queries(block.attn, x)  # (H, B, L, D)
        return FastAttention.attend(block.attn, q, k, values, r, mask)
    return attend


@torch.no_grad()
def forward_cached(model, idx, cache: KVCache | None = None, targets=None,
                   mem_len: int | None = None, same_length: bool | None = None,
                   clamp_len: int | None = None) -> CachedOutput:
    """`model(idx, targets, mems, ...)` with a KVCache instead of mems: idx (B, L),
    any L >= 1 (1 to generate); mem_len, same_length, clamp_len as for the standard
    path. Returns its logits (B, L, V) and loss, and the next cache: the last
    `mem_len` states of [cache; segment], each projected exactly once."""
    _check(model)
    B, L = idx.shape
    mem_len, window, clamp_len = model.settings(mem_len, same_length, clamp_len)
    h = model.embed_input(idx)  # (B, L, C); eval mode: no dropout
    cache = cache or KVCache([], [])
    if not cache.keys:  # nothing remembered yet: (H, B, 0, D) per layer
        H, D = model.cfg.n_head, model.cfg.d_head
        empty = [h.new_zeros(H, B, 0, D)] * len(model.blocks)
        cache = replace(cache, keys=empty, values=empty)
    if cache.keys[0].shape[1] != B:
        raise ValueError(f"cache holds {cache.keys[0].shape[1]} streams, idx has {B}")
    M, room, dtype = cache.length, cache.room, kv_dtype(model, idx.device)
    if room is None or not room.fits(cache, L, dtype):
        # space for 8 more segments (64 positions when generating, L = 1): the M kept
        # are copied once per 8 segments, not once per segment
        room = Room(cache.keys, cache.values, 8 * max(L, 8), dtype)
    end = room.used  # the cache is room[end - M : end]
    rs = cached_rel_keys(model, cache, M + L, max(M + L, mem_len + L), clamp_len, h)
    mask = causal_mask(L, M, window, idx.device)  # (L, K)
    kept = []  # per layer (keys, values) of the next memory
    for block, buf, r in zip(model.blocks, room.bufs, rs):
        attend = _cached_attention(block, buf, end - M, end, r, mask, mem_len, kept)
        h = block.residual(h, attend)  # (B, L, C)
    room.used = end + L
    logits, loss = model.readout(h, targets)
    keys, values = map(list, zip(*kept))
    return CachedOutput(logits, loss, replace(cache, keys=keys, values=values,
                                              room=room, end=end + L))


@torch.no_grad()
def cache_from_mems(model, mems: list) -> KVCache:
    """The KVCache of a standard memory (per layer (B, M, C)), to switch paths."""
    _check(model)
    dtype = next(model.parameters()).dtype
    kv = [FastAttention.kv(b.attn, b.attn_input(m.to(dtype)))
          for b, m in zip(model.blocks, mems or [])]
    return KVCache(*map(list, zip(*kv))) if kv else KVCache([], [])
