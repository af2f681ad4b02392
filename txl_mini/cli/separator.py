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
            name = max(action.option_strings, key=len)
            unless = _others(parser, ns, name)
            out = ("" if action.required else f", or leave it out and give {unless}"
                   if unless else " or leave it out")
            return (f"{name}=--: '--' is not a value (it only ends the options); "
                    f"give {name} a value{out}")
    return None


def _others(parser: argparse.ArgumentParser, ns, name: str) -> str:
    """'--out or --resume' where option `name` is one of a group that the command
    needs one of (an action's `.unless`, with its own name: train's --run-dir,
    --out, --resume) and no other of it has a value in `ns`; else ''. Left out
    alone, train said 'give --run-dir DIR'."""
    acts = parser._option_string_actions
    for a in (a for a in parser._actions if getattr(a, "unless", ())):
        group = [max(a.option_strings, key=len), *a.unless]
        if name in group:
            others = [o for o in group if o != name]
            given = any(getattr(ns, acts[o].dest, None) not in (None, [])
                        for o in others)
            return "" if given else " or ".join(others)
    return ""


def end_of_options(args: list[str], extra: list[str]) -> list[str]:
    """argparse's leftover words `extra` less the '--' that ended the options of
    `args` where argparse left it last (`evaluate a --quiet --`); before other
    leftovers it stays, shown ('-- --seed 1'), and a second '--', after the first,
    is a word as any other: refused."""
    if extra[-1:] == ["--"] and extra.count("--") == list(args).count("--"):
        return extra[:-1]
    return extra
