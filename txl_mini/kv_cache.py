"""Inference with a key/value cache: each state is projected once, on arrival.

The standard path keeps each layer's input states m and projects all K = M + L of
[m; h] again for every segment. Their keys and values never change (position enters
only through the position keys, terms b and d), so this path keeps them, projects the
L new positions only, and trims to the last M as `update_mems` does. Bookkeeping only:
each `Block` runs its `residual` wiring around the fused attention's `kv` and `attend`
(whose head-first layout the cache shares); `TransformerXL` gives the settings,
embedding, R and read-out. Any pos_enc; not `VanillaTransformer` (its window re-encodes
every position). Shapes: B batch, L segment, M cached, K = M + L, P the position
table's longest distance, H heads, D head dim, C d_model, V vocab."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .attention import causal_mask
from .fast_attention import FastAttention
from .model import TransformerXL, VanillaTransformer


@dataclass
class KVCache:
    """Per layer, what the next segment needs of the remembered states (one model,
    one batch of streams). keys[i], values[i]: (H, B, M, D), W_{k,E} m and W_v m of
    layer i's last M input states m (pre-LN: of LN(m)). pos_keys[i]: (H, P+1, D),
    `rel_keys` for distances P ... 0, made with clamp_len `pos_clamp`."""

    keys: list
    values: list
    pos_keys: list = field(default_factory=list)
    pos_clamp: int = -1

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


def _pos_keys(model, cache: KVCache, K: int, want: int, clamp_len: int, h) -> list:
    """Per layer `attend`'s position keys for K keys, (H, K+1, D) views, or None: the
    table's LAST K+1 rows (row p is distance P-p; the first, rel_shift's pad, meets only
    masked entries). Rebuilt only when K outgrows the table (then for `want` >= K keys)
    or the clamp changes."""
    if model.cfg.pos_enc == "absolute":  # positions are inside the keys already
        return [None] * len(model.blocks)
    table = cache.pos_keys
    if not table or table[0].shape[1] <= K or cache.pos_clamp != clamp_len:
        R = model.position_table(want, clamp_len, h)  # (P, C); None for Shaw's rows
        table[:] = [FastAttention.rel_keys(b.attn, R, want) for b in model.blocks]
        cache.pos_clamp = clamp_len
    return [t[:, t.shape[1] - K - 1:] for t in table]  # (H, K+1, D) views


def _trim(x: torch.Tensor, mem_len: int) -> torch.Tensor:
    """The last mem_len positions of x (H, B, K, D), as update_mems keeps."""
    K = x.shape[2]
    return x[:, :, K - min(mem_len, K):]  # (H, B, M, D); mem_len 0 keeps nothing


def _cached_attention(block, k_old, v_old, r, mask, mem_len, kept):
    """The attention `block.residual` calls, over [cache; x]: projects the L new
    positions only; appends the next memory's keys and values to `kept`."""
    def attend(x):  # x: what the attention reads of the segment, (B, L, C)
        k_new, v_new = FastAttention.kv(block.attn, x)  # (H, B, L, D) each
        k = torch.cat([k_old.to(k_new.dtype), k_new], dim=2)  # (H, B, K, D)
        values = torch.cat([v_old.to(v_new.dtype), v_new], dim=2)  # (H, B, K, D)
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
        cache = KVCache(empty, empty, cache.pos_keys, cache.pos_clamp)
    if cache.keys[0].shape[1] != B:
        raise ValueError(f"cache holds {cache.keys[0].shape[1]} streams, idx has {B}")
    M = cache.length
    rs = _pos_keys(model, cache, M + L, max(M + L, mem_len + L), clamp_len, h)
    mask = causal_mask(L, M, window, idx.device)  # (L, K)
    kept = []  # per layer (keys, values) of the next memory
    for block, k_old, v_old, r in zip(model.blocks, cache.keys, cache.values, rs):
        attend = _cached_attention(block, k_old, v_old, r, mask, mem_len, kept)
        h = block.residual(h, attend)  # (B, L, C)
    logits, loss = model.readout(h, targets)
    new = KVCache(*map(list, zip(*kept)), cache.pos_keys, cache.pos_clamp)
    return CachedOutput(logits, loss, new)


@torch.no_grad()
def cache_from_mems(model, mems: list) -> KVCache:
    """The KVCache of a standard memory (per layer (B, M, C)), to switch paths."""
    _check(model)
    dtype = next(model.parameters()).dtype
    kv = [FastAttention.kv(b.attn, b.attn_input(m.to(dtype)))
          for b, m in zip(model.blocks, mems or [])]
    return KVCache(*map(list, zip(*kv))) if kv else KVCache([], [])
