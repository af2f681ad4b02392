"""`python -m txl_mini <command>`: the command lines live in txl_mini/cli/."""

import os
import sys

try:  # before torch loads: in a folder since removed, it failed in its import with
    os.getcwd()  # 'Intel oneMKL FATAL ERROR: Cannot load libtorch_cpu.so', exit 2
except FileNotFoundError:
    sys.stderr.write("python -m txl_mini: error: the current folder no longer exists; "
                     "cd somewhere first\n")
    sys.exit(2)

from .cli import run_process  # noqa: E402  (after the check above, on purpose)

run_process(sys.argv[1:])
