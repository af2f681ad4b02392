"""Attention over [memory; segment]: causal mask, efficient shift, terms a-d.

This is the readable path, written as the chapters teach it. The fused path that the
models run by default (`ModelConfig.fast_attn`) lives in `fast_attention.py`; the tests
prove the two equal.

Shapes: B batch, L queries (the segment), M memory, K = M + L keys, H heads, D head dim,
C d_model. All logits are laid out (B, H, L, K): query i of the segment sits at key
position M + i.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import ModelConfig
from .positional import relative_positions


def causal_mask(
    seg_len: int, mem_len: int, window: int = 0, device=None
) -> torch.Tensor:
    """Boolean (L, K) mask, True where query i may NOT look at key j.

    Query i sits at key position M + i: it sees all M memory slots and the segment up to
    itself. With `window` >= 1 (the same_length trick) it sees only its last `window`
    keys, itself included, so every query gets the same context length. Key M + i is
    always visible, so no row is ever fully masked (a fully masked row would give
    softmax NaN).
    """
    L, M = seg_len, mem_len
    i = torch.arange(L, device=device)[:, None]  # (L, 1)
    j = torch.arange(M + L, device=device)[None, :]  # (1, K)
    mask = j > i + M  # (L, K) the future
    if window >= 1:
        mask = mask | (j <= i + M - window)  # older than the window
    return mask


def rel_shift(x: torch.Tensor) -> torch.Tensor:
    """Turn scores against R's rows into scores against R_{i-j}: pad, reshape.

    Input x (..., L, K): column k holds query i's score against distance K-1-k (R's row
    order). Output y (..., L, K): y[..., i, j] = x[..., i, j + L-1-i], the score for
    distance (M+i) - j, exact wherever j <= M + i. Entries with j > M + i are junk that
    the causal mask removes.

    Worked example, L = 2, K = 3 (M = 1); a row of x lists scores for distances 2, 1, 0:

        x = [[a2, a1, a0],     pad a zero column      [[0, a2, a1, a0],
             [b2, b1, b0]]     on the left       ->    [0, b2, b1, b0]]

        read the 8 numbers as 4 rows of 2, drop the first row, read back as 2 rows of 3:
        y = [[a1, a0, 0],      row 0 (query at key 1): keys 0, 1 are at distances 1, 0
             [b2, b1, b0]]     row 1 (query at key 2): keys 0, 1, 2 at distances 2, 1, 0

    >>> rel_shift(torch.tensor([[12., 11., 10.], [22., 21., 20.]]))
    tensor([[11., 10.,  0.],
            [22., 21., 20.]])
    """
    *batch, L, K = x.shape
    pad = x.new_zeros(*batch, L, 1)
    x = torch.cat([pad, x], dim=-1)  # (..., L, K+1)
    # the same numbers, re-read: each row now starts one step later
    x = x.view(*batch, K + 1, L)
    return x[..., 1:, :].reshape(*batch, L, K)  # (..., L, K)


def naive_rel_term(q: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """The naive way rel_shift replaces: q_i against R_{i-j}, gathered per (i, j).

    q (B, L, H, D) queries, r (K, H, D) position keys in R's row order
    (distances K-1 ... 0). Returns (B, H, L, K); entries with j > M + i (negative
    distance) are set to 0.
    Costs O(L K H D) memory for the gathered (L, K, H, D) tensor, which is why nobody
    does this.
    """
    B, L, H, D = q.shape
    K = r.shape[0]
    M = K - L
    i = torch.arange(L, device=q.device)[:, None]  # (L, 1)
    j = torch.arange(K, device=q.device)[None, :]  # (1, K)
    dist = M + i - j  # (L, K) i - j in absolute key positions
    rows = (K - 1 - dist).clamp(0, K - 1)  # (L, K) R's row of that distance
    r_ij = r[rows]  # (L, K, H, D) R_{i-j} gathered explicitly
    scores = torch.einsum("blhd,lkhd->bhlk", q, r_ij)  # (B, H, L, K)
    return scores.masked_fill(dist < 0, 0.0)


def attention_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Masked softmax over keys, as the model computes it: (B, H, L, K) in and out."""
    return F.softmax(logits.masked_fill(mask, float("-inf")), dim=-1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention over [memory; segment]: relative, Shaw or absolute.

    Relative (Dai et al., 2019, Section 3.3, the equation for A^rel_{i,j}):
        A_ij = q_i.k_j (a) + q_i.W_kr R_{i-j} (b) + u.k_j (c) + v.W_kr R_{i-j} (d)
    with q_i = W_q E_xi, k_j = W_kE E_xj.
    Shaw (Shaw et al., 2018, eq. 5 and Section 3.2; the paper's relative baseline):
        A_ij = q_i.k_j (a) + q_i.R_hat_{min(i-j, k)} (b)
    As Dai et al. (Section 3.3) describe it: terms (a) and (b) only, no u, v, and
    W_kr R merged into "a single trainable matrix R_hat", so nothing carries the
    sinusoid's inductive bias to distances never trained.
    Absolute: A_ij = q_i.k_j (positions were added to E).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H, D, C = cfg.n_head, cfg.d_head, cfg.d_model
        self.n_head, self.d_head = H, D
        self.pos_enc = cfg.pos_enc
        self.relative = cfg.pos_enc == "relative"
        self.shaw = cfg.pos_enc == "shaw"
        self.W_q = nn.Linear(C, H * D, bias=False)
        self.W_ke = nn.Linear(C, H * D, bias=False)  # W_{k,E}: keys from content
        self.W_v = nn.Linear(C, H * D, bias=False)
        self.W_o = nn.Linear(H * D, C, bias=False)
        if self.relative:
            self.W_kr = nn.Linear(C, H * D, bias=False)  # W_{k,R}: keys from positions
            self.u = nn.Parameter(torch.zeros(H, D))  # global content bias, term (c)
            self.v = nn.Parameter(torch.zeros(H, D))  # global position bias, term (d)
        if self.shaw:
            # Row d: Shaw's w^K_{-d}, for a key d back; a causal model never reads
            # their rows for future keys. Per layer and head, as their base model
            # (Section 4.1) and the paper's code: it replaces W_kr R_{i-j}, per head
            # too. No a^V (their eq. 3): Dai et al. compare logits, and Shaw et al.'s
            # Table 3 finds it adds nothing. shaw_clip -1: k = L + M - 1, as the
            # paper's code sizes its table, so every row is trained (Shaw et al.
            # used k = 16 and 8 for translation; their Table 2 is flat for k >= 2).
            k = cfg.shaw_clip if cfg.shaw_clip > 0 else cfg.seg_len + cfg.mem_len - 1
            self.R_hat = nn.Parameter(torch.zeros(k + 1, H, D))  # (k+1, H, D)
        self.drop_att = nn.Dropout(cfg.dropatt)
        self.drop = nn.Dropout(cfg.dropout)
        self.scale = 1.0 / math.sqrt(D)

    def project(self, h, mem, R):
        """q (B, L, H, D); keys and values (B, K, H, D); r (K, H, D) or None.

        Queries come from the segment only; keys and values also from the memory, which
        is how the segment reads the past (chapter 3). r: `position_keys`.
        """
        B, L, _ = h.shape
        H, D = self.n_head, self.d_head
        cat = torch.cat([mem, h], dim=1)  # (B, K, C)
        q = self.W_q(h).view(B, L, H, D)
        k = self.W_ke(cat).view(B, -1, H, D)  # (B, K, H, D)
        values = self.W_v(cat).view(B, -1, H, D)  # (B, K, H, D)
        return q, k, values, self.position_keys(R, cat.shape[1])

    def position_keys(self, R, K):
        """Position keys in R's row order, distances K-1 ... 0: (K, H, D) or None.

        Relative: W_kr R. Shaw: rows of R_hat, distances above k reading row k. The
        same row order lets both go through rel_shift. Absolute: None.
        """
        if self.shaw:
            k = self.R_hat.shape[0] - 1
            dist = relative_positions(K, device=self.R_hat.device).clamp(max=k)  # (K,)
            return self.R_hat[dist]  # (K, H, D)
        if self.relative:
            return self.W_kr(R).view(-1, self.n_head, self.d_head)  # (K, H, D)
        return None

    def scores(self, q, k, r):
        """Unmasked, scaled logits (B, H, L, K): (a)+(c) and (b)+(d), two products."""
        if self.pos_enc == "absolute":
            return torch.einsum("blhd,bkhd->bhlk", q, k) * self.scale
        # Shaw et al. have no global biases u, v: their two products are (a) and (b)
        qu, qv = (q + self.u, q + self.v) if self.relative else (q, q)
        # terms (a) + (c) in one matmul: (q_i + u) . k_j
        ac = torch.einsum("blhd,bkhd->bhlk", qu, k)
        # terms (b) + (d): (q_i + v) . r, against R's rows, then shifted to R_{i-j}
        bd = rel_shift(torch.einsum("blhd,khd->bhlk", qv, r))
        return (ac + bd) * self.scale

    def forward(self, h, mem, R, mask):
        """h (B, L, C), mem (B, M, C), R (K, C) or None, mask (L, K) -> (B, L, C)."""
        B, L, _ = h.shape
        q, k, values, r = self.project(h, mem, R)
        logits = self.scores(q, k, r)  # (B, H, L, K)
        prob = self.drop_att(attention_probs(logits, mask))  # (B, H, L, K)
        out = torch.einsum("bhlk,bkhd->blhd", prob, values)  # (B, L, H, D)
        return self.drop(self.W_o(out.reshape(B, L, -1)))  # (B, L, C)

    def terms(self, h, mem, R) -> dict[str, torch.Tensor]:
        """The four terms of A^rel, each (B, H, L, K), unscaled and unmasked.

        Also returns "logits" from `scores`, so that a reader can check
        (a + b + c + d) / sqrt(D) == logits on the visible (causal) entries.
        pos_enc="shaw" returns a and b only: (a + b) / sqrt(D) == logits.
        """
        if self.pos_enc == "absolute":
            raise ValueError("terms a-d exist only for pos_enc 'relative' or 'shaw'")
        q, k, _, r = self.project(h, mem, R)
        terms = {
            "a": torch.einsum("blhd,bkhd->bhlk", q, k),  # content addressing
            "b": naive_rel_term(q, r),  # content-dependent position bias
        }
        if self.relative:
            u = self.u.expand_as(q)  # (B, L, H, D): the same u for every query position
            v = self.v.expand_as(q)
            terms["c"] = torch.einsum("blhd,bkhd->bhlk", u, k)  # global content bias
            terms["d"] = naive_rel_term(v, r)  # global position bias
        terms["logits"] = self.scores(q, k, r)
        return terms
