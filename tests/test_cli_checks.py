"""What the command lines check up front (issue 31, a fresh probe's findings 10, 14
and 15): option pairs train took and evaluate refused, --out on a resumed run, forged
checkpoint fields (subprocesses, as a user's shell runs them; each test failed before
its fix)."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
from cli_text import words
from test_cli_faults import ENV, py, tiny, unprivileged, wait_for

from txl_mini.checkpoint import read_checkpoint, save_checkpoint
from txl_mini.config import preset
from txl_mini.model import TransformerXL, VanillaTransformer

# -- finding 10: what evaluate refuses, train refuses up front -------------------------

# (the model: train's options, a setting: options) whose pair train trained and
# evaluate, given the setting on such a checkpoint, refused (or that did nothing)
BOTH = [
    ([], ["--mem-len", "0", "--same-length"]),
    (["--vanilla"], ["--same-length"]),
    (["--vanilla"], ["--clamp-len", "4"]),
    (["--vanilla"], ["--mem-len", "8"]),
    (["--pos-enc", "absolute"], ["--clamp-len", "4"]),
    (["--pos-enc", "shaw"], ["--clamp-len", "4"]),
]
TRAIN_ONLY = [  # settings evaluate has no option for: they did nothing in training
    (["--vanilla"], ["--untie-r"]),
    (["--pos-enc", "absolute"], ["--untie-r"]),
    (["--pos-enc", "shaw"], ["--untie-r"]),
    ([], ["--shaw-clip", "4"]),  # the preset's relative encoding
    (["--pos-enc", "absolute"], ["--shaw-clip", "4"]),
    (["--vanilla"], ["--shaw-clip", "4"]),
]


def one_line(res, command: str) -> str:
    """The error line of a command that refused its input (exit 2, one line)."""
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    head = f"python -m txl_mini {command}: error: "
    assert res.stderr.startswith(head), res.stderr
    return res.stderr[len(head):]


@pytest.mark.parametrize("model, setting", BOTH + TRAIN_ONLY)
def test_train_refuses_a_pair_before_the_corpus_naming_both(tmp_path, model, setting):
    """`train --mem-len 0 --same-length` (--vanilla --clamp-len 4, --vanilla
    --untie-r, --pos-enc absolute --shaw-clip 4, ...) trained a model evaluate then
    refused with the same settings, or one the setting did nothing in. Now one line
    naming both options, before the corpus (its file does not exist), no run dir."""
    r = tmp_path / "r"
    res = py("-m", "txl_mini", "train", "--preset", "tiny", *model, *setting,
             "--path", str(tmp_path / "no_such.txt"), "--run-dir", str(r))
    line = one_line(res, "train")
    for opt in [a for a in model + setting if a.startswith("--")] or ["--pos-enc"]:
        assert opt in line, line
    assert not r.exists()


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """One checkpoint per model BOTH names: Transformer-XL, vanilla, absolute, Shaw."""
    d = tmp_path_factory.mktemp("models")
    (d / "text.txt").write_text(words(4000))
    meta = {"corpus": "offline", "corpus_path": str(d / "text.txt")}
    torch.manual_seed(0)
    for name, model in [("xl", TransformerXL(preset("tiny"))),
                        ("vanilla", VanillaTransformer(preset("tiny"))),
                        ("absolute", TransformerXL(preset("tiny", pos_enc="absolute"))),
                        ("shaw", TransformerXL(preset("tiny", pos_enc="shaw")))]:
        save_checkpoint(d / f"{name}.pt", model, meta)
    return d


@pytest.mark.parametrize("model, setting", BOTH)
def test_evaluate_refuses_the_same_pairs(models, model, setting):
    """The other half: each pair train refuses, evaluate refuses too, one line and
    exit 2 (a --clamp-len on an absolute or Shaw checkpoint was the model's
    ValueError, exit 1)."""
    name = "vanilla" if "--vanilla" in model else (model[1] if model else "xl")
    res = py("-m", "txl_mini", "evaluate", str(models / f"{name}.pt"), *setting,
             "--chars", "200", "--threads", "1", "--quiet")
    line = one_line(res, "evaluate")
    assert setting[0] in line or setting[0][2:].replace("-", "_") in line, line


def test_what_train_accepts_evaluate_accepts_with_the_same_settings(tmp_path):
    """same_length with memory, clamp_len with the relative encoding, shaw_clip with
    Shaw's: trained, then evaluated with the same options."""
    (tmp_path / "t.txt").write_text(words(2000))
    for opts, again in [(["--same-length", "--clamp-len", "4"],
                         ["--same-length", "--clamp-len", "4"]),
                        (["--pos-enc", "shaw", "--shaw-clip", "3"], [])]:
        r = tmp_path / opts[1]
        assert py("-m", "txl_mini", "train", *tiny(str(tmp_path / "t.txt"), r),
                  *opts).returncode == 0
        res = py("-m", "txl_mini", "evaluate", str(r), *again, "--chars", "100",
                 "--threads", "1", "--quiet")
        assert res.returncode == 0 and "bpc" in res.stdout, res.stderr


