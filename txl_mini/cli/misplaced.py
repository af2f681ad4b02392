"""An option typed before its command word: `python -m txl_mini --quiet train`,
`data --quiet text8`, `data --chars 5 offline`. argparse said 'unknown command',
'invalid choice: 5' (the option's value read as the command) or 'options go before
--' where there was no '--'; the line now names the option, the command it belongs
to, and the command line with the command word first. An option the command
typed after it does not take gets the line it gets there (`train --=3`, `train
--no-vanilla`), its proposal made the whole line (`--quiet=1 train`: type train
--quiet); a command word typed is never replaced by another."""

from __future__ import annotations

import argparse

from .pasted import NEGATIVE, ODD
from .proposals import refused
from .there import (
    each,
    moved,
    near_line,
    owners_of,
    parser_at,
    proposal,
    said_there,
    spelled,
    subparsers,
    there,
    typed_line,
)
from .typos import (
    LEAD,
    OFFICIAL,
    abbreviated,
    closest,
    hint,
    odd_option,
    options_meant,
    pasted_dash,
    takes_value,
)


def _valued(word: str, q) -> bool:
    """`word` (no '=...') takes a value in `q`: spelled, abbreviated, or a near miss
    or old spelling of an option that does (--promt, -prompt, --run_dir)."""
    acts = q._option_string_actions
    return takes_value(word, q) or "=" not in word and any(
        acts[o].nargs != 0 for _, o in options_meant([word], q) if o in acts)


def _typed_path(argv: list, parsers: dict, near: bool = True) -> list[int]:
    """The places in argv of the command words typed (`data`, then `stats`); an
    option's value is none (`--prompt train sample`, `--promt data sample`: sample),
    unless a near miss or abbreviation took the only one (`--jsn evaluate m.pt`)."""
    places, ps, value = [], parsers, False
    for i, word in enumerate(argv):
        if value:
            value = False
        elif word[:1] == "-" and word != "--":
            value = any(_valued(word, q) if near else  # spelled in full only
                        word in q._option_string_actions and takes_value(word, q)
                        for _, q in each(parsers))
        elif word in ps:
            places.append(i)
            if not (ps := subparsers(ps[word])):
                break
    return places or near and _typed_path(argv, parsers, False) or []


def _elsewhere(head: str, before: tuple, every) -> list[str]:
    """The other commands whose option `head` is (data's line: `--steps` is train's);
    `every()` gives every command's parser (their modules load torch: only now)."""
    return [n for n in owners_of(head, (every and every()) or {})
            if n.split()[:len(before)] != list(before)]


def ascii_form(word: str) -> str | None:
    """'—quiet' (a dash pasted from a web page): --quiet; None for a word without."""
    m = LEAD.match(word)
    name, eq, value = word[m.end():].partition("=") if m else ("", "", "")
    if m is None or not ODD.search(m.group() + name):
        return None
    name = ODD.sub("-", name)
    return ("-" if len(name) == 1 else "--") + name + eq + value


