"""Issue 31, the seventeenth probe, item 5: a run trained in a UTF-8 locale on
'corpé.txt' records that name as text; evaluated or resumed where file names are
ASCII (LC_ALL=C, PYTHONUTF8=0) or Latin-1, the name could not be encoded, or encoded
to other bytes than the file's, and the text was said to be gone, though it is
there. Now the line says this locale cannot name it (exit 2, as before)."""

import os
import subprocess
import sys

import pytest
from test_cli_faults import ENV, tiny

ASCII = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
LATIN1 = {"LC_ALL": "en_US.iso88591", "PYTHONUTF8": "0"}


def _run(argv, cwd, **env):
    return subprocess.run([sys.executable, "-m", "txl_mini", *argv],
                          env={**ENV, **env}, cwd=cwd, capture_output=True,
                          timeout=300)  # bytes: the names are the point


def _encoding(env) -> str:
    return subprocess.run([sys.executable, "-c", "import sys; "
                           "print(sys.getfilesystemencoding())"], env={**ENV, **env},
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def runs(tmp_path):
    """'done' (2 steps) and 'paused' (at 2 of 4), trained in C.UTF-8 on corpé.txt."""
    text = tmp_path / "corpé.txt"
    text.write_text("the cat sat on a mat while seven dogs ran far away " * 40)
    utf8 = {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "1"}
    for name, more in (("done", []), ("paused", ["--pause-at", "2"])):
        argv = [*tiny(str(text), name, steps=2 if name == "done" else 4), *more]
        res = _run(["train", *argv], tmp_path, **utf8)
        assert res.returncode == 0, res.stderr
    return tmp_path


@pytest.mark.parametrize("locale, enc", [(ASCII, "ascii"), (LATIN1, "iso8859-1")])
def test_a_name_this_locale_cannot_write_is_not_gone(runs, locale, enc):
    if _encoding(locale) != enc:
        pytest.skip(f"no {locale['LC_ALL']} locale here")
    why = (f"cannot be named in this locale (its file names are {enc}: "
           "LANG/LC_ALL); give it").encode()
    res = _run(["evaluate", "done", "--quiet"], runs, **locale)
    assert res.returncode == 2 and res.stderr.count(b"\n") == 1, res.stderr
    assert b", the text done/best.pt was trained on, " + why in res.stderr
    res = _run(["train", "--resume", "paused", "--quiet"], runs, **locale)
    assert res.returncode == 2 and res.stderr.count(b"\n") == 1, res.stderr
    assert b", the text paused trained on, " + why in res.stderr
    os.remove(runs / "corpé.txt")  # gone now: said so
    res = _run(["evaluate", "done", "--quiet"], runs, **locale)
    assert res.returncode == 2 and b"trained on, is gone; give it" in res.stderr
