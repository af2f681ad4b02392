"""A run that cannot fit in memory is refused before the work, with the numbers."""

from __future__ import annotations

import os

import torch

from ..config import ModelConfig
from . import plural
from .options import UsageError


def memory_estimate(cfg: ModelConfig, batch_size: int, mem_len: int,
                    training: bool) -> tuple[int, str]:
    """Rough bytes one step needs, and how they split, for a refusal before the work.

    Per layer the attention scores (B, H, L, K) exist a few times over (scores,
    probabilities and, in training, their gradients), plus about a dozen (B, L, C)
    tensors and the feed-forward's (B, L, d_inner); training adds weights, gradients
    and Adam's two moments. Good to a small factor, which is all a refusal needs.
    """
    B, L, H, C = batch_size, cfg.seg_len, cfg.n_head, cfg.d_model
    M = mem_len
    K = L + M
    n_params = cfg.n_layer * (4 * C * H * cfg.d_head + 2 * C * cfg.d_inner)
    n_params += cfg.vocab_size * C
    weights = (16 if training else 4) * n_params
    attn = 4 * (4 if training else 2) * B * H * L * K * cfg.n_layer
    acts = 4 * B * L * (12 * C + 3 * cfg.d_inner + 3 * H * cfg.d_head) * cfg.n_layer
    acts += 4 * B * M * C * cfg.n_layer + 4 * 3 * B * L * cfg.vocab_size
    total = weights + attn + acts
    gib = 2**30
    return total, (f"attention scores {attn / gib:.1f} GiB for B={B} x H={H} x "
                   f"L={L} x K={K} x {plural(cfg.n_layer, 'layer')}, other activations "
                   f"{acts / gib:.1f} GiB, weights{' + Adam' if training else ''} "
                   f"{weights / gib:.1f} GiB")


def check_memory(cfg: ModelConfig, batch_size: int, mem_len: int, training: bool,
                 device: torch.device) -> None:
    need, detail = memory_estimate(cfg, batch_size, mem_len, training)
    if device.type == "cuda":
        have = torch.cuda.get_device_properties(device).total_memory
    else:
        try:
            have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            have = 1 << 45  # unknown: do not refuse
    if need > have:
        raise UsageError(
            f"this needs roughly {need / 2**30:,.1f} GiB ({detail}), more than the "
            f"{have / 2**30:,.1f} GiB of {device.type} memory here; lower "
            "--batch-size, --seg-len or --mem-len")
