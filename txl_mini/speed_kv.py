"""Table 9 with the key/value cache: FLOPs and time per character, at any shape (ch. 6).

To be merged into `txl_mini.speed` (the Table 9 module): the FLOP count explains the
ratios that module measures, so it lives with the timing, not with the model. Both are
plain functions; the bench and chapter 6 call them.

The Table 9 setting is that of `txl_mini.speed.eval_speed`: at attention length A, XL
keeps M = A remembered states per layer, with `same_length`, so each of the L new
positions of a segment attends to exactly A keys (itself included), as the last position
of a vanilla window of A does. Three ways to predict one character:

- XL without cache, `model(x, mems=...)`: each segment re-projects keys and values of
  all K = A + L states [memory; segment] and W_{k,R} R for K distances, in every layer;
- XL with the cache, `forward_cached`: each state is projected once, W_{k,R} R once per
  model (txl_mini.kv_cache);
- vanilla sliding window (Al-Rfou et al., 2019; the paper's §3.2): a window of A
  characters runs from scratch for ONE prediction, A positions through every layer,
  query i attending i keys: A (A + 1) / 2 pairs, A / 2 keys per query on average.

Shapes: B batch, L segment length, M memory, A attention length, H heads, D head dim,
C d_model, V vocab.
"""

from __future__ import annotations

import statistics
import time

import torch

from .config import ModelConfig
from .kv_cache import KVCache, forward_cached
from .model import TransformerXL, VanillaTransformer

PAPER_SPEEDUP = {800: 363, 1800: 773, 2800: 1409, 3800: 1874}  # Dai et al., Table 9


def flops_per_char(cfg: ModelConfig, attn_len: int, seg_len: int) -> dict:
    """Forward FLOPs per predicted character, Table 9 setting, three paths (chapter 6).

    Counts matrix products only, 2 FLOPs per multiply-add: projections W_q, W_{k,E},
    W_v, W_o (C x H*D each), W_{k,R} R (XL), the attention products over the keys a
    query may see (XL: (a)+(c), (b)+(d) and the sum over values, 3 of them; vanilla: 2),
    the feed-forward net (C x d_inner twice) and the output head once per prediction.
    Embeddings, softmax, layer norms and biases are left out (O(C) per position).
    Returns {"xl_no_cache", "xl_cache", "vanilla"} in FLOPs per character.
    """
    A, L = attn_len, seg_len
    C, P, F, V = cfg.d_model, cfg.n_head * cfg.d_head, cfg.d_inner, cfg.vocab_size
    K = A + L  # states [memory; segment] the uncached path projects per segment
    q_o_ff = 2 * C * P + 2 * P * C + 4 * C * F  # W_q, W_o, feed-forward: per position
    kv = 4 * C * P  # W_{k,E} and W_v of one state
    attn_xl = 3 * 2 * P * A  # A keys per query (same_length)
    no_cache = q_o_ff + kv * K / L + 2 * C * P * K / L + attn_xl  # + W_{k,R} R, K rows
    cache = q_o_ff + kv + attn_xl
    vanilla = A * (q_o_ff + kv) + 2 * 2 * P * A * (A + 1) / 2  # per window
    head = 2 * C * V
    N = cfg.n_layer
    return {
        "xl_no_cache": N * no_cache + head,
        "xl_cache": N * cache + head,
        "vanilla": N * vanilla + head,
    }


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _median_s(fn, calls: int, clock: str = "wall") -> float:
    """Median time of `calls` calls of fn(), after one untimed warm-up call.

    clock "cpu" counts the CPU time of this process only: with one torch thread it
    equals the wall time on an idle machine, and it does not count the time other
    processes take the core away (a shared machine). "wall" is what a user waits.
    """
    now = CLOCKS[clock]
    fn()
    times = []
    for _ in range(calls):
        start = now()
        fn()
        times.append(now() - start)
    return statistics.median(times)


def _time_xl(cfg: ModelConfig, A: int, L: int, L_cache: int, n_segments: int,
             clock: str) -> tuple:
    """Seconds per character of XL at memory A, without and with the cache (batch 1)."""
    B = 1
    xl = TransformerXL(cfg.replace(mem_len=A, same_length=True, dropout=0.0,
                                   dropatt=0.0)).eval()
    H, D, C = cfg.n_head, cfg.d_head, cfg.d_model
    x = torch.randint(0, cfg.vocab_size, (B, L))  # (B, L)
    x_cache = torch.randint(0, cfg.vocab_size, (B, L_cache))  # (B, L_cache)
    state = {
        "mems": [torch.randn(B, A, C) for _ in xl.blocks],  # (B, M, C) per layer
        "cache": KVCache([torch.randn(B, H, A, D) for _ in xl.blocks],
                         [torch.randn(B, H, A, D) for _ in xl.blocks]),  # (B, H, M, D)
    }

    def xl_step():
        state["mems"] = xl(x, mems=state["mems"]).mems  # K = A + L states projected

    def cached_step():
        state["cache"] = forward_cached(xl, x_cache, state["cache"]).cache

    xl_s = _median_s(xl_step, n_segments, clock) / (B * L)
    cache_s = _median_s(cached_step, n_segments, clock) / (B * L_cache)
    assert state["cache"].length == state["mems"][0].shape[1] == A  # steady state
    return xl_s, cache_s


