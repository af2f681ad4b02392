"""Probe 7, signals, the lock, several ranks and imports (subprocesses; each test
failed before its fix). Where a moment cannot be hit by timing, an audit hook
(sys.addaudithook, in a launcher script) acts at it: the command runs unchanged."""

import os
import signal
import subprocess
import sys
import time

import pytest
import torch.distributed as dist
from test_cli_faults import ENV, one_line, py, tiny
from test_cli_probe6b import free_port

from txl_mini.checkpoint import read_checkpoint

# `python LAUNCHER train ...` is `python -m txl_mini train ...` with HOOK installed
LAUNCHER = """import os, runpy, signal, sys
{hook}
sys.addaudithook(hook)
runpy.run_module("txl_mini", run_name="__main__", alter_sys=True)
"""


def launcher(tmp_path, hook: str) -> str:
    path = tmp_path / "launch.py"
    path.write_text(LAUNCHER.format(hook=hook))
    return str(path)


# the run directory's .lock is open, and flock() is about to lock it: SIGTERM now
SIGNAL_AT_FLOCK = """
def hook(event, args):
    if event == "open" and str(args[0]).endswith("/.lock"):
        hook.armed = True
    elif event == "fcntl.flock" and getattr(hook, "armed", False):
        hook.armed = False
        os.kill(os.getpid(), signal.SIGTERM)
"""


def test_a_signal_as_the_lock_is_made_leaves_nothing(tmp_path, text):
    """Finding 2: a SIGTERM between DIR/.lock's creation and prepare_run_dir's
    return raised before train held the lock: .lock stayed, and with it the new
    folder. Now the signal waits until the lock is where the tidying finds it."""
    run_dir = tmp_path / "new" / "r"
    res = py(launcher(tmp_path, SIGNAL_AT_FLOCK), "train", *tiny(text, run_dir))
    line = one_line(res, 143)
    assert line.startswith("python -m txl_mini train: terminated (SIGTERM) before "
                           "training started"), line
    assert not (tmp_path / "new").exists(), os.listdir(tmp_path / "new")


# after the lock, the next import fails as CPython's did under ulimit -v 700000:
# SystemError, with (really) under 16 MiB of address space left
SYSTEM_ERROR_AT_IMPORT = """
import resource
def vm():
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) * 1024 for x in f if x.startswith("VmSize:"))
def hook(event, args):
    if event == "open" and str(args[0]).endswith("/.lock"):
        hook.armed = True
    elif event == "import" and getattr(hook, "armed", False):
        hook.armed = False
        if SHORT:
            limit = vm() + 16 * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        raise SystemError("error return without exception set")
"""


@pytest.mark.parametrize("short", [True, False], ids=["memory-short", "memory-left"])
def test_a_system_error_out_of_memory_is_one_line(tmp_path, text, short):
    """Finding 1: under a tight `ulimit -v`, an import sometimes raised SystemError
    ('error return without exception set'), not MemoryError: a traceback, and the
    run's folders left. Now, with memory short, it is out of memory: one line, exit
    1, nothing left. With memory to spare a SystemError is a bug: still a traceback."""
    hook = f"SHORT = {short}\n" + SYSTEM_ERROR_AT_IMPORT
    res = py(launcher(tmp_path, hook), "train", *tiny(text, tmp_path / "new" / "r"))
    if short:
        line = one_line(res, 1)
        assert line.startswith("python -m txl_mini train: error: out of memory (lower "
                               "--batch-size"), line
        assert "ulimit -v limits this process to" in line
        assert not (tmp_path / "new").exists()
    else:
        assert res.returncode == 1 and "Traceback" in res.stderr, res.stderr
        assert res.stderr.rstrip().endswith("error return without exception set")


@pytest.mark.parametrize("module", ["txl_mini.train", "txl_mini.cli.train"])
def test_the_old_spelling_in_a_removed_folder_is_one_line(tmp_path, module):
    """Finding 5: `python -m txl_mini.train` (and txl_mini.cli.train) in a folder
    since removed failed in torch's import, 'Intel oneMKL FATAL ERROR', exit 2, where
    `python -m txl_mini train` says one line. The old spelling's refusal now comes
    before torch, and the removed folder is said for every spelling."""
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", f"import os, sys; os.rmdir({str(gone)!r}); "
         f"os.execv(sys.executable, [sys.executable, '-m', {module!r}, '--steps', "
         "'2'])"], cwd=gone, env=ENV, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=120)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if module == "txl_mini.train":
        assert one_line(res, 2) == "use: python -m txl_mini train ..."
    else:
        assert one_line(res, 2) == ("python -m txl_mini: error: the current folder "
                                    "no longer exists; cd somewhere first")
    assert "torch" not in err


