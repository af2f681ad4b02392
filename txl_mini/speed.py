"""Evaluation speed, the paper's Table 9 done small: sliding window vs memory (ch. 6).

Dai et al. (2019), Table 9, report the "slowdown in terms of running time during
evaluation", per-token time on one GPU, of the vanilla model (Al-Rfou et al., 2019)
relative to Transformer-XL, at attention lengths 800 ... 3,800 (363x ... 1,874x). §3.2
of the paper defines the vanilla evaluation: each step consumes a segment of the
attention length, makes ONE prediction at its last position, then shifts the window
right by one and recomputes everything from scratch. Transformer-XL instead reuses the
cached states of the previous segments.

What one "predicted character" costs here, for attention length A (the paper's "Attn
Len"):

- vanilla: one forward pass over a window of A characters, of which only the last output
  is used (exactly what `evaluate_sliding_window` does for every character after the
  first window);
- XL: one segment of L new characters attends to M = A cached states per layer plus
  itself (K = M + L keys), with `same_length` so that every query sees exactly A keys,
  itself included, just as the last position of a vanilla window does. This is how the
  official text8 and enwik8 evaluation scripts set the attention length: `mem_len` is
  the evaluation-time attention length (with `same_length`), `tgt_len` the segment of
  new predictions. The segment costs one pass over L positions; its time is divided by
  L.

So per character the vanilla model pushes A positions through the network and XL pushes
one (attending to about A + L keys instead of at most A): the ratio grows about linearly
with A. Both models are the same size (same layers and widths; vanilla lacks only W_kr,
u and v) and randomly initialised: the weights do not change the time.

Timing: `torch.inference_mode`, one untimed warm-up per model and length, the memory
filled to M before timing starts, CUDA synchronised around every timed call, and the
MEDIAN time per call (robust to another process stealing the CPU now and then). Vanilla
windows at long A take about a second each on a laptop CPU, so only `n_windows` of them
are timed per length.
"""

from __future__ import annotations

import statistics
import time
from contextlib import nullcontext
from typing import Iterable, Optional

import torch
from tqdm import tqdm  # plain text bars: no widget warnings in notebooks

from .config import ModelConfig
from .model import TransformerXL, VanillaTransformer


