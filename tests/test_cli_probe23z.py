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
