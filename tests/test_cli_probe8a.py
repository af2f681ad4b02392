"""Issue 31, eighth probe (a): progress-bar settings, names too long, text8's cache
folder, and files of a run written over (the findings of fix-31v).

Each test runs `python -m txl_mini` in a subprocess, as a user would, and failed
before its fix unless it says it guards.
"""

import os

import pytest
from cli_text import words
from test_cli_faults import data_offline, one_line, py, tiny, txl
from test_cli_probe6b import txl as txl_in

PROG = "python -m txl_mini"
LONG = "z" * 300  # a name longer than any file system's 255 bytes


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A finished tiny run (last.pt and best.pt) and its text."""
    d = tmp_path_factory.mktemp("run")
    (d / "t.txt").write_text(words(2000))
    res = txl("train", *tiny(d / "t.txt", d / "r"))
    assert res.returncode == 0, res.stderr
    return d / "r"


# -- 1. TQDM_* values tqdm's import takes but no bar can draw with ------------------

@pytest.mark.parametrize("name, value, error", [
    ("TQDM_BAR_FORMAT", "{bogus}", "KeyError: 'bogus'"),
    ("TQDM_BAR_FORMAT", "{", "ValueError: Single '{' encountered in format string"),
    ("TQDM_WRITE_BYTES", "1", "TypeError: ")])
def test_a_bar_setting_tqdm_cannot_draw_with_is_refused_at_once(tmp_path, text, name,
                                                                 value, error):
    """`TQDM_BAR_FORMAT='{bogus}' train ...` made its run folder, then a 30-line
    KeyError traceback at the first bar, exit 1 (TQDM_WRITE_BYTES: a TypeError from
    cli/stdout.py; '{': a line naming no variable). Now one line naming it, exit 2,
    before anything is made."""
    argv = [a for a in tiny(text, tmp_path / "tq") if a != "--quiet"]
    res = txl_in("train", *argv, cwd=tmp_path, env={name: value})
    line = one_line(res, 2)
    assert line.startswith(f"{PROG} train: error: {name}={value!r} in the environment: "
                           f"tqdm cannot draw a progress bar with it ({error}"), line
    assert line.endswith("); fix or unset it"), line
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]


def test_evaluate_refuses_a_bar_format_before_reading(run):
    """evaluate drew its bar after loading the checkpoint: the same traceback."""
    res = txl_in("evaluate", run, "--eval-chars", "60", "--threads", "1", cwd=run,
                 env={"TQDM_BAR_FORMAT": "{bogus}"})
    assert one_line(res, 2) == (
        f"{PROG} evaluate: error: TQDM_BAR_FORMAT='{{bogus}}' in the environment: tqdm "
        "cannot draw a progress bar with it (KeyError: 'bogus'); fix or unset it")


def test_our_bars_start_no_monitor_thread(tmp_path, text):
    """tqdm's monitor thread: under `ulimit -v 720000` it could not start and train
    printed tqdm's 3-line TqdmMonitorWarning before its own line. Our bars now start
    none (the command, then tqdm's state, in one process)."""
    argv = ["train", *tiny(text, tmp_path / "r")]
    res = py("-c", "import tqdm; from txl_mini.cli import main; "
             f"print(main({argv!r}), tqdm.tqdm.monitor)")
    assert res.returncode == 0 and res.stdout.splitlines()[-1] == "0 None", res


# -- 2. names longer than the file system takes -------------------------------------

def long_name_runs(tmp_path, text):
    """(argv, option): each output option given a name no file can have, and one
    that fits (241 bytes) only without atomic_path's temporary's 14 more."""
    tight = tmp_path / ("y" * 245)
    return [
        (["train", *tiny(text, tmp_path / "r"), "--out", tmp_path / f"{LONG}.pt"],
         "--out"),
        (["bench", "--quick", "--threads", "1", "--json", tmp_path / LONG], "--json"),
        (data_offline("--out", tmp_path / LONG), "--out"),
        (data_offline("--out", tight), "--out"),
        (data_offline("--out", tmp_path / "o.txt", "--deps-out",
                      tmp_path / "d" / LONG), "--deps-out")]


def test_an_output_name_too_long_is_refused_before_any_work(tmp_path, text):
    """`train --out <300 bytes>.pt` trained, then 'File name too long; ... kept
    (--resume lc2)', exit 1, and that resume failed the same way for ever; bench
    --json ran every benchmark first; data offline said it with exit 1. Now one
    line naming the option, exit 2, and nothing made."""
    for argv, opt in long_name_runs(tmp_path, text):
        res = txl(*argv)
        line = one_line(res, 2)
        assert f": error: {opt} " in line and "the file name is too long (" in line \
            and line.endswith("here); give a shorter one"), (argv, line)
        assert sorted(os.listdir(tmp_path)) == ["corpus.txt"], argv


def test_a_run_dir_name_too_long_is_refused_before_any_work(tmp_path, text):
    """Guards: --run-dir <300 bytes> was already refused, exit 2 (makedirs's 'File
    name too long'; its length since, as --out's: test_cli_probe18m)."""
    res = txl("train", *tiny(text, tmp_path / LONG))
    assert "a folder's name is too long (300 bytes; at most " in one_line(res, 2)
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]


