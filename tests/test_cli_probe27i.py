"""Probe 27a's findings (issue 31, fix-31ai): an option typed before the command
word gets the line its command gives it there, and the command word typed is
kept: a near miss before the only command word does not take it as its value
(`--jsn evaluate m.pt` said 'unknown command'); every proposal is taken when
pasted back (with -h) and is the line meant.

Every case fails before anything loads (argv only): the cases run through the
command line's main() in one child process, the pasted proposals in a second, as
tests/test_cli_probe26g.py does."""

import pytest
from test_cli_probe26g import check_line, lines_of

# argv typed, words the line must hold, the proposal wanted (None: none)
CASES = {
    # 1: a near miss right before the only command word: that command's line
    "1a": (["--jsn", "evaluate", "m.pt"], ["did you mean --json?"],
           ["evaluate", "--json", "m.pt"]),
    "1b": (["--jason", "evaluate", "m.pt"], ["did you mean --json?"],
           ["evaluate", "--json", "m.pt"]),
    "1c": (["--jsno", "bench", "--quick"], ["did you mean --json?", "takes a value"],
           None),  # bench's --json takes a PATH
    "1d": (["--promt", "sample", "m.pt"], ["did you mean --prompt?", "takes a value"],
           None),
    "1e": (["--stps", "train", "--preset", "tiny"], ["did you mean --steps?"], None),
    "1f": (["--run_dir", "train", "--steps", "3"], ["did you mean --run-dir?"], None),
    "1g": (["--promt", "data", "sample", "r"], ["did you mean --prompt?"],
           ["sample", "--prompt", "data", "r"]),  # fix-31ag's, kept
    # 2: an option that asks for help there: not 'unrecognized arguments: -hh'
    "2a": (["-hh", "train"], ["asks for help"], ["train", "--help"]),
    "2b": (["--he", "train"], ["asks for help"], ["train", "--help"]),
    "2c": (["-hh", "data", "offline"], ["asks for help"],
           ["data", "offline", "--help"]),
    "2d": (["--he", "sample", "m.pt"], ["asks for help"], ["sample", "--help"]),
    # 3: the official code's --dataset / --data, no command word: not `data X`
    "3a": (["--dataset", "enwik8"], ["is --corpus here", "train, evaluate",
                                     "'enwik8'"], None),
    "3b": (["--data", "foo.txt"], ["is --path here", "(train --path foo.txt ...)"],
           None),
    "3c": (["--dataset", "text8"], ["is --corpus here", "(train --corpus text8 ...)"],
           None),
    "3d": (["--dataset=text8", "--steps", "3"], ["is --corpus here"], None),
    # 4: --cache (data text8's --cache-dir abbreviated) before a typed command word:
    # that command's own line, never data text8's with the command word its value
    "4a": (["--cache", "sample", "m.pt"], ["there: unrecognized arguments: --cache",
                                          "leaving out --no-cache"], None),
    "4b": (["--cache=no", "sample", "m.pt"], ["there: unrecognized arguments"],
           ["sample", "--no-cache", "m.pt"]),
    "4c": (["--cache", "evaluate", "m.pt"], ["leaving out --no-cache"], None),
    "4d": (["--cache", "train", "--steps", "2"], ["not of train"], None),
    # 5: a near miss of a flag, then a word: train's line, no proposal that fails
    "5a": (["--overwirte", "yes", "train", "--preset", "tiny", "--steps", "2",
            "--run-dir", "r"], ["there: unrecognized arguments: --overwirte yes",
                                "did you mean --overwrite?"], None),
    "5b": (["--quite", "3", "train"], ["there: unrecognized arguments: --quite 3",
                                       "did you mean --quiet?"], None),
    # 6: an unknown option's "there" line holds what the command refuses there,
    # not the checkpoint after it (`sample -v m.pt`: unrecognized arguments: -v)
    "6a": (["-v", "m.pt", "sample"], ["there: unrecognized arguments: -v ("], None),
    "6b": (["--verbose", "r", "evaluate"],
           ["there: unrecognized arguments: --verbose ("], None),
}
WRONG = ("unknown command", "invalid choice", "is a command, not an option",
         "type data text8", "unrecognized arguments: -hh",
         "unrecognized arguments: --he")


@pytest.fixture(scope="module")
def lines():
    return lines_of(CASES)


@pytest.mark.parametrize("key", list(CASES))
def test_the_command_word_typed_gives_the_line(lines, key):
    _, holds, want = CASES[key]
    line = lines[key][1]
    assert line.startswith("python -m txl_mini: error: "), line
    check_line(lines[key], holds, want,  # 3a: --corpus's refusal
               WRONG[:1] if key == "3a" else WRONG)
