"""Inference with a key/value cache: each state is projected once, on arrival (ch. 6).

The standard path, `model(idx, mems=...)`, remembers each layer's INPUT states m and,
for every new segment, projects all K = M + L of [m; h] again: W_{k,E} m and W_v m in
every layer. Those projections never change once a state is in memory: with relative
positions, position enters attention only through R (terms b and d), never through the
keys, so the key of a remembered state is valid wherever the window has moved. So this
path keeps, per layer, the projected keys W_{k,E} m and values W_v m instead of m (the
key/value cache of today's decoders), projects only the L new positions, and trims the
cache to the last M, as `update_mems` trims the memory. The position keys W_{k,R} R
depend on no input at all: they are computed once per layer for the longest distance
needed and sliced.

Support: `TransformerXL` in eval mode, relative positions (the paper) and also absolute
ones (the memory ablation of ch. 3: the same U is added to every segment's input, so its
cached keys are as valid; the cache reproduces that model exactly, confusion included).
Not `VanillaTransformer`: its sliding window re-encodes every position each step, so
nothing can be reused (TypeError). `same_length`, `clamp_len`, `pre_lnorm`, `untie_r`
and the per-call `mem_len` behave as in `TransformerXL.forward`; tests/test_kv_cache.py
proves the logits and cache equal to the standard path's in float64.

Shapes: B batch, L segment length, M cached length, K = M + L keys, P rows of the
position table, H heads, D head dim, C d_model, V vocab.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from .attention import causal_mask
from .model import TransformerXL, VanillaTransformer
from .positional import absolute_encoding, relative_encoding


@dataclass
class KVCache:
    """Per layer, what the next segment needs of the remembered states (chapter 6).

    keys[i], values[i]: (B, H, M, D), layer i's W_{k,E} m and W_v m of its last M input
    states m (pre-LN models: of LN(m), as the attention sees them).
    pos_keys[i]: (H, P, D), W_{k,R} R for distances P-1 ... 0 (R's row order); it
    depends on the weights only, not on the text.
    A cache belongs to one model (weights, device, dtype) and one batch of streams; a
    cache from another device or dtype fails loudly in the products.
    """

    keys: list
    values: list
    pos_keys: list = field(default_factory=list)

    @property
    def length(self) -> int:
        """M, the number of remembered positions (the same in every layer)."""
        return self.keys[0].shape[2] if self.keys else 0


@dataclass
class CachedOutput:
    """What forward_cached returns: ModelOutput with the cache for mems (chapter 6)."""

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
    if model.cfg.pos_enc == "shaw":
        raise ValueError(
            "forward_cached covers relative and absolute positions; Shaw et al.'s "
            "learned rows are not cached: use the standard path, model(idx, mems=...)"
        )
    if model.training:
        raise RuntimeError(
            "forward_cached is for inference only: call model.eval() first (dropout "
            "would differ from the standard path, and no gradient flows through the "
            "cache)"
        )


def _heads(x: torch.Tensor, H: int, D: int) -> torch.Tensor:
    """(B, L, H*D) -> (B, H, L, D): heads first, so each product is a batch matmul."""
    B, L, _ = x.shape
    return x.view(B, L, H, D).transpose(1, 2)  # (B, H, L, D)


def _attn_input(block, h: torch.Tensor) -> torch.Tensor:
    # pre-LN attends over LN(h) and LN(m); post-LN over h and m themselves
    return block.ln_attn(h) if block.pre_lnorm else h


def _pos_keys(model, cache: KVCache, K: int, want: int, device, dtype) -> list:
    """Per layer W_{k,R} R for distances K-1 ... 0: (H, K, D), from the table in cache.

    Row p of R encodes distance P-1-p, so the table for K keys is the LAST K rows of a
    longer one (clamp_len clamps each distance on its own, so this holds with it too).
    The table is rebuilt only when K outgrows it, then for `want` >= K rows at once
    (M + L of the call), so filling the memory one position at a time does not
    re-project R every step.
    """
    table = cache.pos_keys
    if not table or table[0].shape[1] < K:
        cfg = model.cfg
        R = relative_encoding(want, cfg.d_model, cfg.clamp_len, device, dtype)  # (P, C)
        table[:] = [
            _heads(b.attn.W_kr(R)[None], b.attn.n_head, b.attn.d_head)[0]  # (H, P, D)
            for b in model.blocks
        ]
    return [t[:, t.shape[1] - K:] for t in table]  # (H, K, D) views


def _attend(attn, q, k, values, r, mask) -> torch.Tensor:
    """Multi-head attention of q (B, H, L, D) over k, values (B, H, K, D) -> (B, L, C).

    The same function as MultiHeadAttention.forward's readable path (Dai et al., 2019,
    A^rel): terms (a) + (c) = (q + u) . k_j and (b) + (d) = (q + v) . W_{k,R} R_{i-j},
    the latter scored against R's rows and moved into place by rel_shift (ch. 5). The
    softmax and the sum over values run in one fused scaled_dot_product_attention, with
    (b) + (d) and the causal mask as an additive bias: softmax(s (q + u) k^T + bias) V.
    """
    B, H, L, D = q.shape
    if r is None:  # absolute positions: they are already inside q and k
        bias = ~mask  # True where a query may look
    else:
        # rel_shift (ch. 5) without its copy: scored against R's rows with a zero row in
        # front, the product already holds rel_shift's pad column, and re-reading it
        # one step later is a view. The scale s goes into the (B, H, L, D) queries.
        K = k.shape[2]
        r_pad = F.pad(r, (0, 0, 1, 0))  # (H, K+1, D), row 0 is zero
        bd = (q + attn.v[:, None]) * attn.scale @ r_pad.transpose(-1, -2)  # (B,H,L,K+1)
        bd = bd.view(B, H, K + 1, L)[:, :, 1:].view(B, H, L, K)  # == rel_shift, a view
        bias = bd.masked_fill_(mask, float("-inf"))  # (B, H, L, K) terms (b) + (d)
        q = q + attn.u[:, None]  # (a) + (c) in one product
    out = F.scaled_dot_product_attention(q, k, values, attn_mask=bias, scale=attn.scale)
    return attn.W_o(out.transpose(1, 2).reshape(B, L, H * D))  # (B, L, C)


def _project_kv(block, h: torch.Tensor):
    """Keys W_{k,E} x and values W_v x (B, H, L, D) of a layer's inputs h (B, L, C)."""
    a, x = block.attn, _attn_input(block, h)
    return _heads(a.W_ke(x), a.n_head, a.d_head), _heads(a.W_v(x), a.n_head, a.d_head)


