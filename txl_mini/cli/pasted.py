"""A number or word pasted from a web page: a Unicode dash where '-' was meant
('2.5e−4', U+2212), and how a line shows words that would look like others."""

from __future__ import annotations

import re

# U+2010..U+2015 (hyphen, figure dash, en dash, em dash...), U+2212 (minus), and
# the small and fullwidth hyphen-minus U+FE58, U+FE63, U+FF0D
DASHES = "\u2010-\u2015\u2212\ufe58\ufe63\uff0d"
ODD = re.compile(f"[{DASHES}]")
NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")  # argparse's: a separate '-1' is a value


def ascii_value(text: str, kind) -> str | None:
    """`text` with its Unicode dashes made '-', if that is ASCII and `kind` takes
    it ('-1e-4'); else None (a full-width digit, '−３', stays refused)."""
    fixed = ODD.sub("-", text)
    try:
        kind(fixed)
    except ValueError:
        return None
    return fixed if fixed.isascii() else None


def pasted_minus(text: str, kind) -> str | None:
    """For a number with a Unicode dash ('2.5e−4'): the line naming it (and the
    ASCII spelling, if that is a number); never converted silently. A spelling
    that starts with '-' but is no number to argparse ('-1e-3', '-inf') is read
    as an option when it is a word of its own: it is said to follow '='."""
    if not (dashes := list(dict.fromkeys(ODD.findall(text)))):
        return None
    import unicodedata

    what = " and ".join(f"{c!r} is U+{ord(c):04X} ({unicodedata.name(c, '?').lower()}"
                        ", pasted from a web page?)" for c in dashes)
    line = f"{text}: {what}, not '-'"
    if (fixed := ascii_value(text, kind)) is None:
        return line
    if fixed.startswith("-") and not NEGATIVE.match(fixed):
        return (f"{line}; type {fixed} joined to its option by '=' (--OPTION={fixed}):"
                f" a separate {fixed} is read as an option")
    return f"{line}; type {quoted(fixed)}"


def quoted(word: str) -> str:
    """`word` as a POSIX shell reads it back when pasted: as is where it can be,
    (letters, digits, @%+=:,./-_, as shlex's, non-ASCII letters too), else in ''
    (shlex.quote: a space, a quote), else, holding a character not printable (a
    tab, a zero-width space), in bash's $'...' with its escapes. The proposal
    'type --prompt=the quick' gave --prompt=the and a word 'quick'."""
    import shlex

    if word and all(c.isalnum() or c in "@%+=:,./-_" for c in word):
        return word
    if word.isprintable():
        return shlex.quote(word)
    esc = {"\\": "\\\\", "'": "\\'", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
    return "$'" + "".join(esc.get(c) or (c if c.isprintable() else (
        f"\\x{ord(c):02x}" if ord(c) < 0x80 else f"\\u{ord(c):04x}" if ord(c) < 0x10000
        else f"\\U{ord(c):08x}")) for c in word) + "'"


def shown(words: list[str]) -> str:
    """Words as a line shows them: an empty one, or one holding a space, quote,
    backslash or a character not printable (a zero-width space, an ESC), as Python
    writes it ('', ' ', "''"), so that no two look alike: the zero-width space is
    shown as the six characters of its escape, those six typed with theirs doubled."""
    return " ".join(repr(w) if not w or not w.isprintable() or any(
        c.isspace() or c in "'\"\\" for c in w) else w for w in words)
