"""The help of the options generated from a dataclass (cli/options.py's
add_model_options): each field's why-comment, read from its source."""

from __future__ import annotations

import inspect
import re
import tokenize
from dataclasses import fields


def field_comments(cls) -> dict[str, str]:
    """Each dataclass field's why-comment in its source: the comment lines right
    above it, then the one at the end of its line."""
    lines = inspect.getsourcelines(cls)[0]
    tokens = tokenize.generate_tokens(iter(lines).__next__)
    comment = {t.start[0] - 1: t for t in tokens if t.type == tokenize.COMMENT}
    names, out, above = {f.name for f in fields(cls)}, {}, []
    for i, line in enumerate(lines):
        c = comment.get(i)
        code = line[:c.start[1]] if c else line
        text = c.string.lstrip("# ").strip() if c else ""
        m = re.match(r"\s*(\w+)\s*:", code)
        if not code.strip() and c:
            above.append(text)
            continue
        if m and m.group(1) in names:
            out[m.group(1)] = " ".join(above + [text]).strip()
        above = []
    return out
