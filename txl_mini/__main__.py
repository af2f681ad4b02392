"""`python -m txl_mini <command>`: the command lines live in txl_mini/cli/."""

from .cli import exit_done, interrupt_once, main
from .cli.stdout import hold_fd_1

interrupt_once()
hold_fd_1()  # before anything opens a file
exit_done(main())
