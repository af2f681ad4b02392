"""What a mistyped command line was probably meant to say: the closest option or
command to one that is not there. No torch here: cli/__init__.py uses it.
"""

from __future__ import annotations

import argparse


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
            near += [f"--{o}" for o in closest(name, longs) if f"--{o}" not in near]
    return near
