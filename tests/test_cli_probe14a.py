"""The thirteenth hostile probe of the command lines, the finding of helper fix-31e:
a file in the working folder named as a module (a scratch json.py, signal.py),
which `python -m` imports in place of Python's own (subprocesses; the tests of the
fix failed before it, the others guard what it must not refuse)."""

import shutil
import subprocess
import sys

import pytest
from test_cli_faults import ENV, ROOT, one_line, py, txl

WHY = "(the working folder comes first on sys.path under python -m); rename it"


def shadows(shown: str, module: str) -> str:
    what = (f"Python's {module} module" if module in sys.stdlib_module_names
            else f"the {module} package")
    return f"{shown} shadows {what} {WHY}"


@pytest.mark.parametrize("module, launch", [
    ("signal", "txl_mini"),  # our stop.py's signal.SIGINT: a traceback
    ("signal", "txl_mini.cli.data"),  # the same, by the command's own module
    ("typing", "txl_mini"),  # txl_mini/__init__.py's TYPE_CHECKING: a traceback
    ("token", "txl_mini"),  # bars.py -> inspect -> tokenize: a traceback
    ("json", "txl_mini"),  # blamed torch's _pytree.py
    ("random", "txl_mini"),  # blamed tempfile.py
    ("numpy", "txl_mini"),  # blamed torch's collate.py
    ("tqdm", "txl_mini"),  # bars.py's tqdm.tqdm: a traceback
])
def test_a_module_in_the_working_folder_is_named_in_one_line(tmp_path, module,
                                                              launch):
    """A scratch NAME.py that imports but lacks what NAME has: a 20-line traceback
    from our own line, or one line blaming the file that used it (torch's); now
    one line naming the user's file and the fix, exit 1 (as for a torch.py that
    raises: the install's trouble, not the command's input)."""
    (tmp_path / f"{module}.py").write_text("x = 1\n")
    res = py("-m", launch, *(["data"] if launch == "txl_mini" else []), "stats",
             "--help", cwd=tmp_path)
    assert one_line(res, 1) == (
        f"python -m txl_mini data stats: error: {shadows(f'./{module}.py', module)}")


def test_a_package_folder_in_the_working_folder_is_named(tmp_path):
    """The same for a json/ package there: torch's json.JSONEncoder was blamed."""
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text("x = 1\n")
    res = txl("train", "--help", cwd=tmp_path)
    assert one_line(res, 1) == (
        f"python -m txl_mini train: error: {shadows('./json/', 'json')}")


def test_a_stdlib_named_file_that_raises_is_named_with_the_fix(tmp_path):
    """A json.py that raises as it loads was 'importing json failed (ValueError:
    no) from .../json.py; is it installed, ...?': not a package to install."""
    (tmp_path / "json.py").write_text("raise ValueError('no')\n")
    res = txl("sample", "--help", cwd=tmp_path)
    assert one_line(res, 1) == (
        f"python -m txl_mini sample: error: {shadows('./json.py', 'json')}")


def test_files_that_nothing_imports_change_nothing_at_a_repository_root(tmp_path,
                                                                       text):
    """What must not be refused (passed before the fix too): a test.py or code.py
    (standard library names, and common scratch names) that nothing imports, in a
    folder that holds txl_mini itself, as the repository's root does."""
    shutil.copytree(f"{ROOT}/txl_mini", tmp_path / "txl_mini",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("test.py", "code.py", "notes.py"):
        (tmp_path / name).write_text("raise SystemExit('imported')\n")
    res = subprocess.run([sys.executable, "-m", "txl_mini", "data", "stats", text],
                         env=dict(ENV, PYTHONPATH=""), text=True,
                         capture_output=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert "2,000" in res.stdout, res.stdout


def test_a_bug_of_ours_keeps_its_traceback_beside_a_stand_in(tmp_path):
    """A bug of ours that has nothing to do with a stand-in that is imported (a
    copy.py that is a working copy of Python's) keeps its traceback."""
    shutil.copytree(f"{ROOT}/txl_mini", tmp_path / "txl_mini",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(shutil.__file__.replace("shutil", "copy"), tmp_path / "copy.py")
    with open(tmp_path / "txl_mini" / "cli" / "sample.py", "a") as f:
        f.write("\nraise ValueError('our bug')\n")
    res = subprocess.run([sys.executable, "-m", "txl_mini", "sample", "--help"],
                         env=dict(ENV, PYTHONPATH=""), text=True,
                         capture_output=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 1 and "Traceback" in res.stderr, res.stderr
    assert res.stderr.rstrip().endswith("ValueError: our bug"), res.stderr
