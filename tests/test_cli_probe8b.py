"""Issue 31, eighth probe (b): the cost of checking a checkpoint, non-regular text8
paths, broken weights (the findings of fix-31w).

Each test runs `python -m txl_mini` in a subprocess, as a user would.
"""

import os
import re
import resource
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, tiny, txl
from test_cli_probe7a import run  # noqa: F401 (a fixture: a finished tiny run)

PROG = "python -m txl_mini"


# -- 1. checking a checkpoint's weights imported torch._dynamo ------------------------

@pytest.mark.parametrize("argv", [["evaluate"], ["sample", "--chars", "5"]])
def test_reading_a_checkpoint_does_not_import_dynamo(run, argv):  # noqa: F811
    """The weights were checked against a model built on the meta device with its
    init run, and nn.init on meta tensors imports torch._dynamo: 2 s and ~70 MiB more
    on every evaluate, sample and --resume (sample of a tiny run: 2.6 s -> 4.5 s)."""
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "txl_mini",
                          *argv, str(run), "--threads", "1", "--quiet"], env=ENV,
                         text=True, capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert not re.search(r"\| +torch\._dynamo$", res.stderr, re.M)


def _vm_after_import() -> int:
    """Bytes of address space a process maps once evaluate and sample are imported
    (torch's libraries: most of what they need)."""
    res = subprocess.run(
        [sys.executable, "-c", "import txl_mini.cli.evaluate, txl_mini.cli.sample, "
         "re; print(re.search(r'VmSize:\\s+(\\d+)', open('/proc/self/status').read())"
         "[1])"], env=ENV, text=True, capture_output=True, check=True)
    return int(res.stdout) * 1024


