"""What a mistyped command line was probably meant to say: the closest option or
command to one that is not there, and an option pasted from a web page whose '--'
became a dash of another kind ('—chars'). No torch here: cli/__init__.py uses it.
"""

from __future__ import annotations

import argparse
import re

from .pasted import DASHES, ODD, quoted
from .proposals import accepted, flag_value, opposite_line, proposed, refused

LEAD = re.compile(f"[{DASHES}-]+(?=[^\\W\\d_])")  # dashes, ASCII or not, then a letter


# kimiyoung/transformer-xl pytorch/train.py's flags that are named otherwise here
# ('' for ext_len, "length of the extended context": none here; its --dataset text8
# and --data PATH are --corpus and --path); its others, as
# --mem_len, --n_layer, --d_model, --clamp_len, --same_length, are ours with '-'
OFFICIAL = {"tgt-len": "--seg-len", "not-tied": "--no-tie-weights",
            "work-dir": "--run-dir", "eval-interval": "--eval-every",
            "log-interval": "--log-every", "ext-len": "", "dataset": "--corpus",
            "data": "--path"}


def closest(word: str, names) -> list[str]:
    """The names nearest `word` (case and '_' for '-' aside), best first; [] when
    none is close. An exact match after that normalising is the only one."""
    import difflib  # only for a line of error: not at every command's start

    word = word.lower().replace("_", "-")
    if word in names:
        return [word]
    near = difflib.get_close_matches(word, list(names), n=3, cutoff=0.7)
    return [n for n in near if _more_than_a_suffix(word, n, difflib)][:2]


def _more_than_a_suffix(word: str, name: str, difflib) -> bool:
    """--ext-len is no typo of --seg-len: where both end in the same '-parts'
    ('-len', '-size'), the words before those must be a near miss too: one edit
    apart (--seq-len, --tpo-k, --e-model), one the other with letters added
    (--no-layer: --n-layer), or alike at ratio 0.7 or more."""
    w, n = word.split("-"), name.split("-")
    k = 0
    while k < min(len(w), len(n)) - 1 and w[-1 - k] == n[-1 - k]:
        k += 1
    a, b = sorted(("-".join(w[:-k]), "-".join(n[:-k])), key=len) if k else ("", "")
    return k == 0 or _one_edit(a, b) or b.startswith(a) or difflib.SequenceMatcher(
        None, a, b).ratio() >= 0.7


def _one_edit(a: str, b: str) -> bool:
    """`a` and `b` differ by at most one substitution, insertion, deletion or swap
    of two neighbours ('mem'/'men', 'top'/'tpo'; not 'ext'/'seg')."""
    a, b = (a, b) if len(a) >= len(b) else (b, a)
    i = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), len(b))
    if len(a) - len(b) == 1:
        return a[i + 1:] == b[i:]
    return len(a) == len(b) and (a[i + 1:] == b[i + 1:] or (
        a[i + 2:] == b[i + 2:] and a[i:i + 2] == b[i:i + 2][::-1]))


def options_meant(words: list[str], parser: argparse.ArgumentParser) -> list:
    """For each unrecognized word that looks like an option (--stpes, --mem_len=4),
    (the word, each of the parser's closest long options: --steps, --mem-len)."""
    acts = parser._option_string_actions
    longs = {o[2:] for o in acts if o.startswith("--")}
    near = []
    for w in words:
        name = w.split("=")[0].lstrip("-")
        key = name.lower().replace("_", "-")
        if key in OFFICIAL:  # the official code's name: --tgt_len is --seg-len here
            near += [(w, o) for o in [OFFICIAL[key]] if o[2:] in longs]
        elif w.startswith("-") and name[:1].isalpha():
            # never a flag of the other sign: --no-overwrit is not a typo of
            # --overwrite; an option taking a value has none (--no-layer: --n-layer)
            near += [(w, f"--{o}") for o in closest(name, longs)
                     if acts[f"--{o}"].nargs != 0
                     or o.startswith("no-") == key.startswith("no")]
    return near


