"""Probe 21's evaluate findings (issue 31): a same_length window the header claimed
where it changes nothing (the sliding window's L, or a stream's T inputs, no more
than it), and a note that blamed '--mem-len 0' on a checkpoint whose own mem_len is
0."""

import pytest
from test_cli_faults import txl

PROG = "python -m txl_mini evaluate"


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
