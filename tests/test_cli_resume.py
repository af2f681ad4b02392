"""python -m txl_mini train --resume: what it accepts, and Ctrl-C during validation.

A different --threads is said, a last.pt of
another model is refused, a finished run writes nothing, options that would be ignored
are refused, a signal during validation stops within a segment and the resumed run is
still bitwise the uninterrupted one, and tokens/s counts training time only.
"""

import json
import os
import shutil
import signal
import time

import pytest
import torch
from cli_text import words

from txl_mini.checkpoint import read_checkpoint
from txl_mini.cli import run
from txl_mini.cli.train import main as train_main

torch.set_num_threads(1)


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(words(6000))  # valid: 300 chars, 5 segments at batch 8
    return str(path)


def base(text, run_dir, steps=12):
    return ["--preset", "tiny", "--path", text, "--steps", str(steps), "--batch-size",
            "16", "--warmup", "2", "--dropout", "0.1", "--log-every", "1",
            "--eval-every", "5", "--eval-chars", "300", "--threads", "1", "--quiet",
            "--run-dir", str(run_dir)]


def rows(run_dir):
    return (run_dir / "metrics.jsonl").read_text().splitlines()


def test_different_threads_on_resume_is_said(tmp_path, text, capsys):
    """Item 6: the thread count is recorded; resuming with another one says so."""
    r = tmp_path / "r"
    assert train_main(base(text, r, steps=4) + ["--pause-at", "2"]) == 0
    assert json.loads((r / "config.json").read_text())["args"]["threads"] == 1
    capsys.readouterr()
    assert train_main(["--resume", str(r), "--threads", "2", "--pause-at", "3"]) == 0
    assert "not bitwise" in capsys.readouterr().err
    torch.set_num_threads(1)


def test_last_pt_of_another_model_is_refused(tmp_path, text, capsys):
    """Item 7: config.json and last.pt must describe the same model."""
    xl, van = tmp_path / "xl", tmp_path / "van"
    assert train_main(base(text, xl, steps=4) + ["--pause-at", "2"]) == 0
    assert train_main(base(text, van, steps=4) + ["--pause-at", "2", "--vanilla"]) == 0
    shutil.copy(van / "last.pt", xl / "last.pt")
    capsys.readouterr()
    assert train_main(["--resume", str(xl)]) == 2
    err = capsys.readouterr().err
    assert "holds a VanillaTransformer, but" in err
    assert "describes a TransformerXL" in err


def test_finished_run_says_so_and_writes_nothing(tmp_path, text, capsys):
    """Item 9: resuming a finished run does not claim to have written anything."""
    r = tmp_path / "r"
    assert train_main(base(text, r, steps=2)) == 0
    before = {n: (r / n).stat().st_mtime_ns for n in os.listdir(r)}
    capsys.readouterr()
    assert train_main(["--resume", str(r)]) == 0
    out = capsys.readouterr()
    assert "is finished: step 2 of 2; nothing to do" in out.err
    assert "wrote" not in out.out
    assert {n: (r / n).stat().st_mtime_ns for n in os.listdir(r)} == before


@pytest.mark.parametrize("extra, words", [
    (["--vanilla", "--mem-len", "64"], "baseline (--vanilla) has no memory"),
    (["--pause-at", "12"], "--pause-at 12 must be below --steps 12"),
    (["--seed", str(2**64)], "--seed must be between 0 and"),
    (["--offline-chars", "1000000000000"], "--offline-chars must be <= 100,000,000"),
    (["--threads", "100000"], "--threads must be between 1 and"),
])
def test_options_that_would_be_ignored_or_crash_are_refused(tmp_path, text, extra,
                                                           words, capsys):
    """Items 9, 13 and 15: refused before anything is built."""
    assert train_main(base(text, tmp_path / "r") + extra) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


def interrupt_validation_at(monkeypatch, step, segment, signals=1):
    """Send ourselves SIGINT when validation at `step` has scored `segment` segments."""
    real = run.evaluate_segments

    def evaluate(model, tokens, on_segment=None, **kw):
        def hook(done, total):
            if state["step"] == step and done == segment:
                for _ in range(signals):
                    os.kill(os.getpid(), signal.SIGINT)
            return on_segment(done, total)
        state["calls"] += 1
        return real(model, tokens, on_segment=hook, **kw)

    state = {"step": None, "calls": 0}
    real_step = run.Run._one_step

    def one_step(self, bar):
        real_step(self, bar)
        state["step"] = self.step

    monkeypatch.setattr(run, "evaluate_segments", evaluate)
    monkeypatch.setattr(run.Run, "_one_step", one_step)
    return state


@pytest.mark.usefixtures("sigint_default")
def test_ctrl_c_during_validation_stops_and_resumes_exactly(tmp_path, text, monkeypatch,
                                                             capsys):
    """Item 10: the signal stops validation after 2 of its 5 segments; last.pt says the
    validation is pending; the resumed run redoes it and ends bitwise equal."""
    a, b = tmp_path / "a", tmp_path / "b"
    assert train_main(base(text, a)) == 0
    interrupt_validation_at(monkeypatch, step=10, segment=2)
    assert train_main(base(text, b)) == 130
    assert capsys.readouterr().err.strip().endswith(
        f"SIGINT: saved {b}/last.pt at step 10/12; continue with --resume {b}")
    extra = read_checkpoint(b / "last.pt")["extra"]
    assert extra["step"] == 10 and extra["val_pending"]
    monkeypatch.undo()
    assert train_main(["--resume", str(b)]) == 0
    ca, cb = read_checkpoint(a / "last.pt"), read_checkpoint(b / "last.pt")
    for k, v in ca["state_dict"].items():
        assert torch.equal(v, cb["state_dict"][k]), k
    strip = [{k: v for k, v in json.loads(x).items() if k != "tokens_per_s"}
             for x in rows(a)]
    assert strip == [{k: v for k, v in json.loads(x).items() if k != "tokens_per_s"}
                     for x in rows(b)]
    assert torch.equal(read_checkpoint(a / "best.pt")["state_dict"]["embed.weight"],
                       read_checkpoint(b / "best.pt")["state_dict"]["embed.weight"])


@pytest.mark.usefixtures("sigint_default")
def test_second_ctrl_c_stops_at_once(tmp_path, text, monkeypatch, capsys):
    """Item 10: a second signal does not wait for anything; last.pt stays as it was."""
    r = tmp_path / "r"
    interrupt_validation_at(monkeypatch, step=10, segment=2, signals=2)
    assert train_main(base(text, r)) == 130
    err = capsys.readouterr().err
    assert "SIGINT again: stopped at once without saving" in err
    assert not (r / "last.pt").exists()  # --save-every 500: nothing saved before


def test_tokens_per_s_leaves_validation_out(tmp_path, text, monkeypatch):
    """Item 18: a validation of 0.5 s after every step must not lower tokens/s."""
    real = run.evaluate_segments

    def slow(*a, **k):
        time.sleep(0.5)
        return real(*a, **k)

    monkeypatch.setattr(run, "evaluate_segments", slow)
    r = tmp_path / "r"
    args = base(text, r, steps=4)
    args[args.index("--eval-every") + 1] = "1"
    assert train_main(args) == 0
    rates = [json.loads(x)["tokens_per_s"] for x in rows(r) if "tokens_per_s" in x]
    # 16 x 8 tokens a step: with the 0.5 s counted, the rate could not pass 256/s
    assert min(rates) > 3 * 256
