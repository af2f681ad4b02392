"""`python -m txl_mini <command>`: the command lines live in txl_mini/cli/."""

import sys

from .cli import main

sys.exit(main())
