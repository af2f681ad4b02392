"""Probe 25's misplaced-option findings (issue 31, fix-31ad): an option typed
before the command word whose value is itself a command word, a pasted dash, an
option of another command or a near miss with a value, an abbreviation, and a '--'
before data's command word each get the line that names them, and every proposed
command line is taken when pasted back."""

import shlex

import pytest
from test_cli_faults import one_line, txl


def proposal(line: str) -> list[str]:
    """The words after the line's last 'type ' (up to a ' (' note)."""
    assert "type " in line, line
    return shlex.split(line.rsplit("type ", 1)[1].split(" (")[0])


def parses(words: list[str]) -> None:
    """The proposal, with -h appended, is taken by the command's own parser."""
    res = txl(*words, "-h")
    assert res.returncode == 0, (words, res.stderr)


@pytest.mark.parametrize("argv, want", [
    (["--prompt", "train", "sample", "x.pt"], ["sample", "--prompt", "train", "x.pt"]),
    (["--run-dir", "data", "train"], ["train", "--run-dir", "data"]),
    (["data", "--out", "stats", "offline"], ["data", "offline", "--out", "stats"]),
    (["data", "--path", "offline", "text8"], ["data", "text8", "--path", "offline"]),
])
def test_an_options_value_is_not_the_command_word(argv, want):
    line = one_line(txl(*argv), 2)
    assert "not of" not in line and proposal(line) == want, line
    parses(want)


@pytest.mark.parametrize("argv, want", [
    (["data", "—quiet", "text8"], ["data", "text8", "--quiet"]),
    (["data", "—chars", "5", "offline"], ["data", "offline", "--chars", "5"]),
    (["—quiet", "train"], ["train", "--quiet"]),
])
def test_a_pasted_dash_before_the_command_word_gets_the_ascii_forms_line(argv, want):
    line = one_line(txl(*argv), 2)
    assert "starts with a '—' (U+2014), not '--'" in line, line
    assert "not an option either" not in line and "unknown command" not in line
    assert proposal(line) == want, line
    parses(want)


@pytest.mark.parametrize("argv, want, said", [
    (["data", "--chrs", "5", "offline"], ["data", "offline", "--chars", "5"],
     "--chrs is not an option of data offline: did you mean --chars?"),
    (["--stpes", "3", "train"], ["train", "--steps", "3"],
     "--stpes is not an option of train: did you mean --steps?"),
    (["--mem_len", "4", "train"], ["train", "--mem-len", "4"],
     "--mem_len is not an option of train: did you mean --mem-len?"),
])
def test_a_near_miss_with_a_value_before_the_command_word(argv, want, said):
    line = one_line(txl(*argv), 2)
    assert said in line and proposal(line) == want, line
    parses(want)


@pytest.mark.parametrize("argv, said", [
    (["data", "--device", "cpu", "stats", "f.txt"],
     "--device is an option of train, evaluate, sample, bench, not of data stats"),
    (["data", "--steps", "3", "offline"],
     "--steps is an option of train, bench, not of data offline"),
    (["data", "--prompt", "x"], "--prompt is an option of sample, not of data"),
])
def test_another_commands_option_before_datas_command_word(argv, said):
    line = one_line(txl(*argv), 2)
    assert said in line and "invalid choice" not in line, line


@pytest.mark.parametrize("word", ["--s", "--pre"])
def test_an_abbreviation_is_read_as_the_commands_own_parser_reads_it(word):
    line = one_line(txl(word, "3", "train"), 2)
    own = one_line(txl("train", word, "3"), 2)  # its candidates, as train lists them
    hits = own.split("could match ")[1].split(" (")[0]
    assert f"ambiguous option: {word} could match {hits}" in line, line
    assert "not of train" not in line and "unknown command" not in line


@pytest.mark.parametrize("argv, want", [
    (["--", "data", "--", "offline"], ["data", "offline"]),
    (["data", "--", "offline"], ["data", "offline"]),
    (["--", "data", "--quiet", "text8"], ["data", "text8", "--quiet"]),
    (["--", "train", "--steps", "3"], ["train", "--steps", "3"]),
])
def test_a_dashdash_before_the_command_word_proposes_a_line_taken(argv, want):
    line = one_line(txl(*argv), 2)
    assert proposal(line) == want, line
    parses(want)
