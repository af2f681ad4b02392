"""Probe 21's argparse corners (fix-31t): a pasted dash's proposed spelling that is
refused too ('type --mem—len', 'type --stpes', 'type --offline', 'type -s') or not
caught ('-–steps'); a number with a Unicode minus ('−1', 'invalid int value');
'-help', '-h5', '-hv' ('ignored explicit argument'); an empty argument shown as
nothing; '--=3' listing every option; and '--ext-len' offered --seg-len, --mem-len
for their common '-len'."""

import pytest
from test_cli_faults import one_line, txl

PROG = "python -m txl_mini"
EM, HY, EN, MINUS = "\u2014", "\u2010", "\u2013", "\u2212"


@pytest.mark.parametrize("argv, line", [
    (["train", f"{EM}mem{EM}len", "8"],
     f"train: error: {EM}mem{EM}len: starts with a '{EM}' (U+2014), not '--', and "
     f"has a '{EM}' (U+2014) for '-'; type --mem-len"),
    (["sample", "x.pt", f"{EM}no{HY}cache"],
     f"sample: error: {EM}no{HY}cache: starts with a '{EM}' (U+2014), not '--', and "
     f"has a '{HY}' (U+2010) for '-'; type --no-cache"),
    (["train", f"{EM}stpes", "3"],
     f"train: error: {EM}stpes: starts with a '{EM}' (U+2014), not '--'; did you "
     "mean --steps?"),
    (["data", f"{EM}offline", "--out", "o"],
     f"data: error: {EM}offline: starts with a '{EM}' (U+2014), not '--'; offline "
     "is a command, not an option: type offline"),
    (["train", f"{EM}s", "3"],
     f"train: error: {EM}s: starts with a '{EM}' (U+2014), not '--'; and -s is not "
     "an option either (see --help)"),
    (["train", f"-{EN}steps", "3"],
     f"train: error: -{EN}steps: starts with '-{EN}' (U+002D U+2013), not '--'; "
     "type --steps"),
    (["data", "offline", "--out", "o", "\uff0d\uff0dseed", "3"],
     "data offline: error: \uff0d\uff0dseed: starts with a '\uff0d' (U+FF0D), not "
     "'--'; type --seed"),
    (["train", f"--mem{EM}len", "8"],
     f"train: error: --mem{EM}len: has a '{EM}' (U+2014) for '-'; type --mem-len"),
])
def test_a_pasted_dash_proposes_only_what_is_taken(tmp_path, argv, line):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG} {line}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, line", [
    (["train", "--clamp-len", f"{MINUS}1"],
     f"train: error: argument --clamp-len: {MINUS}1: '{MINUS}' is U+2212 (minus "
     "sign, pasted from a web page?), not '-'; type -1 (see --help)"),
    (["train", "--lr", f"2.5e{MINUS}4"],
     f"train: error: argument --lr: 2.5e{MINUS}4: '{MINUS}' is U+2212 (minus "
     "sign, pasted from a web page?), not '-'; type 2.5e-4 (see --help)"),
    (["data", "offline", "--out", "o", "--seed", f"{EN}3"],
     f"data offline: error: argument --seed: {EN}3: '{EN}' is U+2013 (en dash, "
     "pasted from a web page?), not '-'; type -3 (see --help)"),
])
def test_a_unicode_minus_in_a_number_is_named(tmp_path, argv, line):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG} {line}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, line", [
    (["train", "-help"], "train: error: -help is not an option: type --help (or -h)"),
    (["evaluate", "x.pt", "-hel"],
     "evaluate: error: -hel is not an option: type --help (or -h)"),
    (["sample", "x", "-h5"], "sample: error: -h5: -h takes no value: type -h"),
    (["train", "-h=5"], "train: error: -h=5: -h takes no value: type -h"),
    (["train", "-hv"], "train: error: -hv: -h takes no value, and -v is not an option"),
    (["train", "--=3"], "train: error: --=3 is not an option: no name between '--' "
     "and '='"),
    (["data", "offline", "--="], "data offline: error: --= is not an option: no name "
     "between '--' and '='"),
    (["data", "--="], "data: error: --= is not an option: no name between '--' and "
     "'='"),
])
def test_merged_and_nameless_options_are_one_clear_line(tmp_path, argv, line):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG} {line}"
    assert res.stdout == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, said", [
    (["train", ""], "train: error: unrecognized arguments: '' (an empty argument)"),
    (["train", "--steps", "3", "", "x"], "train: error: unrecognized arguments: '' x "
     "('' is an empty argument; see --help)"),
    (["data", "offline", "--out", "o", ""],
     "data offline: error: unrecognized arguments: '' (an empty argument)"),
])
def test_an_empty_argument_is_shown(tmp_path, argv, said):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == f"{PROG} {said}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, hint", [
    (["train", "--ext-len", "3"], "--ext-len 3 (--ext-len: the official code's "
     "extended context (ext_len) has no counterpart here)"),
    (["train", "--tgt_len", "3"], "--tgt_len 3 (did you mean --seg-len?)"),
    (["train", "--not_tied"], "--not_tied (did you mean --no-tie-weights?)"),
    (["train", "--work_dir", "r"], "--work_dir r (did you mean --run-dir?)"),
    (["train", "--ab-layer", "3"], "--ab-layer 3 (see --help)"),  # only '-layer' shared
    (["train", "--memlen", "3"], "--memlen 3 (did you mean --mem-len?)"),
    (["train", "--bach-size", "4"], "--bach-size 4 (did you mean --batch-size?)"),
])
def test_a_shared_suffix_is_no_near_miss(tmp_path, argv, hint):
    res = txl(*argv, cwd=tmp_path)
    assert one_line(res, 2) == (f"{PROG} train: error: unrecognized arguments: "
                                f"{hint}")
    assert list(tmp_path.iterdir()) == []