def misplaced(argv: list, parsers: dict, before: tuple = (),
              every=None) -> str | None:
    """The line for argv's first word where it is '--' or an option (ASCII dashes;
    pasted_dash says the others) before the command word, one of `parsers` (name ->
    parser); None where it is neither, or no command's option. `before`: the words
    typed before argv ('data'), which the remedy starts with; `every`: a function
    giving every command's parsers, for the line naming another command's option."""
    word = argv[0] if argv else ""
    if (fixed := ascii_form(word)) and (  # '—quiet' as --quiet, with the dash said
            line := misplaced([fixed, *argv[1:]], parsers, before, every)):
        if "is a command, not an option" in line:  # '—offline': pasted_dash's
            return None
        note = pasted_dash(word, argparse.ArgumentParser(add_help=False)) or ""
        return f"{word}: {note[len(word) + 2:].split('; ')[0]}; {line}"
    if word == "--":
        rest = argv[1:]
        subs = subparsers(parsers[rest[0]]) if rest and rest[0] in parsers else {}
        if subs and (inner := misplaced(rest[1:], subs, (*before, rest[0]), every)):
            # `-- data -- offline`: 'type data offline', not one refused in turn
            return inner if inner.startswith("'--'") else (
                f"'--' before the command word; {inner}")
        if rest and rest[0] in parsers:
            return (f"'--' before the command word: type {typed_line([*before, *rest])}"
                    " (a '--' goes after it, before words that are not options)")
        return ("'--' before the command word: type the command first "
                f"({', '.join(parsers)})")
    head, eq, value = word.partition("=")
    name, key = head.lstrip("-"), head.lstrip("-").lower().replace("_", "-")
    if word in ("-h", "--help") or not (  # '—' alone, '—help' (ascii_form's None)
            word.startswith("-") and name.isascii() or ODD.match(word)):
        return None
    places = _typed_path(argv, parsers)
    path = [argv[i] for i in places]
    rest = [w for i, w in enumerate(argv) if i not in places]
    found = owners_of(head, parsers)
    fits = [n for n in found if n.split()[:len(path)] == path]
    one = len(fits) == 1  # `--quiet=1 data`: data text8's, as if typed in full
    path = fits[0].split() if one else path
    own, at = parser_at(path, parsers), parser_at(path, parsers, leaf=False)
    typed = " ".join([*before, *path])
    if path and not own and (inner := misplaced(  # `--text8 data`: as `data --text8`
            rest, subparsers(at), (*before, *path), every)):
        return inner
    if at and (usual := odd_option(word, at)):  # --=3, --quiet=1, --help=x
        return there(word, typed, moved(usual, 1, [*before, *path], rest))
    if one:  # its own option: what its parser says of it there, the value kept
        rest, note = spelled(rest, own)
        if said_there(own, [*rest, "-h"]) == "help":  # taken (-h: what follows aside)
            return (f"{word if word == head else f'{word}: {head}'} is an option of "
                    f"{typed}, and options go after the command word: type "
                    f"{typed_line([*before, *path, *rest])}{note}")
    says = said_there(at, rest) if at else None  # what `train WORD ...` says
    if says == "help":  # `-hh train`, `--he train`: train's help
        return (f"{word}: options go after the command word {typed}, and there it "
                f"asks for help: type {typed_line([*before, *path, '--help'])}")
    if says and (one or at and not name.isascii()):  # `--steps abc train`, '— train'
        return there(word, typed, moved(says.strip(), 1, [*before, *path], rest))
    said = word if word == head else f"{word}: {head}"  # --out=o.txt: --out
    fits, found = ([" ".join([*before, n]) for n in x] for x in (fits, found))
    if fits:  # several: `--quiet=1` is --quiet there, as flag_value says
        flagged = eq and odd_option(word, parsers[fits[0].split()[len(before)]])
        shown = proposal(flagged, [*before, "COMMAND"]) if flagged else [
            *before, "COMMAND", word]
        return (f"{said} is an option of {', '.join(fits)}, and options go after the "
                f"command word" + (f" (type {typed_line(shown)} ...)" if shown else
                                   f"; {flagged.partition(': ')[2]}"))
    if own and len(hits := abbreviated(head, own)) > 1:  # `--s 3 train`: as `train --s`
        return (f"{said}: ambiguous option: {head} could match {', '.join(hits)} "
                f"(options of {typed} go after it)")
    # a command word typed is never replaced by another (`--dataset text8 train`)
    command = [] if path else [name.lower()] if name.lower() in parsers else closest(
        name, parsers)
    if not found and before and not command:  # `data --steps 3 offline`: train's
        found = _elsewhere(head, before, every)
    if found and says and not says.endswith("(see --help)\n"):  # `--cache=no sample`
        return there(word, typed, moved(says.strip(), 1, [*before, *path], rest))
    if found:
        return f"{said} is an option of {', '.join(found)}, not of {typed}"
    near = [o for _, o in options_meant([word], at)] if at else []
    act = at._option_string_actions[near[0]] if near else None
    given = value if eq else argv[1] if argv[1:2] and 1 not in places and (
        argv[1][:1] != "-" or NEGATIVE.match(argv[1])) else ""  # -1: argparse's value
    if near and not (given and act.nargs == 0):
        line = typed_line([*before, *path, near[0] + eq + value, *rest[1:]])
        why = given and act.nargs != 0 and refused(at, act, given) or (
            act.nargs not in (0, "?") and not eq and not given  # `--stps train`
            and f"it takes a value, and none is typed before {typed}")
        line = f"; {why}" if why else f" type {line}"  # `--dataset enwik8 train`
        return (f"{said} is not an option of {typed}: did you mean "  # --chrs 5
                f"{', '.join(near)}?" + (line if len(near) == 1 else ""))
    if at:  # as `train --no-vanilla` says it; `--quite=1`: flag_value's remedy
        words = argv[:1 + bool(not eq and given and (  # not `sample`'s checkpoint
            f"arguments: {typed_line(argv[:2])}" in says or "arguments: " not in says))]
        return there(word, typed, _unknown(words, at, head, every,
                                            [*before, *path], rest))
    if not path and (key in OFFICIAL or not command) and not (  # `--data stats f`:
            name.lower() in parsers and (not given or given in subparsers(  # data's
                parsers[name.lower()]))) and (line := near_line(word, parsers, given)):
        return line  # `--tgt_len 4`, `--stpes 3`: the option meant, and its command
    if near := command:
        takes = any(not a.option_strings for a in parsers[near[0]]._actions)
        typed = [near[0], value] if eq and takes else [near[0]]
        no_value = " (it takes no value)" if eq and not takes else ""
        return (f"{word}: {near[0]} is a command, not an option{no_value}: type "
                f"{typed_line([*before, *typed, *rest[1:]])}")
    return None


def _unknown(words: list, own, head: str, every, start: list, rest: list) -> str:
    """argparse's 'unrecognized arguments' line for `words` after the command word,
    with the hint `own` (its parser) adds; where that has none (`data --stps 3
    offline`), the options of other commands that `head` is a near miss of."""
    said = hint(words, own)
    if said == "see --help" and every:
        near: dict = {}
        for n, q in each(every() or {}):
            for o in (o for _, o in options_meant([head], q) if n != " ".join(start)):
                near.setdefault(o, []).append(n)
        said = "; ".join(f"{', '.join(n)} {'has' if len(n) == 1 else 'have'} {o}"
                         for o, n in near.items()) or said
    return (f"unrecognized arguments: {typed_line(words)} "
            f"({moved(said, len(words), start, rest)})")
