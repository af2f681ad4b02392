"""Issue 31, the eighteenth probe, item 7: `data stats -` said 'cannot read -: no
such file', where `data offline --out -` explains that '-' is not standard output.
Every file to read now says '-' names a file, not standard input; a file that is
named '-' is read as before."""

import pytest
from test_cli_faults import txl

WHY = "no such file; '-' names a file here, not standard input: give the"


@pytest.mark.parametrize("argv, what", [
    (["data", "stats", "-"], "text"),
    (["train", "--path", "-", "--run-dir", "r"], "text"),
    (["evaluate", "x.pt", "--path", "-"], "text"),
    (["evaluate", "-"], "checkpoint"),
    (["sample", "-"], "checkpoint"),
])
def test_a_dash_to_read_is_not_standard_input(tmp_path, argv, what):
    res = txl(*argv, cwd=tmp_path, input="the cat sat on the mat\n")
    assert res.returncode == 2 and res.stdout == "", res.stderr
    assert res.stderr.endswith(f": error: cannot read -: {WHY} {what} as a file "
                               "name\n"), res.stderr
    assert not (tmp_path / "r").exists()


def test_a_file_named_dash_is_read(tmp_path):
    (tmp_path / "-").write_text("the cat sat on the mat " * 20)
    res = txl("data", "stats", "-", cwd=tmp_path)
    assert res.returncode == 0 and "460" in res.stdout, res.stderr