def test_evaluate_says_a_checkpoint_name_is_too_long(tmp_path):
    """`evaluate <300 bytes>.pt` said 'no such checkpoint file' (then 'File name too
    long'; its length since, as --out's: test_cli_probe18m)."""
    path = tmp_path / f"{LONG}.pt"
    assert one_line(txl("evaluate", path), 2).startswith(
        f"{PROG} evaluate: error: {path}: the file name is too long (303 bytes; ")


# -- 3. text8's cache folder that cannot even be looked at --------------------------

@pytest.mark.parametrize("variable", ["TXL_MINI_CACHE", "XDG_CACHE_HOME"])
def test_a_cache_variable_too_long_names_the_variable(tmp_path, variable):
    """`TXL_MINI_CACHE=<300 bytes> data text8`: pathlib's OSError traceback, exit 1."""
    env = {"TXL_MINI_CACHE": "", variable: LONG}  # the first set (not empty) counts
    res = txl_in("data", "text8", cwd=tmp_path, env=env)
    assert one_line(res, 2) == (
        f"{PROG} data text8: error: {variable}={LONG!r} in the environment: a "
        "folder's name is too long (300 bytes; at most 255); give a shorter one")
    assert os.listdir(tmp_path) == []


def test_a_cache_dir_too_long_is_one_line(tmp_path):
    """`data text8 --cache-dir <300 bytes>`: the same traceback."""
    res = txl("data", "text8", "--cache-dir", tmp_path / LONG)
    assert one_line(res, 2) == (f"{PROG} data text8: error: --cache-dir "
                                f"{tmp_path / LONG}: a folder's name is too long (300 "
                                "bytes; at most 255); give a shorter one")


# -- 4. data offline over a run's files ---------------------------------------------

@pytest.mark.parametrize("opt, name", [("--out", "best.pt"), ("--deps-out", "last.pt")])
def test_data_offline_does_not_write_over_a_runs_files(run, tmp_path, opt, name):
    """`data offline --out RUN/best.pt --overwrite` wrote text over the checkpoint,
    exit 0 (train --out RUN/last.pt is refused). Now the same refusal."""
    before = (run / name).read_bytes()
    outs = {"--out": tmp_path / "o.txt", "--deps-out": tmp_path / "d.tsv",
            opt: run / name}
    res = txl(*data_offline(*[x for kv in outs.items() for x in kv]), "--overwrite")
    assert one_line(res, 2) == (f"{PROG} data offline: error: {opt} {run / name} is "
                                f"the {name} of a run, {run}; give a file outside it")
    assert (run / name).read_bytes() == before
    assert os.listdir(tmp_path) == []


# -- minor ----------------------------------------------------------------------------

def test_data_without_a_subcommand_prints_its_usage_on_stderr():
    """`python -m txl_mini data`: its help went to stdout (exit 2), where a script
    reads results; the bare `python -m txl_mini` uses stderr. (Since probe 10 it is
    one line there: test_cli_probe10z2, a missing or unknown command.)"""
    res = txl("data")
    assert res.returncode == 2 and res.stdout == "", res.stdout
    assert res.stderr.startswith(f"{PROG} data: error: which data? "), res.stderr


# -- a newline in a run directory's name ----------------------------------------------

def test_evaluate_prints_a_name_with_a_newline_on_one_line(run, tmp_path):
    """`evaluate 'nl<newline>run'` printed its header on two lines of stdout, while its
    error lines escape such names (errors.printable)."""
    odd = tmp_path / "nl\nrun"
    os.symlink(run, odd)
    res = txl("evaluate", odd, "--chars", "200", "--quiet")
    assert res.returncode == 0, res.stderr
    header, result = res.stdout.splitlines()
    assert header.startswith(f"{tmp_path}/nl\\nrun/best.pt: TransformerXL, segments")
    assert " bpc over " in result
