"""Evaluation speed and memory flatness for `python -m txl_mini bench`.

- seconds per predicted character, XL with memory, with and without the key/value
  cache, vs the vanilla sliding window (the paper's Table 9), through
  `txl_mini.speed.eval_speed`, the one implementation the book also uses, with the
  peak memory of each attention length, at two shapes: the book's (`book` preset) and
  the paper's (`text8_base`: 12 layers, C = 512, d_inner 2,048; segments of 128, as the
  official text8 evaluation reads them; batch 1 and few windows per length);
- memory flatness: peak memory after 2,000 evaluated segments vs after 20 (a small
  model, so it is cheap; --long-segments sets the 2,000).
"""

from __future__ import annotations

import time

import torch
from tqdm import tqdm

from ..config import ModelConfig, preset
from ..model import TransformerXL
from ..speed import eval_speed, format_table, synchronize  # the paper's Table 9
from .bench_train import PeakMemory
from .errors import UsageError

EVAL_LENS = (128, 512, 800, 1800, 2800, 3800)
# shape: (preset, XL segment length; None = the preset's), n_predict, n_windows
SHAPES = {"book": ("book", None, 256, 5), "paper": ("text8_base", 128, 1024, 2)}
# memory flatness: a segment is one small forward, about 3 ms on a CPU, so this many
# take minutes, and the memory is full (flat) from the second segment on
MAX_LONG_SEGMENTS = 100_000



def max_attn_len(args) -> int:
    """The longest attention length evaluated: of EVAL_LENS, at most --max-attn-len
    (refused above the longest: bench would silently stop there)."""
    top = args.max_attn_len or (1024 if args.quick else max(EVAL_LENS))
    if top > max(EVAL_LENS):
        runs = ", ".join(f"{a:,}" for a in EVAL_LENS)
        raise UsageError(f"--max-attn-len must be <= {max(EVAL_LENS):,}, the longest "
                         f"attention length bench runs (of {runs}), got {top:,}")
    return max(a for a in EVAL_LENS if a <= top)


def check_long_segments(n: int) -> None:
    """--long-segments: at the ~360 segments/s a probe saw here (193,000 in 9
    minutes), 10**9 would have run for a month, silently."""
    if n > MAX_LONG_SEGMENTS:
        raise UsageError(f"--long-segments must be <= {MAX_LONG_SEGMENTS:,} (minutes "
                         f"of evaluation; the memory is flat after 2), got {n:,}")


def memory_flatness(device, n_long, amp, progress):
    """Peak memory after n_short vs n_long evaluated segments of a small XL model:
    n_short is 20, or half of n_long below 40 (at 20 it compared 20 with itself);
    the memory is full after 2 segments, so both are past the start."""
    n_short = min(20, n_long // 2)
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


def bench_eval(lens, device, amp_dtype, quick, progress, batch=1, shape="book"):
    """Table 9 rows from txl_mini.speed.eval_speed at `shape`, one length at a time.

    `batch` streams (XL) and windows (vanilla) at once, equal for both. Batch 1 is the
    default: B vanilla windows of 3,800 characters cost B times a second or so per call
    on a CPU at the book's shape, several seconds at the paper's. On a CPU every call
    is timed by this process's CPU time: other processes sharing the machine preempt a
    long vanilla window more than a short XL segment, which skews wall-clock ratios.
    """
    clock = time.process_time if device.type == "cpu" else time.perf_counter
    name, seg_len, n_predict, n_windows = SHAPES[shape]
    cfg = preset(name)
    mem = PeakMemory(device)
    rows = []
    for A in tqdm(lens, desc=f"evaluation speed ({shape})", disable=not progress):
        mem.reset()
        row = eval_speed(cfg, [A], batch_size=batch, seg_len=seg_len,
                         n_predict=64 if quick else n_predict,
                         n_windows=2 if quick else n_windows, device=device,
                         amp_dtype=amp_dtype, clock=clock)[0]
        row.update(shape=shape, preset=name, peak_mem_mib=mem.peak_mib(),
                   peak_rise_mib=mem.rise_mib(), clock=clock.__name__)
        rows.append(row)
    return rows


def format_eval(rows, title) -> list:
    """Lines of one Table 9 table of the bench's report (peak memory: in the JSON)."""
    return [title] + format_table(rows).splitlines()
