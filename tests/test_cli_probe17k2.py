"""Issue 31, the seventeenth probe, items 2 and 3: with no temporary folder Python can
write in (a read-only /tmp and /var/tmp in a container, or `ulimit -f 0`), `bench`
printed a 25-line traceback ending 'No usable temporary directory found', and `train`
that bare line, exit 1, with no way out named. torch's compile cache goes in that
folder unless TORCHINDUCTOR_CACHE_DIR says where: both now refuse before any work,
one line, exit 2, naming what to set (or the file-size limit, which no folder
escapes)."""

import os
import resource
import shutil
import subprocess
import sys

import pytest
from test_cli_faults import ENV, tiny

TRIED = "torch's compile cache goes in a temporary folder, and Python found none it " \
        "could write a file in (it tried "


def _no_files():
    resource.setrlimit(resource.RLIMIT_FSIZE,
                       (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def _line(res, prog: str) -> str:
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"python -m txl_mini {prog}: error: {TRIED}")
    assert "Traceback" not in res.stderr and res.stdout == ""
    return res.stderr


@pytest.mark.parametrize("argv", [["bench", "--quick", "--quiet"],
                                  ["train", "--steps", "2"]])
def test_a_file_size_limit_of_0_is_named(tmp_path, text, argv):
    env = {k: v for k, v in ENV.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    if argv[0] == "train":
        argv = ["train", *tiny(text, tmp_path / "r")]
    res = subprocess.run([sys.executable, "-m", "txl_mini", *argv], env=env,
                         text=True, capture_output=True, timeout=300,
                         preexec_fn=_no_files, cwd=tmp_path)
    assert _line(res, argv[0]).endswith(
        "): the file-size limit (ulimit -f) lets no file be written; raise it\n")
    assert not (tmp_path / "r").exists()


def test_read_only_temporary_folders_name_the_way_out(tmp_path, text):
    """As in a container with a read-only root: /tmp and /var/tmp (and the working
    folder, under /tmp) mounted read-only; the run folder and a cache elsewhere."""
    shm = "/dev/shm"
    if not (shutil.which("unshare") and os.geteuid() == 0 and os.path.isdir(shm)):
        pytest.skip("needs root, unshare and /dev/shm")
    run = os.path.join(shm, f"k2run{os.getpid()}")
    cache = os.path.join(shm, f"k2ind{os.getpid()}")
    train = " ".join(["python", "-m", "txl_mini", "train", *map(str, tiny(text, run))])
    script = (f"mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp && "
              f"(mount --bind /var/tmp /var/tmp && mount -o remount,bind,ro /var/tmp;"
              f" true) && cd {tmp_path} && "
              f"python -m txl_mini bench --quick --quiet; echo rc=$? >&2; "
              f"{train}; echo rc=$? >&2; "
              f"TORCHINDUCTOR_CACHE_DIR={cache} {train}; echo rc=$? >&2")
    env = {k: v for k, v in ENV.items() if k not in ("TORCHINDUCTOR_CACHE_DIR",
                                                    "TMPDIR", "TEMP", "TMP")}
    env["PATH"] = os.path.dirname(sys.executable) + ":" + env.get("PATH", "")
    try:
        res = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env,
                             text=True, capture_output=True, timeout=600)
        if "mount:" in res.stderr or "unshare:" in res.stderr:
            pytest.skip(f"no private mounts here: {res.stderr.strip()[:200]}")
        way = ("): set TMPDIR to a writable folder, or TORCHINDUCTOR_CACHE_DIR to "
               "one")
        lines = res.stderr.splitlines()
        assert lines[0].startswith(f"python -m txl_mini bench: error: {TRIED}")
        assert lines[0].endswith(way) and lines[1] == "rc=2", res.stderr
        assert lines[2].startswith(f"python -m txl_mini train: error: {TRIED}")
        assert lines[2].endswith(way) and lines[3] == "rc=2", res.stderr
        assert lines[4:] == ["rc=0"], res.stderr  # the way out works
    finally:
        shutil.rmtree(run, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
