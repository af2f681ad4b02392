"""Probe 26a's misplaced-option findings (issue 31, fix-31ag): an option typed
before the command word (`python -m txl_mini --X train`, `data --X offline`) gets
the line it gets in its usual place (`train --X`), said as misplaced, with the
other words typed kept in the proposal and the command word typed never replaced
by another; every proposed line is taken when pasted back (with -h).

Every case fails before anything loads (argv only), so the cases run through the
command line's main() in one child process (one import of torch, not one per
case), and two of them as `python -m txl_mini` processes of their own."""

import json
import shlex

import pytest
from test_cli_faults import one_line, py, txl

CHILD = """
import contextlib, io, json, sys
from txl_mini.cli import main
out = []
for argv in json.loads(sys.stdin.read()):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    out.append([code, err.getvalue()])
print(json.dumps(out))
"""

# argv typed, the usual place's argv (whose message the line must hold) or None,
# the proposal wanted (None: none), and words the line must (not) hold
CASES = {
    # 1: an empty option name: not 'ambiguous option: -- could match' every option
    "1a": (["--=3", "train"], ["train", "--=3"], None),
    "1b": (["data", "--=3", "offline"], ["data", "offline", "--=3"], None),
    "1c": (["--=x", "bench"], ["bench", "--=x"], None),
    "1d": (["--", "data", "--=3", "offline"], ["data", "offline", "--=3"], None),
    # 2: --help=x: not 'not an option of train: did you mean --help?'
    "2a": (["--help=x", "train"], ["train", "--help=x"], ["train", "--help"]),
    "2b": (["--hel=3", "train"], None, ["train", "--help"]),
    "2c": (["data", "--help=x", "offline"], None, ["data", "offline", "--help"]),
    # 3a: a near miss whose value is a command word: not 'unknown command'
    "3a1": (["--promt", "data", "sample", "r"], None,
            ["sample", "--prompt", "data", "r"]),
    "3a2": (["--promt", "train", "sample", "r", "--chars", "3"], None,
            ["sample", "--prompt", "train", "r", "--chars", "3"]),
    "3a3": (["-prompt", "data", "sample", "r"], None,
            ["sample", "--prompt", "data", "r"]),
    "3a4": (["--run_dir", "data", "train"], None, ["train", "--run-dir", "data"]),
    # 3b: the usual place's line, not 'unknown command'
    "3b1": (["--no-vanilla", "train"], ["train", "--no-vanilla"], None),
    "3b2": (["--no-quiet", "sample", "r"], ["sample", "r", "--no-quiet"], None),
    "3b3": (["--ext_len", "3", "train"], ["train", "--ext_len", "3"], None),
    "3b4": (["--bogus=3", "train"], ["train", "--bogus=3"], None),
    # 4: the other words kept; a command word typed is not replaced by another
    "4a": (["--bench", "--quick"], None, ["bench", "--quick"]),
    "4b": (["--evaluate", "r"], None, ["evaluate", "r"]),
    "4c": (["--sample=r", "--chars", "3"], None, ["sample", "r", "--chars", "3"]),
    "4d": (["--dataset", "text8", "train", "--run-dir", "x"], None,
           ["train", "--corpus", "text8", "--run-dir", "x"]),
    "4e": (["--data=text8", "train", "--run-dir", "x"], None,
           ["train", "--path=text8", "--run-dir", "x"]),
    # 5: an unknown option with a value before data's command word is named
    "5a": (["data", "--stps", "3", "offline"], None, None),
    "5b": (["data", "--bogus", "5", "offline", "--out", "o.txt"], None, None),
    "5c": (["--", "data", "--stps", "3", "offline"], None, None),
    "5d": (["data", "--stps=3", "offline"], None, None),
    # 6: a flag given =VALUE: the usual place's remedy, never the value kept
    "6a": (["--quite=1", "train"], None, ["train", "--quiet"]),
    "6b": (["--quiet=1", "train"], ["train", "--quiet=1"], ["train", "--quiet"]),
    "6c": (["--no-cache=1", "sample", "r"], None, ["sample", "--no-cache", "r"]),
    "6d": (["--vanila=yes", "train"], None, ["train", "--vanilla"]),
    "6e": (["--overwite=no", "data", "offline"], None, None),
}
NAMED = {"5a": "--stps 3", "5b": "--bogus 5", "5c": "--stps 3", "5d": "--stps=3",
         "6e": "leave it out"}  # words each such line holds


