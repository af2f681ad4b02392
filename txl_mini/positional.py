"""Sinusoid position encodings: relative matrix R and the absolute baseline."""

from __future__ import annotations

import torch


def inv_freq(d_model: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """The sinusoid frequencies f_k = 10000^(-2k/C), k = 0 ... C/2-1: (C/2,).

    As in Vaswani et al. (2017). Computed in `dtype`, so a float64 model gets
    float64-accurate positions.
    """
    k2 = torch.arange(0, d_model, 2, dtype=dtype, device=device)  # (C/2,) = 2k
    return 1.0 / (10000 ** (k2 / d_model))  # (C/2,)


def sinusoid(pos: torch.Tensor, d_model: int, dtype=torch.float32) -> torch.Tensor:
    """Sinusoid embedding of (possibly fractional) positions `pos` (P,) -> (P, C).

    The first C/2 columns are sin(pos * f_k), the last C/2 are cos(pos * f_k), with the
    frequencies of `inv_freq`.
    """
    f = inv_freq(d_model, dtype, pos.device)  # (C/2,)
    angles = pos.to(dtype)[:, None] * f[None, :]  # (P, C/2)
    return torch.cat([angles.sin(), angles.cos()], dim=-1)  # (P, C)


def relative_positions(n_keys: int, clamp_len: int = -1, device=None) -> torch.Tensor:
    """The distances R is evaluated at, K-1 down to 0.

    Row k of R belongs to distance K-1-k, so that rel_shift can slide each
    query's row into place. Distances above `clamp_len` (if >= 1) share the row of
    `clamp_len`.
    """
    pos = torch.arange(n_keys - 1, -1, -1, device=device)  # (K,) = K-1, ..., 1, 0
    if clamp_len > 0:
        pos = pos.clamp(max=clamp_len)
    return pos


def relative_encoding(n_keys: int, d_model: int, clamp_len: int = -1, device=None,
                      dtype=torch.float32) -> torch.Tensor:
    """R, Transformer-XL's fixed sinusoid matrix, rows for distances K-1 ... 0: (K, C).

    R has no parameters, so a model trained on short contexts can be evaluated with a
    memory longer than it ever saw in training.
    """
    return sinusoid(relative_positions(n_keys, clamp_len, device), d_model, dtype)


def absolute_encoding(
    seg_len: int, d_model: int, device=None, dtype=torch.float32
) -> torch.Tensor:
    """U, the absolute encoding of positions 0 ... L-1 in a segment: (L, C).

    Every segment reuses the same U, which is exactly why absolute positions become
    ambiguous once a model also attends to the previous segment's states.
    """
    return sinusoid(torch.arange(seg_len, device=device), d_model, dtype)
