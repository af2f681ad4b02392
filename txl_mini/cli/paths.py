"""An empty path on a command line (`--out ''`, or a shell variable never set) is
refused with one line: taken as a path, it would silently mean the current
directory, the default, or no file at all."""

from __future__ import annotations

from .options import UsageError


def refuse_empty(*given: tuple[str, str | None]) -> None:
    """Each (what, value): the first empty value is `WHAT is empty; give a path`
    (train's --run-dir, --out, --path, --resume say the same)."""
    for what, value in given:
        if value == "":
            raise UsageError(f"{what} is empty; give a path")
