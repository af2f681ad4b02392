"""Issue 31, a hostile probe: an append-only folder (chattr +a: names are made in it,
never removed). text8's download left its `.text8.zip.*.tmp` there for good, and
the error named that file; a command that failed left for good the empty folder it
had made inside one (train --run-dir/--out, data offline --out, bench --json)."""

import os
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, tiny, txl

PROG = "python -m txl_mini"
SEALED = "is append-only (chattr +a): a folder made there could not be removed again"


@pytest.fixture
def append_only(tmp_path, chattr):
    """An empty append-only folder."""
    d = tmp_path / "ao"
    d.mkdir()
    chattr(d, "a")
    return d


def test_text8_is_not_downloaded_into_an_append_only_cache(append_only):
    line = one_line(txl("data", "text8", "--quiet", "--cache-dir", append_only), 2)
    assert line == (f"{PROG} data text8: error: --cache-dir {append_only}: cannot "
                    f"write to {append_only}: it is append-only (chattr +a): a file "
                    "written there cannot be renamed into place"), line
    assert os.listdir(append_only) == []


def test_train_names_the_variable_of_an_append_only_text8_cache(append_only, tmp_path):
    env = dict(ENV, TXL_MINI_CACHE=str(append_only))
    res = subprocess.run([sys.executable, "-m", "txl_mini", "train", "--preset", "tiny",
                          "--corpus", "text8", "--quiet", "--run-dir", tmp_path / "r"],
                         env=env, text=True, capture_output=True, timeout=300)
    line = one_line(res, 2)
    assert line.startswith(f"{PROG} train: error: TXL_MINI_CACHE='{append_only}' in "
                           f"the environment: cannot write to {append_only}: it is "
                           "append-only"), line
    assert os.listdir(append_only) == [] and not (tmp_path / "r").exists()


def test_no_cache_folder_is_made_in_an_append_only_folder(append_only):
    cache = append_only / "cache"
    line = one_line(txl("data", "text8", "--quiet", "--cache-dir", cache), 2)
    assert line == (f"{PROG} data text8: error: --cache-dir {cache}: cannot make "
                    f"{cache}: {append_only} {SEALED}; give another folder"), line
    assert os.listdir(append_only) == []


@pytest.mark.parametrize("case", ["run-dir", "out", "offline", "bench"])
def test_a_failed_command_makes_no_folder_in_an_append_only_one(append_only,
                                                                 tmp_path, case):
    """Each fails after its folder was made (on 9c14956): a text too short to
    train on, --distances too far for --chars, --compile on the CPU."""
    short = tmp_path / "short.txt"
    short.write_text("abc")
    argv, opt, new = {
        "run-dir": (["train", *tiny(short, append_only / "run")], "--run-dir",
                    append_only / "run"),
        "out": (["train", *tiny(short, tmp_path / "r"), "--out",
                 append_only / "o" / "m.pt"], "--out", append_only / "o"),
        "offline": (["data", "offline", "--out", append_only / "off" / "x.txt",
                     "--chars", "1000", "--distances", "900"],
                    f"--out {append_only / 'off' / 'x.txt'}", append_only / "off"),
        "bench": (["bench", "--quick", "--device", "cpu", "--compile", "--json",
                   append_only / "b" / "r.json"],
                  f"--json {append_only / 'b' / 'r.json'}", append_only / "b"),
    }[case]
    line = one_line(txl(*argv), 2)
    assert line.endswith(f"error: {opt}: cannot make {new}: {append_only} {SEALED}; "
                         "give another folder"), line
    assert os.listdir(append_only) == []
