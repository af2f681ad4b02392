"""Issue 31's third probe of the command lines: torchrun's variables, what evaluate
prints of a same_length checkpoint it runs without memory, bench's --max-attn-len,
and one exit status per kind of fault (subprocesses; each case failed before its
fix)."""

import json
import subprocess
import sys

import pytest
from cli_text import words
from test_cli_faults import ENV, one_line, tiny, txl

PROG = "python -m txl_mini"


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    """A corpus, a run trained with same_length, and a run paused at step 2 of 4 on a
    text of its own (a test changes that text)."""
    d = tmp_path_factory.mktemp("values2")
    (d / "text.txt").write_text(words(2000))
    (d / "own.txt").write_text(words(2000))
    assert txl("train", *tiny(str(d / "text.txt"), d / "same"),
               "--same-length").returncode == 0
    assert txl("train", *tiny(str(d / "own.txt"), d / "paused", steps=4),
               "--pause-at", "2").returncode == 0
    return d


def with_env(env: dict, *argv):
    return subprocess.run([sys.executable, "-m", "txl_mini", *map(str, argv)],
                          env=dict(ENV, **env), text=True, capture_output=True,
                          timeout=300)


# -- A. torchrun's variables -----------------------------------------------------------

@pytest.mark.parametrize("env, line", [
    ({"WORLD_SIZE": "0"}, "WORLD_SIZE='0' in the environment: no process would run "
     "(torchrun sets it to 1 or more; unset it for one process)"),
    ({"LOCAL_RANK": "x"}, "LOCAL_RANK='x' in the environment is not a rank "
     "(torchrun sets it; unset it for one process)"),
    ({"WORLD_SIZE": "2"}, "WORLD_SIZE=2 in the environment, but RANK is not set "
     "(torchrun sets both; unset WORLD_SIZE for one process)"),
    ({"WORLD_SIZE": "2", "RANK": "0"}, "WORLD_SIZE=2 in the environment, but "
     "MASTER_ADDR is not set (torchrun sets both; unset WORLD_SIZE for one process)"),
    ({"WORLD_SIZE": "2", "RANK": "5", "MASTER_ADDR": "localhost",
      "MASTER_PORT": "29500"}, "RANK='5' in the environment is not a rank below "
     "WORLD_SIZE=2 (torchrun sets both; unset them for one process)"),
])
def test_torchruns_variables_are_checked_in_one_line(d, tmp_path, env, line):
    """WORLD_SIZE=0 trained as one process, exit 0; LOCAL_RANK=x was 'not a number of
    processes'; WORLD_SIZE=2 without RANK gave torch's 'Error initializing
    torch.distributed using env:// rendezvous: environment variable RANK expected,
    but not set', exit 1 (and RANK=5 of 2 waited for the other ranks)."""
    res = with_env(env, "train", *tiny(str(d / "text.txt"), tmp_path / "r"))
    assert one_line(res, 2) == f"{PROG} train: error: {line}"
    assert not (tmp_path / "r").exists()


# -- B. a same_length checkpoint without memory ----------------------------------------

def test_evaluate_says_it_drops_same_length_without_memory(d):
    """`evaluate RUN --mem-len 0` of a same_length checkpoint evaluated without
    same_length and printed only 'M=0': nothing said the checkpoint's setting was
    dropped."""
    res = txl("evaluate", d / "same", "--mem-len", "0", "--quiet")
    assert res.returncode == 0 and "M=0" in res.stdout, res.stderr
    assert res.stderr == (
        f"{PROG} evaluate: note: {d}/same/best.pt was trained with same_length, which "
        "needs memory: with --mem-len 0 it runs without it (each query sees the "
        "whole segment up to itself)\n")
    out = json.loads(txl("evaluate", d / "same", "--mem-len", "0", "--json").stdout)
    assert (out["mem_len"], out["same_length"], out["window"]) == (0, False, 0)


@pytest.mark.parametrize("seg_len, window", [(None, 0), ("20", 8)])
def test_the_sliding_windows_json_says_what_each_query_sees(d, seg_len, window):
    """`evaluate RUN --mode sliding --json` said mem_len 0 and same_length true: the
    pair that means one key per query. The window ran with the checkpoint's own
    same_length window of mem_len = 8 keys: the JSON says so, and so does the text;
    in a window of L = 8 it limits nothing, so none is claimed (probe 21u)."""
    extra = ["--seg-len", seg_len] if seg_len else []
    res = txl("evaluate", d / "same", "--mode", "sliding", "--json", *extra)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert (out["mem_len"], out["same_length"], out["window"]) == (0, True, window)
    res = txl("evaluate", d / "same", "--mode", "sliding", "--quiet", *extra)
    L = seg_len or 8
    claim = f", same_length window {window}" if window else ""
    assert f", sliding, L={L}{claim};" in res.stdout, res.stdout


