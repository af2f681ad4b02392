"""Out-of-range values the command lines must refuse in one line, before any work,
leaving nothing behind (issue 31's second probe: values, bench, data offline;
subprocesses; each case failed before its fix)."""

import os
import subprocess
import sys

import pytest
from cli_text import words
from test_cli_faults import ENV, ROOT, one_line, tiny, txl

PROG = "python -m txl_mini"
HUGE = "100000000000000000000"  # 1e20: past torch's int64


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    """A corpus and a trained run."""
    d = tmp_path_factory.mktemp("values")
    (d / "text.txt").write_text(words(2000))
    assert txl("train", *tiny(str(d / "text.txt"), d / "r")).returncode == 0
    return d


# -- 3. --clamp-len and --shaw-clip out of range ---------------------------------------

@pytest.mark.parametrize("extra, line", [
    (["--clamp-len", HUGE], "--clamp-len must be <= 2,147,483,647 (-1: never "
     "clamps), got 100,000,000,000,000,000,000"),
    (["--pos-enc", "shaw", "--shaw-clip", HUGE], "--shaw-clip must be <= 2,147,483,647 "
     "(-1: L + M - 1), got 100,000,000,000,000,000,000"),
])
def test_a_huge_distance_is_refused_and_leaves_nothing(d, tmp_path, extra, line):
    """OverflowError / TypeError tracebacks, exit 1, and a run directory left with
    config.json (and an empty metrics.jsonl) that --resume tracebacks on again."""
    res = txl("train", *tiny(str(d / "text.txt"), tmp_path / "big"), *extra)
    assert one_line(res, 2) == f"{PROG} train: error: {line}"
    assert not (tmp_path / "big").exists()


def test_evaluate_refuses_a_huge_clamp_len(d):
    res = txl("evaluate", d / "r", "--clamp-len", HUGE, "--threads", "1")
    assert one_line(res, 2) == (
        f"{PROG} evaluate: error: --clamp-len must be <= 2,147,483,647 (-1: never "
        "clamps), got 100,000,000,000,000,000,000")


def test_the_memory_estimate_counts_the_shaw_table(d, tmp_path):
    """--shaw-clip 1000000000: 'RuntimeError: ... can't allocate memory: you tried to
    allocate 64000000064 bytes' traceback, an empty run directory left. The table (of
    k + 1 rows per layer) is most of the model, so the refusal names it."""
    res = txl("train", *tiny(str(d / "text.txt"), tmp_path / "big"), "--pos-enc",
              "shaw", "--shaw-clip", "1000000000")
    line = one_line(res, 2)
    assert line.startswith(f"{PROG} train: error: this needs roughly "), line
    assert "Shaw table" in line and "--shaw-clip" in line, line
    assert not (tmp_path / "big").exists()


# -- 2. a tiny --temperature -----------------------------------------------------------

@pytest.mark.parametrize("t", ["1e-45", "1e-300"])
def test_a_tiny_temperature_is_greedy(d, t):
    """'RuntimeError: probability tensor contains either inf, nan or element < 0'
    traceback, exit 1: logits / T overflowed float32. T -> 0 tends to greedy, the
    meaning of 0 itself."""
    argv = ["sample", d / "r", "--chars", "30", "--quiet", "--threads", "1"]
    greedy = txl(*argv, "--temperature", "0")
    res = txl(*argv, "--temperature", t, "--seed", "1")
    assert (res.returncode, res.stderr) == (0, "")
    assert res.stdout == greedy.stdout and len(res.stdout) == len("the ") + 30 + 1


# -- 5. a --distances far past --chars -------------------------------------------------

@pytest.mark.parametrize("far", ["3000", "100000000", "10000000000000000000000"])
def test_a_distance_past_the_corpus_is_refused_before_generating(tmp_path, far):
    """'--distances 100000000' took 31 s and 600 MB (the generator wrote a filler of
    that length) before 'no name fits that far apart'; 1e11 and 1e22 never ended."""
    res = subprocess.run([sys.executable, "-m", "txl_mini", "data", "offline", "--out",
                          tmp_path / "c.txt", "--chars", "2000", "--distances",
                          f"64,{far}"], env=ENV, text=True, capture_output=True,
                         timeout=20)
    assert one_line(res, 2) == (
        f"{PROG} data offline: error: --distances {far}: no name fits that far apart "
        "in 2,000 characters; lower it or raise --chars")
    assert list(tmp_path.iterdir()) == []


