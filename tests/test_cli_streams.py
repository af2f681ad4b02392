"""Issue 31, probe 2: standard output that cannot be written, config.json edited by
hand, --out written at the end, a recorded corpus that changed, the environment."""

import os
import subprocess
import sys

import pytest
from cli_text import words
from test_cli_faults import ENV, py, small_disk, tiny  # noqa: F401 (a fixture)


def into(stdout, argv, cwd=None):
    """`python -m txl_mini ARGV >/dev/full` (stdout="full") or `>&-` ("closed")."""
    close = (lambda: os.close(1)) if stdout == "closed" else None
    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, "-m", "txl_mini", *argv], env=ENV,
                              text=True, stdout=full, stderr=subprocess.PIPE,
                              preexec_fn=close, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("streams")
    (d / "text.txt").write_text(words(2000))
    assert py("-m", "txl_mini", "train", *tiny(str(d / "text.txt"), d / "r")
              ).returncode == 0
    return d


WHY = {"full": "No space left on device", "closed": "it is closed"}


@pytest.mark.parametrize("stdout", ["full", "closed"])
@pytest.mark.parametrize("argv", [
    ["--help"], ["sample", "{d}/r", "--quiet", "--chars", "5"],
    ["evaluate", "{d}/r", "--chars", "100"], ["data", "stats", "{d}/text.txt"],
    ["data", "offline", "--chars", "2000", "--out", "{d}/o.txt"],
    ["train", "--help"]])
def test_stdout_that_cannot_be_written_is_one_line(trained, stdout, argv):
    """Finding 4: an OSError (No space left) or AttributeError ('NoneType' ...
    'write') traceback; evaluate said '[Errno 28] No space left on device'."""
    argv = [a.format(d=trained) for a in argv]
    res = into(stdout, argv)
    # data's lines name its subcommand (`data stats:`), as its other errors do
    name = "".join(" " + a for a in argv[:1 + (argv[0] == "data")] if a[0] != "-")
    # data offline's corpus is written before its report: the line says so
    done = f"; {argv[-1]} is written and complete" if "offline" in argv else ""
    assert res.returncode == 1, res.stderr
    assert res.stderr == (f"python -m txl_mini{name}: error: cannot write to "
                          f"standard output: {WHY[stdout]}{done}\n")


@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_train_into_a_stdout_that_cannot_be_written_leaves_nothing(tmp_path, text,
                                                                  stdout):
    """Finding 4: 'error: cannot write No space left on device; no checkpoint was
    written yet (--resume r starts it again)', and r/ left with a config.json."""
    r = tmp_path / "r"
    res = into(stdout, ["train", *tiny(text, r)])
    assert res.returncode == 1 and res.stderr == (
        "python -m txl_mini train: error: cannot write to standard output: "
        f"{WHY[stdout]}\n")
    assert not r.exists()


@pytest.fixture(scope="module")
def paused(trained):
    """A run paused at step 2 of 4."""
    r = trained / "paused"
    res = py("-m", "txl_mini", "train", *tiny(str(trained / "text.txt"), r, steps=4),
             "--pause-at", "2")
    assert res.returncode == 0, res.stderr
    return r


@pytest.mark.parametrize("key, value, line", [
    ("batch_size", 8, "{r}/config.json has batch_size 8, but {r}/last.pt was "
     "trained with 16; one of the two is from another run or was edited"),
    ("n_layer", 3, "{r}/config.json has n_layer 3, but {r}/last.pt was trained "
     "with 2; one of the two is from another run or was edited"),
    ("seg_len", 4, "{r}/config.json has seg_len 4, but {r}/last.pt was trained "
     "with 8; one of the two is from another run or was edited"),
    ("vanilla", True, "{r}/config.json has vanilla true, but {r}/last.pt was "
     "trained with false; one of the two is from another run or was edited"),
    ("lr", float("nan"), "--resume {r}: config.json: lr must be a finite number > "
     "0, got nan"),
    ("steps", -5, "--resume {r}: config.json: steps must be >= 1, got -5"),
])
def test_a_config_edited_against_last_pt_is_one_line(paused, tmp_path, key, value,
                                                     line):
    """Finding 14: batch_size 8 broke the resume ('Sizes of tensors must match', later
    a line about extra.ranks[0].mems); nan or -5 named --lr or --steps, which the
    user never gave; n_layer, seg_len and vanilla edits were ignored."""
    import json
    import shutil
    r = tmp_path / "r"
    shutil.copytree(paused, r)
    config = json.loads((r / "config.json").read_text())
    config["args"][key] = value
    (r / "config.json").write_text(json.dumps(config))
    before = (r / "last.pt").read_bytes()
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 2 and res.stderr == (
        "python -m txl_mini train: error: " + line.format(r=r) + "\n")
    assert (r / "last.pt").read_bytes() == before


