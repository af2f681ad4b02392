"""The tenth hostile probe of the command lines, findings of helper fix-31z2 (and the
eleventh's: a signal under `python -m txl_mini.cli.NAME`), bench --profile's C++
lines, matplotlib's font lines, one-line usage errors, tqdm's warnings, a text with
no letters (subprocesses; each test failed before its fix)."""

import os
import signal
import subprocess
import sys
import time

import pytest
from cli_text import words
from test_cli_faults import ENV, one_line, py, start, tiny
from test_cli_probe10x import txl_env


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_under_the_cli_module_spelling_stops_the_command(tmp_path, sig):
    """An eleventh probe: `python -m txl_mini.cli.sample ...` ran on to the end, exit
    0, after one Ctrl-C or SIGTERM (evaluate, bench, data offline and train's start
    too). d552a9d had the command run from txl_mini/cli/__init__.py, inside the
    import of txl_mini.cli, where every signal waits for the import to return; it is
    reverted. Now 130 / 143 and one line, as `python -m txl_mini sample` gives."""
    text = tmp_path / "text.txt"
    text.write_text(words(3000))
    run = tmp_path / "r"
    assert py("-m", "txl_mini", "train", *tiny(str(text), run)).returncode == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "txl_mini.cli.sample", str(run), "--chars", "10000000",
         "--threads", "1"], env=ENV, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.read(40)  # generating: past every import
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + getattr(signal, sig), err
    assert ("interrupted" if sig == "SIGINT" else "terminated (SIGTERM)") in (
        err.strip().splitlines()[-1]), err


def test_bench_profile_leaves_stderr_to_us(tmp_path):
    """Finding 2: `bench --profile --quiet` printed torch's C++ profiler lines to
    stderr ('USDT:... SyncActivityProfilerHandler.cpp:52] profiler_start', a start and
    a stop per model); now stderr is empty, and the split is still printed."""
    res = py("-m", "txl_mini", "bench", "--quick", "--profile", "--quiet", "--device",
             "cpu", "--rounds", "1", "--steps", "1", "--max-attn-len", "128",
             cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert "where one training step's time goes" in res.stdout


COMMANDS = "train, evaluate, sample, data, bench"


@pytest.mark.parametrize("argv, line", [
    (["bogus"], "python -m txl_mini: error: unknown command 'bogus' "
                f"({COMMANDS}; --help lists them)"),
    (["--version"], "python -m txl_mini: error: unknown command '--version' "
                    f"({COMMANDS}; --help lists them)"),
    ([], f"python -m txl_mini: error: which command? ({COMMANDS}; --help lists them)"),
    (["data"], "python -m txl_mini data: error: which data? (text8, stats, offline; "
               "--help lists them)"),
])
def test_a_missing_or_unknown_command_is_one_line(argv, line):
    """Minor: `python -m txl_mini bogus` (or --version) printed 'unknown command' and
    the 7-line listing, `data` alone its 12-line usage with no 'error:' line; now one
    line each, exit 2. --help still lists the commands, on stdout."""
    res = py("-m", "txl_mini", *argv)
    assert one_line(res, 2) == line and res.stdout == ""
    helped = py("-m", "txl_mini", "--help")
    assert helped.returncode == 0 and helped.stderr == ""
    assert "commands:\n  train " in helped.stdout


def test_bench_interrupted_in_its_training_bar_ends_with_its_line(tmp_path):
    """Minor: a Ctrl-C while bench's training bar was drawn printed 'python -m
    txl_mini bench: interrupted' and then the bar once more, below it (the bar was
    closed only when its frame was freed, after the line). The line is last now."""
    proc = start(["bench", "--quick", "--device", "cpu", "--rounds", "50", "--steps",
                  "1", "--max-attn-len", "128", "--no-paper-shape"], cwd=tmp_path)
    seen = b""
    while b"training:" not in seen:  # the bar is up: tqdm draws without newlines
        chunk = os.read(proc.stderr.fileno(), 4096)
        assert chunk, seen.decode()
        seen += chunk
    time.sleep(0.2)  # a few steps in (at once it was sometimes still in tqdm's init)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    last = (seen.decode() + err).rstrip("\n").rsplit("\n", 1)[-1]
    assert last == "python -m txl_mini bench: interrupted"


def test_a_tqdm_setting_that_warns_while_drawing_is_refused(tmp_path):
    """Minor: TQDM_INITIAL=-1 gave tqdm's two-line TqdmWarning (a site-packages
    path) and bars at '-0%'; a warning while the start-up check draws is a refusal
    now, naming the variable, exit 2."""
    (tmp_path / "t.txt").write_text("some text\n")
    res = txl_env({"TQDM_INITIAL": "-1"}, "data", "stats", tmp_path / "t.txt")
    assert one_line(res, 2) == (
        "python -m txl_mini data stats: error: TQDM_INITIAL='-1' in the environment: "
        "tqdm cannot draw a progress bar with it (TqdmWarning: clamping frac to range "
        "[0, 1]); fix or unset it")


def test_data_stats_of_a_text_with_no_letters_says_train_refuses_it(tmp_path):
    """Minor: `data stats` of '12345 678' listed 'z' 0.000, 'y' 0.000 ... as the most
    frequent characters, and said nothing of train refusing such a text (it has no
    letters); now only characters it has are listed, and a note says so."""
    (tmp_path / "digits.txt").write_text("12345 678")
    res = py("-m", "txl_mini", "data", "stats", tmp_path / "digits.txt")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert res.stdout.splitlines()[1:] == [
        "  most frequent: ' ' 0.111",
        "  no letters a-z/A-Z: train refuses it as --path (each of its bytes would "
        "become a space)"]


def test_a_matplotlibrc_with_an_unknown_font_leaves_stderr_to_us(tmp_path):
    """Finding 3 (a guard: c389268, which holds matplotlib's log back while
    curves.png is drawn, covers it): a matplotlibrc in the current folder naming a
    font that is not there made a probe's train print 191 lines "findfont: Font
    family 'nosuchfont' not found." (matplotlib.font_manager's log), exit 0."""
    (tmp_path / "matplotlibrc").write_text("font.family: nosuchfont\n")
    (tmp_path / "text.txt").write_text(words(2000))
    res = py("-m", "txl_mini", "train", *tiny(tmp_path / "text.txt", "r"),
             cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert (tmp_path / "r" / "curves.png").is_file()
