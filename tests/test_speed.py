"""txl_mini.speed: the Table 9 timing. Structure exactly; timing only with
a wide margin."""

import time

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from txl_mini.config import preset
from txl_mini.fast_attention import padded
from txl_mini.kv_cache import forward_cached
from txl_mini.model import TransformerXL, VanillaTransformer
from txl_mini.speed import eval_speed, flops_per_char, format_table

KEYS = {"attn_len", "xl_s_per_char", "xl_cache_s_per_char", "vanilla_s_per_char",
        "speedup", "cache_used", "speedup_no_cache", "flops_per_char", "flop_ratio",
        "paper_speedup", "seg_len", "batch_size", "device", "xl_chars_timed",
        "vanilla_chars_timed", "xl_positions_per_char", "vanilla_positions_per_char"}


@pytest.fixture(scope="module")
def rows():
    torch.set_num_threads(1)
    return eval_speed(preset("tiny"), [16, 512], n_predict=32, n_windows=3)


def test_rows_have_the_documented_structure(rows):
    assert [r["attn_len"] for r in rows] == [16, 512]
    for r in rows:
        assert set(r) == KEYS
        assert r["xl_s_per_char"] > 0 and r["vanilla_s_per_char"] > 0
        fastest = min(r["xl_s_per_char"], r["xl_cache_s_per_char"])
        assert r["speedup"] == pytest.approx(r["vanilla_s_per_char"] / fastest)
        assert r["cache_used"] == (r["xl_cache_s_per_char"] < r["xl_s_per_char"])
        assert r["speedup_no_cache"] == pytest.approx(
            r["vanilla_s_per_char"] / r["xl_s_per_char"])
        f = r["flops_per_char"]
        assert r["flop_ratio"] == pytest.approx(
            f["vanilla"] / f["xl_cache" if r["cache_used"] else "xl"])
        assert r["paper_speedup"] is None
        assert r["seg_len"] == 8 and r["batch_size"] == 1 and r["device"] == "cpu"
        assert r["xl_chars_timed"] == 32 and r["vanilla_chars_timed"] == 3
        # work per predicted character, counted: vanilla re-runs A positions,
        # XL runs one
        assert r["xl_positions_per_char"] == 1
        assert r["vanilla_positions_per_char"] == r["attn_len"]
    table = format_table(rows).splitlines()
    assert (len(table) == 3 and "speed-up" in table[0]
            and table[2].split()[0] == "512")
    # 'of count': the measured speed-up over the counted FLOP ratio, per length
    for line, r in zip(table[1:], rows):
        assert line.split()[6] == f"{r['speedup'] / r['flop_ratio']:.2f}"
    assert eval_speed(preset("tiny"), [8], n_predict=8, n_windows=1,
                      cache=False)[0]["xl_cache_s_per_char"] is None


def test_speedup_grows_with_attention_length(rows):
    # 32x longer windows: vanilla work per char grows >= 32x, XL's barely. A factor of 2
    # is a margin wide enough for a busy machine (measured: about 10x).
    short, long = rows
    assert long["speedup"] > 2 * short["speedup"]
    assert long["speedup"] > 3


def test_batch_divides_time_and_counts():
    rows = eval_speed(preset("tiny"), [8], batch_size=3, n_predict=8, n_windows=1,
                      seg_len=4)
    r = rows[0]
    assert r["seg_len"] == 4 and r["batch_size"] == 3
    assert r["xl_chars_timed"] == 3 * 8 and r["vanilla_chars_timed"] == 3


@pytest.mark.parametrize("bad", [dict(attn_lens=[]), dict(attn_lens=[0]),
                                 dict(attn_lens=[8], batch_size=0),
                                 dict(attn_lens=[8], n_windows=0)])
def test_bad_arguments_raise(bad):
    with pytest.raises(ValueError):
        eval_speed(preset("tiny"), **bad)


@pytest.mark.parametrize("A, L", [(4, 8), (8, 8), (24, 8), (40, 16)])
def test_flops_per_char_counts_what_each_path_computes(A, L):
    """The count equals torch's own count of the matrix products each path runs, plus
    the two products inside scaled_dot_product_attention, which torch's counter does not
    see on a CPU: XL's over all K = A + L keys, the causal vanilla's over (A + 1) / 2
    keys on average. A < L, A = L and A > L (M = A, the Table 9 setting)."""
    torch.manual_seed(0)
    cfg = preset("tiny", dropout=0.0)
    P, N = cfg.n_head * cfg.d_head, cfg.n_layer
    xl = TransformerXL(cfg.replace(mem_len=A, same_length=True)).eval()
    vanilla = VanillaTransformer(cfg.replace(seg_len=A)).eval()
    x = torch.randint(0, cfg.vocab_size, (1, L))
    counted = {}
    with torch.inference_mode():
        mems, cache = None, None
        for _ in range(A // L + 2):  # memory and cache full: A states
            mems = xl(x, mems=mems).mems
            cache = forward_cached(xl, x, cache).cache
        assert mems[0].shape[1] == cache.length == A
        for name, fn, per in [
                ("xl", lambda: xl(x, mems=mems), L),
                ("xl_cache", lambda: forward_cached(xl, x, cache), L),
                ("vanilla", lambda: vanilla(torch.zeros(1, A, dtype=torch.long)), 1)]:
            counter = FlopCounterMode(display=False)
            with counter:
                fn()
            counted[name] = counter.get_total_flops() / per
    f = flops_per_char(cfg, A, L)
    sdpa_xl = N * 2 * 2 * P * (A + L)
    # computed but not counted: q.r's columns beyond rel_shift's one pad (`padded`)
    pad = N * 2 * P * (padded(A + L + 1) - (A + L + 1))
    assert pad > 0
    assert f["xl"] == pytest.approx(counted["xl"] + sdpa_xl - pad, rel=1e-12)
    assert f["xl_cache"] == pytest.approx(counted["xl_cache"] + sdpa_xl - pad,
                                          rel=1e-12)
    sdpa_vanilla = N * 2 * 2 * P * A * (A + 1) / 2
    assert f["vanilla"] == pytest.approx(counted["vanilla"] + sdpa_vanilla, rel=1e-12)
    # the cache saves the re-projection of A states per segment, and nothing else
    saved = N * (4 + 2) * cfg.d_model * P * (A + L) / L - N * 4 * cfg.d_model * P
    assert f["xl"] - f["xl_cache"] == pytest.approx(saved)


def test_clock_is_what_times_every_call():
    # a clock that advances one "second" per reading: every timed call lasts exactly
    # 1, so each path's time per character is 1 / (characters per call)
    ticks = iter(range(10**6))
    rows = eval_speed(preset("tiny"), [8], n_predict=8, n_windows=2, seg_len=4,
                      clock=lambda: float(next(ticks)))
    r = rows[0]
    assert r["xl_s_per_char"] == r["xl_cache_s_per_char"] == 1 / 4
    assert r["vanilla_s_per_char"] == 1.0
    # the CPU time of this thread is a clock too
    cpu = eval_speed(preset("tiny"), [8], n_predict=8, n_windows=1,
                     clock=time.thread_time)[0]
    assert cpu["xl_s_per_char"] > 0 and cpu["vanilla_s_per_char"] > 0
