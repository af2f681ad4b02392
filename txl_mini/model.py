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
from .fast_attention import FastAttention
from .positional import absolute_encoding, relative_encoding


@dataclass
class ModelOutput:
    """What every model in txl_mini returns (chapter 1)."""

    logits: torch.Tensor  # (B, L, V)
    # mean cross-entropy in nats, if targets were given
    loss: Optional[torch.Tensor] = None
    # per layer (B, M, C), detached; [] without memory
    mems: list = field(default_factory=list)


def update_mems(mems, hiddens, mem_len: int) -> list:
    """New memory per layer: the last `mem_len` of [old memory; the new states] (ch. 3).

    detach() is the paper's stop-gradient SG(.): gradients never flow into past
    segments, so training runs no backward pass through them. The cost is not
    independent of the memory, though: the current segment still attends to K = M + L
    keys, forward and backward, so a training step still costs more as M grows.
    """
    if mem_len == 0:
        return []
    # clone(): the memory holds its own M rows, not a view that keeps every
    # (B, M + L, C) concatenation alive
    return [
        torch.cat([m.to(h.dtype), h.detach()], dim=1)[:, -mem_len:].clone()
        for m, h in zip(mems, hiddens)
    ]


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
        # the one place the fused path is chosen; both have the same parameters
        self.attn = (FastAttention if cfg.fast_attn else MultiHeadAttention)(cfg)
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
        elif isinstance(module, MultiHeadAttention) and module.shaw:
            nn.init.normal_(module.R_hat, 0.0, std)  # as the paper's code does

    def forward(
        self, idx, targets=None, mems=None, mem_len: Optional[int] = None
    ) -> ModelOutput:
        cfg = self.cfg
        B, L = idx.shape
        mem_len = cfg.mem_len if mem_len is None else mem_len
        h = self.embed(idx) * self.emb_scale  # (B, L, C)
        if not mems:  # the first segment remembers nothing
            mems = [h.new_zeros(B, 0, cfg.d_model) for _ in self.blocks]
        M = mems[0].shape[1]
        K = M + L

        R = None  # "shaw": positions enter through each layer's learned R_hat
        if cfg.pos_enc == "relative":  # positions enter only through R (chapter 4)
            R = relative_encoding(K, cfg.d_model, cfg.clamp_len, idx.device, h.dtype)
            R = self.drop(R)  # (K, C)
        elif cfg.pos_enc == "absolute":  # the same U added to every segment (ch. 3)
            h = h + absolute_encoding(L, cfg.d_model, idx.device, h.dtype)  # (B, L, C)
        h = self.drop(h)
        window = max(mem_len, 1) if cfg.same_length else 0
        mask = causal_mask(L, M, window, idx.device)  # (L, K)

        hiddens = []  # the input of every layer: what the next segment will remember
        for block, mem in zip(self.blocks, mems):
            hiddens.append(h)
            h = block(h, mem.to(h.dtype), R, mask)  # (B, L, C)
        logits = self.head(self.drop(self.ln_f(h)))  # (B, L, V)

        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
        return ModelOutput(logits, loss, update_mems(mems, hiddens, mem_len))

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


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
