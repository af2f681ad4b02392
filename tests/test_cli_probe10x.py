"""The ninth hostile probe of the command lines, findings of helper fix-31x: a broken
install, a stream's encoding, a file name's undecodable byte, `python -m` of a
module that is no command, matplotlib's and tqdm's settings (subprocesses; each
test failed before its fix)."""

import os
import resource
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, py, tiny, txl


def txl_env(env: dict, *argv, **kw):
    """`python -m txl_mini ARGV` with `env` added to the tests' environment."""
    return subprocess.run([sys.executable, "-m", "txl_mini", *map(str, argv)],
                          env=dict(ENV, **env), text=True, capture_output=True,
                          timeout=300, **kw)


def test_a_torch_py_in_the_current_folder_is_one_line(tmp_path):
    """Finding 1a: a torch.py that raises, where `python -m` looks first (the current
    folder): a 25-line ImportError traceback; now one line naming torch and where
    it was imported from, exit 1."""
    (tmp_path / "torch.py").write_text("raise ImportError('boom')\n")
    res = txl("train", "--help", cwd=tmp_path)
    assert one_line(res, 1) == (
        "python -m txl_mini train: error: importing torch failed (ImportError: boom) "
        f"from {tmp_path}/torch.py; is it installed, or shadowed by a file of that "
        "name?")


def test_a_broken_numpy_is_named_not_torch(tmp_path):
    """Finding 1a: numpy whose import fails (as a broken C extension does), reached
    from torch's own import: numpy is named, not torch."""
    (tmp_path / "numpy.py").write_text("raise ImportError('C extension broken')\n")
    res = txl("train", "--help", cwd=tmp_path)
    assert one_line(res, 1).startswith(
        "python -m txl_mini train: error: importing numpy failed (ImportError: C "
        f"extension broken) from {tmp_path}/numpy.py")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux's loader")
def test_torch_that_cannot_be_mapped_under_ulimit_v_is_one_line(tmp_path):
    """Finding 1b: under `ulimit -v 300000` even `train --help` ended in torch's
    ImportError traceback ('libtorch_cpu.so: failed to map segment from shared
    object'); now one line: out of memory under the limit, exit 1."""
    limit = 300_000 * 1024

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    res = subprocess.run([sys.executable, "-m", "txl_mini", "train", "--help"],
                         env=ENV, text=True, capture_output=True, timeout=120,
                         cwd=tmp_path, preexec_fn=cap)
    assert one_line(res, 1) == (
        "python -m txl_mini train: error: out of memory loading torch (ulimit -v "
        "limits this process to 293 MiB; raise it)")


def test_non_ascii_names_under_an_ascii_stdout(tmp_path, text):
    """Finding 2: under PYTHONIOENCODING=ascii, train with --run-dir .../é and `data
    stats .../é.txt` refused with "'ascii' codec can't encode character", exit 1;
    now they work, the name escaped as \\xe9 in what they print."""
    env = {"PYTHONIOENCODING": "ascii"}
    run = tmp_path / "é"
    res = txl_env(env, "train", *tiny(text, run))
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert f"run dir: {tmp_path}/\\xe9\n" in res.stdout
    assert (run / "last.pt").is_file()
    named = tmp_path / "é.txt"
    named.write_text(open(text).read())
    res = txl_env(env, "data", "stats", named)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert res.stdout.startswith(f"{tmp_path}/\\xe9.txt: 2,000 chars")


def run_bytes(*argv):
    """`python -m txl_mini ARGV`: its status, stdout and stderr as bytes."""
    res = subprocess.run([sys.executable, "-m", "txl_mini", *argv], env=ENV,
                         capture_output=True, timeout=300)
    return res.returncode, res.stdout, res.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="a file name that is not UTF-8")
