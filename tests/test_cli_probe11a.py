"""The eleventh hostile probe of the command lines, findings of helper fix-31a: how a
process starts: a shadowing file that raises anything, Python's combined flags
before -m, a broken torch under `python -m txl_mini.cli.NAME`, a Ctrl-C in the first
milliseconds (subprocesses; each test failed before its fix)."""

import shutil
import signal
import subprocess
import sys
import time

import pytest
from test_cli_faults import ENV, ROOT, one_line, py, txl

SHADOWED = "is it installed, or shadowed by a file of that name?"


@pytest.mark.parametrize("file, body, error", [
    ("torch.py", "raise ValueError('bad value')", "ValueError: bad value"),
    ("torch.py", "import torch\ntorch.nn", "AttributeError: partially initialized "
     "module 'torch' has no attribute 'nn' (most likely due to a circular import)"),
    ("torch.py", "", "AttributeError: module 'torch' has no attribute '__path__'"),
    ("numpy.py", "def (:", "SyntaxError: invalid syntax (numpy.py, line 1)"),
    ("tqdm.py", "raise ValueError('tq')", "ValueError: tq"),
    ("typing_extensions.py", "raise ImportError('te')", "ImportError: te"),
])
def test_a_shadowing_file_that_raises_anything_is_one_line(tmp_path, file, body,
                                                           error):
    """Finding 1: a torch.py, numpy.py or tqdm.py in the current folder that raised
    anything but ImportError (a ValueError, a partial import's AttributeError, a
    SyntaxError) gave a 29-line traceback; a tqdm.py's ValueError was blamed on the
    TQDM_* variables (none set); a typing_extensions.py that torch imports was blamed
    on torch's own file, and an empty torch.py said 'from ?'. Now one line naming
    the file that raised, exit 1."""
    (tmp_path / file).write_text(body + "\n")
    res = txl("train", "--help", cwd=tmp_path)
    module = file.removesuffix(".py")
    assert one_line(res, 1) == (
        f"python -m txl_mini train: error: importing {module} failed ({error}) "
        f"from {tmp_path}/{file}; {SHADOWED}")