def time_per_char(cfg: ModelConfig, attn_len: int, *, seg_len: int | None = None,
                  cache_seg_len: int | None = None, n_segments: int = 3,
                  n_windows: int = 2, seed: int = 0, clock: str = "wall") -> dict:
    """Seconds per predicted character, batch 1, CPU, for the three paths (chapter 6).

    Models are randomly initialised and the memory and cache are filled with random
    numbers of the right shape: neither changes the time (the work is the same), and
    filling a 3,800-state memory of a 12-layer model honestly would cost as much as
    several vanilla windows. Each path gets one untimed warm-up call; the MEDIAN of
    `n_segments` segments of `seg_len` (default cfg.seg_len) for XL, of `n_windows`
    windows for the vanilla model, is reported, on `clock` ("wall" or "cpu", see
    _median_s). The cached path may run its own segment length `cache_seg_len` (default
    seg_len): with same_length and a full memory every query sees exactly A keys
    whatever L is, so L only schedules the work. Without the cache a long L pays (fewer
    re-projections per character); with it, a moderate one (each query's (L, A + L)
    logits row wastes L of A + L keys, and small matrix products run slower).
    """
    A, L = attn_len, seg_len or cfg.seg_len
    L_cache = cache_seg_len or L
    torch.manual_seed(seed)
    with torch.inference_mode():
        xl_s, cache_s = _time_xl(cfg, A, L, L_cache, n_segments, clock)
        vanilla = VanillaTransformer(cfg.replace(seg_len=A, dropout=0.0,
                                                 dropatt=0.0)).eval()
        w = torch.randint(0, cfg.vocab_size, (1, A))  # one window of A characters
        # only the last position is a new prediction
        van_s = _median_s(lambda: vanilla(w).logits[:, -1], n_windows, clock)
    flops = flops_per_char(cfg, A, L)
    return {
        "attn_len": A, "seg_len": L, "cache_seg_len": L_cache, "batch_size": 1,
        "xl_s_per_char": xl_s, "xl_cache_s_per_char": cache_s,
        "vanilla_s_per_char": van_s,
        "speedup_no_cache": van_s / xl_s, "speedup_cache": van_s / cache_s,
        "speedup": van_s / min(xl_s, cache_s), "cache_used": cache_s < xl_s,
        "paper_speedup": PAPER_SPEEDUP.get(A),
        "flops_per_char": flops,
        "flop_ratio_no_cache": flops["vanilla"] / flops["xl_no_cache"],
        # (the cached path's count does not depend on L: A keys per query, 1 projection)
        "flop_ratio_cache": flops["vanilla"] / flops["xl_cache"],
        "n_segments": n_segments, "n_windows": n_windows, "clock": clock,
        "threads": torch.get_num_threads(),
    }


def format_rows(rows: list) -> str:
    """time_per_char rows as text: ms per character, speed-ups, FLOP ratios (ch. 6)."""
    head = (f"{'A':>5} {'XL ms':>8} {'XL+cache ms':>11} {'vanilla ms':>10} "
            f"{'x no cache':>10} {'x cache':>8} {'paper':>6} {'FLOPx nc':>8} "
            f"{'FLOPx c':>8}")
    lines = [head]
    for r in rows:
        paper = f"{r['paper_speedup']}" if r["paper_speedup"] else "-"
        lines.append(
            f"{r['attn_len']:>5} {1e3 * r['xl_s_per_char']:>8.3f} "
            f"{1e3 * r['xl_cache_s_per_char']:>11.3f} "
            f"{1e3 * r['vanilla_s_per_char']:>10.1f} {r['speedup_no_cache']:>10.0f} "
            f"{r['speedup_cache']:>8.0f} {paper:>6} {r['flop_ratio_no_cache']:>8.0f} "
            f"{r['flop_ratio_cache']:>8.0f}"
        )
    return "\n".join(lines)


def generation_time_per_char(cfg: ModelConfig, context: int, *, n_steps: int = 16,
                             seed: int = 0, clock: str = "wall") -> dict:
    """Seconds per generated character at batch 1 with `context` characters behind it.

    Three ways to draw the next character (chapter 6): re-run the whole window of the
    last `context` characters (what a model without memory must do); one position
    attending to a memory of `context` states, `model(x, mems=...)`, which re-projects
    their keys and values every step; one position with the key/value cache, which
    projects only itself. Median over `n_steps` steps, one untimed warm-up each; random
    weights and a random memory (the time does not depend on them).
    """
    B, M = 1, context
    torch.manual_seed(seed)
    model = TransformerXL(cfg.replace(mem_len=M, dropout=0.0, dropatt=0.0)).eval()
    H, D, C = cfg.n_head, cfg.d_head, cfg.d_model
    x = torch.randint(0, cfg.vocab_size, (B, 1))  # (B, 1): one new character
    window = torch.randint(0, cfg.vocab_size, (B, M))  # (B, M)
    state = {
        "mems": [torch.randn(B, M, C) for _ in model.blocks],  # (B, M, C)
        "cache": KVCache([torch.randn(B, H, M, D) for _ in model.blocks],
                         [torch.randn(B, H, M, D) for _ in model.blocks]),
    }

    def mems_step():
        state["mems"] = model(x, mems=state["mems"]).mems

    def cached_step():
        state["cache"] = forward_cached(model, x, state["cache"]).cache

    with torch.inference_mode():
        rerun = _median_s(lambda: model(window).logits[:, -1], n_steps, clock)
        mems_s = _median_s(mems_step, n_steps, clock)
        cache_s = _median_s(cached_step, n_steps, clock)
    return {"context": M, "rerun_s_per_char": rerun, "mems_s_per_char": mems_s,
            "cache_s_per_char": cache_s, "clock": clock,
            "threads": torch.get_num_threads()}