def synchronize(device: torch.device) -> None:
    """Wait for queued CUDA kernels, so a wall-clock reading covers them."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _median_seconds(fn, calls: int, device: torch.device) -> float:
    """Median wall time of `calls` calls of fn() (each call synchronised on CUDA)."""
    times = []
    for _ in range(calls):
        synchronize(device)
        start = time.perf_counter()
        fn()
        synchronize(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _tokens(B: int, n: int, vocab: int, device, gen: torch.Generator) -> torch.Tensor:
    return torch.randint(0, vocab, (B, n), generator=gen).to(device)  # (B, n)


def time_xl(model: TransformerXL, attn_len: int, seg_len: int, n_segments: int,
            batch_size: int, device: torch.device, gen: torch.Generator) -> float:
    """Seconds per predicted character of XL with memory M = attn_len (chapter 6)."""
    B, L, M = batch_size, seg_len, attn_len
    mems = None
    # Fill the memory to its full length M first (untimed): the steady state of a long
    # evaluation.
    n_fill = -(-M // L) + 1  # ceil(M / L) segments, plus one as the warm-up call
    for _ in range(n_fill):
        mems = model(_tokens(B, L, model.cfg.vocab_size, device, gen), mems=mems).mems
    assert mems[0].shape[1] == M, "memory should be full before timing"
    segs = [_tokens(B, L, model.cfg.vocab_size, device, gen) for _ in range(n_segments)]
    state = {"mems": mems, "i": 0}

    def one_segment():
        x = segs[state["i"] % n_segments]
        state["i"] += 1
        # x: (B, L) new characters, attending to K = M + L keys
        state["mems"] = model(x, mems=state["mems"]).mems

    return _median_seconds(one_segment, n_segments, device) / (B * L)


def time_vanilla(model: VanillaTransformer, attn_len: int, n_windows: int,
                 batch_size: int, device: torch.device, gen: torch.Generator
                 ) -> float:
    """Seconds per predicted character of the sliding window of attn_len (chapter 6)."""
    B, A = batch_size, attn_len
    V = model.cfg.vocab_size
    windows = [_tokens(B, A, V, device, gen) for _ in range(n_windows)]
    model(windows[0]).logits[:, -1]  # warm-up, untimed
    state = {"i": 0}

    def one_window():
        w = windows[state["i"] % n_windows]
        state["i"] += 1
        model(w).logits[:, -1]  # (B, V): only the last position is a new prediction

    return _median_seconds(one_window, n_windows, device) / B


def eval_speed(cfg: ModelConfig, attn_lens: Iterable[int], *, batch_size: int = 1,
               n_predict: int = 256, n_windows: int = 3, seg_len: Optional[int] = None,
               device=None, amp_dtype: Optional[torch.dtype] = None, seed: int = 0,
               progress: bool = False) -> list[dict]:
    """Table 9 timing: seconds per predicted character, vanilla vs XL, per attention
    length.

    cfg gives the model size (both models share it); attention length A is set per row.
    XL predicts about `n_predict` characters per stream in segments of `seg_len`
    (default cfg.seg_len; the official text8 evaluation uses 80) after filling its
    memory to A; the vanilla model is timed on `n_windows` windows of A characters.
    `batch_size` B streams (XL) or windows (vanilla) run at once and the time is divided
    by B. `amp_dtype` (e.g. torch.bfloat16 on a GPU) runs both under autocast.

    Returns one dict per A with keys: attn_len, xl_s_per_char, vanilla_s_per_char,
    speedup (= vanilla / xl), plus seg_len, batch_size, device, xl_chars_timed,
    vanilla_chars_timed, and the work per predicted character counted exactly:
    xl_positions_per_char (1) and vanilla_positions_per_char (A), positions pushed
    through every layer.
    """
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    L = seg_len or cfg.seg_len
    lens = [int(a) for a in attn_lens]
    if not lens or min(lens + [L, batch_size, n_windows, n_predict]) < 1:
        raise ValueError(
            "attn_lens, seg_len, batch_size, n_windows and n_predict must be >= 1")
    n_segments = max(1, -(-n_predict // L))
    gen = torch.Generator().manual_seed(seed)
    autocast = (torch.autocast(device.type, dtype=amp_dtype) if amp_dtype is not None
                else nullcontext())
    rows = []
    with torch.inference_mode(), autocast:
        for A in tqdm(lens, disable=not progress, desc="attention lengths"):
            torch.manual_seed(seed)
            # The same size for both; evaluation mode, so dropout is off.
            xl = TransformerXL(cfg.replace(mem_len=A, same_length=True, dropout=0.0,
                                           dropatt=0.0)).to(device).eval()
            vanilla = VanillaTransformer(cfg.replace(seg_len=A, dropout=0.0,
                                                     dropatt=0.0)).to(device).eval()
            xl_s = time_xl(xl, A, L, n_segments, batch_size, device, gen)
            van_s = time_vanilla(vanilla, A, n_windows, batch_size, device, gen)
            rows.append({
                "attn_len": A,
                "xl_s_per_char": xl_s,
                "vanilla_s_per_char": van_s,
                "speedup": van_s / xl_s,
                "seg_len": L,
                "batch_size": batch_size,
                "device": str(device),
                "xl_chars_timed": n_segments * L * batch_size,
                "vanilla_chars_timed": n_windows * batch_size,
                "xl_positions_per_char": 1,
                "vanilla_positions_per_char": A,
            })
            del xl, vanilla
    return rows


def format_table(rows: list[dict]) -> str:
    """The rows of eval_speed as a text table (chapter 6, python -m txl_mini bench)."""
    head = ("attn len", "XL ms/char", "vanilla ms/char", "speed-up")
    lines = ["{:>8}  {:>11}  {:>15}  {:>8}".format(*head)]
    for r in rows:
        lines.append(f"{r['attn_len']:>8}  {1e3 * r['xl_s_per_char']:>11.4f}  "
                     f"{1e3 * r['vanilla_s_per_char']:>15.3f}  {r['speedup']:>7.1f}x")
    return "\n".join(lines)