def run_all(argvs: list) -> list:
    """(exit status, stderr) of main(argv) for each argv, in one child process."""
    res = py("-c", CHILD, input=json.dumps(argvs))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def proposal(line: str) -> list[str] | None:
    """The words after the line's last 'type ' (up to a ' (' note or a ')')."""
    if "type " not in line:
        return None
    return shlex.split(line.rsplit("type ", 1)[1].split(" (")[0].rstrip(")"))


def lines_of(cases: dict) -> dict:
    """key -> (exit status, line, pasted proposal's exit status or None) of `cases`
    (key -> (argv, ...)): the cases in one child process, the proposals pasted (with
    -h) in another (test_cli_probe27i, 28k)."""
    got = run_all([c[0] for c in cases.values()])
    props = [proposal(err.strip()) for _, err in got]
    pasted = iter(run_all([[*p, "-h"] for p in props if p]))
    return {key: (code, err.strip(), next(pasted)[0] if p else None)
            for key, (code, err), p in zip(cases, got, props)}


def check_line(got: tuple, holds: list, want, wrong=()) -> None:
    """A case of lines_of: exit 2, one line holding `holds` and none of `wrong`, its
    proposal `want` (None: none), and that proposal taken when pasted."""
    code, line, pasted = got
    assert code == 2 and "\n" not in line, line
    for words in wrong:
        assert words not in line, line
    for words in holds:
        assert words in line, line
    assert proposal(line) == want, line
    if want:
        assert pasted == 0, (line, pasted)


@pytest.fixture(scope="module")
def lines():
    """key -> (line of the case, message of its usual place, pasted proposal's
    exit status); two child processes in all."""
    argvs = [c[0] for c in CASES.values()] + [c[1] for c in CASES.values() if c[1]]
    got = dict(zip(map(json.dumps, argvs), run_all(argvs)))
    out = {}
    for key, (argv, usual, _) in CASES.items():
        code, err = got[json.dumps(argv)]
        assert code == 2 and err.count("\n") == 1, (argv, err)
        said = got[json.dumps(usual)][1].split("error: ", 1)[1].strip() if usual else ""
        out[key] = [err.strip(), said]
    pasted = [[*p, "-h"] for k in out if (p := proposal(out[k][0]))]
    codes = dict(zip(map(json.dumps, pasted), run_all(pasted)))
    for key, (line, _) in out.items():
        p = proposal(line)
        out[key].append(codes[json.dumps([*p, "-h"])] if p else None)
    return out


@pytest.mark.parametrize("key", list(CASES))
def test_an_option_before_the_command_word_gets_its_usual_places_line(lines, key):
    line, usual, pasted = lines[key]
    argv, _, want = CASES[key]
    for wrong in ("ambiguous option", "unknown command", "invalid choice",
                  "is a command, not an option: type data", "required"):
        assert wrong not in line, line
    # the same line as `train --X` gives (its proposal, there, without the rest)
    assert usual.rsplit("type ", 1)[0] in line, (line, usual)
    assert NAMED.get(key, "") in line, line
    assert proposal(line) == want, line
    if want:  # pasted back (-h appended), it is taken
        assert pasted[0] == 0, (want, pasted[1])
    if key in ("2a", "2b", "2c", "6b"):  # --help=x is no near miss of --help
        assert "not an option of" not in line and "did you mean" not in line, line


def test_data_names_the_options_of_other_commands_near_a_miss(lines):
    assert "(train, bench have --steps)" in lines["5a"][0], lines["5a"][0]


@pytest.mark.parametrize("argv", [["--=3", "train"], ["--promt", "data", "sample",
                                                      "r"]])
def test_as_a_process_of_its_own(argv):
    line = one_line(txl(*argv), 2)
    assert "ambiguous" not in line and "unknown command" not in line, line
    assert line.startswith("python -m txl_mini: error: "), line

