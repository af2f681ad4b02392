"""Probe 22b's argparse corners (fix-31x): near misses before a shared '-len', '-k'
ending lost their hint (--seq-len, --tpo-k); a pasted dash's or a Unicode minus's
proposal that is refused when typed (--overwrite=yes, -３, a separate -1e-3, -256
for '64,−256'); '-hhelp' and '-h=h5' given to argparse ('ignored explicit
argument'); a word of quotes shown as another ("''" as the empty argument); '—=3'
with neither the dash nor the missing name said."""

import pytest
from test_cli_faults import one_line, txl

PROG = "python -m txl_mini"
EM, MINUS = "\u2014", "\u2212"


@pytest.mark.parametrize("argv, hint", [
    (["train", "--seq-len", "64"], "did you mean --seg-len?"),
    (["train", "--men-len", "8"], "did you mean --mem-len?"),
    (["train", "--rum-dir", "r"], "did you mean --run-dir?"),
    (["evaluate", "x.pt", "--seq_len", "64"], "did you mean --seg-len?"),
    (["sample", "x.pt", "--tpo-k", "5"], "did you mean --top-k?"),
    (["bench", "--mxa-attn-len", "8"], "did you mean --max-attn-len?"),
    (["train", "--pso-enc", "rel"], "did you mean --pos-enc?"),
    (["train", "--tei-weights"], "did you mean --tie-weights?"),
    (["train", "--e-model", "8"], "did you mean --d-model?"),
    (["train", "--d-layer", "8"], "did you mean --n-layer?"),  # was probe21t's
    (["train", "--ext-len", "8"], "--ext-len: the official code's extended context "
     "(ext_len) has no counterpart here"),
    (["evaluate", "x.pt", "--ext-size", "8"], "see --help"),
])
def test_one_edit_before_a_shared_ending_is_a_near_miss(tmp_path, argv, hint):
    res = txl(*argv, cwd=tmp_path)
    said = one_line(res, 2)
    assert said.endswith(f"({hint})"), said
    assert "--seg-len" not in said or "--seg-len" in hint


@pytest.mark.parametrize("argv, line", [
    (["train", f"{EM}lr=1e{MINUS}4"], f"train: error: {EM}lr=1e{MINUS}4: starts "
     f"with a '{EM}' (U+2014), not '--'; type --lr=1e-4"),
    (["train", f"{EM}overwrite=yes"], f"train: error: {EM}overwrite=yes: starts "
     f"with a '{EM}' (U+2014), not '--'; --overwrite takes no value: type "
     "--overwrite"),
    (["evaluate", "x.pt", f"{EM}no-cache=1"], f"evaluate: error: {EM}no-cache=1: "
     f"starts with a '{EM}' (U+2014), not '--'; --no-cache takes no value: type "
     "--no-cache"),
    (["bench", f"{EM}quick=1"], f"bench: error: {EM}quick=1: starts with a '{EM}' "
     "(U+2014), not '--'; --quick takes no value: type --quick"),
    (["train", f"{EM}help=3"], f"train: error: {EM}help=3: starts with a '{EM}' "
     "(U+2014), not '--'; --help takes no value: type --help"),  # fix-31aa
    (["train", f"{EM}h=3"], f"train: error: {EM}h=3: starts with a '{EM}' "
     "(U+2014), not '--'; -h takes no value: type -h"),
    (["train", f"{EM}=3"], f"train: error: {EM}=3: starts with a '{EM}' (U+2014), "
     "not '--', and no name between it and '='"),
    (["train", f"-{EM}=3"], f"train: error: -{EM}=3: starts with '-{EM}' (U+002D "
     "U+2014), not '--', and no name between it and '='"),
])
def test_a_pasted_dash_proposes_what_is_accepted(tmp_path, argv, line):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG} {line}"
    assert list(tmp_path.iterdir()) == []


WHY = f"'{MINUS}' is U+2212 (minus sign, pasted from a web page?), not '-'"


def joined(v):
    return (f"type {v} joined to its option by '=' (--OPTION={v}): a separate {v} "
            "is read as an option")


@pytest.mark.parametrize("argv, line", [
    (["train", "--steps", f"{MINUS}\uff13"],
     f"train: error: argument --steps: {MINUS}\uff13: {WHY} (see --help)"),
    (["train", "--lr", f"{MINUS}1e{MINUS}3"], f"train: error: argument --lr: "
     f"{MINUS}1e{MINUS}3: {WHY}; {joined('-1e-3')} (see --help)"),
    (["train", "--lr", f"{MINUS}inf"], f"train: error: argument --lr: {MINUS}inf: "
     f"{WHY}; {joined('-inf')} (see --help)"),
    (["train", "--steps", f"{MINUS}1_000"], f"train: error: argument --steps: "
     f"{MINUS}1_000: {WHY}; {joined('-1_000')} (see --help)"),
    (["train", "--steps", f"{MINUS}3"], f"train: error: argument --steps: "
     f"{MINUS}3: {WHY}; type -3 (see --help)"),
    (["data", "offline", "--out", "o", "--distances", f"64,{MINUS}256"],
     f"data offline: error: argument --distances: 64,{MINUS}256: {WHY}; type "
     "64,-256 (see --help)"),
])
def test_a_unicode_minus_proposes_what_is_accepted(tmp_path, argv, line):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG} {line}"
    assert list(tmp_path.iterdir()) == []


def test_the_joined_spelling_is_the_one_argparse_takes(tmp_path):
    apart = one_line(txl("train", "--lr", "-1e-3", cwd=tmp_path), 2)
    assert "expected one argument" in apart
    joined = one_line(txl("train", "--lr=-1e-3", "--zzz", cwd=tmp_path), 2)
    assert joined.endswith("unrecognized arguments: --zzz (see --help)"), joined


@pytest.mark.parametrize("cmd", [["train"], ["evaluate", "x.pt"], ["sample", "x.pt"],
                                 ["bench"], ["data", "offline", "--out", "o"]])
@pytest.mark.parametrize("word, line", [
    ("-hhelp", "-hhelp: -h takes no value, and -e is not an option"),
    ("-h=help", "-h=help: -h takes no value: type -h"),  # fix-31aa
    ("-hhv", "-hhv: -h takes no value, and -v is not an option"),
    ("-hh5", "-hh5: -h takes no value: type -h"),
    ("-h=h5", "-h=h5: -h takes no value: type -h"),
])
def test_a_single_dash_help_form_is_one_true_line(tmp_path, cmd, word, line):
    res = txl(*cmd, word, cwd=tmp_path)
    prog = " ".join(cmd[:2] if cmd[0] == "data" else cmd[:1])
    assert one_line(res, 2) == f"{PROG} {prog}: error: {line}"


def test_flags_alone_still_print_help(tmp_path):
    res = txl("train", "-hh", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.startswith("usage:"), res.stderr


@pytest.mark.parametrize("argv, shown", [
    (["''"], "\"''\""),
    (["'", "'"], "\"'\" \"'\""),
    ([" "], "' '"),
    (['"'], "'\"'"),
])
def test_quotes_and_spaces_are_shown_unambiguously(tmp_path, argv, shown):
    res = txl("train", *argv, cwd=tmp_path)
    assert one_line(res, 2) == (f"{PROG} train: error: unrecognized arguments: "
                                f"{shown} (see --help)")


def test_the_empty_argument_line_is_unchanged(tmp_path):
    res = txl("train", "", cwd=tmp_path)
    assert one_line(res, 2) == (f"{PROG} train: error: unrecognized arguments: '' "
                                "(an empty argument)")
