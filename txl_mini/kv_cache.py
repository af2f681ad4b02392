"""Inference with a key/value cache: each state is projected once, on arrival.

The standard path, `model(idx, mems=...)`, remembers each layer's INPUT states m and,
for every new segment, projects all K = M + L of [m; h] again: W_{k,E} m and W_v m in
every layer. Those projections never change once a state is in memory: position
enters attention only through the position keys (terms b and d), never through the
content keys, so the key of a remembered state is valid wherever the window has moved.
So this path keeps, per layer, the projected keys and values instead of m (the
key/value cache of today's decoders), projects only the L new positions, and trims the
cache to the last M, as `update_mems` trims the memory.

This module is bookkeeping only: the model's own pieces do the work. Each `Block`
runs its `residual` wiring around an attention that calls the fused attention's `kv`
on the new positions and its `attend` on [cache; new] (fast_attention.py, whose
head-first layout the cache shares); `TransformerXL` gives the embedding, R, the
settings (mem_len, same_length, clamp_len: arguments, as to the standard path) and
the read-out. The position keys depend on no input at all: they are computed once
per layer for the longest distance needed and sliced.

Support: `TransformerXL` in eval mode with any pos_enc: relative (the paper), Shaw
et al.'s learned rows, or absolute (the memory ablation: the same U is added to every
segment's input, so its cached keys are as valid; the cache reproduces that model
exactly, confusion included). Not `VanillaTransformer`: its sliding window re-encodes
every position each step, so nothing can be reused (TypeError).
tests/test_kv_cache.py proves logits and cache equal to the standard path's (float64).

Shapes: B batch, L segment length, M cached length, K = M + L keys, P rows of the
position table, H heads, D head dim, C d_model, V vocab.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .attention import causal_mask
from .fast_attention import FastAttention
from .model import TransformerXL, VanillaTransformer


@dataclass
class KVCache:
    """Per layer, what the next segment needs of the remembered states.

    keys[i], values[i]: (H, B, M, D), layer i's W_{k,E} m and W_v m of its last M input
    states m (pre-LN models: of LN(m), as the attention sees them).
    pos_keys[i]: (P, H, D), layer i's position keys for distances P-1 ... 0 (R's row
    order), made with clamp_len `pos_clamp`; they depend on the weights only.
    A cache belongs to one model (weights, device, dtype) and one batch of streams; a
    cache from another device or dtype fails loudly in the products.
    """

    keys: list
    values: list
    pos_keys: list = field(default_factory=list)
    pos_clamp: int = -1

    @property
    def length(self) -> int:
        """M, the number of remembered positions (the same in every layer)."""
        return self.keys[0].shape[2] if self.keys else 0


@dataclass
class CachedOutput:
    """What forward_cached returns: ModelOutput with the cache for mems."""

    logits: torch.Tensor  # (B, L, V)
    loss: torch.Tensor | None  # mean cross-entropy in nats, if targets were given
    cache: KVCache  # to pass back in with the next segment


def _check(model) -> None:
    if isinstance(model, VanillaTransformer) or not isinstance(model, TransformerXL):
        raise TypeError(
            f"forward_cached needs a TransformerXL, got {type(model).__name__}: the "
            "vanilla model has no memory and its sliding window re-encodes every "
            "position, so there is nothing to cache"
        )
    if model.training:
        raise RuntimeError(
            "forward_cached is for inference only: call model.eval() first (dropout "
            "would differ from the standard path, and no gradient flows through the "
            "cache)"
        )


def _pos_keys(model, cache: KVCache, K: int, want: int, clamp_len: int, h) -> list:
    """Per layer the position keys for distances K-1 ... 0: (K, H, D) views.

    Row p of the table encodes distance P-1-p, so the table for K keys is the LAST K
    rows of a longer one (clamp_len and Shaw's clip clamp each distance on its own, so
    this holds with them too). The table is rebuilt only when K outgrows it (or the
    clamp changes), then for `want` >= K rows at once, so filling the memory one
    position at a time does not re-project R every step. Absolute: None per layer.
    """
    if model.cfg.pos_enc == "absolute":  # positions are inside the keys already
        return [None] * len(model.blocks)
    table = cache.pos_keys
    if not table or table[0].shape[0] < K or cache.pos_clamp != clamp_len:
        R = model.position_table(want, clamp_len, h)  # (P, C) or None
        table[:] = [b.attn.position_keys(R, want) for b in model.blocks]
        cache.pos_clamp = clamp_len
    return [t[t.shape[0] - K:] for t in table]  # (K, H, D) views


def _trim(x: torch.Tensor, mem_len: int) -> torch.Tensor:
    """The last mem_len positions of x (H, B, K, D), as update_mems keeps."""
    K = x.shape[2]
    return x[:, :, K - min(mem_len, K):]  # (H, B, M, D); mem_len 0 keeps nothing


def _cached_attention(block, k_old, v_old, r, mask, mem_len, kept):
    """The attention `block.residual` calls: x (B, L, C) over [cache; x] -> (B, L, C).

    Projects only the L new positions; appends the trimmed keys and values to `kept`.
    """
    def attend(x):
        k_new, v_new = FastAttention.kv(block.attn, x)  # (H, B, L, D) each
        k = torch.cat([k_old.to(k_new.dtype), k_new], dim=2)  # (H, B, K, D)
        values = torch.cat([v_old.to(v_new.dtype), v_new], dim=2)  # (H, B, K, D)
        kept.append((_trim(k, mem_len), _trim(values, mem_len)))
        q = FastAttention.queries(block.attn, x)  # (H, B, L, D)
        return FastAttention.attend(block.attn, q, k, values, r, mask)
    return attend


@torch.no_grad()
def forward_cached(
    model, idx, cache: KVCache | None = None, targets=None,
    mem_len: int | None = None, same_length: bool | None = None,
    clamp_len: int | None = None,
) -> CachedOutput:
    """`model(idx, targets, mems, ...)` with a KVCache instead of mems.

    idx (B, L) int64, any L >= 1 (L = 1 for generation: one new position per character
    attending to the cache). mem_len, same_length, clamp_len: as for the standard path
    (default: the config's). Returns the same logits (B, L, V) and loss as the standard
    path, and the cache of the next memory: the last `mem_len` states of [old cache;
    this segment], each projected exactly once.
    """
    _check(model)
    B, L = idx.shape
    mem_len, window, clamp_len = model.settings(mem_len, same_length, clamp_len)
    h = model.embed_input(idx)  # (B, L, C); eval mode: no dropout
    if cache is None or not cache.keys:
        H, D = model.cfg.n_head, model.cfg.d_head
        empty = [h.new_zeros(H, B, 0, D) for _ in model.blocks]
        old = cache or KVCache([], [])
        cache = KVCache(empty, list(empty), old.pos_keys, old.pos_clamp)
    if cache.keys[0].shape[1] != B:
        raise ValueError(f"cache holds {cache.keys[0].shape[1]} streams, idx has {B}")
    M = cache.length
    rs = _pos_keys(model, cache, M + L, max(M + L, mem_len + L), clamp_len, h)
    mask = causal_mask(L, M, window, idx.device)  # (L, K)
    kept = []  # per layer (keys, values) of the next memory
    for block, k_old, v_old, r in zip(model.blocks, cache.keys, cache.values, rs):
        h = block.residual(
            h, _cached_attention(block, k_old, v_old, r, mask, mem_len, kept)
        )  # (B, L, C)
    logits, loss = model.readout(h, targets)
    new = KVCache([k for k, _ in kept], [v for _, v in kept], cache.pos_keys,
                  cache.pos_clamp)
    return CachedOutput(logits, loss, new)


@torch.no_grad()
def cache_from_mems(model, mems: list) -> KVCache:
    """The KVCache of a standard memory (a (B, M, C) tensor per layer), to switch paths.

    Projects each remembered state once; forward_cached(model, x, cache_from_mems(model,
    mems)) then equals model(x, mems=mems).
    """
    _check(model)
    if not mems:
        return KVCache([], [])
    dtype = next(model.parameters()).dtype
    kv = [FastAttention.kv(b.attn, b.attn_input(m.to(dtype)))
          for b, m in zip(model.blocks, mems)]
    return KVCache([k for k, _ in kv], [v for _, v in kv])
