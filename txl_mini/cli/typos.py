"""What a mistyped command line was probably meant to say: the closest option or
command to one that is not there, and an option pasted from a web page whose '--'
became a dash of another kind ('—chars'). No torch here: cli/__init__.py uses it.
"""

from __future__ import annotations

import argparse
import re

# U+2010..U+2015 (hyphen, figure dash, en dash, em dash...) and U+2212 (minus)
DASHES = "\u2010-\u2015\u2212"
PASTED = re.compile(f"([{DASHES}])[{DASHES}-]*(?=[^\\W\\d_])")


def closest(word: str, names) -> list[str]:
    """The names nearest `word` (case and '_' for '-' aside), best first; [] when
    none is close. An exact match after that normalising is the only one."""
    import difflib  # only for a line of error: not at every command's start

    word = word.lower().replace("_", "-")
    if word in names:
        return [word]
    return difflib.get_close_matches(word, list(names), n=2, cutoff=0.7)


def options_meant(words: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """For each unrecognized word that looks like an option (--stpes, --mem_len=4),
    the parser's closest long options (--steps, --mem-len)."""
    longs = {o[2:] for o in parser._option_string_actions if o.startswith("--")}
    near = []
    for w in words:
        name = w.split("=")[0].lstrip("-")
        if w.startswith("-") and name[:1].isalpha():
            # never the opposite: --no-overwrit is not a typo of --overwrite
            no = name.lower().startswith("no")
            near += [f"--{o}" for o in closest(name, longs)
                     if f"--{o}" not in near and o.startswith("no-") == no]
    return near


def hint(words: list[str], parser: argparse.ArgumentParser) -> str:
    """What Parser.error adds to 'unrecognized arguments: WORDS' in brackets.

    Two near misses are not typos: an option spelled exactly is refused only after
    '--' (`evaluate -- —f.pt --json`), and the flag's opposite (--no-overwrite for
    --overwrite, --cache for --no-cache) is its default, which no option spells: to
    suggest the flag there would say the reverse of what was typed.
    """
    acts = parser._option_string_actions
    typed = [w.split("=")[0] for w in words if w.startswith("--") and w != "--"]
    if any(w in acts for w in typed):
        return "options go before '--': the words after it are not options"
    for w in typed:
        other = w[5:] if w.startswith("--no-") else "no-" + w[2:]
        flag = acts.get("--" + other)
        if flag is not None and flag.nargs == 0:
            return f"{w} is not an option: leaving out --{other} is the default"
    near = options_meant(words, parser)
    return f"did you mean {', '.join(near)}?" if near else "see --help"


def pasted_dash(word: str) -> str | None:
    """'—chars: starts with a '—' (U+2014), not '--'; type --chars' for a word that
    begins with a dash of another kind and then a letter; else None."""
    m = PASTED.match(word)
    if m is None:
        return None
    rest = word[m.end():]
    ascii_ = ("-" if len(rest.split("=")[0]) == 1 else "--") + rest
    return (f"{word}: starts with a {m.group(1)!r} (U+{ord(m.group(1)):04X}), not "
            f"'--'; type {ascii_}")


def pasted_option(args: list[str], parser: argparse.ArgumentParser) -> str | None:
    """pasted_dash's line for the first such word of `args` that is not an option's
    value (`--prompt '—x'` is text) nor past '--'; None if there is none. A data
    subcommand's words are left to its own parser, which knows its options."""
    subcommands = {name for a in parser._actions
                   if isinstance(a, argparse._SubParsersAction) for name in a.choices}
    value = False  # the word before takes a value: this is it
    for word in args:
        if word == "--" or (not value and word in subcommands):
            return None
        if not value and (line := pasted_dash(word)):
            return line
        value = _takes_value(word, parser)
    return None


def _takes_value(word: str, parser: argparse.ArgumentParser) -> bool:
    """`word` is an option (spelled out or abbreviated, no '=...') taking a value."""
    if not word.startswith("-") or "=" in word:
        return False
    name = option_named(word, parser)
    return name is not None and parser._option_string_actions[name].nargs != 0


def option_named(word: str, parser: argparse.ArgumentParser) -> str | None:
    """The option string `word` names, as argparse reads it: itself, or the one
    option it abbreviates (--no-tie: --no-tie-weights); None for none or several."""
    acts = parser._option_string_actions
    if word in acts:
        return word
    hits = [o for o in acts if parser.allow_abbrev and word.startswith("--")
            and o.startswith(word)]
    return hits[0] if len(hits) == 1 else None
