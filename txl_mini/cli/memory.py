"""A run that cannot fit in memory is refused before the work, with the numbers."""

from __future__ import annotations

import os
import resource

import torch

from ..config import ModelConfig
from . import plural
from .errors import RUN_SIZE, mapped
from .options import UsageError


def shaw_rows(cfg: ModelConfig) -> int:
    """Rows of each layer's Shaw table R_hat (MultiHeadAttention): k + 1; 0 unless
    pos_enc is "shaw"."""
    if cfg.pos_enc != "shaw":
        return 0
    return (cfg.shaw_clip if cfg.shaw_clip > 0 else cfg.seg_len + cfg.mem_len - 1) + 1


def memory_estimate(cfg: ModelConfig, batch_size: int, mem_len: int,
                    training: bool) -> tuple[int, list[tuple[str, int, str]]]:
    """Rough bytes one step needs, and its parts (name, bytes, for what).

    Per layer the attention scores (B, H, L, K) exist a few times over (scores,
    probabilities and, in training, their gradients), plus about a dozen (B, L, C)
    tensors and the feed-forward's (B, L, d_inner); training adds weights, gradients
    and Adam's two moments, of Shaw's tables too. Good to a small factor, which is
    all a refusal needs.
    """
    B, L, H, C = batch_size, cfg.seg_len, cfg.n_head, cfg.d_model
    M = mem_len
    K = L + M
    per_param = 16 if training else 4
    n_params = cfg.n_layer * (4 * C * H * cfg.d_head + 2 * C * cfg.d_inner)
    n_params += cfg.vocab_size * C
    table = per_param * cfg.n_layer * shaw_rows(cfg) * H * cfg.d_head
    attn = 4 * (4 if training else 2) * B * H * L * K * cfg.n_layer
    acts = 4 * B * L * (12 * C + 3 * cfg.d_inner + 3 * H * cfg.d_head) * cfg.n_layer
    acts += 4 * B * M * C * cfg.n_layer + 4 * 3 * B * L * cfg.vocab_size
    # (name, bytes, what they are for)
    parts = [("attention scores", attn, f" for B={B} x H={H} x L={L} x K={K} x "
              f"{plural(cfg.n_layer, 'layer')}"),
             ("other activations", acts, ""),
             (f"weights{' + Adam' if training else ''}", per_param * n_params, "")]
    if table:
        parts.append(("Shaw tables", table, f" of {shaw_rows(cfg):,} rows"))
    return sum(p[1] for p in parts), parts


def check_memory(cfg: ModelConfig, batch_size: int, mem_len: int, training: bool,
                 device: torch.device, run_size: str = RUN_SIZE,
                 model_size: str | None = None) -> None:
    """Refuse what cannot fit, advising the options behind it: `run_size`, or the
    model's `model_size` (train's options) where even one stream would not fit."""
    need, parts = memory_estimate(cfg, batch_size, mem_len, training)
    have, where = _available(device)
    if need > have:
        detail = ", ".join(f"{name} {size(b)}{what}" for name, b, what in parts)
        one = memory_estimate(cfg, 1, mem_len, training)[0]  # a single stream
        weights = parts[2][1] > have  # the model alone: only its size helps
        fix = _advice(max(parts, key=lambda p: p[1])[0], one > have, run_size,
                      model_size, weights)
        raise UsageError(
            f"this needs roughly {size(need)} ({detail}), more than the "
            f"{size(have)} {where}; lower {fix}")


def size(b: float) -> str:
    """Bytes as the refusals print them: GiB, or MiB below one (an `ulimit -v`)."""
    return f"{b / 2**30:,.1f} GiB" if b >= 2**30 else f"{b / 2**20:,.0f} MiB"


def _available(device: torch.device) -> tuple[int, str]:
    """Bytes a run may use, and what bounds them: the GPU's memory; on a CPU the
    physical memory, or less under an address-space limit (`ulimit -v`), of which
    what the process maps already (torch's libraries: hundreds of MiB) is gone."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory, "of cuda memory"
    try:
        have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        have = 1 << 45  # unknown: do not refuse
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY or limit >= have:
        return have, "of cpu memory here"
    now = mapped()
    return max(0, limit - now), (
        f"left under this process's address-space limit (ulimit -v, {size(limit)}, "
        f"of which {size(now)} is mapped already)")


def _advice(largest: str, one_too_big: bool, run_size: str, model_size,
            weights_too_big: bool = False) -> str:
    """What to lower, from the largest part of the estimate and whether one stream
    (or the weights alone) is too much; the option names are errors.py's."""
    if largest.startswith("Shaw"):
        return "--shaw-clip"
    if not model_size or not (one_too_big or largest.startswith("weights")):
        return run_size
    model = f"the model's size ({model_size})"
    if largest.startswith("weights") or weights_too_big:
        return model
    return f"{model}, --seg-len or --mem-len"
