"""Issue 31, sixth probe (c): a checkpoint's contents (a sparse weight, a config of
10**9 heads, a field of the wrong type), what a checkpoint path is (a FIFO, a
device), file names in error lines, digits of other scripts, and a long prompt.
Real subprocesses on real files; each test failed before its fix."""

import os
import random
import shutil
import subprocess
import sys

import pytest
import torch
from test_cli_faults import ENV, one_line, txl

from txl_mini.config import preset
from txl_mini.model import TransformerXL
from txl_mini.sample import generate


@pytest.fixture
def ckpt(paused, tmp_path):
    """A copy of a paused run (steps 2 of 4), and a function that saves its last.pt
    edited: `edit(dict)` changes the raw checkpoint in place."""
    d = tmp_path / "r"
    shutil.copytree(paused, d)

    def write(edit, path=d / "last.pt"):
        raw = torch.load(d / "last.pt", weights_only=True)
        edit(raw)
        torch.save(raw, path)
        return path
    write.dir = d
    return write


def sparse(raw):
    raw["state_dict"]["embed.weight"] = raw["state_dict"]["embed.weight"].to_sparse()


@pytest.mark.parametrize("command", ["evaluate", "sample"])
def test_a_sparse_weight_is_one_line(ckpt, tmp_path, command):
    """`copy_() between dense and sparse Tensors`: a traceback, exit 1."""
    path = ckpt(sparse, tmp_path / "s.pt")
    line = one_line(txl(command, path, "--threads", "1"), 2)
    assert line.endswith(f"error: {path} has state_dict['embed.weight'] that is a "
                         "sparse_coo tensor, not a dense one")


def test_resume_refuses_a_sparse_weight(ckpt):
    """--resume of a finished run said 'finished', exit 0; of this paused one it
    failed in load_state_dict."""
    path = ckpt(sparse)
    line = one_line(txl("train", "--resume", ckpt.dir), 2)
    assert f"error: {path} has state_dict['embed.weight'] that is a sparse" in line


@pytest.mark.parametrize("field, value, says", [
    ("n_head", 10**9, "weights do not match the stored config: blocks.0.attn.u is "
     "(2, 8) in the file, (1000000000, 8) for the config"),
    ("n_layer", 10**9, "weights do not match the stored config: config.n_layer = "
     "1,000,000,000, weights of 2 layers"),
    ("clamp_len", 10**30, "has config.clamp_len = 1000000000000000000000000000000, "
     "not a distance <= 2,147,483,647 (as train allows)"),
])
@pytest.mark.parametrize("command", ["evaluate", "sample"])
def test_a_huge_config_is_a_bad_checkpoint(ckpt, tmp_path, command, field, value,
                                           says):
    """10**9 heads: 512 GB asked for, then 'out of memory (lower --batch-size...)'."""
    path = ckpt(lambda raw: raw["config"].update({field: value}), tmp_path / "h.pt")
    line = one_line(txl(command, path, "--threads", "1"), 2)
    assert line.endswith(says) and str(path) in line


@pytest.mark.parametrize("command", ["evaluate", "sample"])
def test_a_config_field_of_the_wrong_type_is_named(ckpt, tmp_path, command):
    """invalid config: '<' not supported between instances of 'str' and 'int'."""
    path = ckpt(lambda raw: raw["config"].update(d_model="x"), tmp_path / "x.pt")
    line = one_line(txl(command, path, "--threads", "1"), 2)
    assert line.endswith(f'error: {path} has config.d_model = "x", not an integer')


@pytest.mark.parametrize("command", ["evaluate", "sample"])
def test_a_fifo_or_a_device_is_named_not_called_empty(tmp_path, command):
    """'empty file (0 bytes), not a checkpoint' for both; the FIFO is not opened."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    line = one_line(txl(command, fifo), 2)  # py: a 300 s timeout
    assert line.endswith(f"error: {fifo} is a FIFO (named pipe), not a checkpoint "
                         "file")
    line = one_line(txl(command, "/dev/zero"), 2)
    assert line.endswith("error: /dev/zero is a character device, not a checkpoint "
                         "file")


def test_a_file_name_with_a_newline_stays_on_one_line(tmp_path):
    """`data stats $'no\\nsuch'` printed its error over two lines."""
    line = one_line(txl("data", "stats", tmp_path / "no\nsuch"), 2)
    assert line.endswith(f"cannot read {tmp_path}/no\\nsuch: no such file")


def test_an_undecodable_file_name_is_written_under_an_ascii_stderr(tmp_path):
    """PYTHONIOENCODING=ascii: "'ascii' codec can't encode character '\\udcfe'",
    exit 1, not naming the file."""
    name = os.fsencode(tmp_path) + b"/\xfe\xc3\xa9.txt"
    res = subprocess.run([sys.executable, "-m", "txl_mini", "data", "stats", name],
                         env=dict(ENV, PYTHONIOENCODING="ascii", LC_ALL="C.UTF-8"),
                         capture_output=True, timeout=300)
    res.stderr = res.stderr.decode("ascii")
    line = one_line(res, 2)
    assert line.endswith(f"cannot read {tmp_path}/\\xfe\\xe9.txt: no such file")


@pytest.mark.parametrize("argv, option, kind", [
    (["--chars", "\u0661"], "--chars", "int"),  # an Arabic-Indic 1
    (["--temperature", "\u0660.\u0665"], "--temperature", "float"),
])
def test_digits_of_other_scripts_are_refused(ckpt, argv, option, kind):
    """--chars ١ generated one character: int() reads any Unicode digit."""
    line = one_line(txl("sample", ckpt.dir, "--threads", "1", *argv), 2)
    assert line.endswith(f"error: argument {option}: invalid {kind} value: "
                         f"'{argv[1]}' (see --help)")


def test_a_long_prompt_reads_only_what_the_text_depends_on(ckpt, tmp_path):
    """A 20,000-character prompt was read in segments of 8 through the model: 60
    characters a second on a busy machine. Now only its end that the next
    character can depend on is read (a line says so), and the text is the same."""
    rng = random.Random(1)
    prompt = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(20000))
    argv = ["sample", ckpt.dir, "--threads", "1", "--seed", "3", "--chars", "40"]
    long = txl(*argv, "--prompt", prompt)
    assert long.returncode == 0, long.stderr
    assert ("--prompt: reading its last 48 of 20,000 characters, all the next one "
            "can depend on") in long.stderr
    short = txl(*argv, "--prompt", prompt[-48:], "--quiet")
    assert long.stdout[20000:] == short.stdout[48:] and len(short.stdout) == 48 + 41


@pytest.mark.parametrize("kw", [{}, {"pos_enc": "absolute"}, {"pos_enc": "shaw"},
                                {"same_length": True}, {"clamp_len": 3},
                                {"mem_len": 0}])
def test_the_prompt_bound_changes_no_logit(kw):
    """cli.sample.prompt_start: the cut prompt gives every logit to the bit."""
    from txl_mini.cli.sample import prompt_start
    torch.manual_seed(0)
    cfg = preset("tiny").replace(**{"n_layer": 3, "seg_len": 5, "mem_len": 7, **kw})
    model = TransformerXL(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (300,))
    start = prompt_start(len(ids), cfg, use_cache=True)
    assert start > 0
    a, la = generate(model, ids, 30, temperature=0, return_logits=True)
    b, lb = generate(model, ids[start:], 30, temperature=0, return_logits=True)
    assert torch.equal(a, b) and torch.equal(la, lb)
