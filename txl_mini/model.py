"""Transformer-XL and its vanilla baseline, small to big: block -> model.

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
    """What every model in txl_mini returns."""

    logits: torch.Tensor  # (B, L, V)
    # mean cross-entropy in nats, if targets were given
    loss: Optional[torch.Tensor] = None
    # per layer (B, M, C), detached; [] without memory
    mems: list = field(default_factory=list)


def update_mems(mems, hiddens, mem_len: int) -> list:
    """New memory per layer: the last `mem_len` of [old memory; the new states].

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
        self.c_fc = nn.Linear(cfg.d_model, cfg.d_inner)  # widens every position alone
        self.c_proj = nn.Linear(cfg.d_inner, cfg.d_model)  # back to the residual width
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        """x (B, L, C) -> (B, L, C), through (B, L, d_inner)."""
        return self.drop(self.c_proj(self.drop(F.relu(self.c_fc(x)))))


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
        mem = self.attn_input(mem)  # (B, M, C)
        return self.residual(h, lambda x: self.attn(x, mem, R, mask))

    def attn_input(self, x):
        """What the attention reads of states x (B, N, C): LN(x) pre-LN, else x.

        Memory holds the un-normalised residual stream, so pre-LN normalises it
        alongside h.
        """
        return self.ln_attn(x) if self.pre_lnorm else x

    def residual(self, h, attend):
        """The layer's wiring around `attend`, (B, L, C) -> (B, L, C), for h (B, L, C).

        attend(x) is the attention of the segment's states x = attn_input(h) over
        [memory; segment]: `forward` passes the standard one, the key/value cache its
        cached one, so the residuals and LayerNorms live here only.
        """
        if self.pre_lnorm:
            h = h + attend(self.ln_attn(h))
            return h + self.ff(self.ln_ff(h))
        h = self.ln_attn(h + attend(h))  # post-LN, as in the paper
        return self.ln_ff(h + self.ff(h))


class TransformerXL(nn.Module):
    """A char-level Transformer-XL (Dai et al., 2019): segments with memory.

    out = model(idx, targets=None, mems=None): idx (B, L) int64; out.logits (B, L, V);
    out.loss mean cross-entropy in nats; out.mems one detached (B, M, C) tensor per
    layer, to pass back in with the next segment. `mem_len`, `same_length` and
    `clamp_len` override the config for this call (`settings`), e.g. to evaluate with a
    longer memory than in training.
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
        self, idx, targets=None, mems=None, mem_len: Optional[int] = None,
        same_length: Optional[bool] = None, clamp_len: Optional[int] = None,
    ) -> ModelOutput:
        B, L = idx.shape
        mem_len, window, clamp_len = self.settings(mem_len, same_length, clamp_len)
        h = self.embed_input(idx)  # (B, L, C)
        if not mems:  # the first segment remembers nothing
            mems = [h.new_zeros(B, 0, self.cfg.d_model) for _ in self.blocks]
        M = mems[0].shape[1]
        R = self.position_table(M + L, clamp_len, h)  # (K, C), or None
        h = self.drop(h)
        mask = causal_mask(L, M, window, idx.device)  # (L, K)

        hiddens = []  # the input of every layer: what the next segment will remember
        for block, mem in zip(self.blocks, mems):
            hiddens.append(h)
            h = block(h, mem.to(h.dtype), R, mask)  # (B, L, C)
        logits, loss = self.readout(h, targets)
        return ModelOutput(logits, loss, update_mems(mems, hiddens, mem_len))

    def settings(self, mem_len=None, same_length=None, clamp_len=None):
        """(mem_len, window, clamp_len) of one call: each argument, or the config's.

        Evaluation settings are arguments, never writes into the frozen cfg (whose
        other fields were read at construction, so a write would half-apply). window:
        each query sees its last `window` keys (same_length), 0: all. ValueError for
        a setting this model cannot honour.
        """
        cfg = self.cfg
        mem_len = cfg.mem_len if mem_len is None else mem_len
        same_length = cfg.same_length if same_length is None else same_length
        clamp_len = cfg.clamp_len if clamp_len is None else clamp_len
        if not isinstance(mem_len, int) or isinstance(mem_len, bool) or mem_len < 0:
            raise ValueError(f"mem_len must be an int >= 0 (0 = no memory), "
                             f"got {mem_len!r}")
        if not isinstance(same_length, bool):
            raise ValueError(f"same_length must be True or False, got {same_length!r}")
        if (not isinstance(clamp_len, int) or isinstance(clamp_len, bool)
                or clamp_len < -1 or clamp_len == 0):
            raise ValueError(f"clamp_len must be -1 (off) or an int >= 1, "
                             f"got {clamp_len!r}")
        if clamp_len not in (-1, cfg.clamp_len) and cfg.pos_enc != "relative":
            raise ValueError(f"clamp_len clamps the sinusoid R, which pos_enc="
                             f"{cfg.pos_enc!r} has not")
        # a query sees at least itself: max(M, 1), as the paper's code does
        return mem_len, (max(mem_len, 1) if same_length else 0), clamp_len

    def embed_input(self, idx):
        """Token embeddings of idx (B, L), scaled, plus U with absolute positions."""
        h = self.embed(idx) * self.emb_scale  # (B, L, C)
        if self.cfg.pos_enc == "absolute":  # the same U added to every segment
            L = idx.shape[1]
            h = h + absolute_encoding(L, self.cfg.d_model, idx.device, h.dtype)
        return h  # (B, L, C)

    def position_table(self, n_keys: int, clamp_len: int, like):
        """R for distances n_keys-1 ... 0 (n_keys, C), in like's dtype and device.

        None unless pos_enc is "relative": positions enter only through R there;
        Shaw's enter through each layer's learned R_hat, absolute ones through U.
        """
        if self.cfg.pos_enc != "relative":
            return None
        C = self.cfg.d_model
        R = relative_encoding(n_keys, C, clamp_len, like.device, like.dtype)
        return self.drop(R)  # (K, C)

    def readout(self, h, targets=None):
        """(logits (B, L, V), mean cross-entropy in nats or None) of the last states."""
        B, L, _ = h.shape
        logits = self.head(self.drop(self.ln_f(h)))  # (B, L, V)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(B * L))
        return logits, loss

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


class VanillaTransformer(TransformerXL):
    """The vanilla baseline (Al-Rfou et al., 2019 style): absolute positions, no memory.

    It is TransformerXL with both of the paper's ideas switched off, so the two differ
    in exactly what the paper changes and share everything else (interface, blocks,
    initialisation).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg.replace(mem_len=0, pos_enc="absolute"))

    def forward(
        self, idx, targets=None, mems=None, mem_len: Optional[int] = None,
        same_length: Optional[bool] = None, clamp_len: Optional[int] = None,
    ) -> ModelOutput:
        if mems or mem_len or same_length:
            raise ValueError(
                "VanillaTransformer has no memory; use TransformerXL for recurrence"
            )
        return super().forward(idx, targets, clamp_len=clamp_len)
