"""`python -m txl_mini <command>`: the command lines live in txl_mini/cli/."""

import sys

from .cli import interrupt_once, main

interrupt_once()
sys.exit(main())