@pytest.mark.parametrize("bug, error", [
    ("raise ValueError('our bug')", "ValueError: our bug"),
    ("def (:", "SyntaxError: invalid syntax"),
    ("import torch\ntorch.no_such_thing",
     "AttributeError: module 'torch' has no attribute 'no_such_thing'"),
])
def test_a_bug_of_ours_keeps_its_traceback(tmp_path, bug, error):
    """Finding 1's other half: an exception raised by one of txl_mini's own modules as
    it is imported is a bug, and its traceback is what finds it."""
    shutil.copytree(f"{ROOT}/txl_mini", tmp_path / "txl_mini")
    with open(tmp_path / "txl_mini" / "cli" / "sample.py", "a") as f:
        f.write(f"\n{bug}\n")
    res = subprocess.run([sys.executable, "-m", "txl_mini", "sample", "--help"],
                         env=dict(ENV, PYTHONPATH=str(tmp_path)), text=True,
                         capture_output=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 1 and "Traceback" in res.stderr, res.stderr
    assert res.stderr.rstrip().endswith(error) and "sample.py" in res.stderr


@pytest.mark.parametrize("argv, module", [
    (["python", "-um", "txl_mini.cli.train", "--help"], "txl_mini.cli.train"),
    (["python", "-mtxl_mini.train"], "txl_mini.train"),
    (["python", "-X", "dev", "-Wignore", "-Bm", "txl_mini"], "txl_mini"),
    (["python", "-W", "error", "-m", "x", "-m", "y"], "x"),
    (["python", "-Xdev", "-qsm", "x"], "x"),
    (["python", "--check-hash-based-pycs", "always", "-m", "x"], "x"),
    (["python", "-c", "import x", "-m", "x"], None),
    (["python", "-u", "script.py", "-m", "x"], None),
    (["python", "-"], None),
    (["python"], None),
])
def test_pythons_own_options_are_read_as_python_reads_them(argv, module):
    """Finding 2 (the reading alone): short flags combine, -c/-m/-W/-X take a value
    attached or as the next word, --check-hash-based-pycs takes one."""
    from txl_mini import _launched

    assert _launched(argv) == module


@pytest.mark.parametrize("flags, module, code, line", [
    (["-um"], "txl_mini.train", 2, "use: python -m txl_mini train ..."),
    (["-Bm"], "txl_mini.cli.options", 2, "use: python -m txl_mini <command> ..."),
    (["-X", "dev", "-qm"], "txl_mini.model", 2,
     "use: python -m txl_mini <command> ..."),
    (["-Wignore", "-sm"], "txl_mini.cli", 2, "use: python -m txl_mini <command> ..."),
    (["-W", "error", "-m"], "txl_mini.sample", 2, "use: python -m txl_mini sample ..."),
    (["-um"], "txl_mini.cli.data", 0, ""),
])
def test_combined_flags_before_m_are_seen(tmp_path, flags, module, code, line):
    """Finding 2: `python -um txl_mini.cli.options` (-Bm, -qm, -sm ...) printed nothing
    and exited 0, as _refuse_launch looked only for words starting '-m' and so never
    saw the launch; `python -um txl_mini.train` exited 1 (the library module's own
    SystemExit). Now the one `use:` line, exit 2; a command still runs."""
    text = tmp_path / "t.txt"
    text.write_text("some words for the stats " * 40)
    res = py(*flags, module, *(["stats", str(text)] if code == 0 else []),
             cwd=tmp_path)
    if code:
        assert one_line(res, code) == line
    else:
        assert res.returncode == 0 and res.stderr == "", res.stderr


@pytest.mark.parametrize("name", ["train", "evaluate", "sample", "data", "bench"])
def test_a_broken_torch_under_the_cli_module_spelling_is_one_line(tmp_path, name):
    """Finding 3: `python -m txl_mini.cli.NAME --help` with a torch.py that raises in
    the current folder gave NAME's module's traceback (its `import torch` ran before
    its __main__ block); now the one line `python -m txl_mini NAME` gives, exit 1."""
    (tmp_path / "torch.py").write_text("raise ImportError('boom')\n")
    res = py("-m", f"txl_mini.cli.{name}", "--help", cwd=tmp_path)
    assert one_line(res, 1) == (
        f"python -m txl_mini {name}: error: importing torch failed (ImportError: "
        f"boom) from {tmp_path}/torch.py; {SHADOWED}")


def test_a_python_without_torch_under_the_cli_module_spelling(tmp_path):
    """Finding 3, in a Python that has no torch: ModuleNotFoundError's traceback."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", tmp_path / "v"],
                   check=True)
    python = tmp_path / "v" / "bin" / "python"
    res = subprocess.run([python, "-m", "txl_mini.cli.bench", "--help"], env=ENV,
                         text=True, capture_output=True, timeout=60)
    assert one_line(res, 1) == (
        f"python -m txl_mini bench: error: this Python ({python}) has no torch, "
        "which txl_mini needs: pip install -r requirements.txt")


def _ours(stderr: str) -> bool:
    """Does a traceback pass through txl_mini's own files?"""
    return f"{ROOT}/txl_mini" in stderr


def test_a_ctrl_c_in_the_first_milliseconds_is_one_line():
    """Finding 4: a Ctrl-C 20-55 ms after the start (5 of 12 runs) was a
    KeyboardInterrupt traceback from txl_mini/__main__.py, cli/__init__.py or
    cli/bars.py, before the command's handler was in place. Now, from the package's
    first line on: one line, exit 130 (0 only for a --help that finished first).
    Python's own start-up, before any of our code runs, is out of our hands: a
    traceback there holds none of our files."""
    spellings = (["txl_mini", "train", "--help"], ["txl_mini.cli.sample", "--help"])
    for i in range(12):
        argv = spellings[i % 2]
        proc = subprocess.Popen(
            [sys.executable, "-m", *argv], env=ENV, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(0.01 + 0.012 * i)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        prog = "python -m txl_mini " + (argv[1] if i % 2 == 0 else "sample")
        if proc.returncode == 0 and err.startswith("Error processing line"):
            # Python's site.py met the Ctrl-C in a .pth file (the editable install's),
            # said so and went on: start-up, before any of our files (CI, once)
            assert out.startswith("usage:") and ".pth" in err and not _ours(err), err
        elif proc.returncode == 0:  # --help was done first
            assert out.startswith("usage:") and err == "", err
        elif proc.returncode == 130:
            assert err.strip() == f"{prog}: interrupted", err
        else:  # still Python's own start-up
            assert not _ours(err), err


@pytest.mark.parametrize("how", ["-c", "-m mod", "-m pkg.mod"])
def test_importing_the_package_leaves_sigint_alone(tmp_path, how):
    """Finding 4's guard: a notebook or another program that imports txl_mini keeps
    Python's own Ctrl-C (only a launch of our commands takes it over)."""
    (tmp_path / "pkg").mkdir()
    code = ("import signal, txl_mini\n"
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n")
    for path in ("mod.py", "pkg/__init__.py"):
        (tmp_path / path).write_text(code)
    (tmp_path / "pkg" / "mod.py").write_text("")
    res = py(*(["-c", code] if how == "-c" else how.split()), cwd=tmp_path)
    assert res.returncode == 0 and res.stdout == "True\n", res.stderr
