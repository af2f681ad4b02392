"""Faults a ninth probe of the command lines found in run directories, output
paths, the environment and checkpoints (subprocesses; each failed before its fix)."""

import os
import shutil
import signal
import subprocess
import sys
import zipfile

import pytest
from test_cli_faults import ENV, one_line, start, tiny, txl, wait_for


def txl_env(env, *argv):
    """`python -m txl_mini ARGV` in a subprocess with environment `env`."""
    return subprocess.run([sys.executable, "-m", "txl_mini", *map(str, argv)],
                          env=env, text=True, capture_output=True, timeout=300)


def test_a_run_dir_too_long_for_its_files_is_refused_at_once(tmp_path, text):
    """A --run-dir of 4,073 bytes is under PATH_MAX, but its metrics.jsonl and
    config.json are over: the corpus was built, then '.../config.json: File name
    too long', exit 1."""
    top = tmp_path / "long"
    path = str(top)
    while len(os.fsencode(path)) < 4073 - 201:
        path += "/" + "a" * 200
    path += "/" + "b" * (4073 - len(os.fsencode(path)) - 1)
    assert len(os.fsencode(path)) == 4073
    line = one_line(txl("train", *tiny(text, path)), 2)
    assert line.startswith("python -m txl_mini train: error: --run-dir ")
    assert "leaves no room for the files a run writes in it (metrics.jsonl: " in line
    assert not top.exists()


@pytest.mark.parametrize("argv", [["data", "offline", "--out", "-"],
                                  ["train", "--preset", "tiny", "--run-dir", "r",
                                   "--out", "-"],
                                  ["bench", "--json", "-"]])
def test_a_dash_for_an_output_file_is_refused(tmp_path, argv):
    """`data offline --out -` wrote a file named '-' (and said so): no command
    writes its file to stdout, where its report goes."""
    opt = argv[-2]
    line = one_line(txl(*argv, cwd=tmp_path), 2)
    assert line.endswith(f"error: {opt} - would be a file named '-', not standard "
                         "output (the report goes there); give a file name (./- "
                         "for that one)")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("cache", ["file", os.devnull, "file/sub"])
def test_a_cache_variable_that_names_no_folder_is_bad_input(tmp_path, cache):
    """TXL_MINI_CACHE naming a file or /dev/null was 'cannot create cache directory
    ...: File exists', exit 1, where a name too long was refused, exit 2."""
    (tmp_path / "file").write_text("not a folder")
    value = cache if cache == os.devnull else str(tmp_path / cache)
    res = txl_env(dict(ENV, TXL_MINI_CACHE=value), "data", "text8")
    line = one_line(res, 2)
    assert line.startswith("python -m txl_mini data text8: error: TXL_MINI_CACHE="
                           f"{value!r} in the environment: ")
    assert line.endswith("is not a directory; give another folder")


@pytest.mark.parametrize("variables, line", [
    ({"RANK": "1"}, "RANK='1' in the environment, but WORLD_SIZE is not set "
     "(torchrun sets both; unset RANK for one process)"),
    ({"LOCAL_RANK": "3"}, "LOCAL_RANK='3' in the environment, but WORLD_SIZE is not "
     "set (torchrun sets both; unset LOCAL_RANK for one process)"),
    ({"WORLD_SIZE": "1", "RANK": "0", "LOCAL_RANK": "5"}, "LOCAL_RANK='5' in the "
     "environment is not a rank below WORLD_SIZE=1 (torchrun sets both; unset them "
     "for one process)")])
def test_incoherent_torchrun_variables_are_refused(tmp_path, text, variables, line):
    """RANK=1 without WORLD_SIZE, or LOCAL_RANK=5 of one process, trained silently
    as rank 0."""
    env = {k: v for k, v in ENV.items()
           if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    res = txl_env({**env, **variables}, "train", *tiny(text, tmp_path / "r"))
    assert one_line(res, 2) == f"python -m txl_mini train: error: {line}"
    assert not (tmp_path / "r").exists()


def test_a_stopped_run_leaves_no_empty_folder_for_its_out(tmp_path, text):
    """SIGTERM during training kept last.pt, and left outs/sub/, made for --out
    outs/sub/model.pt, empty (the resume makes it again)."""
    argv = [*tiny(text, tmp_path / "r", steps=100000), "--save-every", "1",
            "--out", str(tmp_path / "outs" / "sub" / "model.pt")]
    p = start(["train", *argv])
    wait_for(lambda: (tmp_path / "r" / "last.pt").exists() or p.poll() is not None)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 143, err
    assert "saved " in out + err and (tmp_path / "r" / "last.pt").is_file()
    assert not (tmp_path / "outs").exists()


@pytest.mark.parametrize("command, kind", [("evaluate", "a directory"),
                                           ("sample", "a FIFO (named pipe)")])
def test_a_best_pt_that_is_no_file_is_not_skipped_silently(paused, tmp_path, command,
                                                           kind):
    """A run directory whose best.pt is a folder or a FIFO: evaluate and sample took
    last.pt instead, saying nothing."""
    run = tmp_path / "r"
    shutil.copytree(paused, run)
    (run / "best.pt").unlink(missing_ok=True)  # last.pt stays, to fall back on
    if kind == "a directory":
        (run / "best.pt").mkdir()
    else:
        os.mkfifo(run / "best.pt")
    res = txl(command, run, "--threads", "1")
    assert one_line(res, 2) == (f"python -m txl_mini {command}: error: {run}/best.pt "
                                f"is {kind}, not a checkpoint file")
    assert res.stdout == ""


def test_an_absurd_memory_length_in_a_checkpoint_is_a_bad_config(paused, tmp_path):
    """config.mem_len = 10**12, forged: sample printed its prompt 'the ', then 'out
    of memory', exit 1."""
    import torch

    ckpt = torch.load(paused / "last.pt", weights_only=False)
    ckpt["config"]["mem_len"] = 10**12
    torch.save(ckpt, tmp_path / "big.pt")
    res = txl("sample", tmp_path / "big.pt", "--threads", "1")
    assert one_line(res, 2) == (f"python -m txl_mini sample: error: {tmp_path}/big.pt"
                                " has config.mem_len = 1000000000000, not a distance "
                                "<= 2,147,483,647 (as train allows)")
    assert res.stdout == ""


def test_a_text8_zip_cut_short_is_said_to_be_one(tmp_path):
    """A text8.zip cut to 100 bytes was read as the raw text: 'text8 in ... failed
    verification: expected 100,000,000 bytes ..., got 100 bytes'."""
    whole = tmp_path / "whole.zip"
    with zipfile.ZipFile(whole, "w") as zf:
        zf.writestr("text8", " anarchism originated as a term of abuse" * 100)
    cut = tmp_path / "text8.zip"
    cut.write_bytes(whole.read_bytes()[:100])
    res = txl("data", "text8", "--path", cut)
    assert one_line(res, 2) == (f"python -m txl_mini data text8: error: --path {cut} "
                                "is not a complete zip file (cut short or damaged); "
                                "pass the original text8.zip or the unzipped text8 "
                                "file")
