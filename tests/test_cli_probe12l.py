"""Found while trimming the tests' waits (a twelfth round of issue 31): a Ctrl-C
between the writability probe's create and remove (outputs.check_writable) left the
probe file, and so the folder the command had just made for its --out, behind (1 of
20 `data offline` runs interrupted as that folder appeared)."""

import os
import subprocess
import sys

# check_writable with a Ctrl-C arriving just after the probe file is made (inside
# mkstemp, where a real one lands 1 time in 20): what is left in the folder? (Its
# named probe: the one where a file system has no nameless O_TMPFILE.)
CODE = """
import os, signal, sys, tempfile
from txl_mini.cli import interrupt_once
from txl_mini.cli.folders import check_writable
interrupt_once()
del os.O_TMPFILE
real = tempfile.mkstemp
def mkstemp(**kw):
    fd, path = real(**kw)
    os.kill(os.getpid(), signal.SIGINT)
    return fd, path
tempfile.mkstemp = mkstemp
try:
    check_writable(sys.argv[1], "--out x")
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted", os.listdir(sys.argv[1]))
"""


def test_a_ctrl_c_during_the_writability_probe_leaves_no_file(tmp_path):
    res = subprocess.run([sys.executable, "-c", CODE, str(tmp_path)], text=True,
                         capture_output=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert res.stdout == "interrupted []\n", (res.stdout, res.stderr)
