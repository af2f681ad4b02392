"""What a refusal proposes to type instead, only where it is what was meant and
is taken when typed: a flag given a value ('--overwrite=no' never proposes
--overwrite), an option's value with its pasted Unicode dashes made '-'."""

from __future__ import annotations

import argparse

from .pasted import ODD

NO, YES = {"no", "false", "off", "0"}, {"yes", "true", "on", "1"}


def flag_value(name: str, value: str, acts: dict) -> str:
    """The line for flag `name` given '=value', whatever the route that found it
    (spelled, abbreviated, a near miss, case, '_', dashes, the official name):
    typed by itself where the value says yes (for help, anything but no: asking
    loses nothing); its opposite (or leaving it out) where it says no, never the
    flag itself; else none."""
    said = f"{name} takes no value"
    if value.lower() in YES or (value.lower() not in NO and isinstance(
            acts[name], argparse._HelpAction)):
        return f"{said}: type {name}"
    if value.lower() not in NO:
        return said
    other = (f"--{name[5:]}" if name.startswith("--no-") else f"--no-{name[2:]}")
    if name.startswith("--") and other in acts:  # --tie-weights=no: --no-tie-weights
        return f"{said}: type {other}"
    return f"{said}: leave it out"


def proposed(meant: list[tuple[str, str]], acts: dict) -> str:
    """What a refusal proposes for (word typed, option it resolves to) pairs: 'did
    you mean --mem-len?'; a flag the word gives '=VALUE' as flag_value says (never
    --overwrite for '--overwirte=no'); 'see --help' for none."""
    plain, lines = [], []
    for word, option in meant:
        _, eq, value = word.partition("=")
        if eq and acts[option].nargs == 0:
            lines.append(flag_value(option, value, acts))
        elif option not in plain:
            plain.append(option)
    said = [f"did you mean {', '.join(plain)}?"] if plain else []
    return "; ".join(dict.fromkeys(said + lines)) or "see --help"


def opposite_line(word: str, other: str, value: str, acts: dict) -> str:
    """The line for `word`, the opposite of flag `other`, no option itself: what
    leaving `other` out means; '--cache=no' (no cache asked) names --no-cache."""
    if value.lower() in NO and other.startswith("--no-"):
        return f"{word} is not an option: type {other}"
    default = f"leaving out {other} is the default"
    return f"{word} is not an option: {getattr(acts[other], 'left_out', default)}"


def accepted(parser: argparse.ArgumentParser, act, value: str) -> str | None:
    """`value` as option `act` takes it (as is, else its Unicode dashes made '-'),
    or None; `refused` says why not."""
    for v in dict.fromkeys((value, ODD.sub("-", value))):
        if refused(parser, act, v) is None:
            return v
    return None


def refused(parser: argparse.ArgumentParser, act, value: str) -> str | None:
    """Why option `act` refuses `value` (argparse's own words), else None."""
    try:
        parser._get_values(act, [value])
    except argparse.ArgumentError as e:
        return e.message
    return None
