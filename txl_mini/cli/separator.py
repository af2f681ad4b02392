"""What a '--' on a command line may be: the end of the options (POSIX), never an
option's value. No torch here: cli/__init__.py's parsers use it."""

from __future__ import annotations

import argparse


def not_a_value(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> str | None:
    """The line for `--steps=--` (or `-s--`), else None. Python 3.11's argparse drops
    the '--' from such a value and leaves [] for it, which no option checks (tracebacks,
    `--mode []` evaluated, `"precision": []` saved). One rule for every option of every
    command: '--' is refused as a value, as `--prompt --` is by argparse itself;
    'or leave it out' only where that is allowed (not a required --out)."""
    for action in parser._actions:
        value = getattr(ns, action.dest, None)
        if (action.option_strings and action.nargs in (None, "?") and value == []
                and isinstance(value, list) and value is not action.default):
            name = max(action.option_strings, key=len)  # .unless: what else does
            unless = getattr(action, "unless", None)  # (train's --run-dir: --out)
            out = ("" if action.required else f", or leave it out and give {unless}"
                   if unless else " or leave it out")
            return (f"{name}=--: '--' is not a value (it only ends the options); "
                    f"give {name} a value{out}")
    return None


def end_of_options(args: list[str], extra: list[str]) -> list[str]:
    """argparse's leftover words `extra` less the '--' that ended the options of
    `args` where argparse left it last (`evaluate a --quiet --`); before other
    leftovers it stays, shown ('-- --seed 1'), and a second '--', after the first,
    is a word as any other: refused."""
    if extra[-1:] == ["--"] and extra.count("--") == list(args).count("--"):
        return extra[:-1]
    return extra
