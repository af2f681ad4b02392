"""The eighteenth probe: the package's command-named modules run as files.
`python txl_mini/train.py` (and .evaluate, .sample, .data) ended in 'attempted
relative import with no known parent package', `python txl_mini` (the folder) too,
and `python txl_mini/__init__.py --help` printed nothing and exited 0. Each now says
where the command line is, in one line, non-zero. (The -m spellings: exit 2, pinned
elsewhere; the library's other modules are no commands and still fail at import.)"""

import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "txl_mini"
FILES = {"train.py": "train", "evaluate.py": "evaluate", "sample.py": "sample",
         "data.py": "data", "__init__.py": "<command>", ".": "<command>"}


@pytest.mark.parametrize("name", FILES)
def test_a_command_module_run_as_a_file_says_where_to_go(tmp_path, name):
    res = subprocess.run([sys.executable, str(PACKAGE / name), "--help"],
                         cwd=tmp_path, text=True, capture_output=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    assert res.returncode != 0 and res.stdout == ""
    assert res.stderr == f"use: python -m txl_mini {FILES[name]} ...\n"
