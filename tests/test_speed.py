"""txl_mini.speed: the Table 9 timing (chapter 6). Structure exactly; timing only with
a wide margin."""

import pytest
import torch

from txl_mini.config import preset
from txl_mini.speed import eval_speed, format_table

KEYS = {"attn_len", "xl_s_per_char", "vanilla_s_per_char", "speedup", "seg_len",
        "batch_size", "device", "xl_chars_timed", "vanilla_chars_timed",
        "xl_positions_per_char", "vanilla_positions_per_char"}


@pytest.fixture(scope="module")
def rows():
    torch.set_num_threads(1)
    return eval_speed(preset("tiny"), [16, 512], n_predict=32, n_windows=3)


def test_rows_have_the_documented_structure(rows):
    assert [r["attn_len"] for r in rows] == [16, 512]
    for r in rows:
        assert set(r) == KEYS
        assert r["xl_s_per_char"] > 0 and r["vanilla_s_per_char"] > 0
        assert r["speedup"] == pytest.approx(
            r["vanilla_s_per_char"] / r["xl_s_per_char"])
        assert r["seg_len"] == 8 and r["batch_size"] == 1 and r["device"] == "cpu"
        assert r["xl_chars_timed"] == 32 and r["vanilla_chars_timed"] == 3
        # work per predicted character, counted: vanilla re-runs A positions,
        # XL runs one
        assert r["xl_positions_per_char"] == 1
        assert r["vanilla_positions_per_char"] == r["attn_len"]
    table = format_table(rows).splitlines()
    assert (len(table) == 3 and "speed-up" in table[0]
            and table[2].split()[0] == "512")


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
