"""FLOP count and timing of Table 9 with the cache (txl_mini.speed_kv, chapter 6)."""

import pytest

from txl_mini.config import ModelConfig, preset
from txl_mini.speed_kv import (
    flops_per_char,
    format_rows,
    generation_time_per_char,
    time_per_char,
)


def test_flops_hand_computed():
    """N = 1, C = 2, H*D = 2, d_inner = 4, V = 3, A = 4, L = 2, counted by hand.

    Per position: W_q, W_o 2*2*2 each = 16, W_ke and W_v 16, feed-forward 2*2*2*4 = 32;
    head 2*2*3 = 12; attention products 2*2 = 4 FLOPs per key and product.
    - XL + cache: 16 + 16 + 32 + 3 products * 4 keys * 4 = 48 -> 112, + head = 124
    - XL, no cache: K = 6 states per 2 chars: W_ke, W_v 16 * 3 = 48, W_kr R 8 * 3 = 24
      instead of 16 -> 16 + 48 + 24 + 32 + 48 = 168, + head = 180
    - vanilla: 4 positions * 64 = 256, 2 products * 4 * (1+2+3+4 = 10 pairs) = 80,
      + head = 348
    """
    cfg = ModelConfig(n_layer=1, n_head=1, d_head=2, d_model=2, d_inner=4, vocab_size=3)
    f = flops_per_char(cfg, attn_len=4, seg_len=2)
    assert f == {"xl_cache": 124, "xl_no_cache": 180, "vanilla": 348}
    f2 = flops_per_char(cfg.replace(n_layer=2), attn_len=4, seg_len=2)
    assert f2 == {"xl_cache": 124 + 112, "xl_no_cache": 180 + 168, "vanilla": 348 + 336}


def test_flops_at_the_papers_shape():
    """At C = 512 the ratio vanilla / XL-with-cache exceeds the paper's column at
    every A, and the cache saves most where A / L is largest."""
    cfg = preset("text8_base")
    paper = {800: 363, 1800: 773, 2800: 1409, 3800: 1874}
    for A, x in paper.items():
        f = flops_per_char(cfg, A, 512)
        assert f["vanilla"] / f["xl_cache"] > x
        assert f["xl_no_cache"] > f["xl_cache"]
    short = flops_per_char(cfg, 800, 80)
    # (A + L) / L = 11 re-projections of keys, values and R nearly triple the work
    assert short["xl_no_cache"] / short["xl_cache"] > 2.5


def test_time_per_char_runs_and_reports():
    cfg = preset("tiny")
    row = time_per_char(cfg, 16, seg_len=4, n_segments=2, n_windows=2, clock="cpu")
    for key in ("xl_s_per_char", "xl_cache_s_per_char", "vanilla_s_per_char"):
        assert row[key] > 0
    assert row["speedup"] == pytest.approx(
        row["vanilla_s_per_char"]
        / min(row["xl_s_per_char"], row["xl_cache_s_per_char"])
    )
    assert row["paper_speedup"] is None
    assert row["seg_len"] == 4 and row["clock"] == "cpu"
    assert format_rows([row]).count("\n") == 1


def test_generation_time_per_char_runs():
    row = generation_time_per_char(preset("tiny"), 12, n_steps=2, clock="cpu")
    assert row["context"] == 12
    assert all(row[k] > 0 for k in ("rerun_s_per_char", "mems_s_per_char",
                                    "cache_s_per_char"))


def test_time_per_char_own_cache_segment_length():
    row = time_per_char(preset("tiny"), 16, seg_len=8, cache_seg_len=2, n_segments=1,
                        n_windows=1, clock="cpu")
    assert (row["seg_len"], row["cache_seg_len"]) == (8, 2)
