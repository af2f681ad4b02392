"""Probe 24's path and data findings (issue 31, fix-31ab): bench --json now expands
'~' as every path option does; data's and the top level's misplaced options are
named; pasted proposals are quoted for a shell; kernel_path's line for a link
before '..' tells the truth; --out=-- and --resume=-- say what else to give."""

import os
import subprocess
import sys

from test_cli_faults import ENV, one_line

PROG = "python -m txl_mini"
QUICK = ("bench", "--quick", "--rounds", "1", "--steps", "1", "--max-attn-len",
         "128", "--long-segments", "20", "--quiet")


def in_home(tmp_path, *argv):
    """txl ARGV run in tmp_path/cwd, with HOME=tmp_path/home."""
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "cwd").mkdir(exist_ok=True)
    env = dict(ENV, HOME=str(tmp_path / "home"))
    return subprocess.run([sys.executable, "-m", "txl_mini", *argv], env=env,
                          cwd=tmp_path / "cwd", text=True, capture_output=True,
                          timeout=300)


def test_bench_json_expands_the_home_and_says_where_it_went(tmp_path):
    res = in_home(tmp_path, *QUICK, "--json", "~/j.json")
    assert res.returncode == 0, res.stderr
    home = tmp_path / "home"
    assert (home / "j.json").is_file() and not (tmp_path / "cwd" / "~").exists()
    assert res.stdout.splitlines()[-1] == f"wrote the results as JSON to {home}/j.json"


def test_bench_json_checks_and_writes_the_same_expanded_path(tmp_path):
    (tmp_path / "home" / "hx").mkdir(parents=True)
    res = in_home(tmp_path, *QUICK, "--json", "~/hx/../j3.json")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "home" / "j3.json").is_file()
    assert os.listdir(tmp_path / "cwd") == []


def test_bench_json_refuses_a_home_of_no_user(tmp_path):
    res = in_home(tmp_path, *QUICK, "--json", "~nouser/x.json")
    line = one_line(res, 2)
    assert line == (f"{PROG} bench: error: --json ~nouser/x.json: ~nouser names the "
                    "home of user 'nouser', and there is no such user; give another "
                    "path (./~nouser/x.json for a folder so named)"), line
    assert os.listdir(tmp_path / "cwd") == []
