"""Probe 20's option-parsing findings (fix-31r): a mistyped option or command got no
hint unless '_' stood for '-'; --no-progress was bench's alone; and an option
pasted from a web page, its '--' turned into a dash ('—chars'), was taken as the
checkpoint, and the words after it were blamed."""

import pytest
from cli_text import words
from test_cli_faults import one_line, txl

PROG = "python -m txl_mini"


@pytest.mark.parametrize("argv, hint", [
    (["train", "--stpes", "5"], "--stpes 5 (did you mean --steps?)"),
    (["train", "--seg-lne", "5"], "--seg-lne 5 (did you mean --seg-len?)"),
    (["train", "--bach-size", "4"], "--bach-size 4 (did you mean --batch-size?)"),
    (["train", "--n-layers", "2"], "--n-layers 2 (did you mean --n-layer?)"),
    (["train", "--dmodel", "16"], "--dmodel 16 (did you mean --d-model?)"),
    (["train", "--Steps=3"], "--Steps=3 (did you mean --steps?)"),
    (["sample", "x.pt", "--temprature", "0.5"],
     "--temprature 0.5 (did you mean --temperature?)"),
    (["sample", "x.pt", "--topk", "4"], "--topk 4 (did you mean --top-k?)"),
    (["evaluate", "x.pt", "--chras", "4"], "--chras 4 (did you mean --chars?)"),
    (["data", "offline", "--dep-out", "x", "--out", "y"],
     "--dep-out x (did you mean --deps-out?)"),
    (["train", "--stpes", "5", "--mem_len", "4"],
     "--stpes 5 --mem_len 4 (did you mean --steps, --mem-len?)"),
    (["train", "--bogus", "4"], "--bogus 4 (see --help)"),  # nothing close
    (["bench", "--mem_len", "4"], "--mem_len 4 (see --help)"),  # bench has none
])
def test_a_near_miss_names_the_option_meant(tmp_path, argv, hint):
    res = txl(*argv, cwd=tmp_path)
    prog = " ".join(argv[:2]) if argv[0] == "data" else argv[0]
    assert one_line(res, 2) == (f"{PROG} {prog}: error: unrecognized arguments: "
                                f"{hint}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name, hint", [
    ("Train", "did you mean train?"), ("EVALUATE", "did you mean evaluate?"),
    ("evalute", "did you mean evaluate?"), ("sampel", "did you mean sample?"),
    ("bogus", "train, evaluate, sample, data, bench; --help lists them"),
])
def test_a_near_miss_names_the_command_meant(tmp_path, name, hint):
    res = txl(name, "--help", cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG}: error: unknown command {name!r} ({hint})"
    assert res.stdout == ""


def test_no_progress_is_quiet_in_every_command(paused, tmp_path):
    """bench's alias of --quiet; train, evaluate, sample and data text8 said
    'unrecognized arguments: --no-progress'."""
    (tmp_path / "t.txt").write_text(words(2000))
    run = ["train", "--preset", "tiny", "--corpus", "offline", "--path", "t.txt",
           "--steps", "2", "--warmup", "1", "--eval-chars", "60", "--threads", "1"]
    said = {}
    for quiet in ("--quiet", "--no-progress"):
        for argv in (run + ["--run-dir", quiet[2:]],
                     ["evaluate", paused, "--chars", "60"],
                     ["sample", paused, "--chars", "5", "--seed", "1"]):
            res = txl(*argv, "--threads", "1", quiet, cwd=tmp_path)
            assert res.returncode == 0, res.stderr
            said.setdefault(argv[0], []).append(res.stderr)
    assert all(a == b for a, b in said.values()), said
    assert said["sample"] == ["", ""]
    res = txl("data", "text8", "--path", "no-such.zip", "--no-progress", cwd=tmp_path)
    assert one_line(res, 2).startswith(f"{PROG} data text8: error: no such file: "
                                       "no-such.zip.")


@pytest.mark.parametrize("argv, line", [
    (["evaluate", "\u2014chars", "300", "plain"],
     "evaluate: error: \u2014chars: starts with a '\u2014' (U+2014), not '--'; "
     "type --chars"),
    (["evaluate", "plain", "\u2013chars=300"],
     "evaluate: error: \u2013chars=300: starts with a '\u2013' (U+2013), not '--'; "
     "type --chars=300"),
    (["train", "\u2212\u2212steps", "3"],
     "train: error: \u2212\u2212steps: starts with a '\u2212' (U+2212), not '--'; "
     "type --steps"),
    (["sample", "x.pt", "\u2010h"],
     "sample: error: \u2010h: starts with a '\u2010' (U+2010), not '--'; type -h"),
    (["data", "offline", "--out", "o", "\u2015seed", "3"],
     "data offline: error: \u2015seed: starts with a '\u2015' (U+2015), not '--'; "
     "type --seed"),
])
def test_a_pasted_dash_is_named_before_parsing(tmp_path, argv, line):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG} {line}"
    assert list(tmp_path.iterdir()) == []


def test_an_option_value_may_start_with_a_dash(paused, tmp_path):
    """Only a word that begins an argument is refused: --prompt's text (and --out's
    file name) after their option are values, checked as before."""
    bad = "error: --prompt: '\u2014' is not in text8's alphabet"
    for prompt in (["--prompt", "\u2014the"], ["--prom", "\u2014the"],
                   ["--prompt=\u2014the"]):
        assert bad in one_line(txl("sample", paused, *prompt), 2)
    res = txl("data", "offline", "--chars", "1000", "--out", "\u2014o.txt",
              cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "\u2014o.txt").stat().st_size == 1000
    res = txl("evaluate", paused, "--", "\u2014x", cwd=tmp_path)  # past '--'
    assert one_line(res, 2).endswith("unrecognized arguments: \u2014x (see --help)")