# -- C. bench --max-attn-len ---------------------------------------------------------

def test_bench_refuses_an_attention_length_it_never_runs():
    """`bench --max-attn-len 100000000` ran the lengths up to 3,800 and said nothing
    of the cap. (A huge --eval-batch too: the unfixed bench refused that, naming
    3,800, in a second instead of running for minutes.)"""
    res = txl("bench", "--quick", "--threads", "1", "--quiet", "--max-attn-len",
              "100000000", "--eval-batch", "100000000")
    assert one_line(res, 2) == (
        f"{PROG} bench: error: --max-attn-len must be <= 3,800, the longest "
        "attention length bench runs (of 128, 512, 800, 1,800, 2,800, 3,800), got "
        "100,000,000")
    assert res.stdout == ""


# -- D. one exit status per kind of fault --------------------------------------------

def test_a_changed_recorded_text_is_exit_2_in_train_as_in_evaluate(d):
    """The same fault, bad input the user can fix: train --resume exited 1 (a
    DataError), evaluate 2."""
    (d / "own.txt").write_text(words(2000).replace("a", "e"))
    res = txl("train", "--resume", d / "paused")
    assert one_line(res, 2).startswith(
        f"{PROG} train: error: the corpus differs from the one {d}/paused was trained ")
    res = txl("evaluate", d / "paused", "--quiet")
    assert one_line(res, 2).startswith(f"{PROG} evaluate: error: {d}/own.txt is not ")


@pytest.mark.parametrize("argv, line", [
    (["data", "stats", "{t}"],
     "data stats: error: {t} is a directory; give a text file"),
    (["train", *tiny("{t}", "{t}/r")],
     "train: error: --path {t} is a directory; give a text file"),
    (["evaluate", "{d}/same", "--path", "{t}"],
     "evaluate: error: --path {t} is a directory; give a text file"),
])
def test_a_directory_for_a_text_file_is_exit_2(d, tmp_path, argv, line):
    """'cannot read DIR: not a regular file', exit 1, as for a failing disk."""
    fill = {"{t}": str(tmp_path), "{d}": str(d)}

    def filled(s):
        for k, v in fill.items():
            s = s.replace(k, v)
        return s

    res = txl(*map(filled, argv))
    assert one_line(res, 2) == f"{PROG} {filled(line)}"
    assert list(tmp_path.iterdir()) == []


def test_data_offline_says_its_corpus_is_complete_when_stdout_fails(tmp_path):
    """`data offline --out F >/dev/full`: 'cannot write to standard output: No space
    left on device', exit 1, and F complete: nothing said it was. The exit stays 1
    (what was asked for was not all shown, as for every command), and the line
    says what was written."""
    out = tmp_path / "c.txt"
    with open("/dev/full", "w") as full:
        res = subprocess.run([sys.executable, "-m", "txl_mini", "data", "offline",
                              "--chars", "5000", "--out", str(out), "--deps-out",
                              str(tmp_path / "d.tsv")], env=ENV, text=True,
                             stdout=full, stderr=subprocess.PIPE, timeout=300)
    assert one_line(res, 1) == (
        f"{PROG} data offline: error: cannot write to standard output: No space "
        f"left on device; {out} and {tmp_path / 'd.tsv'} are written and complete")
    assert len(out.read_text()) == 5000


def test_sample_refuses_a_top_k_over_the_vocabulary(d):
    """`sample RUN --top-k 100` of a 27-symbol model drew from all 27, silently."""
    res = txl("sample", d / "same", "--top-k", "100", "--chars", "5")
    assert one_line(res, 2) == (f"{PROG} sample: error: --top-k must be <= 27, the "
                                "checkpoint's vocabulary size, got 100")
    assert res.stdout == ""
    res = txl("sample", d / "same", "--top-k", "27", "--chars", "5", "--quiet")
    assert res.returncode == 0 and len(res.stdout) == len("the ") + 5 + 1
