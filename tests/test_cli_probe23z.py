"""Probe 23's message findings (fix-31z): '--notie-weights' called the default
what is the opposite of what was typed; a flag given '=no' proposed as the flag
itself (--overwrite deletes a run); pasted-dash proposals refused when pasted
back; data's command words typed as options; '--OPT=--' saying 'or leave it out'
for options that cannot be; '-no-overwrite' with no line; '-h−'; words that
look alike when shown ('\\u200b' typed and the zero-width space itself)."""

import pytest
from test_cli_faults import one_line, txl

PROG = "python -m txl_mini"
EM, MINUS = "\u2014", "\u2212"


@pytest.mark.parametrize("argv, hint", [
    (["train", "--notie-weights"], "did you mean --no-tie-weights?"),
    (["train", "--nofast-attn"], "did you mean --no-fast-attn?"),
    (["train", "--nountie-r"], "did you mean --no-untie-r?"),
    (["train", "--nopre-lnorm"], "did you mean --no-pre-lnorm?"),
    (["train", "--nosame-length"], "did you mean --no-same-length?"),
    (["evaluate", "x.pt", "--nosame-length"], "did you mean --no-same-length?"),
    (["train", "--nooverwrite"], "--nooverwrite is not an option: leaving out "
     "--overwrite is the default"),  # no --no-overwrite: the opposite's line stays
])
def test_a_missed_no_flag_of_a_pair_is_a_near_miss(tmp_path, argv, hint):
    said = one_line(txl(*argv, cwd=tmp_path), 2)
    assert said.endswith(f"({hint})"), said
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, tail", [
    (["train", f"{EM}overwrite=no"], "--overwrite takes no value: leave it out"),
    (["train", "--overwrite=no"], "--overwrite takes no value: leave it out"),
    (["train", "--overwrite=OFF"], "--overwrite takes no value: leave it out"),
    (["train", "--overwrite=0"], "--overwrite takes no value: leave it out"),
    (["train", f"{EM}fast-attn=False"], "--fast-attn takes no value: type "
     "--no-fast-attn"),
    (["train", f"{EM}tie-weights=no"], "--tie-weights takes no value: type "
     "--no-tie-weights"),
    (["train", "--tie-weights=false"], "--tie-weights takes no value: type "
     "--no-tie-weights"),
    (["train", "--no-tie-weights=no"], "--no-tie-weights takes no value: type "
     "--tie-weights"),
    (["train", "--overwrite=yes"], "--overwrite takes no value: type --overwrite"),
    (["train", f"{EM}overwrite=TRUE"], "--overwrite takes no value: type "
     "--overwrite"),
    (["train", "--overwrite=maybe"], "--overwrite takes no value"),
    (["train", f"{EM}help=3"], "--help takes no value: type --help"),  # fix-31aa
])
def test_a_flag_given_no_is_never_proposed_as_itself(tmp_path, argv, tail):
    said = one_line(txl(*argv, cwd=tmp_path), 2)
    assert said.startswith(f"{PROG} train: error: {argv[-1]}: ")
    assert said.endswith(f"; {tail}" if argv[-1][0] == EM else f": {tail}"), said
    assert "ignored explicit" not in said and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [
    ["data", "offline", "--out", "o.txt", "--chars", "300",
     f"{EM}distances=64,{MINUS}256"],
    ["train", f"{EM}lr=\uff11e-3"],
    ["train", f"{EM}device={EM}cpu"],
    ["train", f"{EM}lr=1e{MINUS}4"],
    ["evaluate", "x.pt", f"{EM}mode=sliding"],
])
def test_a_pasted_dash_proposal_is_taken_when_pasted_back(tmp_path, argv):
    said = one_line(txl(*argv, cwd=tmp_path), 2)
    proposal = said.rpartition("; type ")[2].split(" (")[0]
    assert proposal.startswith("--"), said
    if "=VALUE" in proposal:  # refused either way: left to the user, and why
        assert said.endswith(")") and ("invalid" in said), said
        return
    back = txl(*argv[:-1], proposal, "-h", cwd=tmp_path)  # -h: after it is read
    assert back.returncode == 0, (said, back.stderr)


@pytest.mark.parametrize("argv", [
    ["data", "--stats", "o.txt"], ["data", "-stats", "o.txt"],
    ["data", "--offline", "--out", "o15.txt"], ["data", "-offline"],
    ["data", "--text8"], ["data", "-text8", "--quiet"],
])
def test_a_data_command_typed_as_an_option_is_named(tmp_path, argv):
    name = argv[1].lstrip("-")
    assert one_line(txl(*argv, cwd=tmp_path), 2) == (
        f"{PROG} data: error: {argv[1]}: {name} is a command, not an option: "
        f"type {' '.join(['data', name, *argv[2:]])}")  # kept (probe 26g); data
    # first (fix-31ak): `stats o.txt` pasted was 'unknown command'.
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, opt, tail", [
    (["data", "offline", "--out=--"], "--out", ""),  # required: never left out
    (["train", "--run-dir=--"], "--run-dir", ", or leave it out and give --out or "
     "--resume"),  # train refuses no --run-dir, --out nor --resume
    (["train", "--run-dir", "q", "--steps=--"], "--steps", " or leave it out"),
])
def test_leave_it_out_only_where_that_is_allowed(tmp_path, argv, opt, tail):
    prog = " ".join(argv[:2]) if argv[0] == "data" else "train"
    assert one_line(txl(*argv, cwd=tmp_path), 2) == (
        f"{PROG} {prog}: error: {opt}=--: '--' is not a value (it only ends the "
        f"options); give {opt} a value{tail}")
    assert list(tmp_path.iterdir()) == []
    if opt == "--run-dir":  # and left out with neither, train says so
        said = one_line(txl("train", cwd=tmp_path), 2)
        assert said.endswith("error: give --run-dir DIR (where checkpoints and "
                             "metrics go)"), said


@pytest.mark.parametrize("word", ["-no-overwrite", "-no_overwrite", "--no-overwrite"])
def test_a_single_dash_opposite_gets_the_double_dash_line(tmp_path, word):
    assert one_line(txl("train", word, cwd=tmp_path), 2) == (
        f"{PROG} train: error: unrecognized arguments: {word} ({word} is not an "
        "option: leaving out --overwrite is the default)")


@pytest.mark.parametrize("word", [f"-h{MINUS}", f"-h{EM}", "-h5"])
def test_h_then_a_pasted_dash_takes_no_value(tmp_path, word):
    assert one_line(txl("train", word, cwd=tmp_path), 2) == (
        f"{PROG} train: error: {word}: -h takes no value: type -h")  # fix-31aa


@pytest.mark.parametrize("word, shown", [
    ("\u200b", r"'\u200b'"), (r"\u200b", r"'\\u200b'"),
    ("\x1b[31mred", r"'\x1b[31mred'"), (r"\x1b[31mred", r"'\\x1b[31mred'"),
])
def test_words_that_would_look_alike_are_shown_apart(tmp_path, word, shown):
    assert one_line(txl("evaluate", "x.pt", word, cwd=tmp_path), 2) == (
        f"{PROG} evaluate: error: unrecognized arguments: {shown} (see --help)")
