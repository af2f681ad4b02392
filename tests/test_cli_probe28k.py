"""Probe 28a's findings (issue 31, fix-31ak): an option typed before the command
word, where one command path fits it, is asked of that command's own parser
(`--quiet=1 data` is data text8's --quiet=1; `--lr -1e-3 train` keeps its value,
joined by '='), its refusals said as that parser says them; a negative number is
a value; the official --not_tied is a flag; `--data stats f` is data's; a near
miss with no command word names the option and its command; data's unknown
command words are said as the top level's. Every proposal is taken when pasted
back (with -h).

Every case fails before anything loads (argv only): the cases run through the
command line's main() in one child process, the pasted proposals in a second, as
tests/test_cli_probe26g.py does."""

import pytest
from test_cli_probe26g import check_line, lines_of

# argv typed, words the line must hold, the proposal wanted (None: none)
CASES = {
    # 1: a flag given a value, before the command word of its only command
    "1a": (["--quiet=1", "data"], ["--quiet takes no value"],
           ["data", "text8", "--quiet"]),
    "1b": (["--quiet=", "data"], ["--quiet takes no value"], None),
    "1c": (["data", "--quiet=1"], ["--quiet takes no value"],
           ["data", "text8", "--quiet"]),
    "1d": (["data", "--quiet=no"], ["leave it out"], None),
    "1e": (["data", "--overwrite=yes", "--out", "o.txt"], ["takes no value"],
           ["data", "offline", "--overwrite", "--out", "o.txt"]),
    "1f": (["data", "--overwrite=no"], ["leave it out"], None),
    # 2: a spelled option's value, as the command's parser reads it
    "2a": (["--lr", "-1e-3", "train"], [], ["train", "--lr=-1e-3"]),
    "2b": (["--lr", "-inf", "train"], [], ["train", "--lr=-inf"]),
    "2c": (["--prompt", "-x", "sample", "m.pt"], [],
           ["sample", "--prompt=-x", "m.pt"]),
    "2d": (["--steps=", "train"], ["there: argument --steps: invalid int"], None),
    "2e": (["--steps", "abc", "train"], ["invalid int value: 'abc'"], None),
    "2f": (["--precision", "fp64", "train"], ["invalid choice: 'fp64'"], None),
    "2g": (["--lr", "−1e−3", "train"], ["U+2212"], ["train", "--lr=-1e-3"]),
    # 3: a negative number is a value (argparse's rule)
    "3a": (["--seeed", "-1", "train"], ["did you mean --seed?"],
           ["train", "--seed", "-1"]),
    "3b": (["--mem_len", "-4", "train"], [], ["train", "--mem-len", "-4"]),
    "3c": (["--warmp", "-5", "train"], [], ["train", "--warmup", "-5"]),
    "3d": (["--temprature", "-1", "sample", "m.pt"], [],
           ["sample", "--temperature", "-1", "m.pt"]),
    "3e": (["--top_k", "-1", "sample", "m.pt"], [],
           ["sample", "--top-k", "-1", "m.pt"]),
    # 4: the official --not_tied is a flag: no VALUE, and =no is its opposite
    "4a": (["--not_tied"], ["(train --no-tie-weights ...)"], None),
    "4b": (["--not_tied=no"], ["(train --tie-weights ...)"], None),
    "4c": (["--not_tied=1"], ["(train --no-tie-weights ...)"], None),
    # 5: --data then one of data's command words: data's
    "5a": (["--data", "stats", "f"], ["data is a command"], ["data", "stats", "f"]),
    "5b": (["--data", "offline", "--out", "o.txt"], ["data is a command"],
           ["data", "offline", "--out", "o.txt"]),
    # 6: no command word: the option meant and its command, not 'unknown command'
    "6a": (["--stpes", "3"], ["did you mean --steps", "(train --steps 3 ...)"], None),
    "6b": (["--stpes"], ["did you mean --steps"], None),
    "6c": (["--mem_len", "4"], ["--mem-len"], None),
    "6d": (["--n_layer", "2"], ["--n-layer"], None),
    "6e": (["--same_length"], ["(train --same-length ...)"], None),
    "6f": (["--ext_len", "0"], ["no counterpart here"], None),
    "6g": (["—stpes", "3"], ["U+2014", "did you mean --steps"], None),
    "6h": (["--dataset", "text8", "data"], ["train, evaluate have --corpus"], None),
    "6i": (["--text8", "data"], ["text8 is a command"], ["data", "text8"]),
    "6j": (["--he", "data"], ["asks for help"], ["data", "--help"]),
    "6k": (["-hh", "data"], ["asks for help"], ["data", "--help"]),
    "6l": (["-help", "data"], [], ["data", "--help"]),
    "6m": (["--HELP", "data"], [], ["data", "--help"]),
    "6n": (["--help=x", "data"], [], ["data", "--help"]),
    "6o": (["—help", "train"], ["U+2014"], ["train", "--help"]),
    "6p": (["—h", "train"], ["U+2014"], ["train", "-h"]),
    "6q": (["—", "train"], ["there: unrecognized arguments: —"], None),
    "6r": (["—=3", "train"], ["no name between"], None),
    "6s": (["—-help", "train"], ["U+2014"], ["train", "--help"]),
    # 7: data's unknown command word: said as the top level's `Train`
    "7a": (["data", "tex8"], ["unknown command 'tex8' of data (did you mean text8?)"],
           None),
    "7b": (["data", "stat", "f"], ["did you mean stats?"], None),
    "7c": (["data", "Offline", "--out", "o.txt"], ["did you mean offline?"], None),
    "7d": (["data", "Text8"], ["did you mean text8?"], None),
    "7e": (["data", "", "offline"], ["unknown command '' of data"], None),
    # 8: an abbreviation moved is spelled in full (--cache is --cache-dir)
    "8a": (["data", "--cache=no", "text8"], [],
           ["data", "text8", "--cache-dir=no"]),
    # 9: a flag's value no command takes is not carried
    "9a": (["--quiet=train"], ["--quiet takes no value"], None),
    "9b": (["--quiet="], ["--quiet takes no value"], None),
}
WRONG = ("unknown command '-", "unknown command '—", "argument cmd",
         "tie-weights VALUE", "none is typed before", "--path stats",
         "--path offline", "COMMAND --quiet=")


@pytest.fixture(scope="module")
def lines():
    return lines_of(CASES)


@pytest.mark.parametrize("key", list(CASES))
def test_an_option_before_the_command_word_is_asked_of_its_parser(lines, key):
    _, holds, want = CASES[key]
    line = lines[key][1]
    assert "error: " in line and "Traceback" not in line, line
    check_line(lines[key], holds, want, WRONG)