def test_the_old_spelling_does_not_load_torch(tmp_path):
    """Finding 5: its refusal comes before torch loads (seconds, to say one line)."""
    res = py("-X", "importtime", "-m", "txl_mini.sample", cwd=tmp_path)
    assert res.returncode == 2 and \
        "use: python -m txl_mini sample ..." in res.stderr.splitlines()
    assert " torch\n" not in res.stderr and "| torch\n" not in res.stderr


# -- two ranks launched by hand (gloo), each with its own exit status ------------------
ddp = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                         reason="torch.distributed with gloo is not available")


def two_ranks(argv, tmp_path, launch=("-m", "txl_mini"), **env):
    """Ranks 0 and 1 of `train ARGV`, as torchrun would start them."""
    env = dict(ENV, WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()), **env)
    return [subprocess.Popen([sys.executable, *launch, "train", *argv],
                             env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                             cwd=tmp_path, text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE) for r in (0, 1)]


def ended(procs):
    """(exit status, stdout, stderr) of each."""
    outs = [p.communicate(timeout=300) for p in procs]
    return [(p.returncode, *o) for p, o in zip(procs, outs)]


def ddp_args(text, run_dir, out):
    return [*tiny(text, run_dir, steps=2), "--batch-size", "8", "--device", "cpu",
            "--out", str(out)]


# which rank replaced --out (os.replace's audit event), one line each; rank 0 takes
# 3 s over its write, so that the others look for --out before it is back
LOG_OUT_WRITES = """
import time
def hook(event, args):
    if event == "os.rename" and str(args[1]).endswith("model.pt"):
        if os.environ["RANK"] == "0":
            time.sleep(3)
        with open(os.environ["OUT_LOG"], "a") as f:
            f.write(os.environ["RANK"] + "\\n")
"""


@ddp
def test_a_finished_ddp_run_rewrites_its_out_on_rank_0_only(tmp_path, text):
    """Finding 3: a torchrun resume of a finished run whose --out is missing wrote
    --out again on every rank (each its own temporary file, renamed over the same
    name). Now rank 0 writes it; the others leave it to rank 0."""
    out = tmp_path / "model.pt"
    results = ended(two_ranks(ddp_args(text, tmp_path / "r", out), tmp_path))
    assert [rc for rc, _, _ in results] == [0, 0], results
    os.remove(out)
    log = tmp_path / "writes.txt"
    results = ended(two_ranks(["--resume", str(tmp_path / "r")], tmp_path,
                              [launcher(tmp_path, LOG_OUT_WRITES)], OUT_LOG=str(log)))
    assert [rc for rc, _, _ in results] == [0, 0], results
    assert results[0][2].endswith(f"wrote {out} from its last.pt\n"), results[0][2]
    assert results[1][2] == ""
    assert log.read_text() == "0\n"
    assert read_checkpoint(out)["meta"]["steps"] == 2


@ddp
def test_a_late_signal_stops_every_rank_alike(tmp_path, text):
    """Finding 4: a signal that came to one rank after the loop's last look at its
    flag (in the last saves or curves.png) was seen by that rank alone: it exited
    143, the other 0. Now the ranks agree, as the loop's stop does: both 143."""
    pytest.importorskip("matplotlib")  # its import is the moment the signal comes
    out = tmp_path / "model.pt"
    procs = two_ranks(ddp_args(text, tmp_path / "r", out), tmp_path)
    deadline = time.time() + 240
    while not out.exists() and time.time() < deadline and procs[0].poll() is None:
        time.sleep(0.005)
    # rank 0 wrote --out; it draws curves.png next (matplotlib's import: a second)
    procs[0].send_signal(signal.SIGTERM)
    results = ended(procs)
    assert [rc for rc, _, _ in results] == [143, 143], results
    assert results[0][2] == (f"SIGTERM after the last step: {tmp_path}/r/last.pt "
                             "(step 2/2) and best.pt are saved and complete\n")
    assert results[1][2] == ""
    assert read_checkpoint(tmp_path / "r" / "last.pt")["extra"]["step"] == 2
