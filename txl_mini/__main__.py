"""`python -m txl_mini <command>`: the command lines live in txl_mini/cli/. (A folder
removed since is refused before this, as the package's __init__.py loads.)"""

import sys

if not __package__:  # `python txl_mini`, the folder run as a script: no package
    sys.exit("use: python -m txl_mini <command> ...")  # (before .cli's import fails)

from .cli import run_process

run_process(sys.argv[1:])