def opposite(word: str, acts: dict) -> str | None:
    """The flag `word` is the opposite of (--no-overwrite, --No_Overwrite and
    --nooverwrite: --overwrite; --cache: --no-cache), else None; a word that
    spells an option, case and '_' aside (--Overwrite), or misses one of its own
    sign (--notie-weights: --no-tie-weights is there), is none's opposite."""
    key = word[2:].lower().replace("_", "-")
    if "--" + key in acts or key.startswith("no") and f"--no-{key[2:]}" in acts:
        return None  # --notie-weights: a miss of --no-tie-weights, not the opposite
    others = [key[3:]] if key.startswith("no-") else (
        ["no-" + key] + ([key[2:]] if key.startswith("no") else []))
    flags = [f"--{o}" for o in others if f"--{o}" in acts]
    return next((f for f in flags if acts[f].nargs == 0), None)


def hint(words: list[str], parser: argparse.ArgumentParser) -> str:
    """What Parser.error adds to 'unrecognized arguments: WORDS' in brackets.

    Two near misses are not typos: an option spelled exactly is refused only after
    '--' (`evaluate -- —f.pt --json`), and the flag's opposite (--no-overwrite for
    --overwrite, --cache for --no-cache) is its default, which no option spells: to
    suggest the flag there would say the reverse of what was typed.
    """
    if "" in words:  # `train ''`: said as '' (shown), and named
        rest = [w for w in words if w]
        return (f"'' is an empty argument; {hint(rest, parser)}" if rest
                else "an empty argument")
    acts = parser._option_string_actions
    typed = [w.split("=")[0] for w in words if w.startswith("--") and w != "--"]
    if any(w.split("=")[0] in acts for w in words if w.startswith("-")):  # -h too
        return "options go before '--': the words after it are not options"
    for w, _, value in (w.partition("=") for w in words if w[:1] == "-" and w != "--"):
        # -no-overwrite as --no-overwrite; --cache=no: type --no-cache
        if other := opposite("-" * (w[1:2] != "-") + w, acts):
            return opposite_line(w, other, value, acts)
    for w in typed:
        if OFFICIAL.get(w[2:].lower().replace("_", "-")) == "":
            return (f"{w}: the official code's extended context (ext_len) has no "
                    "counterpart here")
    return proposed(options_meant(words, parser), acts)  # --overwirte=no: not itself


def _u(c: str) -> str:
    return f"a {c!r} (U+{ord(c):04X})"


def pasted_dash(word: str, parser: argparse.ArgumentParser,
                commands=()) -> str | None:
    """'—chars: starts with a '—' (U+2014), not '--'; type --chars' for a word whose
    leading dashes (then a letter) or name hold a dash of another kind; else None.
    The ASCII spelling is offered only if `parser` takes it (or it is one of data's
    `commands`), else the near miss, else it is said to be no option either."""
    m = LEAD.match(word) or re.match(f"[{DASHES}-]+(?==)", word)  # or '—=3'
    name, eq, value = word[m.end():].partition("=") if m else ("", "", "")
    inside = list(dict.fromkeys(ODD.findall(name)))
    if m is None or not ODD.search(m.group()) and not inside:
        return None
    run, said = m.group(), []
    if run[0] != "-":
        said.append(f"starts with {_u(run[0])}, not '--'")
    elif ODD.search(run):  # '-–steps': an ASCII hyphen, then an en dash
        codes = " ".join(f"U+{ord(c):04X}" for c in run)
        said.append(f"starts with {run!r} ({codes}), not '--'")
    if inside:
        said.append(f"has {' and '.join(map(_u, inside))} for '-'")
    if not name:  # '—=3', as odd_option's '--=3'
        return f"{word}: {said[0]}, and no name between it and '='"
    name = ODD.sub("-", name)
    typed = ("-" if len(name) == 1 else "--") + name
    line = f"{word}: {', and '.join(said)}; "
    if name in commands:  # `data —offline`: a command word, not an option
        return line + f"{name} is a command, not an option: type {name}"
    if full := option_named(typed, parser):
        return line + _typed(typed, full, eq, value, parser)
    if len(hits := abbreviated(typed, parser)) > 1:  # '—pre=no', as --pre=no
        return line + (f"ambiguous option: {typed}{eq}{value} could match "
                       f"{', '.join(hits)}")
    if (said := hint([typed + eq + value], parser)) != "see --help":
        return line + said  # as the ASCII word's: '—cache=no', '—ext_len=0'
    if near := closest(name, commands):
        return line + f"did you mean {', '.join(near)}?"
    return line + f"and {typed} is not an option either (see --help)"


