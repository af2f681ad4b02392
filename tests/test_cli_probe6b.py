"""Issue 31, sixth probe (b): signals, the environment and start-up (real subprocesses,
real signals; each test failed before its fix unless it says it guards)."""

import glob
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from test_cli_faults import ENV, one_line, start, tiny, wait_for

NOUSER = "~nouser_txl_probe"  # a ~user that names no user here


def popen(argv, cwd, env=None, hup=signal.SIG_DFL):
    """A command as a terminal starts it, its stderr in cwd/err.txt (read while it
    runs); `hup`: SIGHUP's disposition inherited (SIG_IGN: as under nohup)."""
    def preexec():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, hup)
    err = open(os.path.join(cwd, "err.txt"), "w")
    return subprocess.Popen([sys.executable, "-m", "txl_mini", *map(str, argv)],
                            env=env or ENV, cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=err, preexec_fn=preexec)


def ended(proc, cwd, timeout=60) -> tuple[int, str]:
    """(exit status, stderr) once it ends; killed (and failed) if it does not."""
    try:
        proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"still running {timeout} s after the signal")
    with open(os.path.join(cwd, "err.txt")) as f:
        return proc.returncode, f.read()


def txl(*argv, cwd, env=None) -> subprocess.CompletedProcess:
    """`python -m txl_mini ARGV` in `cwd`, with ENV and `env` set."""
    return subprocess.run([sys.executable, "-m", "txl_mini", *map(str, argv)],
                          env=dict(ENV, **(env or {})), cwd=cwd, text=True,
                          capture_output=True, timeout=300)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("sig,code,words", [
    (signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_signal_stops_the_wait_for_the_other_ranks(tmp_path, text, sig, code, words):
    """Finding 1: rank 0 of 2 whose other process never comes up (a launch by hand)
    waited in torch's rendezvous, in C++, where no Python handler ran: Ctrl-C and
    SIGTERM were ignored, silently, for 30 minutes. Now it says what it waits for
    (after 10 s) and a signal stops it with its line."""
    env = dict(ENV, WORLD_SIZE="2", RANK="0", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()))
    proc = popen(["train", *tiny(text, tmp_path / "dd")], tmp_path, env)
    try:
        wait_for(lambda: "waiting for" in (tmp_path / "err.txt").read_text(), 90)
    finally:
        proc.send_signal(sig)
    rc, err = ended(proc, tmp_path)
    lines = err.splitlines()
    assert rc == code and len(lines) == 2, err
    assert lines[0] == ("python -m txl_mini train: waiting for all 2 processes at "
                        f"127.0.0.1:{env['MASTER_PORT']} (WORLD_SIZE); Ctrl-C stops")
    assert lines[1].startswith(f"python -m txl_mini train: {words} before training")
    assert not (tmp_path / "dd").exists()


@pytest.mark.parametrize("env,argv,named", [
    ({"TXL_MINI_CACHE": NOUSER + "/x"}, ["data", "text8", "--quiet"],
     f"TXL_MINI_CACHE='{NOUSER}/x' in the environment"),
    ({"TXL_MINI_CACHE": NOUSER + "/x"},
     ["data", "text8", "--quiet", "--path", "t8.zip"],
     f"TXL_MINI_CACHE='{NOUSER}/x' in the environment"),
    ({"TXL_MINI_CACHE": "", "XDG_CACHE_HOME": NOUSER}, ["data", "text8", "--quiet"],
     f"XDG_CACHE_HOME='{NOUSER}' in the environment"),
    ({}, ["data", "text8", "--quiet", "--cache-dir", NOUSER + "/x"],
     f"--cache-dir {NOUSER}/x"),
    ({"TXL_MINI_CACHE": NOUSER + "/x"},
     ["train", "--corpus", "text8", "--steps", "2", "--run-dir", "r"],
     f"TXL_MINI_CACHE='{NOUSER}/x' in the environment"),
    ({}, ["train", "--preset", "tiny", "--steps", "2", "--quiet", "--run-dir",
          NOUSER + "/r"], f"--run-dir {NOUSER}/r"),
    ({}, ["data", "offline", "--chars", "2000", "--out", NOUSER + "/o.txt"],
     f"--out {NOUSER}/o.txt"),
])
def test_a_home_of_no_user_is_one_line(tmp_path, env, argv, named):
    """Finding 2: `~nouser` in TXL_MINI_CACHE (or --cache-dir) was pathlib's 'Could
    not determine home directory' traceback, exit 1, and train left its run folder
    empty; in --run-dir or --out it was kept as typed: a folder '~nouser' made here.
    Now one line naming the setting, exit 2, nothing made."""
    res = txl(*argv, cwd=tmp_path, env=env)
    line = one_line(res, 2)
    user = NOUSER[1:]
    assert f": error: {named}: ~{user} names the home of user '{user}', and there is " \
           "no such user; give another path (./~" in line, line
    assert os.listdir(tmp_path) == []


def test_sighup_during_data_offline_is_one_line_and_tidy(tmp_path):
    """Finding 3: SIGHUP (the terminal closed) killed `data offline` with no line,
    exit 129, and left its .tmp file; SIGTERM tidied up. Now SIGHUP does too."""
    proc = popen(["data", "offline", "--chars", "20000000", "--out", "big.txt"],
                 tmp_path)
    wait_for(lambda: glob.glob(str(tmp_path / ".big.txt.*")), 120)
    proc.send_signal(signal.SIGHUP)
    rc, err = ended(proc, tmp_path)
    assert rc == 129 and err == "python -m txl_mini data offline: hung up (SIGHUP)\n"
    assert os.listdir(tmp_path) == ["err.txt"]


def test_sighup_while_train_builds_its_corpus_removes_the_run_folder(tmp_path):
    """Finding 3: SIGHUP while train built its corpus left the run folder with only
    .lock in it (SIGTERM removed it)."""
    proc = popen(["train", "--preset", "tiny", "--offline-chars", "20000000",
                  "--steps", "2", "--quiet", "--run-dir", "hup"], tmp_path)
    wait_for(lambda: (tmp_path / "hup" / ".lock").exists(), 120)
    time.sleep(0.5)  # into the corpus build (20M characters: seconds)
    proc.send_signal(signal.SIGHUP)
    rc, err = ended(proc, tmp_path)
    assert rc == 129, err
    assert err.startswith("python -m txl_mini train: hung up (SIGHUP) before "), err
    assert err.count("\n") == 1 and os.listdir(tmp_path) == ["err.txt"]


def test_sighup_under_nohup_stays_ignored(tmp_path):
    """Guards finding 3's fix (passed before it too): a SIGHUP that nohup ignores
    stays ignored; the file is written."""
    proc = popen(["data", "offline", "--chars", "3000000", "--out", "o.txt"],
                 tmp_path, hup=signal.SIG_IGN)
    wait_for(lambda: glob.glob(str(tmp_path / ".o.txt.*")), 120)
    proc.send_signal(signal.SIGHUP)
    rc, err = ended(proc, tmp_path, 120)
    assert rc == 0 and err == "" and (tmp_path / "o.txt").stat().st_size >= 3_000_000


@pytest.mark.parametrize("delay", [0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
def test_sigterm_then_ctrl_c_at_start_up_is_named_sigterm(tmp_path, text, delay):
    """Finding 4: SIGTERM, then a Ctrl-C 10 ms later while the command started (torch
    loading), said 'interrupted', 130: Python runs the handlers of signals pending
    together by number, SIGINT's first. The first to arrive decides."""
    proc = start(["train", *tiny(text, tmp_path / "r")], cwd=tmp_path)
    time.sleep(delay)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.startswith("python -m txl_mini train: terminated (SIGTERM)"), err
    assert err.count("\n") == 1


def test_sigterm_then_ctrl_c_in_the_loop_names_both(tmp_path, text):
    """Finding 4: in the loop, SIGTERM then SIGINT said 'SIGINT again', exit 130.
    Now the first sets the status (143) and the line says both (or, if the save
    came between them, SIGTERM's line alone)."""
    argv = [a for a in tiny(text, tmp_path / "r", steps=100000) if a != "--quiet"]
    proc = popen(["train", *argv, "--eval-every", "0"], tmp_path)
    wait_for(lambda: "it/s" in (tmp_path / "err.txt").read_text(), 120)  # its bar
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.01)  # sent together, the kernel hands them over by number: SIGINT's
    proc.send_signal(signal.SIGINT)  # first, and no process can tell the order
    rc, err = ended(proc, tmp_path)
    assert rc == 143, err
    assert ("train: SIGTERM, then SIGINT: stopped at once" in err
            or "SIGTERM: saved" in err), err
    assert "SIGINT again" not in err and "interrupted" not in err


@pytest.mark.parametrize("argv", [["data", "stats", "{text}"],
                                  ["train", "--preset", "tiny", "--run-dir", "{d}/r"]])
def test_a_removed_working_folder_is_one_line(tmp_path, text, argv):
    """Finding 5: run in a folder since removed, every command failed in torch's
    import: 'Intel oneMKL FATAL ERROR: Cannot load libtorch_cpu.so', exit 2."""
    gone = tmp_path / "gone"
    gone.mkdir()
    argv = [a.format(text=text, d=tmp_path) for a in argv]
    res = subprocess.run(["sh", "-c", 'cd "$0" && rmdir "$PWD" && exec "$@"',
                          str(gone), sys.executable, "-m", "txl_mini", *argv],
                         env=ENV, text=True, capture_output=True, timeout=120)
    assert one_line(res, 2) == ("python -m txl_mini: error: the current folder no "
                                "longer exists; cd somewhere first")
    assert not (tmp_path / "r").exists()


def test_a_tqdm_variable_tqdm_cannot_read_is_one_line(tmp_path, text):
    """Finding 6: TQDM_MININTERVAL=abc failed tqdm's import in every command with a
    ValueError traceback, exit 1, --quiet or not. Refused as WORLD_SIZE=abc is."""
    res = txl("train", *tiny(text, tmp_path / "r"), cwd=tmp_path,
              env={"TQDM_MININTERVAL": "abc"})
    line = one_line(res, 2)
    assert line.startswith("python -m txl_mini train: error: TQDM_MININTERVAL='abc' "
                           "in the environment: tqdm cannot read it"), line
    assert os.listdir(tmp_path) == ["corpus.txt"]
