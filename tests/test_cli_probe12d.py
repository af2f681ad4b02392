"""Issue 31, a twelfth probe of the command lines (d): sample's characters, names and
memory. Each command-line test failed on 65e8e35 (subprocesses, as a user's shell
runs them)."""

import os
import subprocess
import sys

import pytest
import torch
from test_cli_faults import ENV, one_line, run_dir, tiny, txl  # noqa: F401

from txl_mini.config import ModelConfig
from txl_mini.model import TransformerXL
from txl_mini.sample import generate, sample_next

PROG = "python -m txl_mini"
# a run directory's name with a newline, an escape sequence, DEL and a right-to-left
# override, and the same as train's lines and evaluate's header write it
ODD = "r\n\x1b[31mX\x7f\u202e"
SHOWN = "r\\n\\x1b[31mX\\x7f\\u202e"


@pytest.fixture(scope="module")
def d(run_dir):  # noqa: F811 (the fixture imported above)
    """A trained tiny run, d/r, and its corpus, d/text.txt (test_cli_faults')."""
    return run_dir


@pytest.mark.parametrize("size", ["28", "256"])
def test_train_refuses_a_vocabulary_other_than_the_corpus_characters(d, size):
    """Finding 1: --vocab-size 28 up to 256 was accepted; its checkpoint's sample
    drew ids past 'z' and died with 'IndexError: string index out of range'."""
    res = txl("train", *tiny(str(d / "text.txt"), d / "v"), "--vocab-size", size)
    assert one_line(res, 2) == (f"{PROG} train: error: --vocab-size must be 27, the "
                                f"corpus' characters (a-z and space), got {size}")
    assert not (d / "v").exists()


def test_sample_refuses_a_checkpoint_with_more_ids_than_characters(d, tmp_path):
    """Finding 1: a checkpoint of vocab_size 28 (made before train refused it, or
    forged) gave a traceback after part of its text; now one line, nothing drawn."""
    ckpt = torch.load(d / "r" / "best.pt", weights_only=False)
    ckpt["config"]["vocab_size"] = 28
    state = ckpt["state_dict"]
    for name in ("embed.weight", "head.weight", "head.bias"):  # one row more
        state[name] = torch.cat([state[name], state[name][-1:] + 5])
    torch.save(ckpt, tmp_path / "v28.pt")
    res = txl("sample", tmp_path / "v28.pt", "--chars", "2000", "--seed", "0")
    assert one_line(res, 2) == (
        f"{PROG} sample: error: {tmp_path}/v28.pt has config.vocab_size = 28, not "
        "27, the characters sample writes (a-z and space)")
    assert res.stdout == ""


def test_odd_run_directory_names_are_escaped(d, tmp_path):
    """Finding 2: sample's header and the no-best.pt note printed the name raw: a
    line broken in two, the terminal's colour changed, the text reversed."""
    r = tmp_path / ODD
    assert txl("train", *tiny(str(d / "text.txt"), r, steps=1)).returncode == 0
    shown = f"{tmp_path}/{SHOWN}"
    res = txl("sample", r, "--chars", "5", "--seed", "0")
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines()[0] == (f"TransformerXL from {shown}/best.pt "
                                          "(corpus: offline); key/value cache")
    os.remove(r / "best.pt")
    note = f"note: {shown} has no best.pt; using its last.pt (step 1 of 1)"
    for argv in (["evaluate", r, "--chars", "100"], ["sample", r, "--chars", "5"]):
        res = txl(*argv)
        assert res.returncode == 0, res.stderr
        assert res.stderr.splitlines()[0] == f"{PROG} {argv[0]}: {note}"


def test_sample_chars_0_prints_the_prompt(d):
    """Finding 4: --chars 0 printed nothing, not even the prompt (--chars 1 printed
    'the v' and a newline)."""
    res = txl("sample", d / "r", "--chars", "0", "--quiet")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert res.stdout == "the \n"


def peak_rss_kb(*argv) -> int:
    """The peak resident memory, in kB, of `python -m txl_mini ARGV` alone: measured
    from a fresh parent, as RUSAGE_CHILDREN keeps the largest child it ever waited
    for."""
    code = ("import resource, subprocess, sys; "
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    res = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "txl_mini",
                          *map(str, argv)], env=ENV, text=True, capture_output=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    return int(res.stdout)


def test_sample_memory_does_not_grow_with_chars(d):
    """Finding 3: every character's logits were kept (return_logits or not): about
    0.65 kB each, 241 MB at --chars 1,000, 293 MB at 80,000. 30,000 characters
    (15 s) grew it by ~19 MB; now by less than 4."""
    def peak(n):
        return peak_rss_kb("sample", d / "r", "--chars", n, "--quiet", "--threads",
                           "1", "--seed", "0")
    small, large = peak(1000), peak(30000)
    assert large - small < 4000, (small, large)


@pytest.mark.parametrize("P", [3, 20])  # a prompt shorter and longer than W = 8
def test_generate_draws_the_same_ids_and_logits_as_before(P):
    """Finding 3's fix keeps the last W ids and no logits unless asked: the ids and
    logits are bitwise those of the committed loops, which kept everything."""
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=27, n_layer=2, n_head=2, d_head=4, d_model=8,
                      d_inner=16, seg_len=8, mem_len=8)
    model = TransformerXL(cfg).eval()
    prompt = torch.randint(0, 27, (P,))

    def draw(use_cache, return_logits):
        gen = torch.Generator().manual_seed(1)
        return generate(model, prompt, 40, temperature=1.0, generator=gen,
                        use_cache=use_cache, return_logits=return_logits)

    gen, ids, logits = torch.Generator().manual_seed(1), prompt[None], []
    with torch.inference_mode():  # the committed no-cache loop: the whole history
        for _ in range(40):
            logits.append(model(ids[:, -cfg.seg_len:]).logits[:, -1][0].float())
            nxt = sample_next(logits[-1][None], 1.0, None, gen)
            ids = torch.cat([ids, nxt[:, None]], dim=1)
    new, got = draw(False, True)
    assert torch.equal(new, ids[0, P:]) and torch.equal(got, torch.stack(logits))
    assert torch.equal(draw(False, False), new)
    new, _ = draw(True, True)
    assert torch.equal(draw(True, False), new)
