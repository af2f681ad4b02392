"""Issue 31's leftovers (fix-31o): `data text8 --path -` said 'no such file', as no
other command's --path - did; a --path (or data stats' file) with a name over the
file system's 255 bytes said the OS's 'File name too long' (or 'no such file'), not
its length, as the folder messages do; and train took counts past any integer
(--steps 1e400: an OverflowError traceback, exit 1, after config.json was written)."""

import pytest
from test_cli_faults import one_line, tiny, txl

PROG = "python -m txl_mini"
LONG = "a" * 256
FOLDER = "a folder's name is too long (256 bytes; at most 255)"
FILE = "the file name is too long (256 bytes; at most 255 here)"


def test_data_text8_says_dash_names_a_file(tmp_path):
    res = txl("data", "text8", "--path", "-", "--quiet", cwd=tmp_path)
    assert one_line(res, 2) == (
        f"{PROG} data text8: error: cannot read -: no such file; '-' names a file "
        "here, not standard input: give the text as a file name")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    from cli_text import words

    d = tmp_path_factory.mktemp("long")
    (d / "text.txt").write_text(words(2000))
    assert txl("train", *tiny(str(d / "text.txt"), d / "r")).returncode == 0
    return d / "r" / "last.pt"


@pytest.mark.parametrize("argv, why", [
    (["data", "text8", "--quiet", "--path", f"{LONG}/text8"], FOLDER),
    (["data", "text8", "--quiet", "--path", LONG], FILE),
    (["data", "stats", f"{LONG}/t.txt"], FOLDER),
    (["data", "stats", LONG], FILE),
    (["evaluate", "CKPT", "--threads", "1", "--path", f"{LONG}/t.txt"], FOLDER),
    (["evaluate", "CKPT", "--threads", "1", "--path", LONG], FILE),
])
def test_a_name_too_long_to_read_is_said_with_its_length(tmp_path, ckpt, argv, why):
    res = txl(*[ckpt if a == "CKPT" else a for a in argv], cwd=tmp_path)
    line = one_line(res, 2)
    assert line.endswith(why) or f": {why}. Give --path" in line, line
    assert "File name too long" not in line and "no such file" not in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("corpus", ["offline", "text8"])
@pytest.mark.parametrize("name, why", [(f"{LONG}/t.txt", FOLDER), (LONG, FILE)])
def test_train_path_too_long_is_said_and_makes_nothing(tmp_path, corpus, name, why):
    argv = tiny(name, "r")
    argv[argv.index("--corpus") + 1] = corpus
    res = txl("train", *argv, cwd=tmp_path)
    assert one_line(res, 2) == (f"{PROG} train: error: cannot read "
                                f"{tmp_path / name}: {why}")
    assert list(tmp_path.iterdir()) == []


BOUND = "9,223,372,036,854,775,807"


@pytest.mark.parametrize("option", ["--steps", "--warmup", "--batch-size",
                                    "--eval-every", "--save-every", "--log-every",
                                    "--eval-chars"])
@pytest.mark.parametrize("value", [10**400, 2**63], ids=["1e400", "2**63"])
def test_train_refuses_a_count_past_int64(tmp_path, option, value):
    """--warmup or --steps 1e400: 'OverflowError: int too large to convert to float'
    (the learning rate, the progress bar), exit 1, a run directory left; 2**63: taken
    (as 99999999999999999999), a count nothing else holds (torch's int64)."""
    argv = tiny(str(tmp_path / "none.txt"), tmp_path / "r")
    argv += [option, str(value)]
    res = txl("train", *argv)
    assert one_line(res, 2) == (f"{PROG} train: error: {option} must be <= {BOUND}, "
                                f"got {value:,}")
    assert list(tmp_path.iterdir()) == []


def test_the_bound_itself_is_taken(tmp_path, text):
    res = txl("train", *tiny(text, tmp_path / "r"), "--steps", str(2**63 - 1),
              "--warmup", str(2**63 - 2), "--pause-at", "2")
    assert res.returncode == 0, res.stderr
    assert "paused at step 2" in res.stdout + res.stderr