# -- finding 14: --out checked up front on a resumed run too ---------------------------

def with_out(paused, tmp_path, out: str):
    """A copy of the paused run whose config.json records --out `out`."""
    r = tmp_path / "r"
    shutil.copytree(paused, r)
    config = json.loads((r / "config.json").read_text())
    config["args"]["out"] = out
    (r / "config.json").write_text(json.dumps(config))
    return r


def resume(r, *more):
    return py("-m", "txl_mini", "train", "--resume", str(r), *map(str, more))


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")
@pytest.mark.parametrize("out, line", [
    ("/proc/x.pt", "--out: cannot write to /proc: "),
    ("/proc/no_dir/x.pt", "--out: cannot write to /proc/no_dir: "),
    # below the run's own folder: refused as any output inside a run directory
    ("{r}/config.json/x.pt", "--out {r}/config.json/x.pt is inside the run directory "
     "{r}; give a file outside it"),
    ("{tmp}", "{tmp}, the --out {r}/config.json records, is a directory now; move "
     "it away, and --resume {r} writes the model there"),
])
def test_out_is_checked_when_a_run_resumes(paused, tmp_path, out, line):
    """A resumed run whose config.json records an --out it cannot write (/proc/x.pt,
    a directory that cannot be made) trained every step, then failed naming
    /proc/.x.pt.ezppxrau.tmp. Now it is refused before the corpus, as a new run's."""
    r, tmp = tmp_path / "r", str(tmp_path)
    res = resume(with_out(paused, tmp_path, out.format(r=r, tmp=tmp)))
    assert one_line(res, "train").startswith(line.format(r=r, tmp=tmp)), res.stderr
    assert "trained" not in res.stdout and ".tmp" not in res.stderr
    assert read_checkpoint(r / "last.pt")["extra"]["step"] == 2  # not one step more
    assert not os.path.exists("/proc/no_dir")


def test_a_resumed_run_makes_its_out_folder_up_front(paused, tmp_path):
    """As a new run does, and removes it again if the run stops before training
    (here: other text given with --path)."""
    out = tmp_path / "new" / "x.pt"
    r = with_out(paused, tmp_path, str(out))
    (tmp_path / "other.txt").write_text(words(3000)[1000:])
    res = resume(r, "--path", tmp_path / "other.txt")
    assert res.returncode == 2 and "the corpus differs" in res.stderr, res.stderr
    assert not out.parent.exists()
    res = resume(r)
    assert res.returncode == 0 and out.is_file(), res.stderr