def _typed(typed: str, full: str, eq: str, value: str, parser) -> str:
    """'type --lr=1e-4' for what pasted_dash found, only as the option takes it
    (its value's Unicode dashes made '-' where that is taken): a flag's value as
    flag_value says; a value refused either way left to the user, and why."""
    act = parser._option_string_actions[full]
    if not eq:
        return f"type {typed}"
    if act.nargs == 0:  # '—overwrite=no': never --overwrite
        return flag_value(full, value, parser._option_string_actions)
    if (fixed := accepted(parser, act, value)) is None:  # '—device=—cpu'
        return f"type {typed}=VALUE ({refused(parser, act, ODD.sub('-', value))})"
    return f"type {quoted(f'{typed}={fixed}')}"  # pastes back as one word


def odd_option(word: str, parser: argparse.ArgumentParser) -> str | None:
    """The line for '--=3' (argparse listed every option as one it 'could match'),
    and '-help', '-h5', '-hv' (argparse: 'ignored explicit argument'); else None."""
    acts = parser._option_string_actions
    if word.startswith("--="):
        return f"{word} is not an option: no name between '--' and '='"
    head, eq, value = word.partition("=")
    if eq and word.startswith("--") and (full := option_named(head, parser)) and (
            acts[full].nargs == 0):  # --overwrite=no: argparse's 'ignored explicit'
        return f"{word}: {flag_value(full, value, acts)}"
    flag = acts.get(word[:2]) if not word.startswith("--") else None
    if len(word) < 3 or flag is None or flag.nargs != 0:
        return None
    if len(head) > 2 and (full := option_named("-" + head, parser)):  # -help
        shorts = [o for o in flag.option_strings if not o.startswith("--")]
        return f"{word} is not an option: type {full} (or {', '.join(shorts)})"
    flags = 1  # -hh is two flags, argparse's to read; -hhelp, -hh5, -h=h are not
    while flags < len(word) and (a := acts.get("-" + word[flags])) and a.nargs == 0:
        flags += 1
    if flags == len(word):
        return None
    c, short = word[flags], "-" + word[flags - 1]
    if c.isalpha() and "-" + c not in acts:
        return f"{word}: {short} takes no value, and -{c} is not an option"
    # -h=no: leave it out; -h=yes, -h−, -h5: type -h
    return f"{word}: {flag_value(short, word[flags + 1:] if c == '=' else c, acts)}"


def pasted_option(args: list[str], parser: argparse.ArgumentParser) -> str | None:
    """pasted_dash's (or odd_option's) line for the first such word of `args` that
    is not an option's value (`--prompt '—x'` is text) nor past '--'; None if there
    is none. A data subcommand's words are left to its own parser."""
    subcommands = {name for a in parser._actions
                   if isinstance(a, argparse._SubParsersAction) for name in a.choices}
    value = False  # the word before takes a value: this is it
    for word in args:
        if word == "--" or (not value and word in subcommands):
            return None
        if not value and word[:1] == "-" and (name := word.lstrip("-")) in subcommands:
            return f"{word}: {name} is a command, not an option: type {name}"
        if not value and (line := odd_option(word, parser)  # -h−: -h takes no value
                          or pasted_dash(word, parser, subcommands)):
            return line
        value = takes_value(word, parser)
    return None


def takes_value(word: str, parser: argparse.ArgumentParser) -> bool:
    """`word` is an option (spelled out or abbreviated, no '=...') taking a value."""
    if not word.startswith("-") or "=" in word:
        return False
    name = option_named(word, parser)
    return name is not None and parser._option_string_actions[name].nargs != 0


def option_named(word: str, parser: argparse.ArgumentParser) -> str | None:
    """The option string `word` names, as argparse reads it: itself, or the one
    option it abbreviates (--no-tie: --no-tie-weights); None for none or several."""
    if word in parser._option_string_actions:
        return word
    hits = abbreviated(word, parser)
    return hits[0] if len(hits) == 1 else None


def abbreviated(word: str, parser: argparse.ArgumentParser) -> list[str]:
    """The long options `word` abbreviates, as argparse finds them."""
    return [o for o in parser._option_string_actions if parser.allow_abbrev
            and word.startswith("--") and o.startswith(word)]
