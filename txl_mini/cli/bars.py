"""tqdm's progress bars as the commands draw them, checked once before any work.

tqdm takes a default for each of its options from a TQDM_* variable (TQDM_BAR_FORMAT,
TQDM_WRITE_BYTES ...). One it cannot convert fails its import; one it converts but
cannot draw with failed only when a bar first drew, after a run folder was made
(`TQDM_BAR_FORMAT='{bogus}'`: a KeyError traceback, exit 1). Both are refused here,
naming the variable, exit 2 (as WORLD_SIZE=abc is): it was set on purpose, and
dropping it would change what tqdm does in silence.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import re
import sys
import warnings

PREFIX = "TQDM_"
# how the check draws: whatever TQDM_DISABLE says (ours pass `disable` too), with the
# options our bars pass themselves, and counts as large as theirs (a validation of
# 10**5 characters): TQDM_UNIT_SCALE=1 TQDM_UNIT_DIVISOR=0 divide by zero only past
# 999. TQDM_DELAY is left to act: what it does to the line is checked (_garbled).
DRAW = dict(total=10**6, desc="check", disable=False, mininterval=0,
            dynamic_ncols=True)


def tqdm_refused() -> str | None:
    """Why the TQDM_* variables set cannot be used, else None. Also turns tqdm's
    monitor thread off: it only tunes `miniters`, and where no thread can start
    (`ulimit -v`) it printed a 3-line TqdmMonitorWarning before our own line."""
    try:
        import tqdm
    except Exception as e:  # TQDM_MININTERVAL=abc, or tqdm missing or shadowed
        set_ = [f"{k}={v!r}" for k, v in os.environ.items() if k.startswith(PREFIX)]
        if not (set_ and isinstance(e, (ValueError, TypeError)) and _from_tqdm(e)):
            return None  # the command's import says it in one line (cli._command)
        named = [kv for kv in set_ if kv.split("=", 1)[1] in str(e)] or set_
        return (f"{', '.join(named)} in the environment: tqdm cannot read it ({e}); "
                "fix or unset it")
    tqdm.tqdm.monitor_interval = 0
    init = inspect.getattr_static(tqdm.tqdm, "__init__")
    settings = getattr(init, "keywords", {})  # tqdm's envwrap: option -> value
    if not settings or (error := _draw(tqdm.tqdm)) is None:
        return None
    defaults = {k: p.default for k, p in inspect.signature(init.func).parameters.items()
                if k in settings and k not in DRAW}
    # which one: each alone, the others at tqdm's defaults (else all of them)
    bad = [k for k in settings
           if _draw(tqdm.tqdm, **{o: d for o, d in defaults.items() if o != k})]
    named = [f"{k}={v!r}" for k, v in os.environ.items() if k.startswith(PREFIX)
             and k[len(PREFIX):].lower() in (bad or settings)]
    return (f"{', '.join(named)} in the environment: tqdm cannot draw a progress bar "
            f"with it ({error}); fix or unset it")


def _from_tqdm(e: Exception) -> bool:
    """Raised by tqdm's own package (not a tqdm.py in the current folder, whose
    ValueError was blamed on the variables)?"""
    import traceback
    where = traceback.extract_tb(e.__traceback__)[-1].filename
    return f"{os.sep}tqdm{os.sep}" in where


def _draw(bar_class, **options) -> str | None:
    """Draw a bar as ours are drawn (stderr, a total, updates, a postfix), into a
    string that is thrown away: the error or first warning, as `Type: message`, or
    what is wrong with what it drew (`_garbled`), or None."""
    drawn = io.StringIO()
    try:
        with contextlib.redirect_stderr(drawn), warnings.catch_warnings(record=True) \
                as warned:
            warnings.simplefilter("always")
            bar = bar_class(**DRAW, **options)
            bar.update(1500)
            bar.set_postfix(loss="1.000")
            bar.set_postfix_str("validating 1/2")
            bar.close()
    except Exception as e:  # whatever tqdm raises for a setting: ours are the same bars
        return _one_line(e)
    if warned:  # TQDM_INITIAL=-1: a 2-line TqdmWarning with tqdm's path, bars at -0%
        return _one_line(warned[0].message)
    return _garbled(drawn.getvalue())


def _one_line(e: Exception) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())}"


def _garbled(text: str) -> str | None:
    """What a drawing does to a terminal that our one bar at a time must not: move
    the cursor (TQDM_POSITION=-3 wrote ESC[A and blank lines), or end with its bar
    still on the line (TQDM_DELAY=inf: close() skips the newline of a bar drawn
    before the delay, and the shell's prompt joined it)."""
    if re.search("\x1b\\[[0-9;]*[A-HJKST]", text):  # not colours (ESC[32m ... m)
        return "it moves the cursor with escape codes"
    line = [part for part in text.rsplit("\n", 1)[-1].split("\r") if part]
    if line and line[-1].strip():  # a bar not cleared (TQDM_LEAVE=0 clears it)
        return "it leaves the bar's line unfinished, without a newline"
    return None


def close_bars() -> bool:
    """Close the bars a stop left open, before the stop's line; True if one was. A
    loop without a `finally` (bench's training) left its bar to close as its frame
    was freed, after 'interrupted', and it drew itself once more below that line."""
    tqdm = sys.modules.get("tqdm")
    bars = list(getattr(getattr(tqdm, "tqdm", None), "_instances", ()))
    for bar in bars:
        bar.close()  # draws its last state and a newline, once (then disabled)
    return bool(bars)