# -- 8. bench's memory ---------------------------------------------------------------

BENCH_SMALL = ["bench", "--threads", "1", "--quiet", "--rounds", "1", "--steps", "1",
               "--no-paper-shape", "--max-attn-len", "128", "--long-segments", "20"]


@pytest.mark.parametrize("argv, line", [
    (BENCH_SMALL + ["--batch", "1000000"],
     "training (--batch 1000000): this needs roughly "),
    (["bench", "--quick", "--threads", "1", "--quiet", "--eval-batch", "10000000"],
     "evaluation at attention length 800 (--eval-batch 10000000): this needs "
     "roughly "),
])
def test_bench_refuses_what_cannot_fit_before_the_work(argv, line):
    """'RuntimeError: ... can't allocate memory' traceback after 40 s of benchmarks
    (train's estimate said ~30 GB for --batch 5000): bench had no memory check."""
    res = subprocess.run([sys.executable, "-m", "txl_mini", *argv], env=ENV,
                         text=True, capture_output=True, timeout=120)
    got = one_line(res, 2)
    assert got.startswith(f"{PROG} bench: error: {line}"), got
    assert res.stdout == ""


# -- 7. bench --quick and --batch ------------------------------------------------------

def test_bench_quick_honours_a_given_batch():
    """'bench --quick --batch 99999999' printed 'training: ... batch 4', exit 0: --quick
    replaced --batch without a word, and --help did not say so."""
    res = txl("bench", "--quick", "--batch", "2", "--threads", "1", "--quiet",
              "--rounds", "1", "--steps", "1", "--max-attn-len", "128",
              "--long-segments", "20")
    assert res.returncode == 0, res.stderr
    assert "L = M = 64, batch 2\n" in res.stdout, res.stdout
    default = txl("bench", "--help").stdout
    assert "training batch size (default: 16; --quick: 4)" in " ".join(default.split())


# -- 9. --offline-chars with a corpus it does not size ---------------------------------

@pytest.mark.parametrize("corpus, what", [
    (["--corpus", "names"], "--corpus names is generated at its own size"),
    (["--corpus", "cue"], "--corpus cue is generated at its own size"),
    (["--path", "{d}/text.txt"], "--path {d}/text.txt is read whole"),
])
def test_offline_chars_with_another_corpus_is_refused(d, tmp_path, corpus, what):
    """'--corpus names --offline-chars 5000' (cue, --path FILE) trained on the whole
    corpus without a word about the option."""
    argv = [str(a).replace("{d}", str(d)) for a in corpus]
    res = txl("train", "--preset", "tiny", "--steps", "1", "--threads", "1",
              "--quiet", "--run-dir", tmp_path / "r", *argv, "--offline-chars", "5000")
    assert one_line(res, 2) == (
        f"{PROG} train: error: --offline-chars sizes the generated offline corpus; "
        f"{what.replace('{d}', str(d))}; drop it")
    assert not (tmp_path / "r").exists()


# -- 25. sample's corpus of a book checkpoint ------------------------------------------

def test_sample_names_a_book_checkpoints_corpus(tmp_path):
    """'(corpus: {'n_chars': 2000000, 'seed': 0, 'distanc)': the generator's settings,
    cut off at 40 characters, where evaluate says 'names'."""
    ckpt = os.path.join(ROOT, "book", "zoo", "ch6_xl_s0.pt")
    res = txl("sample", ckpt, "--chars", "5", "--threads", "1")
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines()[0] == (
        f"TransformerXL from {ckpt} (corpus: names); key/value cache")


# -- 26. the smaller ones ------------------------------------------------------------

