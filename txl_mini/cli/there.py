"""The line a command's own parser gives the words typed after its command word,
said for an option typed before it (misplaced.py's): `-hh train` asks for train's
help, `--cache=no sample m.pt` is sample's `--cache=no`; the commands an option is
of, and the one a near miss typed with no command word means."""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex

from .pasted import NEGATIVE, quoted
from .proposals import accepted, flag_value, refused
from .typos import OFFICIAL, hint, option_named, options_meant


def typed_line(words: list) -> str:
    return " ".join(map(quoted, words))


def said_there(own, words: list) -> str | None:
    """What `own`, a command's parser, says of `words` typed after its command word
    (its error's words): 'help' where it shows its help, None where it takes them."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            own.parse_args(words)
        except SystemExit as e:
            return "help" if e.code == 0 else err.getvalue().partition("error: ")[2]
    return None


def there(word: str, typed: str, usual: str) -> str:
    """The line `typed word` gives (`train --=3`), said for `word` typed before it."""
    return f"{word}: options go after the command word {typed}, and there: {usual}"


def moved(line: str, n: int, start: list, rest: list) -> str:
    """`line` with its proposal ('type --quiet') made the whole command line: the
    command words `start`, the proposal, then the words of `rest` after its first
    `n` (the option typed before them, and its value)."""
    head, typed, tail = line.rpartition("type ")
    if not typed:
        return line
    proposal, note, after = tail.partition(" (")
    if not note and proposal.endswith(")"):  # `(... type --no-cache)`: the bracket's
        proposal, note = proposal[:-1], ")"
    return (f"{head}type {typed_line([*start, *shlex.split(proposal), *rest[n:]])}"
            f"{note}{after}")


def subparsers(parser: argparse.ArgumentParser) -> dict:
    """name -> parser of `parser`'s subcommands (data's text8, stats, offline)."""
    return {name: p for a in parser._actions
            if isinstance(a, argparse._SubParsersAction)
            for name, p in a.choices.items()}


def each(parsers: dict):
    """(name, parser) of each command of `parsers` and of each of its subcommands
    (`data`, `data text8`, ...)."""
    for name, p in parsers.items():
        yield name, p
        yield from ((f"{name} {s}", q) for s, q in subparsers(p).items())


def owners_of(head: str, parsers: dict) -> list[str]:
    """Each command (`evaluate`, `data text8`) of `parsers` whose option `head` is."""
    return [n for n, q in each(parsers)
            if (full := option_named(head, q)) and full not in ("-h", "--help")]


def parser_at(path: list, parsers: dict, leaf: bool = True):
    """The parser of the command `path` names in full (`data offline`), else None;
    with leaf False, of `data` too."""
    p = parsers[path[0]] if path else None
    for word in path[1:]:
        p = subparsers(p)[word]
    return p if p is not None and not (leaf and subparsers(p)) else None


def proposal(line: str, start: list) -> list | None:
    """The words a line's 'type X' proposes, after `start`; None for none."""
    head, typed, tail = line.rpartition("type ")
    return [*start, *shlex.split(tail.split(" (")[0])] if typed else None


def spelled(rest: list, own) -> tuple[list, str]:
    """`rest`, its first word an option of `own` (and its value), as it is read
    after the command word: spelled in full (--cache=no is --cache-dir=no), its
    value's pasted dashes made '-' where only that is taken (said in the note), and
    joined by '=' where it starts with '-' (a separate -1e-3 is read as an option)."""
    head, eq, value = rest[0].partition("=")
    full = option_named(head, own)
    act = own._option_string_actions[full]
    if act.nargs is not None or not eq and len(rest) < 2:
        return [full + eq + value, *rest[1:]], ""
    typed, rest = (value, rest[1:]) if eq else (rest[1], rest[2:])
    fixed = accepted(own, act, typed) or typed
    note = f" ({refused(own, act, typed).split('; ')[0]})" if fixed != typed else ""
    if eq or fixed[:1] == "-" and not NEGATIVE.match(fixed):
        return [f"{full}={fixed}", *rest], note
    return [full, fixed, *rest], note


def near_line(word: str, parsers: dict, given: str) -> str | None:
    """The line for `word`, no command word typed, a near miss (or the official
    code's name) of options of commands of `parsers`: the option meant, its
    commands, and how it is typed after the command word (or why its value is not
    taken); None for none."""
    head, eq, value = word.partition("=")
    key = head.lstrip("-").lower().replace("_", "-")
    if OFFICIAL.get(key) == "":  # --ext_len: none here, as train's line says
        return hint([head], next(iter(parsers.values())))
    meant = next((o for _, q in each(parsers) for _, o in options_meant([word], q)
                  if o != "--help"), None)  # help-family: its command's line
    if meant is None:
        return None
    owners = owners_of(meant, parsers)
    owners = [n for n in owners if n in parsers] or owners  # commands first
    q = parser_at(owners[0].split(), parsers)
    act = q._option_string_actions[meant]
    said = f"{word}: {head}" if eq else word
    lead = (f"{said}: the official code's {head} is {meant} here" if key in OFFICIAL
            else f"{said} is no option before the command word: did you mean {meant}")
    lead += f", an option of {', '.join(owners)}, after the command word"
    if act.nargs == 0:  # --not_tied=no: --tie-weights; --same_length
        flagged = flag_value(meant, value, q._option_string_actions) if eq else ""
        shown = proposal(flagged, [owners[0]]) if eq else [owners[0], meant]
        return f"{lead}; {flagged}" if shown is None else (
            f"{lead} ({typed_line(shown)} ...)")
    given = value if eq else given
    if why := given and refused(q, act, given):
        return f"{lead}; {meant}: {why}"
    return f"{lead} ({typed_line([*owners[0].split(), meant, given or 'VALUE'])} ...)"
