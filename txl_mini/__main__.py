"""`python -m txl_mini <command>`: the command lines live in txl_mini/cli/."""

import sys

from .cli import run_process

run_process(sys.argv[1:])