def test_a_model_too_big_at_any_batch_is_blamed_on_its_size(d, tmp_path):
    """'--n-layer 10000000' (a huge --d-model, --d-head) was refused with 'lower
    --batch-size, --seg-len or --mem-len', though even one stream would not fit."""
    res = txl("train", *tiny(str(d / "text.txt"), tmp_path / "big"), "--n-layer",
              "10000000")
    line = one_line(res, 2)
    assert line.endswith("; lower the model's size (--d-model, --d-inner, --n-layer, "
                         "--n-head or --d-head)"), line  # its weights alone: 310 GiB
    assert "10,000,000 layers" in line and not (tmp_path / "big").exists()


@pytest.mark.parametrize("extra, line", [
    (["--seed", "-1"], "--seed must be between 0 and 9223372036854774783, got -1"),
    (["--seed", str(2**64)], "--seed must be between 0 and 9223372036854774783, got "
     f"{2**64}"),
    (["--distances", "64,256,64"], "--distances 64,256,64: 64 is given twice"),
])
def test_data_offline_refuses_what_train_refuses(tmp_path, extra, line):
    """'data offline --seed -1' (or 2**64) wrote a corpus train cannot make (train
    refuses such seeds); '--distances 64,64' listed distance 64 twice."""
    res = txl("data", "offline", "--out", tmp_path / "c.txt", "--chars", "2000", *extra)
    assert one_line(res, 2) == f"{PROG} data offline: error: {line}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("extra, line", [
    (["--vanilla"], "--no-cache: a vanilla checkpoint has no key/value cache; drop it"),
    (["--mode", "sliding"], "--no-cache: the sliding window has no key/value cache; "
     "drop it"),
    (["--mem-len", "0"], "--no-cache: with M=0 there is no memory to cache; drop it"),
])
def test_evaluate_refuses_no_cache_where_there_is_none(d, tmp_path, extra, line):
    """'evaluate VANILLA --no-cache' (the sliding window, no memory) evaluated as
    without it: an option silently a no-op, where evaluate refuses the others."""
    run = d / "r"
    if extra == ["--vanilla"]:
        run = tmp_path / "v"
        res = txl("train", *tiny(str(d / "text.txt"), run), "--vanilla")
        assert res.returncode == 0, res.stderr
        extra = []
    res = txl("evaluate", run, "--no-cache", "--threads", "1", *extra)
    assert one_line(res, 2) == f"{PROG} evaluate: error: {line}"
    assert res.stdout == ""


def test_data_stats_counts_bytes_as_bytes(tmp_path):
    """'data stats' of UTF-8 text said '14 chars' for the 12 characters of 'héllo
    wörld\\n': it counts bytes (as train reads a --path: one character per byte)."""
    f = tmp_path / "u.txt"
    f.write_text("héllo wörld\n", encoding="utf-8")
    res = txl("data", "stats", f)
    assert res.returncode == 0, res.stderr
    first, *rest = res.stdout.splitlines()
    assert first.startswith(f"{f}: 14 bytes, 2 words, 5 outside the text8 alphabet")
    assert rest[-1] == ("  not ASCII: train reads a file one byte per character, as "
                        "counted here; a byte outside a-z and A-Z becomes a space")


def test_resume_with_other_threads_notes_with_the_prefix(d, tmp_path):
    """'note: the run trained with --threads 1; ...' was the only line of train's
    without 'python -m txl_mini train: ' before it."""
    run = tmp_path / "p"
    assert txl("train", *tiny(str(d / "text.txt"), run, steps=3),
               "--pause-at", "2").returncode == 0
    res = txl("train", "--resume", run, "--threads", "2")
    assert res.returncode == 0, res.stderr
    assert res.stderr.startswith(f"{PROG} train: note: the run trained with --threads "
                                 "1; with 2 it continues, but not bitwise"), res.stderr


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_a_path_too_large_is_one_line(d, tmp_path, command):
    """A 3 GB --path of zeros printed the 'only 0% ... letters' warning, then the
    error that the file is too large: two lines for one fault. (A sparse file: no
    disk space.)"""
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.truncate(3 * 2**30)
    argv = (["train", "--preset", "tiny", "--run-dir", tmp_path / "r"]
            if command == "train" else ["evaluate", d / "r"])
    res = txl(*argv, "--path", big, "--threads", "1")
    assert one_line(res, 1) == (
        f"{PROG} {command}: error: {big} has 3,221,225,472 bytes, more than the "
        "1,000,000,000 a corpus file may have; cut it")
