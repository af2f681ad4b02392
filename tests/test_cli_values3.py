"""Issue 31's fourth probe of the command lines: an --lr whose Adam step overflows
float32, one exit status per kind of input file, evaluate's memory estimate for a
--mem-len past its text, data stats of an empty file, and torchrun's variables
refused on every rank (subprocesses; each case failed before its fix)."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from test_cli_faults import ENV, one_line, tiny, txl

PROG = "python -m txl_mini"
LR_LIMIT = ("--lr must be <= 3.4e+37 (Adam's first step, lr / (1 - beta1) with "
            "beta1 = 0.9, must fit in float32)")


# -- 1. an --lr whose first Adam step cannot be a float32 ------------------------------

@pytest.mark.parametrize("lr", ["1e38", "3.5e38", "1e300"])
def test_an_lr_that_overflows_adams_step_is_refused_up_front(tmp_path, text, lr):
    """It trained, then ended in torch's traceback from Adam's addcdiv_ ('value cannot
    be converted to type float without overflow'), exit 1, leaving config.json."""
    res = txl("train", *tiny(text, tmp_path / "to"), "--lr", lr)
    assert one_line(res, 2) == f"{PROG} train: error: {LR_LIMIT}, got {float(lr)}"
    assert not (tmp_path / "to").exists()


def test_an_lr_that_overflows_adams_step_in_config_json_is_refused(paused, tmp_path):
    """`train --resume` of such a run repeated the traceback."""
    r = tmp_path / "r"
    shutil.copytree(paused, r)
    config = json.loads((r / "config.json").read_text())
    config["args"]["lr"] = 1e38
    (r / "config.json").write_text(json.dumps(config))
    res = txl("train", "--resume", r)
    assert one_line(res, 2) == (f"{PROG} train: error: --resume {r}: config.json: "
                                f"{LR_LIMIT.replace('--lr', 'lr')}, got 1e+38")


def test_the_largest_lr_allowed_trains_to_a_clean_line(tmp_path, text):
    """Just under the limit Adam's step fits: the weights overflow to inf, which the
    run reports as a NaN loss (exit 1, one line), as for --lr 1e30."""
    res = txl("train", *tiny(text, tmp_path / "r"), "--lr", "3.4e37")
    assert "Traceback" not in res.stderr and res.returncode == 1, res.stderr
    assert "loss is nan" in res.stderr.strip().splitlines()[-1]


# -- 2. one exit status per kind of input file -----------------------------------------

@pytest.mark.parametrize("content, reason", [
    (b"garbage\n", "not a txl_mini checkpoint (not a PyTorch zip file)"),
    (b"\x00\xff" + bytes(range(256)) * 10, "not a txl_mini checkpoint (not a PyTorch "
     "zip file)"),
    (b"", "empty file (0 bytes), not a checkpoint"),
    (None, "no such checkpoint file")])
def test_a_file_that_is_no_checkpoint_is_bad_input_in_one_wording(tmp_path, content,
                                                                  reason):
    """evaluate and sample exited 1 (a machine fault) for a file that is not a
    checkpoint, and worded it differently ('X: not a txl_mini checkpoint ...' vs
    'cannot load checkpoint X: ...')."""
    path = tmp_path / "x.pt"
    if content is not None:
        path.write_bytes(content)
    for cmd in ("evaluate", "sample"):
        res = txl(cmd, path, "--threads", "1")
        assert one_line(res, 2) == f"{PROG} {cmd}: error: {path}: {reason}"


def test_a_missing_input_file_is_bad_input(paused, tmp_path):
    """train --path, evaluate --path, data stats and data text8 --path exited 1 for
    a file that is not there (train --path of an empty file: 2); data text8 --path
    of a folder exited 1 too (train's and evaluate's: 2)."""
    gone = tmp_path / "nonexist"
    res = txl("train", *tiny(str(gone), tmp_path / "r"))
    assert one_line(res, 2) == f"{PROG} train: error: cannot read {gone}: no such file"
    assert not (tmp_path / "r").exists()
    res = txl("evaluate", paused, "--path", gone, "--threads", "1")
    assert one_line(res, 2) == (f"{PROG} evaluate: error: cannot read {gone}: no "
                                "such file")
    res = txl("data", "stats", gone)
    assert one_line(res, 2) == (f"{PROG} data stats: error: cannot read {gone}: no "
                                "such file")
    hint = ("Give --path text8.zip or the unzipped text8 file, or leave it out to "
            "download http://mattmahoney.net/dc/text8.zip.")
    res = txl("data", "text8", "--path", gone)
    assert one_line(res, 2) == f"{PROG} data text8: error: no such file: {gone}. {hint}"
    res = txl("data", "text8", "--path", tmp_path)
    assert one_line(res, 2) == (f"{PROG} data text8: error: {tmp_path} is a directory. "
                                f"{hint}")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_a_checkpoint_we_may_not_read_is_still_exit_1(paused, tmp_path):
    path = tmp_path / "x.pt"
    shutil.copy(paused / "last.pt", path)
    path.chmod(0)
    for cmd in ("evaluate", "sample"):
        res = txl(cmd, path, "--threads", "1")
        assert one_line(res, 1).endswith(f"cannot read {path}: Permission denied")


# -- 3. evaluate's memory estimate for a --mem-len past its text -----------------------

def test_a_mem_len_past_the_text_is_not_refused_for_memory(paused):
    """`evaluate RUN --mem-len 100000000` was refused ('needs roughly 35.8 GiB ...
    K=100000008') for a split of a few hundred characters: the memory never holds
    more than the characters evaluated. It gives the bpc of a memory that holds
    them all."""
    def bpc(mem_len):
        res = txl("evaluate", paused, "--mem-len", mem_len, "--json", "--threads", "1")
        assert res.returncode == 0 and res.stderr == "", res.stderr
        return json.loads(res.stdout)["bpc"]

    # the largest --mem-len evaluate takes (2**31 - 1, as --clamp-len; 10**12 before)
    assert bpc(2**31 - 1) == pytest.approx(bpc(200), abs=1e-6)  # a split of 100 chars


# -- 4. data stats of an empty file ----------------------------------------------------

def test_data_stats_of_an_empty_file_says_it_is_empty(tmp_path):
    """It printed 'most frequent: 'z' 0.000, 'y' 0.000, ...', exit 0."""
    path = tmp_path / "empty.txt"
    path.write_text("")
    res = txl("data", "stats", path)
    assert one_line(res, 2) == (f"{PROG} data stats: error: {path} is empty: there is "
                                "no text in it")
    assert res.stdout == ""


# -- 5. torchrun's variables refused on every rank -------------------------------------

@pytest.mark.parametrize("env, line", [
    ({"MASTER_PORT": "29500"}, "WORLD_SIZE=2 in the environment, but MASTER_ADDR is "
     "not set (torchrun sets both; unset WORLD_SIZE for one process)"),
    ({"MASTER_ADDR": "localhost", "MASTER_PORT": "29500", "LOCAL_RANK": "x"},
     "LOCAL_RANK='x' in the environment is not a rank (torchrun sets it; unset it "
     "for one process)"),
    *(({"MASTER_ADDR": "localhost", "MASTER_PORT": port}, f"MASTER_PORT={port!r} in "
       "the environment is not a port number, 1 to 65535 (torchrun sets it; unset "
       "WORLD_SIZE for one process)") for port in ("0", "65536", "http", "-1")),
])
@pytest.mark.parametrize("rank", ["0", "1"])
def test_an_environment_refused_is_said_by_every_rank(tmp_path, text, env, line,
                                                      rank):
    """A rank > 0 exited 2 and printed nothing: a refusal of the environment is no
    run's error that rank 0 reports for all, and each rank's log must say it. A
    MASTER_PORT that is no port went to torch (rank 0 waited for the others)."""
    res = subprocess.run([sys.executable, "-m", "txl_mini", "train",
                          *tiny(text, tmp_path / "r")], text=True, timeout=120,
                         env=dict(ENV, WORLD_SIZE="2", RANK=rank, **env),
                         capture_output=True)  # before: rank 0 of a bad port waited
    assert one_line(res, 2) == f"{PROG} train: error: {line}"
    assert not (tmp_path / "r").exists()
