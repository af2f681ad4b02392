"""`python -m txl_mini <command>`: the command lines live in txl_mini/cli/."""

import sys

from .cli import interrupt_once, main
from .cli.stdout import hold_fd_1

interrupt_once()
hold_fd_1()  # before anything opens a file
sys.exit(main())
