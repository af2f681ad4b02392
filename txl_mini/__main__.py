"""`python -m txl_mini <command>`: the command lines live in txl_mini/cli/."""

from .cli import exit_done, interrupt_once, main
from .cli.stdout import hold_fd_1, hold_fd_2

interrupt_once()
hold_fd_1()  # before anything opens a file
hold_fd_2()
exit_done(main())
