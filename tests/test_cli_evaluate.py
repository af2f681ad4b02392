"""python -m txl_mini evaluate: options, modes, JSON, and one-line errors for bad
input."""

import json
import os

import pytest
import torch
from cli_text import words

from txl_mini.checkpoint import save_checkpoint
from txl_mini.cli import evaluate
from txl_mini.cli.train import main as train_main
from txl_mini.config import preset
from txl_mini.model import VanillaTransformer

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eval")
    text = tmp / "corpus.txt"
    text.write_text(words(4000))  # valid split: 200 chars
    assert train_main(["--preset", "tiny", "--path", str(text), "--steps", "4",
                        "--batch-size", "4", "--warmup", "1", "--eval-chars", "50",
                        "--threads", "1", "--quiet", "--run-dir", str(tmp / "r")]) == 0
    torch.manual_seed(0)
    save_checkpoint(tmp / "vanilla.pt", VanillaTransformer(preset("tiny")),
                    {"corpus": "offline", "corpus_path": str(text)})
    return tmp


def ev(capsys, *args):
    code = evaluate.main([*map(str, args), "--threads", "1", "--quiet"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_output_and_options(run, capsys):
    code, out, _ = ev(capsys, run / "r", "--json", "--mem-len", "16",
                      "--clamp-len", "5", "--same-length", "--seg-len", "4",
                      "--batch-size", "2")
    res = json.loads(out)
    assert code == 0 and res["mode"] == "segments" and res["model"] == "TransformerXL"
    assert (res["mem_len"], res["clamp_len"], res["same_length"], res["seg_len"],
            res["batch_size"]) == (16, 5, True, 4, 2)
    assert res["chars"] == 200 and res["n_tokens"] == 2 * 99 and 0 < res["bpc"] < 10


def test_mem_len_changes_the_number(run, capsys):
    last = run / "r" / "last.pt"
    bpc = [json.loads(ev(capsys, last, "--json", "--mem-len", m)[1])["bpc"]
           for m in (0, 8)]
    assert bpc[0] != bpc[1]


def test_vanilla_checkpoint_uses_the_sliding_window(run, capsys):
    code, out, _ = ev(capsys, run / "vanilla.pt", "--json", "--chars", "40")
    res = json.loads(out)
    assert code == 0 and res["mode"] == "sliding" and res["n_tokens"] == 39
    code, out, _ = ev(capsys, run / "vanilla.pt", "--json", "--chars", "40",
                      "--mode", "segments")
    assert json.loads(out)["mode"] == "segments"


@pytest.mark.parametrize("args, words", [
    (["--mem-len", "-1"], "--mem-len must be >= 0"),
    (["--chars", "-99990"], "--chars must be >= 2"),
    (["--batch-size", "0"], "--batch-size must be >= 1"),
    (["--seg-len", "0"], "--seg-len must be >= 1"),
    (["--clamp-len", "0"], "--clamp-len must be -1 (off) or >= 1"),
    (["--batch-size", "1000"], "make 1,000 streams of 0, too short for segments"),
])
def test_bad_values(run, capsys, args, words):
    code, _, err = ev(capsys, run / "r", *args)
    assert (code == 2 and words in err and err.count("\n") == 1
            and "Traceback" not in err)


def test_vanilla_has_no_memory(run, capsys):
    code, _, err = ev(capsys, run / "vanilla.pt", "--mem-len", "8")
    assert code == 2 and "no memory" in err


@pytest.mark.parametrize("content, words", [
    (b"", "empty file"), (os.urandom(300), "not a txl_mini checkpoint"),
    (None, "no such checkpoint file")])
def test_bad_checkpoint_files(tmp_path, capsys, content, words):
    path = tmp_path / "x.pt"
    if content is not None:
        path.write_bytes(content)
    code, _, err = ev(capsys, path)  # bad input, exit 2 (was 1)
    assert code == 2 and words in err and str(path) in err and err.count("\n") == 1


def test_truncated_checkpoint(run, tmp_path, capsys):
    data = (run / "r" / "last.pt").read_bytes()
    path = tmp_path / "cut.pt"
    path.write_bytes(data[: len(data) // 3])
    code, _, err = ev(capsys, path)  # bad input, exit 2 (was 1)
    assert (code == 2 and "truncated" in err and str(path) in err
            and err.count("\n") == 1)


def test_xl_evaluates_through_the_key_value_cache_with_the_same_bpc(run, capsys):
    """The cache is on by default for Transformer-XL and --no-cache turns it off; the
    two give the same bpc (float32 rounding), also with same_length and clamp_len."""
    for extra in ([], ["--same-length", "--clamp-len", "5", "--mem-len", "12"]):
        cached = json.loads(ev(capsys, run / "r", "--json", *extra)[1])
        plain = json.loads(ev(capsys, run / "r", "--json", "--no-cache", *extra)[1])
        assert (cached["cache"], plain["cache"]) == (True, False)
        assert cached["n_tokens"] == plain["n_tokens"]
        assert cached["bpc"] == pytest.approx(plain["bpc"], abs=1e-6)
    vanilla = json.loads(ev(capsys, run / "vanilla.pt", "--json", "--chars", "40")[1])
    assert vanilla["cache"] is False  # the sliding window has nothing to cache
