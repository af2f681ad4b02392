"""Evaluation speed, the paper's Table 9: sliding window vs memory vs cache.

Dai et al. (2019), Table 9, report the "slowdown in terms of running time during
evaluation", per-token time on one GPU, of the vanilla model (Al-Rfou et al., 2019)
relative to Transformer-XL, at attention lengths 800 ... 3,800 (363x ... 1,874x). §3.2
of the paper defines the vanilla evaluation: each step consumes a segment of the
attention length, makes ONE prediction at its last position, then shifts the window
right by one and recomputes everything from scratch.

What one predicted character costs here, at attention length A (the paper's "Attn
Len"), on three paths:

- vanilla: one forward pass over a window of A characters (`evaluate_sliding_window`),
  causal attention: query i sees i keys, (A + 1) / 2 on average;
- XL: a segment of L new characters with M = A remembered states per layer and
  `same_length`, so every query sees exactly A keys, as the last position of a vanilla
  window does (the official text8/enwik8 evaluation sets its attention length so). The
  standard path re-projects keys and values of all K = A + L states in every layer;
- XL with the key/value cache (`txl_mini.kv_cache`): each state is projected once.

`flops_per_char` counts the matrix products of each path; the ratio of counts bounds
the speed-up a kernel-perfect implementation could show. Timing: inference mode, one
untimed warm-up, memory and cache filled to A first, CUDA synchronised around every
call, the MEDIAN time per call; randomly initialised models of one size (the weights do
not change the time).
"""

from __future__ import annotations

import statistics
import time
from contextlib import nullcontext
from typing import Callable, Iterable, Optional

import torch
from tqdm import tqdm  # plain text bars: no widget warnings in notebooks

from .config import ModelConfig
from .kv_cache import forward_cached
from .model import TransformerXL, VanillaTransformer

# Dai et al. (2019), Table 9: vanilla / Transformer-XL time per token, one GPU
PAPER_SPEEDUP = {800: 363, 1800: 773, 2800: 1409, 3800: 1874}


