"""Probe 22a's option findings (fix-31w): `--OPT=--` (Python 3.11's argparse leaves
[] for it: tracebacks, `--mode []` evaluated with exit 0, `"precision": []` saved so
--resume refused the run for ever) now refused for every option of every command;
`--no-layer`, `--nohead` offered --n-layer, --n-head again, and every spelling of
--no-overwrite told that leaving out --overwrite is the default; `bench --quick
--paper-shape` no longer told leaving out --no-paper-shape is the default (--quick
never runs the paper's shape); a trailing '--' accepted by every command, and `-h`
after '--' told options go before it."""

import pytest
from test_cli_faults import one_line, txl

PROG = "python -m txl_mini"
TINY = ["--preset", "tiny", "--steps", "2", "--eval-chars", "50", "--offline-chars",
        "5000", "--quiet", "--threads", "1"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A finished tiny run (its folder)."""
    d = tmp_path_factory.mktemp("run") / "a"
    res = txl("train", *TINY, "--run-dir", d)
    assert res.returncode == 0, res.stderr
    return d


def not_a_value(prog, opt):
    return (f"{PROG} {prog}: error: {opt}=--: '--' is not a value (it only ends the "
            f"options); give {opt} a value or leave it out")


@pytest.mark.parametrize("argv, prog, opt", [
    (["sample", "x.pt", "--prompt=--"], "sample", "--prompt"),
    (["sample", "x.pt", "--chars=--"], "sample", "--chars"),
    (["evaluate", "x.pt", "--mode=--", "--quiet"], "evaluate", "--mode"),
    (["evaluate", "x.pt", "--path=--"], "evaluate", "--path"),
    (["evaluate", "x.pt", "--device=--"], "evaluate", "--device"),
    (["evaluate", "x.pt", "--corpus=--"], "evaluate", "--corpus"),
    (["train", "--steps=--", "--run-dir", "q"], "train", "--steps"),
    (["train", "--preset=--", "--run-dir", "q"], "train", "--preset"),
    (["train", "--lr=--", "--run-dir", "q"], "train", "--lr"),
    (["data", "offline", "--out", "o", "--distances=--"], "data offline",
     "--distances"),
    (["data", "offline", "--out", "o", "--seed=--"], "data offline", "--seed"),
    (["data", "text8", "--path=--"], "data text8", "--path"),
    (["bench", "--quick", "--rounds=--"], "bench", "--rounds"),
])
def test_a_dash_dash_value_is_refused(tmp_path, argv, prog, opt):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == not_a_value(prog, opt)
    assert res.stdout == "" and list(tmp_path.iterdir()) == []


def test_precision_dash_dash_saves_nothing_a_resume_refuses(tmp_path):
    """`"precision": []` in config.json made every --resume of the run refused."""
    res = txl("train", *TINY, "--precision=--", "--pause-at", "2", "--save-every",
              "1", "--run-dir", "r", cwd=tmp_path)
    assert one_line(res, 2) == not_a_value("train", "--precision")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, said", [
    (["train", "--no-layer", "3"], "did you mean --n-layer?"),
    (["train", "--no-head", "2"], "did you mean --n-head?"),
    (["train", "--nohead", "2"], "did you mean --n-head?"),
    (["train", "--no_overwrite"], "--no_overwrite is not an option: leaving out "
     "--overwrite is the default"),
    (["train", "--No-Overwrite"], "--No-Overwrite is not an option: leaving out "
     "--overwrite is the default"),
    (["train", "--nooverwrite"], "--nooverwrite is not an option: leaving out "
     "--overwrite is the default"),
    (["train", "--no-overwrite"], "--no-overwrite is not an option: leaving out "
     "--overwrite is the default"),
    (["train", "--no-overwrit"], "see --help"),  # never the flag of the other sign
    (["train", "--Overwrite"], "did you mean --overwrite?"),
    (["bench", "--quick", "--paper-shape"], "--paper-shape is not an option: the "
     "paper's shape runs by default, unless --quick"),
    (["bench", "--paper-shape"], "--paper-shape is not an option: the paper's "
     "shape runs by default, unless --quick"),  # was tests/test_cli_probe21.py's
])
def test_near_misses_and_opposites(tmp_path, argv, said):
    res = txl(*argv, cwd=tmp_path)
    words = " ".join(a for a in argv[1:] if a != "--quick")  # what is refused
    assert one_line(res, 2) == (f"{PROG} {argv[0]}: error: unrecognized arguments: "
                                f"{words} ({said})")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [
    ["evaluate", "RUN", "--quiet", "--threads", "1", "--"],
    ["sample", "RUN", "--chars", "5", "--threads", "1", "--"],
    ["train", "--resume", "RUN", "--"],
    ["data", "offline", "--chars", "3000", "--out", "o.txt", "--"],
])
def test_a_trailing_dash_dash_only_ends_the_options(tmp_path, run, argv):
    res = txl(*[run if a == "RUN" else a for a in argv], cwd=tmp_path)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("argv, line", [
    (["bench", "--quick", "--threads", "0", "--"],
     "bench: error: --threads must be >= 1, got 0"),
    (["data", "text8", "--path", "missing", "--"], "data text8: error: "),
])
def test_a_trailing_dash_dash_is_past_the_parser(tmp_path, argv, line):
    """Commands that would run long: the line is their own check's, not argparse's."""
    res = txl(*argv, cwd=tmp_path)
    assert "unrecognized" not in res.stderr and res.stderr.startswith(f"{PROG} {line}")


@pytest.mark.parametrize("word", ["-h", "--help", "-h=1"])
def test_an_option_after_dash_dash_is_said_to_go_before_it(tmp_path, run, word):
    res = txl("evaluate", run, "--", word, cwd=tmp_path)
    assert one_line(res, 2) == (f"{PROG} evaluate: error: unrecognized arguments: "
                                f"{word} (options go before '--': the words after it "
                                "are not options)")


def test_a_second_dash_dash_or_a_word_after_it_is_still_refused(tmp_path, run):
    for extra, said in (["--", "see --help"], ["b", "see --help"]):
        res = txl("evaluate", run, "--", extra, cwd=tmp_path)
        assert one_line(res, 2) == (f"{PROG} evaluate: error: unrecognized "
                                    f"arguments: {extra} ({said})")