@pytest.mark.parametrize("argv", [["evaluate"], ["sample", "--chars", "5"]])
def test_a_tiny_run_is_read_under_a_tight_ulimit_v(run, argv):  # noqa: F811
    """Under `ulimit -v` 680-700 MB, evaluate and sample of a tiny run ended in
    MemoryError tracebacks after the weights check came (torch._dynamo's import);
    before it they ran at about 10 MiB above what importing them maps (measured: 650
    MB against 641 MB; 720 MB needed with the check). 40 MiB above it: margin both
    ways."""
    limit = _vm_after_import() + (40 << 20)
    try:
        resource.setrlimit(resource.RLIMIT_AS, resource.getrlimit(resource.RLIMIT_AS))
    except (ValueError, OSError):
        pytest.skip("RLIMIT_AS cannot be set here")
    res = subprocess.run(
        [sys.executable, "-m", "txl_mini", *argv, str(run), "--threads", "1",
         "--quiet"], env=ENV, text=True, capture_output=True, timeout=300,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert res.returncode == 0 and res.stderr == "", res.stderr[-2000:]


# -- 2. a text8 --path that is a FIFO or a device --------------------------------------

@pytest.mark.parametrize("argv, special", [
    (["data", "text8"], "fifo"), (["data", "text8"], "/dev/zero"),
    (["evaluate", "RUN", "--corpus", "text8", "--threads", "1"], "fifo"),
    (["train", "--corpus", "text8", "--run-dir", "r", "--threads", "1"], "/dev/null")])
def test_a_text8_path_that_is_no_regular_file_is_named(run, tmp_path, argv,  # noqa: F811
                                                         special):
    """`data text8 --path FIFO` (or /dev/null, /dev/zero) said 'no such file: FIFO';
    now it says what the path is, as train's and evaluate's --path do, exit 2 in
    each, and nothing is read (a FIFO would block) or made."""
    if special == "fifo":
        special = str(tmp_path / "fifo")
        os.mkfifo(special)
    argv = [str(run) if a == "RUN" else a for a in argv]
    res = txl(*argv, "--path", special, "--quiet", cwd=tmp_path)
    line = one_line(res, 2)
    kind = "a FIFO" if "fifo" in special else "a (character )?device( or socket)?"
    assert re.search(rf"error: (--path )?{re.escape(special)} is {kind}"
                     r"( \(named pipe\))?, not a regular file", line), line
    assert "no such file" not in line and not (tmp_path / "r").exists()


# -- 3. a checkpoint whose weights are broken -----------------------------------------

@pytest.fixture(scope="module")
def broken(run, tmp_path_factory):  # noqa: F811
    """Copies of the run's best.pt with every float weight NaN, inf, or x 1e30."""
    import torch

    d = tmp_path_factory.mktemp("broken")
    for name, f in (("nan", lambda t: t.fill_(float("nan"))),
                    ("inf", lambda t: t.fill_(float("inf"))),
                    ("big", lambda t: t.mul_(1e30))):
        ckpt = torch.load(run / "best.pt", weights_only=False)
        for t in ckpt["state_dict"].values():
            if t.is_floating_point():
                f(t)
        torch.save(ckpt, d / f"{name}.pt")
    return d


@pytest.mark.parametrize("name", ["nan", "inf", "big"])
def test_sample_of_broken_weights_exits_2_as_evaluate(broken, name):
    """sample said 'the model's logits are NaN: its weights are broken', exit 1,
    where evaluate of the same checkpoint exits 2 (bad input)."""
    ckpt = broken / f"{name}.pt"
    res = txl("sample", ckpt, "--chars", "5", "--threads", "1", "--quiet")
    assert one_line(res, 2) == (f"{PROG} sample: error: {ckpt}: the model's logits "
                                "are NaN: its weights are broken")
    assert txl("evaluate", ckpt, "--chars", "100", "--threads", "1",
               "--quiet").returncode == 2


def test_evaluate_names_the_first_character_whose_loss_is_nan(broken):
    """'gives a NaN or infinite loss at 99 of 99 characters' read as the last
    character, though the loss was NaN from the first scored one (character 2: the
    first has nothing before it). Now the count, and where the first one is."""
    ckpt = broken / "nan.pt"
    res = txl("evaluate", ckpt, "--chars", "100", "--threads", "1", "--quiet")
    assert one_line(res, 2) == (
        f"{PROG} evaluate: error: {ckpt} gives a NaN or infinite loss for 99 of 99 "
        "characters, the first at character 2; its weights are broken, so there is no "
        "bpc to report")


# -- minor: RANK >= WORLD_SIZE, and config.json that is not one of ours ----------------

def test_a_rank_not_below_world_size_1_is_refused(tmp_path):
    """WORLD_SIZE=2 RANK=2 was refused, WORLD_SIZE=1 RANK=1 trained silently as rank
    0; now refused alike, before the run directory is made."""
    res = subprocess.run(
        [sys.executable, "-m", "txl_mini", "train", "--preset", "tiny", "--steps", "1",
         "--run-dir", str(tmp_path / "r"), "--threads", "1", "--quiet"],
        env=dict(ENV, WORLD_SIZE="1", RANK="1"), text=True, capture_output=True,
        timeout=300)
    assert one_line(res, 2) == (
        f"{PROG} train: error: RANK='1' in the environment is not a rank below "
        "WORLD_SIZE=1 (torchrun sets both; unset them for one process)")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("config", ['{"args": {}, "model": {}, "corpus": {}}',
                                    '{"args": 5, "model": 5, "corpus": 5}'])
def test_overwrite_keeps_files_beside_a_config_json_of_someone_else(tmp_path, text,
                                                                      config):
    """A config.json with the keys args, model and corpus, whatever their values,
    made the folder a run's: `train --overwrite` replaced the user's own last.pt and
    metrics.jsonl there. Now a run's config.json is what train writes (their types,
    its fields), and the folder is refused, its files as they were."""
    d = tmp_path / "mine"
    d.mkdir()
    files = {"config.json": config, "last.pt": "my weights",
             "metrics.jsonl": "my numbers\n"}
    for name, body in files.items():
        (d / name).write_text(body)
    res = txl("train", *tiny(text, d), "--overwrite")
    assert one_line(res, 2) == (
        f"{PROG} train: error: --run-dir {d} is not a run directory of {PROG} train "
        "(it holds config.json, last.pt, metrics.jsonl); give a new or empty directory")
    assert {p.name: p.read_text() for p in d.iterdir()} == files
