"""Issue 31, a fourteenth probe of the command lines (f): text8's cache folder and
--path, too few file descriptors, a TORCH_* setting torch refuses, and open() with
no encoding. Each test failed on e39787f (subprocesses, as a user's shell runs them)."""

import os
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, tiny, txl

PROG = "python -m txl_mini"


def txl_env(env, *argv, **kw):
    """`python -m txl_mini ARGV` with `env` as its whole environment."""
    return subprocess.run([sys.executable, "-m", "txl_mini", *map(str, argv)],
                          env=env, text=True, capture_output=True, timeout=300, **kw)


@pytest.fixture
def immutable(tmp_path, chattr):
    """A folder even root cannot write into (chattr +i)."""
    d = tmp_path / "imm"
    d.mkdir()
    chattr(d, "i")
    return d


def _cache(tmp_path, kind, immutable_dir=None) -> str:
    """A cache folder whose text8.zip cannot be read or replaced."""
    if kind == "immutable":
        return str(immutable_dir)
    d = tmp_path / kind
    d.mkdir()
    if kind == "dangling":
        os.symlink("/mnt/gone/text8.zip", d / "text8.zip")
    elif kind == "folder":
        (d / "text8.zip").mkdir()
    else:  # a link to a device
        os.symlink("/dev/zero", d / "text8.zip")
    return str(d)


@pytest.mark.parametrize("kind", ["immutable", "dangling", "folder", "device"])
def test_a_cache_folder_text8_cannot_use_is_one_line(tmp_path, request, kind):
    """Finding 1: a cache folder that cannot be written (chattr +i) was a
    PermissionError traceback, a text8.zip there that is a link to nothing a
    FileNotFoundError one, a folder or a device there 'not a regular file; refusing
    to replace it' in one (exit 1 each). Now one line naming --cache-dir, exit 2."""
    imm = request.getfixturevalue("immutable") if kind == "immutable" else None
    cache = _cache(tmp_path, kind, imm)
    line = one_line(txl("data", "text8", "--quiet", "--cache-dir", cache), 2)
    assert line.startswith(f"{PROG} data text8: error: cannot use cache directory "
                           f"{cache}: "), line
    assert line.endswith("Give --cache-dir a directory you can write."), line


def test_a_cache_variable_text8_cannot_use_is_one_line_for_train(tmp_path):
    """Finding 1: train --corpus text8 with TXL_MINI_CACHE holding a text8.zip that
    links to nothing said 'cd2/text8.zip: No such file or directory; no checkpoint
    was written yet', exit 1. Now the same line as data text8's, naming the
    variable, exit 2."""
    cache = _cache(tmp_path, "dangling")
    res = txl_env(dict(ENV, TXL_MINI_CACHE=cache), "train", "--preset", "tiny",
                  "--corpus", "text8", "--quiet", "--run-dir", tmp_path / "r")
    line = one_line(res, 2)
    assert line.startswith(f"{PROG} train: error: cannot use cache directory {cache}: "
                           f"{cache}/text8.zip is a link to /mnt/gone/text8.zip, "
                           "which is not there"), line
    assert line.endswith("Set TXL_MINI_CACHE to a directory you can write."), line


@pytest.mark.parametrize("size", [300, 5000])  # over NAME_MAX; over PATH_MAX
def test_a_text8_path_too_long_is_one_line(tmp_path, size):
    """Finding 1: `data text8 --path <300 bytes>.zip` was an OSError traceback
    (File name too long) from pathlib's is_file(), exit 1. Its lengths are said, as
    a write's are (tests/test_cli_probe19o.py), not the OS's 'File name too long'."""
    path = "k" * size + ".zip" if size < 4096 else "/".join(["k" * 200] * 25)
    why = ("the file name is too long (304 bytes; at most 255 here)" if size < 4096
           else "the path is too long (at most 4,095 bytes)")
    line = one_line(txl("data", "text8", "--path", path, cwd=tmp_path), 2)
    assert line.startswith(f"{PROG} data text8: error: {path}: {why}. "
                           "Give --path text8.zip"), line[-200:]


def test_too_few_file_descriptors_is_one_line(tmp_path):
    """Finding 2: under `ulimit -n 5` the command's module cannot be opened; the
    handler's own lazy `import traceback` failed too: two chained tracebacks."""
    res = subprocess.run(["bash", "-c", 'ulimit -n 5; exec "$0" -m txl_mini '
                          'evaluate R', sys.executable], env=ENV, cwd=tmp_path,
                         text=True, capture_output=True, timeout=120)
    assert one_line(res, 1) == (f"{PROG} evaluate: error: too many open files to "
                                "load the command (ulimit -n 5; raise it)")


def test_a_torch_setting_torch_refuses_names_the_variable(tmp_path):
    """Finding 3: TORCH_LOGS=bogus was 'importing torch failed (ValueError: Invalid
    log settings: bogus, must be a comma separated list of fully) ...; is it
    installed, or shadowed ...?', exit 1: cut mid-sentence, blaming installation."""
    (tmp_path / "x.txt").write_text("some text")
    res = txl_env(dict(ENV, TORCH_LOGS="bogus"), "data", "stats", "x.txt",
                  cwd=tmp_path)
    line = one_line(res, 2)
    assert line.startswith(f"{PROG} data stats: error: torch refused "
                           "TORCH_LOGS='bogus' in the environment (Invalid log "
                           "settings: bogus, must be a "
                           "comma separated list of fully qualified module names"), line
    assert line.endswith("); fix or unset it"), line


def test_no_open_without_an_encoding(tmp_path, text):
    """Finding 4: PYTHONWARNDEFAULTENCODING=1 PYTHONWARNINGS=error made train a
    20-line traceback ending in EncodingWarning (outputs.py's open(tmp, "w")), and
    saved.py's open warned too. Every text open() now names its encoding."""
    env = dict(ENV, PYTHONWARNDEFAULTENCODING="1", PYTHONWARNINGS="error")
    r = tmp_path / "r"
    for argv in (["train", *tiny(text, r)],
                 ["evaluate", r, "--chars", "60", "--threads", "1"],
                 ["sample", r, "--chars", "5", "--threads", "1"],
                 ["data", "stats", text],
                 ["data", "offline", "--chars", "3000", "--out", tmp_path / "o.txt"]):
        res = txl_env(env, *argv)
        assert res.returncode == 0 and "Warning" not in res.stderr, res.stderr