def test_a_byte_the_locale_cannot_decode_is_escaped_one_way(tmp_path, text):
    """Finding 3: a run folder named with the byte 0xff showed as \\xff in some
    lines, \\udcff (stderr's backslashreplace, argparse's repr of a choice) or the
    raw byte (stdout) in others; now \\xff in every command's every line."""
    byte = os.fsdecode(b"\xff")
    run = f"{tmp_path}/{byte}"
    outs = []
    for argv in (["train", *tiny(text, run)],
                 ["train", *tiny(text, run)],  # refused: it is there
                 ["evaluate", run, "--quiet"],
                 ["sample", run, "--chars", "10"],
                 ["evaluate", f"{run}/none.pt"],
                 ["data", "stats", f"{run}/none.txt"],
                 [byte], ["train", "--preset", byte]):  # repr()'s: an unknown name
        code, out, err = run_bytes(*argv)
        outs.append(out + err)
        assert b"\\xff" in out + err, (argv, code, out, err)
    assert not [o for o in outs if b"\\udcff" in o or b"\xff" in o], outs


@pytest.mark.parametrize("module, line", [
    ("txl_mini.cli.data_offline", "use: python -m txl_mini data offline ..."),
    ("txl_mini.cli", "use: python -m txl_mini <command> ..."),
    ("txl_mini.model", "use: python -m txl_mini <command> ..."),
])
def test_a_module_that_is_no_command_says_how(tmp_path, module, line):
    """Finding 4: `python -m txl_mini.cli.data_offline --help` printed nothing and
    exited 0; txl_mini.cli and txl_mini.model printed runpy's warning or nothing.
    Now one line, exit 2, before torch loads (in well under torch's seconds)."""
    assert one_line(py("-m", module, "--help", cwd=tmp_path), 2) == line
    res = py("-X", "importtime", "-m", module, "--help", cwd=tmp_path)
    assert res.returncode == 2 and line in res.stderr.splitlines()
    assert " torch\n" not in res.stderr and "| torch\n" not in res.stderr


def test_an_unusable_mplconfigdir_leaves_stderr_to_us(tmp_path, text):
    """Finding 5: MPLCONFIGDIR=/dev/null: matplotlib's own lines ('mkdir -p failed
    ...', 'Matplotlib created a temporary cache directory ...') on train's stderr.
    Now none, and curves.png is drawn."""
    res = txl_env({"MPLCONFIGDIR": "/dev/null"}, "train", *tiny(text, tmp_path / "r"))
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert (tmp_path / "r" / "curves.png").is_file()


@pytest.mark.parametrize("setting, why", [
    ("TQDM_DELAY=inf", "it leaves the bar's line unfinished, without a newline"),
    ("TQDM_POSITION=-3", "it moves the cursor with escape codes"),
])
def test_tqdm_settings_that_garble_the_display_are_refused(tmp_path, text, setting,
                                                           why):
    """Finding 5: TQDM_DELAY=inf left stderr without its last newline (the shell's
    prompt joined the bar); TQDM_POSITION=-3 wrote cursor-movement codes. Now
    refused before any work, naming the variable, exit 2, as other TQDM_* are."""
    name, value = setting.split("=")
    argv = [a for a in tiny(text, tmp_path / "r") if a != "--quiet"]
    res = txl_env({name: value}, "train", *argv)
    assert one_line(res, 2) == (
        f"python -m txl_mini train: error: {name}={value!r} in the environment: tqdm "
        f"cannot draw a progress bar with it ({why}); fix or unset it")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("colour", ["green", "#00ff00"])
def test_a_tqdm_colour_is_no_cursor_movement(colour):
    """An eleventh probe: TQDM_COLOUR=green (any real colour) was refused as 'it moves
    the cursor with escape codes': the check took a colour's ESC[32m for one. Only
    codes that move the cursor or erase (ESC[A ...) are refused now."""
    res = txl_env({"TQDM_COLOUR": colour}, "train", "--help")
    assert res.returncode == 0 and res.stderr == "", res.stderr


@pytest.mark.parametrize("command", ["train", "evaluate", "sample", "data", "bench"])
def test_help_under_python_oo(command):
    """An eleventh probe: `python -OO -m txl_mini bench --help` (docstrings stripped)
    ended in "'NoneType' object has no attribute 'splitlines'": bench's description
    came from its module's docstring."""
    res = py("-OO", "-m", "txl_mini", command, "--help")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert res.stdout.startswith(f"usage: python -m txl_mini {command}"), res.stdout
