"""Probe 21's findings in the near-miss hints (cli/typos.py): a flag's opposite was
offered as the option meant (`--no-overwrite` -> 'did you mean --overwrite?', which
starts a run over), and an option typed exactly after '--' was offered as itself
(`evaluate -- F --json` -> 'did you mean --json?')."""

import pytest
from cli_text import words
from test_cli_faults import one_line, tiny, txl

PROG = "python -m txl_mini"


@pytest.mark.parametrize("argv, word, flag", [
    (["train", "--run-dir", "r", "--no-overwrite"], "--no-overwrite", "--overwrite"),
    (["train", "--no-vanilla"], "--no-vanilla", "--vanilla"),
    (["train", "--progress"], "--progress", "--no-progress"),
    (["evaluate", "x.pt", "--no-json"], "--no-json", "--json"),
    (["sample", "x.pt", "--cache"], "--cache", "--no-cache"),
    (["bench", "--no-compile"], "--no-compile", "--compile"),
])
def test_a_flags_opposite_is_its_default_not_the_flag(tmp_path, argv, word, flag):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == (
        f"{PROG} {argv[0]}: error: unrecognized arguments: {word} ({word} is not an "
        f"option: leaving out {flag} is the default)")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, said", [
    (["evaluate", "--", "-f.pt", "--json"], "--json"),
    (["evaluate", "--", "-f.pt", "--chars", "1000"], "--chars 1000"),
    (["sample", "x.pt", "--chars", "5", "--", "--seed", "1"], "-- --seed 1"),
])
def test_an_option_after_the_double_dash_is_named_as_such(tmp_path, argv, said):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == (
        f"{PROG} {argv[0]}: error: unrecognized arguments: {said} (options go before "
        "'--': the words after it are not options)")


@pytest.mark.parametrize("argv, hint", [
    (["train", "--no-overwrit", "--stpes", "3"], "did you mean --steps?"),
    (["train", "--overwirte"], "did you mean --overwrite?"),
    (["train", "--no-fast-atn"], "did you mean --no-fast-attn?"),
    (["sample", "x.pt", "--nocache"], "did you mean --no-cache?"),
    (["sample", "x.pt", "--cach"], "see --help"),
])
def test_a_typo_names_the_option_meant_never_its_opposite(tmp_path, argv, hint):
    """The two cases above are checked first; a near miss is still a near miss, but
    one of the flag's opposite (--no-overwrit, --cach) names nothing."""
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2).endswith(f"({hint})")


def test_a_new_run_inside_a_run_directory_is_refused(tmp_path):
    """README: no output goes inside a run directory (a file there makes it 'not a
    run' for --overwrite); --out and data offline --out were refused there, a new
    --run-dir was not: `train --run-dir plain/sub` wrote plain/sub, and `train
    --run-dir plain --overwrite` then refused plain ('it holds sub')."""
    (tmp_path / "t.txt").write_text(words(2000))
    base = tiny("t.txt", "plain")
    assert txl("train", *base, cwd=tmp_path).returncode == 0
    for sub in ("plain/sub", "plain/a/b"):
        res = txl("train", *tiny("t.txt", sub), cwd=tmp_path)
        assert one_line(res, 2) == (
            f"{PROG} train: error: --run-dir {sub} is inside the run directory "
            f"{tmp_path / 'plain'}; give a folder outside it")
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == [
        "best.pt", "config.json", "curves.png", "last.pt", "metrics.jsonl"]
    assert txl("train", *base, "--overwrite", cwd=tmp_path).returncode == 0
    # a folder beside it, or a new one below a plain folder, is as before
    assert txl("train", *tiny("t.txt", "other/sub"), cwd=tmp_path).returncode == 0
