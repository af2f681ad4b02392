"""Probe 19b's findings (fix-31q): a resumed run's refusal named --fast-attn for a
typed --no-fast-attn; a --path given to resume a run of the generated offline corpus
was told to give 'the text it trained on with --path FILE' (it read none); evaluate
cut --chars 1000 into 400 streams of 2 and scored 400 of its 999 characters, where
train refuses streams too short for a segment; and the official code's --mem_len
was only 'unrecognized arguments'."""

import pytest
from test_cli_faults import one_line, txl

PROG = "python -m txl_mini"
RUN = ["--preset", "tiny", "--corpus", "offline", "--offline-chars", "80000",
       "--warmup", "1", "--eval-chars", "60", "--threads", "1", "--quiet"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A run of the generated offline corpus (no file: config.json's path null),
    paused at step 1 of 2; its valid split has 4,000 characters, L=8."""
    d = tmp_path_factory.mktemp("gen") / "r"
    res = txl("train", *RUN, "--steps", "2", "--pause-at", "1", "--run-dir", d)
    assert res.returncode == 0, res.stderr
    return d


@pytest.mark.parametrize("typed, names", [
    *[([t], t) for t in ("--no-fast-attn", "--no-tie-weights", "--no-same-length",
                         "--no-untie-r", "--fast-attn")],
    (["--untie-r", "--no-fast-attn", "--lr", "0.1"], "--no-fast-attn, --lr, --untie-r"),
    (["--fast-attn", "--no-fast-attn"], "--fast-attn, --no-fast-attn"),  # each one
    (["--no-fast-attn", "--fast-attn"], "--no-fast-attn, --fast-attn"),  # (fix-31s)
])
def test_resume_names_the_spelling_typed(run, typed, names):
    res = txl("train", "--resume", run, *typed)
    assert one_line(res, 2) == (f"{PROG} train: error: --resume continues the run "
                                f"with its own settings; drop {names}")


def test_resume_of_the_generated_corpus_says_drop_path(run, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("the quick brown fox jumps over the lazy dog. " * 400)
    before = (run / "config.json").read_text()
    res = txl("train", "--resume", run, "--path", other, "--threads", "1", "--quiet")
    assert one_line(res, 2) == (f"{PROG} train: error: {run} trained on the generated "
                                "offline corpus, not a file; drop --path")
    assert (run / "config.json").read_text() == before
    assert sorted(p.name for p in run.iterdir()) == ["config.json", "last.pt"]


def evaluate(run, *argv):
    return txl("evaluate", run / "last.pt", "--threads", "1", "--quiet", *argv)


@pytest.mark.parametrize("argv, line", [
    (["--chars", "1000", "--batch-size", "400"], "--chars 1000 with --batch-size 400: "
     "400 streams of 2, too short for segments of 8 (need > 8 per stream); lower "
     "--batch-size or raise --chars"),
    (["--chars", "17", "--batch-size", "2"], "--chars 17 with --batch-size 2: 2 "
     "streams of 8, too short for segments of 8 (need > 8 per stream); lower "
     "--batch-size or raise --chars"),
    (["--batch-size", "500"], "--batch-size 500: the valid split's 4,000 characters "
     "make 500 streams of 8, too short for segments of 8 (need > 8 per stream); "
     "lower --batch-size"),
])
def test_evaluate_refuses_streams_too_short_for_a_segment(run, argv, line):
    res = evaluate(run, *argv)
    assert one_line(res, 2) == f"{PROG} evaluate: error: {line}"
    assert res.stdout == ""


@pytest.mark.parametrize("argv, scored", [
    (["--chars", "18", "--batch-size", "2"], 16),  # 2 streams of 9 = L + 1
    (["--batch-size", "444"], 444 * 8),  # 4,000 // 444 = 9: 4 left over, as before
    (["--chars", "2"], 1),  # one stream skips nothing: as before
    (["--chars", "1000", "--batch-size", "400", "--mode", "sliding"], 999),
])
def test_evaluate_keeps_what_skips_nothing_more(run, argv, scored):
    res = evaluate(run, *argv)
    assert res.returncode == 0, res.stderr
    chars = "character" if scored == 1 else "characters"
    assert f" bpc over {scored:,} {chars} in " in res.stdout


@pytest.mark.parametrize("argv, hint", [
    (["train", "--mem_len", "4"], "--mem_len 4 (did you mean --mem-len?)"),
    (["train", "--run_dir", "r", "--batch_size=4"],
     "--run_dir r --batch_size=4 (did you mean --run-dir, --batch-size?)"),
    (["evaluate", "x.pt", "--mem_len", "4"], "--mem_len 4 (did you mean --mem-len?)"),
    (["sample", "x.pt", "--top_k", "4"], "--top_k 4 (did you mean --top-k?)"),
    (["data", "offline", "--out", "o", "--deps_out", "d"],
     "--deps_out d (did you mean --deps-out?)"),
    (["bench", "--mem_len", "4"], "--mem_len 4 (see --help)"),  # bench has none
    (["train", "--no_such", "4"], "--no_such 4 (see --help)"),
])
def test_the_official_codes_spelling_is_pointed_to(tmp_path, argv, hint):
    res = txl(*argv, cwd=tmp_path)
    prog = " ".join(argv[:2]) if argv[0] == "data" else argv[0]
    assert one_line(res, 2) == (f"{PROG} {prog}: error: unrecognized arguments: "
                                f"{hint}")
    assert list(tmp_path.iterdir()) == []