def test_a_write_error_at_the_end_names_out_not_its_temporary(tmp_path, text):
    """--out's folder made unwritable while the run trains: the line named the hidden
    temporary (.x.pt.k3j2.tmp); now the file the user asked for."""
    prefix = unprivileged(tmp_path)  # root writes into a chmod 555 folder otherwise
    o, r = tmp_path / "o", tmp_path / "r"
    o.mkdir()
    proc = subprocess.Popen([*prefix, sys.executable, "-m", "txl_mini", "train",
                             *tiny(text, r, steps=300), "--out", str(o / "x.pt")],
                            env=ENV, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (r / "config.json").exists())  # checked, now training
        o.chmod(0o555)
        _, err = proc.communicate(timeout=240)
    finally:
        o.chmod(0o755)
    assert proc.returncode == 1 and err == (
        f"python -m txl_mini train: error: {o}/x.pt: Permission denied; {r}/last.pt, "
        f"the last checkpoint written, is kept (--resume {r})\n"), err
    assert os.listdir(o) == []


# -- finding 15: forged checkpoint fields ----------------------------------------------

def forge(paused, tmp_path, where: str, key, value):
    """A copy of the paused run whose last.pt has ckpt[where][key] = value."""
    r = tmp_path / "f"
    shutil.copytree(paused, r)
    ckpt = torch.load(r / "last.pt", weights_only=True)
    part = ckpt[where]
    if isinstance(key, tuple):  # a field inside a list, e.g. ("ranks", 0, "mems")
        for k in key[:-1]:
            part = part[k]
        key = key[-1]
    part[key] = value
    torch.save(ckpt, r / "last.pt")
    return r


ALL = ("evaluate", "sample", "train")


@pytest.mark.parametrize("where, key, value, refused_by, words", [
    ("meta", "offline_chars", "x", ALL,
     'has meta.offline_chars = "x", not a number of characters'),
    ("meta", "corpus_path", 5, ALL,
     "has meta.corpus_path = 5, not a file path or null"),
    ("meta", "corpus", [1], ALL, "has meta.corpus that is not a corpus name or record"),
    ("extra", "step", "5", ("train",), 'has extra.step = "5", not a step count'),
    ("extra", "ranks", [{}], ("train",),
     "has no extra.ranks[0].mems (a list of 2 tensors (B, M, C) = (16, <= 8, 16)"),
    ("extra", "best", "x", ("train",), 'has extra.best = "x", not a bpc or null'),
    ("extra", "pos", -3, ("train",), "has extra.pos = -3, not a position in the"),
    ("extra", ("ranks", 0, "rng"), {"torch": torch.zeros(3, dtype=torch.uint8)},
     ("train",), "has extra.ranks[0].rng that is not a random-number state"),
    ("extra", ("ranks", 0, "mems"), [torch.zeros(3, 4, 5)] * 2, ("train",),
     "has extra.ranks[0].mems that is not a list of 2 tensors (B, M, C) = (16, <= 8,"),
    ("extra", "val_pending", "no", ("train",),
     'has extra.val_pending = "no", not true or false'),
    ("optimizer", "param_groups", [{}], ("train",),
     "has optimizer that is not Adam's state (state, param_groups)"),
])
def test_a_forged_field_is_one_line_naming_file_and_field(paused, tmp_path, where, key,
                                                          value, refused_by, words):
    """meta.offline_chars "x", meta.corpus_path 5, extra.step "5", extra.ranks [{}],
    extra.best "x" (and the like) gave TypeError and KeyError tracebacks, or trained a
    run from a forged state. meta describes the model, so each command refuses a
    forged one; extra is the training state, which only --resume reads."""
    r = forge(paused, tmp_path, where, key, value)
    ckpt = r / "last.pt"
    before = ckpt.read_bytes()
    # evaluate and sample read no extra.*: that they take a forged one is checked on
    # the first such case (each command is a process of a few seconds)
    first_extra = key == "step"
    for command in refused_by if where == "extra" and not first_extra else ALL:
        argv = {"evaluate": ["evaluate", ckpt, "--chars", "100"],
                "sample": ["sample", ckpt, "--chars", "5", "--seed", "0"],
                "train": ["train", "--resume", r]}[command]
        res = py("-m", "txl_mini", *map(str, argv), "--quiet")
        if command in refused_by:
            assert one_line(res, command).startswith(f"{ckpt} {words}"), res.stderr
        else:
            assert res.returncode == 0, res.stderr
    assert ckpt.read_bytes() == before  # a refused resume trained nothing