def _trim(x: torch.Tensor, mem_len: int) -> torch.Tensor:
    """The last mem_len positions of x (B, H, K, D), as update_mems keeps (ch. 3)."""
    K = x.shape[2]
    return x[:, :, K - min(mem_len, K):]  # (B, H, M, D); mem_len 0 keeps nothing


@torch.no_grad()
def forward_cached(
    model, idx, cache: KVCache | None = None, targets=None,
    mem_len: int | None = None,
) -> CachedOutput:
    """`model(idx, targets, mems, mem_len)` with a KVCache instead of mems (chapter 6).

    idx (B, L) int64, any L >= 1 (L = 1 for generation: one new position per character
    attending to the cache). Returns the same logits (B, L, V) and loss as the standard
    path, and the cache of the next memory: the last `mem_len` (default cfg.mem_len)
    states of [old cache; this segment], each projected exactly once.
    """
    _check(model)
    cfg = model.cfg
    B, L = idx.shape
    mem_len = cfg.mem_len if mem_len is None else mem_len
    h = model.embed(idx) * model.emb_scale  # (B, L, C)
    if cache is None or not cache.keys:
        empty = [h.new_zeros(B, b.attn.n_head, 0, b.attn.d_head) for b in model.blocks]
        cache = KVCache(empty, list(empty), [] if cache is None else cache.pos_keys)
    M = cache.length
    if cache.keys[0].shape[0] != B:
        raise ValueError(f"cache holds {cache.keys[0].shape[0]} streams, idx has {B}")
    K = M + L
    if cfg.pos_enc == "relative":
        rs = _pos_keys(model, cache, K, max(K, mem_len + L), idx.device, h.dtype)
    else:
        # the same U every call, as in TransformerXL.forward
        h = h + absolute_encoding(L, cfg.d_model, idx.device, h.dtype)  # (B, L, C)
        rs = [None] * len(model.blocks)
    # same_length: every query sees its last max(M, 1) keys, as in TransformerXL.forward
    window = max(mem_len, 1) if cfg.same_length else 0
    mask = causal_mask(L, M, window, idx.device)  # (L, K)

    new_keys, new_values = [], []
    for block, k_old, v_old, r in zip(model.blocks, cache.keys, cache.values, rs):
        a = block.attn
        k_new, v_new = _project_kv(block, h)  # (B, H, L, D): only the L new positions
        k = torch.cat([k_old.to(k_new.dtype), k_new], dim=2)  # (B, H, K, D)
        values = torch.cat([v_old.to(v_new.dtype), v_new], dim=2)  # (B, H, K, D)
        q = _heads(a.W_q(_attn_input(block, h)), a.n_head, a.d_head)  # (B, H, L, D)
        att = _attend(a, q, k, values, r, mask)  # (B, L, C)
        if block.pre_lnorm:
            h = h + att
            h = h + block.ff(block.ln_ff(h))  # (B, L, C)
        else:
            h = block.ln_attn(h + att)  # post-LN, as in the paper
            h = block.ln_ff(h + block.ff(h))  # (B, L, C)
        new_keys.append(_trim(k, mem_len))  # (B, H, M', D)
        new_values.append(_trim(values, mem_len))
    logits = model.head(model.ln_f(h))  # (B, L, V)
    loss = None
    if targets is not None:
        loss = F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
    return CachedOutput(logits, loss, KVCache(new_keys, new_values, cache.pos_keys))


@torch.no_grad()
def cache_from_mems(model, mems: list) -> KVCache:
    """The KVCache of a standard memory (a (B, M, C) tensor per layer), to switch paths.

    Projects each remembered state once; forward_cached(model, x, cache_from_mems(model,
    mems)) then equals model(x, mems=mems) (chapter 6).
    """
    _check(model)
    if not mems:
        return KVCache([], [])
    dtype = next(model.parameters()).dtype
    kv = [_project_kv(b, m.to(dtype)) for b, m in zip(model.blocks, mems)]
    return KVCache([k for k, _ in kv], [v for _, v in kv])