def synchronize(device: torch.device) -> None:
    """Wait for queued CUDA kernels, so a wall-clock reading covers them."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _median_seconds(fn, calls: int, device: torch.device, clock=time.perf_counter
                    ) -> float:
    """Median time of `calls` calls of fn() by `clock` (each call synchronised on
    CUDA)."""
    times = []
    for _ in range(calls):
        synchronize(device)
        start = clock()
        fn()
        synchronize(device)
        times.append(clock() - start)
    return statistics.median(times)


def _tokens(B: int, n: int, vocab: int, device, gen: torch.Generator) -> torch.Tensor:
    return torch.randint(0, vocab, (B, n), generator=gen).to(device)  # (B, n)


def time_xl(model: TransformerXL, attn_len: int, seg_len: int, n_segments: int,
            batch_size: int, device: torch.device, gen: torch.Generator,
            cache: bool = False, clock=time.perf_counter) -> float:
    """Seconds per predicted character of XL with memory M = attn_len;
    cache=True runs `forward_cached`, which keeps projected keys and values."""
    B, L, M, V = batch_size, seg_len, attn_len, model.cfg.vocab_size

    def step(x, state):  # the next memory (standard path) or cache
        if cache:
            return forward_cached(model, x, state).cache
        return model(x, mems=state).mems

    # Fill the memory to its full length M first (untimed): the steady state of a long
    # evaluation.
    state = None
    for _ in range(-(-M // L) + 1):  # ceil(M / L) segments, plus one as the warm-up
        state = step(_tokens(B, L, V, device, gen), state)
    filled = state.length if cache else state[0].shape[1]
    assert filled == M, "memory should be full before timing"
    segs = [_tokens(B, L, V, device, gen) for _ in range(n_segments)]
    run = {"state": state, "i": 0}

    def one_segment():
        x = segs[run["i"] % n_segments]  # (B, L) new characters, K = M + L keys
        run["i"] += 1
        run["state"] = step(x, run["state"])

    return _median_seconds(one_segment, n_segments, device, clock) / (B * L)


def time_vanilla(model: VanillaTransformer, attn_len: int, n_windows: int,
                 batch_size: int, device: torch.device, gen: torch.Generator,
                 clock=time.perf_counter) -> float:
    """Seconds per predicted character of the sliding window of attn_len."""
    B, A = batch_size, attn_len
    V = model.cfg.vocab_size
    windows = [_tokens(B, A, V, device, gen) for _ in range(n_windows)]
    model(windows[0]).logits[:, -1]  # warm-up, untimed
    state = {"i": 0}

    def one_window():
        w = windows[state["i"] % n_windows]
        state["i"] += 1
        model(w).logits[:, -1]  # (B, V): only the last position is a new prediction

    return _median_seconds(one_window, n_windows, device, clock) / B


def flops_per_char(cfg: ModelConfig, attn_len: int, seg_len: int) -> dict:
    """Forward FLOPs per predicted character on the three paths.

    Matrix products only, 2 FLOPs per multiply-add, as the kernels compute them: per
    layer and position W_q, W_o (C x H*D) and the feed-forward net (C x d_inner, twice);
    W_{k,E} and W_v per projected state; XL: W_{k,R} R for K = A + L distances per
    segment (standard path; the cache computes it once), and three attention products
    over all K keys of the segment (q.k, q.r, sum over values: the masked entries are
    computed too); vanilla: two products over (A + 1) / 2 keys on average (the causal
    kernel skips the future); the output head (C x V) at every position computed.
    Embeddings, softmax, layer norms and biases are left out (O(C) per position), and so
    are the up to 15 columns `fast_attention.padded` adds to q.r for a faster kernel:
    work this implementation chose, which can only lower XL's share of its count.
    """
    A, L, N = attn_len, seg_len, cfg.n_layer
    C, P, F, V = cfg.d_model, cfg.n_head * cfg.d_head, cfg.d_inner, cfg.vocab_size
    K = A + L  # keys of an XL segment: A remembered states and the L new ones
    per_position = 4 * C * P + 4 * C * F  # W_q, W_o and the feed-forward net
    kv = 4 * C * P  # W_{k,E} and W_v of one state
    attn_xl = 2 * P * (3 * K + 1)  # q.r has one more column: rel_shift's zero row
    no_cache = per_position + (kv + 2 * C * P) * K / L + attn_xl  # K states, K rows R
    cache = per_position + kv + attn_xl
    vanilla = A * (per_position + kv) + 2 * 2 * P * A * (A + 1) / 2  # one window
    head = 2 * C * V
    return {"xl": N * no_cache + head, "xl_cache": N * cache + head,
            "vanilla": N * vanilla + A * head}


def eval_speed(cfg: ModelConfig, attn_lens: Iterable[int], *, batch_size: int = 1,
               n_predict: int = 256, n_windows: int = 3, seg_len: Optional[int] = None,
               cache: bool = True, device=None, amp_dtype: Optional[torch.dtype] = None,
               seed: int = 0, progress: bool = False,
               clock: Callable[[], float] = time.perf_counter) -> list[dict]:
    """Table 9 timing: seconds per predicted character per attention length, vanilla
    window vs XL without and (cache=True) with the key/value cache.

    cfg gives the model size (all paths share it); A is set per row. XL predicts about
    `n_predict` characters per stream in segments of `seg_len` (default cfg.seg_len)
    after filling its memory to A; the vanilla model is timed on `n_windows` windows.
    `batch_size` B streams or windows run at once and the time is divided by B.
    `amp_dtype` (e.g. torch.bfloat16 on a GPU) runs all under autocast. `clock`: wall
    time by default; `time.thread_time` (one torch thread on a CPU) counts only this
    thread's CPU time, which other processes on a busy machine do not stretch: they
    preempt long calls (a vanilla window) more than short ones (an XL segment), which
    skews wall-clock ratios.

    Returns one dict per A: attn_len, xl_s_per_char, xl_cache_s_per_char (None without
    cache), vanilla_s_per_char, speedup (vanilla / the fastest XL path), cache_used
    (whether that is the cached one), speedup_no_cache, flops_per_char and flop_ratio
    (vanilla / the fastest path's count), paper_speedup (None off the paper's lengths),
    seg_len, batch_size, device, xl_chars_timed, vanilla_chars_timed,
    xl_positions_per_char (1) and vanilla_positions_per_char (A).
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
            # The same size for all; evaluation mode, so dropout is off.
            xl = TransformerXL(cfg.replace(mem_len=A, same_length=True, dropout=0.0,
                                           dropatt=0.0)).to(device).eval()
            vanilla = VanillaTransformer(cfg.replace(seg_len=A, dropout=0.0,
                                                     dropatt=0.0)).to(device).eval()
            args = (A, L, n_segments, batch_size, device, gen)
            xl_s = time_xl(xl, *args, clock=clock)
            cache_s = time_xl(xl, *args, cache=True, clock=clock) if cache else None
            van_s = time_vanilla(vanilla, A, n_windows, batch_size, device, gen,
                                 clock=clock)
            flops = flops_per_char(cfg, A, L)
            cached = cache and cache_s < xl_s
            best = cache_s if cached else xl_s
            rows.append({
                "attn_len": A, "xl_s_per_char": xl_s, "xl_cache_s_per_char": cache_s,
                "vanilla_s_per_char": van_s, "speedup": van_s / best,
                "cache_used": cached, "speedup_no_cache": van_s / xl_s,
                "flops_per_char": flops,
                "flop_ratio": flops["vanilla"] / flops["xl_cache" if cached else "xl"],
                "paper_speedup": PAPER_SPEEDUP.get(A),
                "seg_len": L, "batch_size": batch_size, "device": str(device),
                "xl_chars_timed": n_segments * L * batch_size,
                "vanilla_chars_timed": n_windows * batch_size,
                "xl_positions_per_char": 1, "vanilla_positions_per_char": A,
            })
            del xl, vanilla
    return rows


def format_table(rows: list[dict]) -> str:
    """The rows of eval_speed as a text table (python -m txl_mini bench); 'of count'
    is speed-up / FLOP ratio, how close the faster XL path gets to its count."""
    lines = [f"{'attn len':>8}{'XL ms/char':>12}{'+ cache':>9}{'vanilla ms/char':>17}"
             f"{'speed-up':>10}{'FLOP ratio':>12}{'of count':>10}{'paper':>7}"]
    for r in rows:
        c = r["xl_cache_s_per_char"]
        paper = f"{r['paper_speedup']:,}x" if r["paper_speedup"] else "-"
        lines.append(f"{r['attn_len']:>8}{1e3 * r['xl_s_per_char']:>12.4f}"
                     + (f"{1e3 * c:>9.4f}" if c is not None else f"{'-':>9}")
                     + f"{1e3 * r['vanilla_s_per_char']:>17.3f}{r['speedup']:>9.0f}x"
                     f"{r['flop_ratio']:>11.0f}x{r['speedup'] / r['flop_ratio']:>10.2f}"
                     f"{paper:>7}")
    return "\n".join(lines)
