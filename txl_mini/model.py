"""Transformer-XL and its vanilla baseline, small to big: block -> model (ch. 1, 3, 6).

Shapes: B batch, L segment length, M memory length, K = M + L, C d_model, V vocab.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import MultiHeadAttention, causal_mask
from .config import ModelConfig
from .positional import absolute_encoding, relative_encoding


@dataclass
class ModelOutput:
    """What every model in txl_mini returns (chapter 1)."""

    logits: torch.Tensor  # (B, L, V)
    # mean cross-entropy in nats, if targets were given
    loss: Optional[torch.Tensor] = None
    # per layer (B, M, C), detached; [] without memory
    mems: list = field(default_factory=list)


class FeedForward(nn.Module):
    """Position-wise feed-forward net, C -> d_inner -> C."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.d_inner),
            nn.ReLU(),
            nn.Dropout(cfg.dropout),
            nn.Linear(cfg.d_inner, cfg.d_model),
            nn.Dropout(cfg.dropout),
        )

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """One layer: attention over [memory; segment], then feed-forward, both residual."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.attn = MultiHeadAttention(cfg)
        self.ff = FeedForward(cfg)
        self.ln_attn = nn.LayerNorm(cfg.d_model)
        self.ln_ff = nn.LayerNorm(cfg.d_model)
        self.pre_lnorm = cfg.pre_lnorm

    def forward(self, h, mem, R, mask):
        """h (B, L, C), mem (B, M, C) -> (B, L, C)."""
        if self.pre_lnorm:
            # memory holds the un-normalised residual stream, so normalise it
            # alongside h
            h = h + self.attn(self.ln_attn(h), self.ln_attn(mem), R, mask)
            return h + self.ff(self.ln_ff(h))
        h = self.ln_attn(h + self.attn(h, mem, R, mask))  # post-LN, as in the paper
        return self.ln_ff(h + self.ff(h))


class TransformerXL(nn.Module):
    """A char-level Transformer-XL (Dai et al., 2019); ch. 6 composes it from ch. 3-5.

    out = model(idx, targets=None, mems=None): idx (B, L) int64; out.logits (B, L, V);
    out.loss mean cross-entropy in nats; out.mems one detached (B, M, C) tensor per
    layer, to pass back in with the next segment. `mem_len` overrides cfg.mem_len for
    this call (evaluating with a longer memory than in training, chapter 4).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        # embeddings start small (init_std), so scale up
        self.emb_scale = math.sqrt(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        if cfg.pos_enc == "relative" and not cfg.untie_r:
            # The paper's u and v carry no layer index: every layer's attention
            # holds the SAME two Parameters (like the tied embedding), so they are
            # learned once.
            u, v = self.blocks[0].attn.u, self.blocks[0].attn.v
            for block in self.blocks[1:]:
                block.attn.u, block.attn.v = u, v
        self.ln_f = nn.LayerNorm(cfg.d_model) if cfg.pre_lnorm else nn.Identity()
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size)
        if cfg.tie_weights:
            self.head.weight = self.embed.weight  # (V, C) shared by input and output
        self.apply(self._init_weights)

    def _init_weights(self, module):
        std = self.cfg.init_std
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, 0.0, std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, 0.0, std)
        elif isinstance(module, MultiHeadAttention) and module.relative:
            nn.init.normal_(module.u, 0.0, std)
            nn.init.normal_(module.v, 0.0, std)

    def forward(
        self, idx, targets=None, mems=None, mem_len: Optional[int] = None
    ) -> ModelOutput:
        cfg = self.cfg
        B, L = idx.shape
        mem_len = cfg.mem_len if mem_len is None else mem_len
        if not mems:
            mems = [
                idx.new_zeros(B, 0, cfg.d_model, dtype=torch.float) for _ in self.blocks
            ]
        M = mems[0].shape[1]
        K = M + L

        h = self.embed(idx) * self.emb_scale  # (B, L, C)
        window = max(mem_len, 1) if cfg.same_length else 0
        if cfg.fast_attn:
            R, U, mask = self._static(L, M, window, idx.device, h.dtype)
        else:
            R = U = None
        if cfg.pos_enc == "relative":
            if R is None:
                R = relative_encoding(
                    K, cfg.d_model, cfg.clamp_len, idx.device, h.dtype
                )  # (K, C)
            R = self.drop(R)
        else:
            U = (
                absolute_encoding(L, cfg.d_model, idx.device, h.dtype)
                if U is None
                else U
            )
            h = h + U  # same U every segment
            R = None
        h = self.drop(h)
        if not cfg.fast_attn:
            mask = causal_mask(L, M, window, idx.device)  # (L, K)

        hiddens = []  # the input of every layer: what the next segment will remember
        for block, mem in zip(self.blocks, mems):
            hiddens.append(h)
            h = block(h, mem.to(h.dtype), R, mask)  # (B, L, C)
        logits = self.head(self.drop(self.ln_f(h)))  # (B, L, V)

        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
        if cfg.fast_attn:
            return ModelOutput(logits, loss, _update_mems_fast(mems, hiddens, mem_len))
        return ModelOutput(logits, loss, update_mems(mems, hiddens, mem_len))

    def _static(self, L, M, window, device, dtype):
        """R (K, C), U (L, C) and the mask (L, K), cached: none depends on parameters.

        Fast path only. W_kr R does depend on parameters (and differs per layer), so it
        is recomputed every call. The key includes inference mode: tensors made under
        torch.inference_mode cannot be saved for a later backward pass, so training must
        not reuse them.
        """
        cfg = self.cfg
        key = (L, M, window, str(device), dtype, torch.is_inference_mode_enabled())
        # plain dict: not in state_dict
        cache = self.__dict__.setdefault("_static_cache", {})
        if key not in cache:
            if len(cache) >= 16:
                cache.clear()  # lengths vary rarely; keep the cache small
            K = M + L
            rel = cfg.pos_enc == "relative"
            R = (
                relative_encoding(K, cfg.d_model, cfg.clamp_len, device, dtype)
                if rel
                else None
            )
            U = None if rel else absolute_encoding(L, cfg.d_model, device, dtype)
            cache[key] = (R, U, causal_mask(L, M, window, device))
        return cache[key]

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def update_mems(mems, hiddens, mem_len: int) -> list:
    """New memory per layer: the last `mem_len` of [old memory; the new states] (ch. 3).

    detach() is the paper's stop-gradient SG(.): gradients never flow into past
    segments, so training runs no backward pass through them. The cost is not
    independent of the memory, though: the current segment still attends to K = M + L
    keys, forward and backward, so a training step still costs more as M grows.
    """
    if mem_len == 0:
        return []
    return [
        torch.cat([m.to(h.dtype), h.detach()], dim=1)[:, -mem_len:]
        for m, h in zip(mems, hiddens)
    ]


