"""torch's settings in the environment (TORCH_*, TORCHINDUCTOR_*, PYTORCH_*...): one
it refuses, as it loads (cli/errors.py) or as it reads a checkpoint (checkpoint.py),
is named in one line, not blamed on the installation or on a good file.

Here, not in cli/, because checkpoint.py (the library) needs it; it imports no torch,
so that a torch that fails to load can still be explained."""

from __future__ import annotations

import os
import re

PREFIXES = ("TORCH", "PYTORCH_")  # the variables torch reads


def torch_variables() -> dict[str, str]:
    """The torch variables set in the environment (not blank), with their values."""
    return {k: v for k, v in os.environ.items() if k.startswith(PREFIXES) and v.strip()}


def named_in(text: str, variables: dict | None = None) -> list[str]:
    """The set torch variables (`variables`, else all) whose names `text` holds as a
    word, sorted: TORCH_LOGS, not TORCH_LOGS_OUT's start."""
    return sorted(k for k in (torch_variables() if variables is None else variables)
                  if re.search(rf"(?<!\w){re.escape(k)}(?!\w)", text))
