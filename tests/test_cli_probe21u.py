"""Probe 21's evaluate findings (issue 31): a same_length window the header claimed
where it changes nothing (the sliding window's L, or a stream's T inputs, no more
than it), and a note that blamed '--mem-len 0' on a checkpoint whose own mem_len is
0."""

import json
from pathlib import Path

import pytest
from test_cli_faults import txl

PROG = "python -m txl_mini evaluate"
ZOO = Path(__file__).resolve().parent.parent / "book" / "zoo" / "ch4_xl_s0.pt"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A tiny --same-length run (L = M = 8), and m0.pt: the same weights saved by the
    library with mem_len 0 (train refuses the pair; the library does not)."""
    top = tmp_path_factory.mktemp("p21u")
    res = txl("train", "--preset", "tiny", "--offline-chars", "20000", "--eval-chars",
              "200", "--steps", "2", "--warmup", "1", "--threads", "1", "--quiet",
              "--same-length", "--run-dir", top / "same", cwd=top)
    assert res.returncode == 0, res.stderr
    from txl_mini.checkpoint import load_checkpoint, save_checkpoint
    from txl_mini.model import TransformerXL
    model, meta = load_checkpoint(top / "same" / "best.pt")
    bare = TransformerXL(model.cfg.replace(mem_len=0))
    bare.load_state_dict(model.state_dict())
    save_checkpoint(top / "m0.pt", bare, meta)
    return top


def evaluate(run, *argv):
    return txl("evaluate", run, "--threads", "1", "--quiet", *argv)


def note(window, keys, has):
    return (f"{PROG}: note: --same-length changes nothing here: it leaves each query "
            f"its last {window} keys ({keys}), and no query has more: {has}\n")


@pytest.mark.parametrize("seg_len", ["8", "4"])
def test_sliding_claims_no_window_no_longer_than_mem_len(runs, seg_len):
    """--mode sliding of a mem_len 8 checkpoint with L <= 8: each query already sees
    its whole window up to itself, yet the header said 'same_length window 8'."""
    run, has = runs / "same", f"the window has L={seg_len}"
    argv = ["--mode", "sliding", "--seg-len", seg_len, "--chars", "300"]
    own = evaluate(run, *argv)  # the checkpoint's own same_length: no note
    assert own.returncode == 0 and own.stderr == "", own.stderr
    assert f", sliding, L={seg_len}; corpus" in own.stdout, own.stdout
    typed = evaluate(run, *argv, "--same-length")
    assert typed.returncode == 0 and f", sliding, L={seg_len}; corpus" in typed.stdout
    assert typed.stderr == note(8, "the checkpoint's mem_len", has)
    out = json.loads(evaluate(run, *argv, "--same-length", "--json").stdout)
    off = json.loads(evaluate(run, *argv, "--no-same-length", "--json").stdout)
    assert (out["same_length"], out["window"], off["window"]) == (True, 0, 0)
    assert out["bpc"] == pytest.approx(off["bpc"], abs=1e-6)  # it changes nothing


def test_sliding_still_claims_a_window_that_limits(runs):
    res = evaluate(runs / "same", "--mode", "sliding", "--seg-len", "20", "--chars",
                   "300", "--same-length")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert ", sliding, L=20, same_length window 8; corpus" in res.stdout


@pytest.mark.skipif(not ZOO.exists(), reason="the book's zoo is not here")
def test_the_zoos_xl_checkpoint_in_its_own_window(tmp_path):
    """The finding: ch4_xl_s0 gave the same bpc with and without --same-length, and
    the header claimed 'same_length window 32' for a window of L=32."""
    res = txl("evaluate", ZOO, "--mode", "sliding", "--chars", "600", "--threads", "1",
              "--quiet", "--same-length", cwd=tmp_path)
    assert res.returncode == 0 and "same_length window" not in res.stdout, res.stdout
    assert res.stderr == note(32, "the checkpoint's mem_len", "the window has L=32")


def test_segments_claim_no_window_longer_than_the_stream(runs):
    """--mode segments: a stream of T <= M inputs holds every key in memory, so the
    window of M keys limits no query; with more text it does, and is claimed."""
    run = runs / "same"
    res = evaluate(run, "--chars", "6", "--same-length")
    assert res.returncode == 0, res.stderr
    assert ", segments, L=8, M=8, key/value cache; corpus" in res.stdout
    assert res.stderr == note(8, "M", "each stream has 5 inputs")
    out = json.loads(evaluate(run, "--chars", "6", "--json").stdout)
    off = json.loads(evaluate(run, "--chars", "6", "--no-same-length", "--json").stdout)
    assert (out["same_length"], out["window"]) == (True, 0)
    assert out["bpc"] == pytest.approx(off["bpc"], abs=1e-6)
    res = evaluate(run, "--chars", "300", "--same-length")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert ", segments, L=8, M=8, same_length window 8" in res.stdout


def test_the_note_names_the_checkpoints_mem_len_0(runs):
    """A same_length checkpoint of mem_len 0, --mode segments without --mem-len: the
    note said 'with --mem-len 0', an option never typed."""
    res = evaluate(runs / "m0.pt", "--chars", "300")
    assert res.returncode == 0 and ", segments, L=8, M=0; corpus" in res.stdout
    assert res.stderr == (
        f"{PROG}: note: {runs}/m0.pt was trained with same_length, which needs "
        "memory: with its mem_len 0 it runs without it (each query sees the whole "
        "segment up to itself)\n")
    typed = evaluate(runs / "m0.pt", "--chars", "300", "--mem-len", "0")
    assert typed.returncode == 0 and "with --mem-len 0 it runs" in typed.stderr


def test_the_refusal_names_the_checkpoints_mem_len_0(runs):
    """The same checkpoint with --same-length typed: the refusal blamed '--mem-len
    0' too."""
    res = evaluate(runs / "m0.pt", "--chars", "300", "--same-length")
    assert res.returncode == 2 and res.stderr == (
        f"{PROG}: error: same_length needs memory: this checkpoint's mem_len is 0, so "
        "every query would see only itself; drop --same-length or give --mem-len > 0\n")
    typed = evaluate(runs / "m0.pt", "--same-length", "--mem-len", "0")
    assert typed.returncode == 2 and ": with --mem-len 0 every" in typed.stderr
