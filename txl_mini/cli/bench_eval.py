"""Evaluation speed and memory flatness for `python -m txl_mini bench` (ch. 6).

- seconds per predicted character, XL with memory vs the vanilla sliding window (the
  paper's Table 9), through `txl_mini.speed.eval_speed`, the one implementation chapter
  6 also uses, with the peak memory of each attention length;
- memory flatness: peak memory after 2,000 evaluated segments vs after 20 (a small
  model, so it is cheap).
"""

from __future__ import annotations

import torch
from tqdm import tqdm

from ..config import ModelConfig, preset
from ..model import TransformerXL
from ..speed import eval_speed, synchronize  # chapter 6's Table 9 timing
from .peakmem import PeakMemory

# Dai et al. (2019), Table 9: vanilla / Transformer-XL time per token, one GPU
PAPER_SPEEDUP = {800: 363, 1800: 773, 2800: 1409, 3800: 1874}
EVAL_LENS = (128, 512, 800, 1800, 2800, 3800)


def memory_flatness(device, n_short, n_long, amp, progress):
    """Peak memory after n_short vs n_long evaluated segments of a small XL model."""
    cfg = ModelConfig(n_layer=2, n_head=2, d_head=16, d_model=32, d_inner=64,
                      seg_len=32, mem_len=64, dropout=0.0)
    model = TransformerXL(cfg).to(device).eval()
    mem = PeakMemory(device)
    x = torch.randint(0, cfg.vocab_size, (4, cfg.seg_len), device=device)
    mems, peaks = None, {}
    with torch.inference_mode(), amp():
        for _ in range(3):  # warm-up: allocator and memory reach their steady state
            mems = model(x, mems=mems).mems
        mem.reset()
        steps = range(1, n_long + 1)
        for i in tqdm(steps, desc="long evaluation", disable=not progress):
            mems = model(x, mems=mems).mems
            if i in (n_short, n_long):
                synchronize(device)
                peaks[i] = mem.peak_mib()
    return {"segments_short": n_short, "segments_long": n_long,
            "peak_short_mib": peaks[n_short], "peak_long_mib": peaks[n_long],
            "ratio": peaks[n_long] / peaks[n_short]}


def bench_eval(lens, device, amp_dtype, quick, progress, batch=1):
    """Table 9 rows from txl_mini.speed.eval_speed (book widths), one length at a time.

    `batch` streams (XL) and windows (vanilla) at once, equal for both, as the issue
    asks. Batch 1 is the default: B vanilla windows of 3,800 characters cost B times a
    second or so per call on a CPU.
    """
    cfg = preset("book")
    mem = PeakMemory(device)
    rows = []
    for A in tqdm(lens, desc="evaluation speed", disable=not progress):
        mem.reset()
        row = eval_speed(cfg, [A], batch_size=batch, n_predict=64 if quick else 256,
                         n_windows=2 if quick else 5, device=device,
                         amp_dtype=amp_dtype)[0]
        row["peak_mem_mib"] = mem.peak_mib()
        row["peak_rise_mib"] = mem.peak_mib() - mem.base
        row["paper_speedup"] = PAPER_SPEEDUP.get(A)
        rows.append(row)
    return rows
