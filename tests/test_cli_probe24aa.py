"""Probe 24a's flag-value findings (fix-31aa): a flag given no/false/off/0 was
proposed as itself ('did you mean --overwrite?') by every route but the exact
'--overwrite=no' (near miss, case, '_', one or three dashes, a pasted dash, the
official name); the opposite word given a value ('--cache=no') was told the
default, not '--no-cache'; a pasted word not an option lost the ASCII word's
explanation; '-h=yes', '-h=no', '-h−' had no way out."""

import pytest
from test_cli_faults import one_line, txl

PROG = "python -m txl_mini"
EM, MINUS = "\u2014", "\u2212"
EVAL, BENCH, TRAIN = ["evaluate", "x.pt"], ["bench"], ["train"]
OFFLINE = ["data", "offline", "--out", "o.txt"]

# (the words before, the word up to '=', the flag it resolves to, its --no- pair)
SPELLINGS = [
    (TRAIN, "-overwrite", "--overwrite", None),
    (TRAIN, "---overwrite", "--overwrite", None),
    (TRAIN, "--OVERWRITE", "--overwrite", None),
    (TRAIN, "--overwirte", "--overwrite", None),
    (TRAIN, "--ovewrite", "--overwrite", None),
    (OFFLINE, "-overwrite", "--overwrite", None),
    (TRAIN, f"{EM}Overwrite", "--overwrite", None),
    (TRAIN, f"{EM}overwrite_", "--overwrite", None),
    (TRAIN, "--same_length", "--same-length", "--no-same-length"),
    (TRAIN, "--tie_weights", "--tie-weights", "--no-tie-weights"),
    (TRAIN, "-same-length", "--same-length", "--no-same-length"),
    (TRAIN, "--no_tie_weights", "--no-tie-weights", "--tie-weights"),
    (TRAIN, "--notieweights", "--no-tie-weights", "--tie-weights"),
    (TRAIN, "--not_tied", "--no-tie-weights", "--tie-weights"),  # official name
    (BENCH, "-no-paper-shape", "--no-paper-shape", None),
    (BENCH, "--no_paper_shape", "--no-paper-shape", None),
    (EVAL, "--JSON", "--json", None),
    (EVAL, "--no_cache", "--no-cache", None),
]
OTHERS = ["false", "off", "0", "yes", "TRUE", "1", "on", "maybe"]
CASES = [(*s, "no") for s in SPELLINGS] + [
    (*s, OTHERS[i % len(OTHERS)]) for i, s in enumerate(SPELLINGS)]


def _proposal(before, word, said):
    """The line's way out, pasted back in place of `word`: it must parse."""
    said = said.removesuffix(")")
    if said.endswith(": leave it out"):
        return None
    typed = said.rpartition(": type ")[2]
    back = txl(*before, typed, "-h")  # -h: exits 0 once the words are read
    assert back.returncode == 0, (said, back.stderr)
    return typed


@pytest.mark.parametrize("before, head, flag, pair, value", CASES,
                         ids=[f"{c[1]}={c[4]}" for c in CASES])
def test_a_flag_given_a_value_is_judged_by_the_value_on_every_route(
        tmp_path, before, head, flag, pair, value):
    word = f"{head}={value}"
    said = one_line(txl(*before, word, cwd=tmp_path), 2)
    tail = f"{flag} takes no value"
    if value.lower() in ("no", "false", "off", "0"):
        tail += f": type {pair}" if pair else ": leave it out"
    elif value.lower() in ("yes", "true", "on", "1"):
        tail += f": type {flag}"
    prog = " ".join(before[:2]) if before[0] == "data" else before[0]
    if head[0] == EM:
        assert said.startswith(f"{PROG} {prog}: error: {word}: starts with "), said
        assert said.endswith(f"; {tail}"), said
    else:
        assert said == (f"{PROG} {prog}: error: unrecognized arguments: {word} "
                        f"({tail})")
    assert "did you mean" not in said and list(tmp_path.iterdir()) == []
    if ": " in tail:  # pasted back, it parses and means what was asked
        typed = _proposal(before, word, said)
        assert typed == (flag if value.lower() in ("yes", "true", "on", "1")
                         else pair), said


@pytest.mark.parametrize("before, word, other", [
    (EVAL, "--cache=no", "--no-cache"), (["sample", "x.pt"], "--cache=off",
                                         "--no-cache"),
    (TRAIN, "--progress=no", "--no-progress"),
    (BENCH, "--paper-shape=no", "--no-paper-shape"),
    (EVAL, "-cache=false", "--no-cache"),
])
def test_the_opposite_word_given_no_names_the_flag_asked_for(
        tmp_path, before, word, other):
    said = one_line(txl(*before, word, cwd=tmp_path), 2)
    assert said == (f"{PROG} {before[0]}: error: unrecognized arguments: {word} "
                    f"({word.split('=')[0]} is not an option: type {other})")
    assert _proposal(before, word, said) == other


def _explained(said: str) -> str:
    """What a line says of the word, after what it says of the dash."""
    said = said.partition(": error: ")[2]
    if said.startswith("unrecognized arguments: "):
        return said.partition(" (")[2][:-1]
    return said.removesuffix(" (see --help)")


@pytest.mark.parametrize("before, rest", [
    (BENCH, "paper-shape=no"), (TRAIN, "no-overwrite=no"), (TRAIN, "ext_len=0"),
    (TRAIN, "pre=no"), (TRAIN, "no=yes"), (EVAL, "cache=no"),
    (BENCH, "paper-shape=yes"), (TRAIN, "progress=off"),
])
def test_a_pasted_word_gets_the_ascii_words_explanation(tmp_path, before, rest):
    ascii_said = one_line(txl(*before, f"--{rest}", cwd=tmp_path), 2)
    said = one_line(txl(*before, f"{EM}{rest}", cwd=tmp_path), 2)
    assert said.partition("not '--'; ")[2] == _explained(ascii_said), (said,
                                                                      ascii_said)
    assert "not an option either" not in said


@pytest.mark.parametrize("word, tail", [
    ("-h=yes", "type -h"), ("-h=TRUE", "type -h"), ("-h=no", "leave it out"),
    ("-h=off", "leave it out"), (f"-h{MINUS}", "type -h"), (f"-h{EM}", "type -h"),
    ("-h=3", "type -h"),
])
def test_h_given_a_value_gets_the_way_out(tmp_path, word, tail):
    assert one_line(txl("train", word, cwd=tmp_path), 2) == (
        f"{PROG} train: error: {word}: -h takes no value: {tail}")
    if tail == "type -h":
        assert txl("train", "-h", cwd=tmp_path).returncode == 0