def test_out_that_failed_at_the_end_is_written_by_resume(small_disk, text,  # noqa: F811
                                                         tmp_path):
    """Finding 6: '--out small/m.pt' on a full disk said 'r/last.pt ... is kept
    (--resume r)'; --resume then said 'r is finished ... nothing to do', exit 0, and
    m.pt was never written. Now the resume writes it from last.pt."""
    from txl_mini.checkpoint import read_checkpoint
    disk = small_disk(64)
    r, out = tmp_path / "r", disk / "m.pt"
    (disk / "filler").write_bytes(b"x" * 48 * 1024)  # m.pt will not fit
    res = py("-m", "txl_mini", "train", *tiny(text, r), "--out", str(out))
    assert res.returncode == 1 and res.stderr == (
        f"python -m txl_mini train: error: cannot write {out}: No space left on "
        f"device; {r}/last.pt, the last checkpoint written, is kept (--resume {r})\n")
    (disk / "filler").unlink()
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0 and res.stderr == (
        f"python -m txl_mini train: {r} is finished: step 2 of 2; wrote {out} from "
        "its last.pt; drew its curves.png, which was missing\n")  # as the end would
    last, final = read_checkpoint(r / "last.pt"), read_checkpoint(out)
    assert final["extra"] is None and final["meta"] == last["meta"]
    assert all(v.equal(last["state_dict"][k]) for k, v in final["state_dict"].items())


@pytest.fixture
def moved(trained, tmp_path):
    """A paused run on its own copy of the text, the text and the run."""
    import shutil
    shutil.copy(trained / "text.txt", tmp_path / "t.txt")
    r = tmp_path / "r"
    assert py("-m", "txl_mini", "train", *tiny(str(tmp_path / "t.txt"), r, steps=4),
              "--pause-at", "2").returncode == 0
    return tmp_path / "t.txt", r


SHA = r"\(sha1 [0-9a-f]{12} vs [0-9a-f]{12}\)"


@pytest.mark.parametrize("text", ["a short text\n", words(3000)[500:]])
def test_a_recorded_text_that_changed_is_named(moved, text):
    """Finding 12: 'train --resume' said 'the training split has 13 chars ... lower
    --batch-size or --seg-len' (options --resume refuses); evaluate said '--chars: 0
    characters cannot make 1 streams', or evaluated the other text without a word."""
    import re
    t, r = moved
    t.write_text(text)
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 2 and re.fullmatch(
        rf"python -m txl_mini train: error: the corpus differs from the one {r} was "
        rf"trained on {SHA}; give the text it trained on with --path FILE\n",
        res.stderr), res.stderr
    res = py("-m", "txl_mini", "evaluate", str(r), "--quiet")
    assert res.returncode == 2 and re.fullmatch(
        rf"python -m txl_mini evaluate: error: {t} is not the text {r}/last.pt was "
        rf"trained on any more {SHA}; give that text with --path FILE, or --path {t} "
        r"to evaluate on this one\n", res.stderr), res.stderr
    res = py("-m", "txl_mini", "evaluate", str(r), "--quiet", "--path", str(t))
    assert res.returncode in (0, 2) and "is not the text" not in res.stderr


