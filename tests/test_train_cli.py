"""python -m txl_mini train: exact resume, interrupts, NaN stop, run directory, bad
inputs."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from txl_mini.checkpoint import load_checkpoint, read_checkpoint
from txl_mini.cli import run, rundir
from txl_mini.cli.train import main as train_main

torch.set_num_threads(1)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def base(text, run_dir, steps=16):
    return ["--preset", "tiny", "--corpus", "offline", "--path", text,
            "--steps", str(steps), "--batch-size", "16", "--warmup", "3",
            "--lr", "3e-3", "--dropout", "0.1", "--log-every", "1", "--eval-every", "5",
            "--eval-chars", "60", "--save-every", "100", "--threads", "1", "--quiet",
            "--run-dir", str(run_dir)]


def losses(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    return [(r["step"], r.get("loss"), r.get("val_bpc")) for r in rows]


def test_resume_is_bitwise_exact(tmp_path, text):
    """16 steps straight == 8 steps, interrupt, resume 8 more: weights, Adam, logged
    losses."""
    a, b = tmp_path / "a", tmp_path / "b"
    assert train_main(base(text, a)) == 0
    assert train_main(base(text, b), on_step=lambda s: s == 8) == 130
    assert read_checkpoint(b / "last.pt")["extra"]["step"] == 8
    assert train_main(["--resume", str(b), "--quiet"]) == 0
    ca, cb = read_checkpoint(a / "last.pt"), read_checkpoint(b / "last.pt")
    for k, v in ca["state_dict"].items():
        assert torch.equal(v, cb["state_dict"][k]), k
    for sa, sb in zip(ca["optimizer"]["state"].values(),
                      cb["optimizer"]["state"].values()):
        assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert (losses(a) == losses(b)
            and len(losses(a)) == 16 + 4)  # 16 steps, 4 validations
    assert ca["extra"]["step"] == 16 and sorted(os.listdir(b)) == sorted(rundir.FILES)


def test_best_checkpoint_and_meta(tmp_path, text):
    run_dir = tmp_path / "r"
    assert train_main(base(text, run_dir, steps=6)
                      + ["--out", str(tmp_path / "m.pt")]) == 0
    model, meta = load_checkpoint(run_dir / "best.pt")
    vals = [v for _, _, v in losses(run_dir) if v is not None]
    assert meta["best_val_bpc"] == min(vals) and meta["corpus"] == "offline"
    config = json.loads((run_dir / "config.json").read_text())
    assert len(config["corpus"]["sha1"]) == 40 and config["corpus"]["chars"] == 1800
    assert load_checkpoint(tmp_path / "m.pt")[1]["steps"] == 6


def test_existing_run_dir_is_refused_unless_overwrite(tmp_path, text, capsys):
    run_dir = tmp_path / "r"
    assert train_main(base(text, run_dir, steps=2)) == 0
    capsys.readouterr()
    assert train_main(base(text, run_dir, steps=2)) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "--overwrite" in err and err.count("\n") == 1
    # fails after the dir check
    bad_path = ["--overwrite", "--path", str(tmp_path / "missing.txt")]
    assert train_main(base(text, run_dir, steps=3) + bad_path) == 2  # bad input
    # refused: old run intact
    assert read_checkpoint(run_dir / "last.pt")["extra"]["step"] == 2
    assert train_main(base(text, run_dir, steps=3) + ["--overwrite"]) == 0
    assert read_checkpoint(run_dir / "last.pt")["extra"]["step"] == 3


def test_resume_refuses_changed_settings(tmp_path, text, capsys):
    run_dir = tmp_path / "r"
    assert train_main(base(text, run_dir, steps=2)) == 0
    capsys.readouterr()
    assert train_main(["--resume", str(run_dir), "--lr", "1"]) == 2
    assert "drop --lr" in capsys.readouterr().err


def test_nan_loss_stops_and_keeps_last_good_checkpoint(tmp_path, text, monkeypatch,
                                                       capsys):
    run_dir = tmp_path / "r"
    args = base(text, run_dir, steps=10)
    args[args.index("--save-every") + 1] = "3"
    real = run.train_step
    calls = {"n": 0}

    def poisoned(model, opt, x, y, mems, *a, **k):
        calls["n"] += 1
        if calls["n"] == 5:  # step 5 gets a NaN input embedding
            with torch.no_grad():
                model.embed.weight[0, 0] = float("nan")
        return real(model, opt, x, y, mems, *a, **k)

    monkeypatch.setattr(run, "train_step", poisoned)
    assert train_main(args) == 1
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"error: loss is nan at step 5; stopped, {run_dir}/last.pt, "
                        "the last checkpoint saved before it, is kept, but --resume "
                        f"{run_dir} repeats the same steps; start over with other "
                        "options and --overwrite") and "\n" not in err
    ckpt = read_checkpoint(run_dir / "last.pt")
    assert ckpt["extra"]["step"] == 3
    assert all(torch.isfinite(v).all() for v in ckpt["state_dict"].values())


def cli(*args, **kw):
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "txl_mini", "train", *args], env=env,
                          capture_output=True, text=True, timeout=240, **kw)


def test_sigint_saves_then_resume_finishes(tmp_path, text):
    run_dir = tmp_path / "r"
    args = base(text, run_dir, steps=100000)
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", "train", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # as a terminal starts it: a test run in the background
                            # hands SIGINT on ignored, and an ignored one stays so
                            preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                             signal.SIG_DFL))
    deadline = time.time() + 200
    while time.time() < deadline and not (run_dir / "metrics.jsonl").exists():
        time.sleep(0.2)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err
    line = err.strip().splitlines()[-1]  # the stop line is news, not stdout's output
    assert "SIGINT" not in out
    assert line.startswith("SIGINT: saved") and f"--resume {run_dir}" in line
    step = read_checkpoint(run_dir / "last.pt")["extra"]["step"]
    assert 1 <= step < 100000
    # finish quickly: the same run, resumed, continues from `step` (its settings are
    # kept)
    cfg = json.loads((run_dir / "config.json").read_text())
    assert cfg["args"]["steps"] == 100000
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", "train",
                             "--resume", str(run_dir)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    time.sleep(0.5)
    while (read_checkpoint(run_dir / "last.pt")["extra"]["step"] == step
           and proc.poll() is None):
        time.sleep(0.3)
        if len(losses(run_dir)) > step + step // 5 + 3:
            break
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143 and "Traceback" not in out + err, err
    assert "resuming at step" in out
    assert read_checkpoint(run_dir / "last.pt")["extra"]["step"] > step


BAD = [
    (["--steps", "0"], "--steps must be >= 1"),
    (["--batch-size", "0"], "--batch-size must be >= 1"),
    (["--lr", "-1"], "--lr must be a finite number > 0"),
    (["--lr", "nan"], "--lr must be a finite number > 0"),
    (["--seg-len", "0"], "--seg-len must be >= 1"),
    (["--mem-len", "-1"], "--mem-len must be >= 0"),
    (["--dropout", "1.5"], "dropout must be in [0, 1)"),
    (["--preset", "huge"], "invalid choice: 'huge'"),
    (["--seg-len", "2000000"], "GiB"),
    (["--seg-len", "4096", "--batch-size", "1000"], "GiB"),
    (["--batch-size", "500"], "too short for segments"),
    (["--path", "/nonexistent/corpus.txt"], "cannot read /nonexistent/corpus.txt"),
    (["--device", "cuda"] if not torch.cuda.is_available() else ["--steps", "-1"],
     "no CUDA GPU" if not torch.cuda.is_available() else "--steps"),
]


@pytest.mark.parametrize("extra, words", BAD)
def test_bad_inputs_one_line_no_traceback(tmp_path, text, extra, words, capsys):
    run_dir = tmp_path / "r"
    try:
        code = train_main(base(text, run_dir) + extra)
    except SystemExit as e:
        # argparse's own errors (choices) exit 2 with usage + one line
        code = e.code
    err = capsys.readouterr().err
    assert code != 0 and words in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].count("error") == 1
    assert not run_dir.exists()  # nothing created for a refused run


def test_bad_output_locations(tmp_path, text, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for args, said in [(["--run-dir", str(blocker)], "is a file"),
                        (["--run-dir", str(blocker / "sub")], "cannot write"),
                        (["--out", str(tmp_path)], "is a directory"),
                        (["--resume", str(tmp_path / "nope")], "no config.json")]:
        code = train_main(base(text, tmp_path / "r") + args)
        err = capsys.readouterr().err
        assert code == 2 and said in err and err.count("\n") == 1, err


def test_cli_subprocess_bad_input_has_no_traceback(tmp_path):
    res = cli("--steps", "0", "--run-dir", str(tmp_path / "r"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip() == (
        "python -m txl_mini train: error: --steps must be >= 1, got 0")


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit) as ex:
        train_main(["--help"])
    out = capsys.readouterr().out
    assert ex.value.code == 0 and "(default: 500)" in out and "--resume" in out
