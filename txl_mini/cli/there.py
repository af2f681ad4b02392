"""The line a command's own parser gives the words typed after its command word,
said for an option typed before it (misplaced.py's): `-hh train` asks for train's
help, `--cache=no sample m.pt` is sample's `--cache=no`."""

from __future__ import annotations

import contextlib
import io
import shlex

from .pasted import quoted


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