def test_a_recorded_text_that_is_gone_says_how_to_go_on(moved, trained):
    """Finding 12: both said only 'cannot read t.txt: no such file'."""
    t, r = moved
    t.unlink()
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 2 and res.stderr == (
        f"python -m txl_mini train: error: {t}, the text {r} trained on, is gone; "
        f"give it with --resume {r} --path FILE\n")
    res = py("-m", "txl_mini", "evaluate", str(r), "--quiet")
    assert res.returncode == 2 and res.stderr == (
        f"python -m txl_mini evaluate: error: {t}, the text {r}/last.pt was trained "
        "on, is gone; give it (or another text) with --path FILE\n")
    res = py("-m", "txl_mini", "train", "--resume", str(r), "--path",
             str(trained / "text.txt"))
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("argv", [["--mode", "sliding"], ["--mem-len", "0"]])
def test_a_same_length_checkpoint_evaluates_without_memory(trained, argv):
    """Finding 13: 'same_length needs memory ...; drop --same-length or give
    --mem-len > 0', exit 2, for an option never given that evaluate cannot turn off.
    With --mem-len 0 the checkpoint's same_length is dropped (no memory for it); the
    sliding window keeps it (each query sees the checkpoint's mem_len keys back)."""
    import json
    r = trained / "same"
    if not r.exists():
        assert py("-m", "txl_mini", "train", *tiny(str(trained / "text.txt"), r),
                  "--same-length").returncode == 0
    res = py("-m", "txl_mini", "evaluate", str(r), "--json", *argv)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    out = json.loads(res.stdout)
    assert out["same_length"] is (argv[0] == "--mode") and out["mem_len"] == 0
    res = py("-m", "txl_mini", "evaluate", str(r), "--json", "--same-length", *argv)
    if argv[0] == "--mode":  # the checkpoint's window, asked for (fix-31s); of
        # 8 keys in a window of L = 8, it limits nothing: none claimed (probe 21u)
        assert res.returncode == 0 and json.loads(res.stdout)["window"] == 0
    else:
        assert res.returncode == 2 and "same_length needs memory" in res.stderr


@pytest.mark.parametrize("env, argv, code, line", [
    ({"RANK": "1"}, ["evaluate", "{d}/nonexist.pt"], 2,
     "evaluate: error: {d}/nonexist.pt: no such checkpoint file"),
    ({"RANK": "x"}, ["sample", "{d}/r", "--temperature", "-1"], 2,
     "sample: error: --temperature must be"),
    ({"WORLD_SIZE": "x"}, ["train", "--preset", "tiny", "--run-dir", "{d}/ws"], 2,
     "train: error: WORLD_SIZE='x' in the environment is not a number of processes "
     "(torchrun sets it; unset it for one process)"),
    ({"LOCAL_RANK": "-1"}, ["train", "--preset", "tiny", "--run-dir", "{d}/ws"], 2,
     "train: error: LOCAL_RANK='-1' in the environment is not a rank "),
])
def test_torchruns_variables_outside_torchrun_silence_nothing(trained, env, argv,
                                                              code, line):
    """Finding 15: with RANK=1 (or x) evaluate and sample failed without a word (only
    rank 0 prints, and RANK alone made this 'rank 1'); WORLD_SIZE=x gave a ValueError
    traceback."""
    res = subprocess.run([sys.executable, "-m", "txl_mini",
                          *[a.format(d=trained) for a in argv]],
                         env=dict(ENV, **env), text=True, capture_output=True,
                         timeout=300)
    assert res.returncode == code and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith("python -m txl_mini " + line.format(d=trained))
    assert not (trained / "ws").exists()


@pytest.mark.parametrize("delay", [0.05, 0.3])
def test_ctrl_c_after_the_work_is_done_exits_with_its_status(tmp_path, text, delay):
    """Finding 23: SIGINT in the second or two Python and torch take to tear down
    after 'trained ...' killed train by the signal (returncode -2, no line) or gave a
    KeyboardInterrupt traceback from an exit handler of torch's. The work is done, its
    files complete: the command exits with its own status, quietly."""
    import signal
    import time

    from test_cli_faults import start
    proc = start(["train", *tiny(text, tmp_path / "r")])
    for line in proc.stdout:
        if line.startswith("trained"):
            break
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == "", (proc.returncode, err)
    assert (tmp_path / "r" / "last.pt").is_file()
