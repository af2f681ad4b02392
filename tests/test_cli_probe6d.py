"""Issue 31, sixth and seventh probes (d): bench's --long-segments had no upper bound
(10**9 ran on silently: a month, at the rate a probe saw); an import that never
returned held every signal. Real subprocesses; each failed before its fix."""

import os
import signal
import subprocess
import sys
import time

import pytest
from test_cli_faults import ENV, one_line, tiny, txl

from txl_mini.cli.stop import STUCK_S


def test_bench_refuses_long_segments_beyond_its_bound():
    res = txl("bench", "--long-segments", 10**9, "--quiet")
    line = one_line(res, 2)
    assert line == ("python -m txl_mini bench: error: --long-segments must be <= "
                    "100,000 (minutes of evaluation; the memory is flat after 2), "
                    "got 1,000,000,000")
    assert res.stdout == ""  # refused before the first measurement


STUCK = """import signal, sys
from txl_mini.cli import interrupt_once
from txl_mini.cli.stop import sigterm_raises, watch_arrivals
watch_arrivals()
interrupt_once()
try:
    with sigterm_raises():
        print("ready", flush=True)
        import stuck  # never returns: its loop spins as matplotlib's did
except KeyboardInterrupt as e:
    print("stopped by", type(e).__name__, getattr(e, "name", ""), flush=True)
    sys.exit(3)
"""


def test_a_second_signal_stops_an_import_that_never_returns(tmp_path):
    """A seventh probe: under ulimit -v, train's curves import of matplotlib spun for
    minutes; SIGTERM waited for the import to return (stop.deferred), and so did a
    Ctrl-C 20 s later: only kill -9 ended it. A second signal STUCK_S after the
    first now takes them there: the first names the stop."""
    (tmp_path / "stuck.py").write_text("while True:\n    pass\n")
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(tmp_path), ENV["PYTHONPATH"]])}
    p = subprocess.Popen([sys.executable, "-c", STUCK], env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout.readline() == "ready\n"
        time.sleep(0.5)  # inside the import
        p.send_signal(signal.SIGTERM)
        time.sleep(STUCK_S + 1)
        assert p.poll() is None  # the first waits for the import, as designed
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
    finally:
        p.kill()
    assert p.returncode == 3, err
    assert out == "stopped by Terminated SIGTERM\n"


CURVES = """import resource, sys
from txl_mini.cli.curves import plot_curves
from txl_mini.cli.memory import mapped
room = mapped() + 64 * 2**20  # less than matplotlib's import and a drawing need
resource.setrlimit(resource.RLIMIT_AS, (room, room))
print(plot_curves(sys.argv[1], [{"step": 1, "bpc": 4.0, "val_bpc": 4.1}]))
"""


def test_curves_are_not_drawn_without_room_under_ulimit_v(tmp_path):
    """A seventh probe: just above what train's memory check refuses, train wrote
    best.pt and last.pt, then spun for minutes importing matplotlib for curves.png
    (no signal stopped it). With less than curves.ROOM left, it is a warning."""
    res = subprocess.run([sys.executable, "-c", CURVES, str(tmp_path)], env=ENV,
                         text=True, capture_output=True, timeout=60)
    assert res.stdout == "False\n", res.stderr
    assert res.stderr.startswith("python -m txl_mini train: warning: curves.png is "
                                 "not drawn: less than 128 MiB is left under "
                                 "ulimit -v ("), res.stderr
    assert res.stderr.count("\n") == 1
    assert not (tmp_path / "curves.png").exists()


@pytest.mark.parametrize("corpus", ["cue", "names"])
def test_evaluate_refuses_a_path_for_a_generated_corpus_with_exit_2(paused, text,
                                                                    corpus):
    """evaluate said '...it reads no file' with exit 1 and without naming --path;
    train said it as an option's fault, exit 2."""
    res = txl("evaluate", paused, "--corpus", corpus, "--path", text)
    assert one_line(res, 2) == (
        f"python -m txl_mini evaluate: error: --path: corpus '{corpus}' is generated "
        "from its recorded settings; it reads no file (drop --path)")


def test_a_path_that_is_not_text8_is_exit_2_in_train_and_evaluate(paused, text,
                                                                  tmp_path):
    """`data text8 --path F` said so with exit 2; train and evaluate, exit 1."""
    res = txl("evaluate", paused, "--corpus", "text8", "--path", text)
    assert "failed verification" in one_line(res, 2)
    res = txl("train", *tiny(text, tmp_path / "r"), "--corpus", "text8")
    assert "failed verification" in one_line(res, 2)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("addr", ["nohost.invalid", "256.1.1.1"])
def test_a_master_addr_that_resolves_to_nothing_is_one_line(text, tmp_path, addr):
    """torch retried for 30 minutes, a warning a second, then a C++ stack dump."""
    env = {**ENV, "WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0",
           "MASTER_ADDR": addr, "MASTER_PORT": "29511"}
    res = subprocess.run([sys.executable, "-m", "txl_mini", "train",
                          *map(str, tiny(text, tmp_path / "r"))], env=env, text=True,
                         capture_output=True, timeout=60)
    line = one_line(res, 2)  # the resolver's words between: they vary by libc
    assert line.startswith(f"python -m txl_mini train: error: MASTER_ADDR='{addr}' "
                           "in the environment: no such host ("), line
    assert line.endswith("; torchrun sets it; unset WORLD_SIZE for one process)")
    assert not (tmp_path / "r").exists()
