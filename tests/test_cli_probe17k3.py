"""Issue 31, the seventeenth probe, item 4: with no HOME and a user id that has no
passwd entry (env -i, a container's --user, systemd's DynamicUser), every text8
command (data text8, train --corpus text8, evaluate --corpus text8) ended in a
traceback, 'RuntimeError: Could not determine home directory.' from Path.home() in
default_cache_dir, exit 1. Now one line: no home folder is known, and how to name a
cache folder (TXL_MINI_CACHE; data text8's --cache-dir), exit 2, before any work."""

import functools
import os
import pwd
import shutil
import subprocess
import sys

import pytest
from test_cli_faults import ENV, ROOT

UID = 12345
ZOO = os.path.join(ROOT, "book", "zoo", "ch6_xl_s0.pt")
NO_HOME = ("error: no home folder is known (HOME is not set, and user id 12345 has no "
           "entry in the password database), so text8's cache folder has none to go "
           "in. Set TXL_MINI_CACHE to a directory you can write.")


def _as_nobody(argv, cwd):
    """`python -m txl_mini ARGV` as env -i and setpriv run it: no HOME, uid 12345."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv")
    try:
        pwd.getpwuid(UID)
        pytest.skip(f"user id {UID} exists here")
    except KeyError:
        pass
    if not _readable_by_nobody():
        pytest.skip(f"user id {UID} cannot read this checkout or its venv (CI's "
                    "mktemp folder is 700); test_no_home_without_a_passwd_entry runs")
    os.chmod(cwd, 0o777)  # the user may work (and train) there
    return subprocess.run(
        ["env", "-i", "PATH=/usr/bin:/bin", f"PYTHONPATH={ROOT}", "OMP_NUM_THREADS=1",
         "CUDA_VISIBLE_DEVICES=", "setpriv", f"--reuid={UID}", f"--regid={UID}",
         "--clear-groups", sys.executable, "-m", "txl_mini", *argv],
        cwd=cwd, text=True, capture_output=True, timeout=300)


@functools.cache
def _readable_by_nobody() -> bool:
    return subprocess.run(
        ["env", "-i", f"PYTHONPATH={ROOT}", "setpriv", f"--reuid={UID}",
         f"--regid={UID}", "--clear-groups", sys.executable, "-c",
         "import sys, torch, txl_mini; "  # this checkout's (not an editable install's)
         f"sys.exit(not txl_mini.__file__.startswith({ROOT!r}) or "
         f"not open({ZOO!r}, 'rb').read(1))"],
        capture_output=True, timeout=300).returncode == 0


# the missing passwd entry, as Path.home() meets it: pwd.getpwuid raises KeyError
SHIM = ("import pwd\n\n\ndef _none(uid):\n    raise KeyError(uid)\n\n\n"
        "pwd.getpwuid = _none\n")


def _no_passwd_entry(argv, cwd):
    """`python -m txl_mini ARGV` with no HOME, as this user, and no passwd entry for
    it (a sitecustomize.py: setpriv's user cannot read a checkout in a 700 folder)."""
    shim = cwd / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SHIM)
    env = {k: v for k, v in ENV.items()
           if k not in ("HOME", "XDG_CACHE_HOME", "TXL_MINI_CACHE")}
    env["PYTHONPATH"] = f"{shim}{os.pathsep}{ROOT}"
    work = cwd / "work"
    work.mkdir()
    res = subprocess.run([sys.executable, "-m", "txl_mini", *argv], cwd=work,
                         env=env, text=True, capture_output=True, timeout=300)
    return res, work


ARGVS = [
    (["data", "text8", "--quiet"], " Or give --cache-dir DIR."),
    (["train", "--preset", "tiny", "--corpus", "text8", "--steps", "2",
      "--run-dir", "r", "--quiet"], ""),
    (["evaluate", ZOO, "--corpus", "text8", "--quiet"], ""),
]


@pytest.mark.parametrize("argv, also", ARGVS)
def test_no_home_without_a_passwd_entry(tmp_path, argv, also):
    res, work = _no_passwd_entry(argv, tmp_path)
    assert res.returncode == 2, res.stderr
    prog = " ".join(argv[:2] if argv[0] == "data" else argv[:1])
    line = NO_HOME.replace("12345", str(os.getuid()))
    assert res.stderr == f"python -m txl_mini {prog}: {line}{also}\n"
    assert res.stdout == "" and os.listdir(work) == []  # no run folder


@pytest.mark.parametrize("argv, also", ARGVS)
def test_no_home_is_one_line(tmp_path, argv, also):
    res = _as_nobody(argv, tmp_path)
    assert res.returncode == 2, res.stderr
    prog = " ".join(argv[:2] if argv[0] == "data" else argv[:1])
    assert res.stderr == f"python -m txl_mini {prog}: {NO_HOME}{also}\n"
    assert res.stdout == "" and os.listdir(tmp_path) == []  # no run folder