def _update_mems_fast(mems, hiddens, mem_len: int) -> list:
    """update_mems without copying rows that are dropped anyway (fast path): only the
    last mem_len rows of [old memory; new states] are concatenated, so the new memory
    holds no view into a larger (M + L)-row tensor either."""
    if mem_len == 0:
        return []
    out = []
    for m, h in zip(mems, hiddens):
        h = h.detach()[:, -mem_len:]  # (B, <= mem_len, C)
        keep = mem_len - h.shape[1]  # rows of the old memory still needed
        m = m.to(h.dtype)[:, m.shape[1] - min(keep, m.shape[1]):]
        out.append(torch.cat([m, h], dim=1) if m.shape[1] else h.contiguous())
    return out


class VanillaTransformer(TransformerXL):
    """The ch. 1 baseline (Al-Rfou et al., 2019 style): absolute positions, no memory.

    It is TransformerXL with both of the paper's ideas switched off, so the two differ
    in exactly what the paper changes and share everything else (interface, blocks,
    initialisation).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg.replace(mem_len=0, pos_enc="absolute"))

    def forward(
        self, idx, targets=None, mems=None, mem_len: Optional[int] = None
    ) -> ModelOutput:
        if mems or mem_len:
            raise ValueError(
                "VanillaTransformer has no memory; use TransformerXL for recurrence"
            )
        return super().forward(idx, targets)
