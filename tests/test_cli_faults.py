"""The command lines as a user's shell runs them: old spellings, signals, pipes, a
full disk (subprocesses; each test failed before its fix)."""

import fcntl
import glob
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time

import pytest
import torch

from txl_mini.checkpoint import read_checkpoint

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")


def py(*args, **kw):
    return subprocess.run([sys.executable, *args], env=ENV, text=True,
                          capture_output=True, timeout=300, **kw)


def txl(*argv, **kw):
    """`python -m txl_mini ARGV` in a subprocess."""
    return py("-m", "txl_mini", *[str(a) for a in argv], **kw)


def one_line(res, code: int) -> str:
    """The single stderr line of a command that must exit with `code`."""
    assert res.returncode == code and res.stderr.count("\n") == 1, res.stderr
    return res.stderr.rstrip("\n")


def tiny(text, run_dir, steps=2):
    return ["--preset", "tiny", "--corpus", "offline", "--path", text, "--steps",
            str(steps), "--warmup", "1", "--eval-chars", "60", "--threads", "1",
            "--quiet", "--run-dir", str(run_dir)]


@pytest.mark.parametrize("module", ["train", "evaluate", "sample", "data"])
def test_the_old_spelling_is_not_a_silent_no_op(tmp_path, text, module):
    """`python -m txl_mini.train ...` used to print nothing, make nothing, exit 0."""
    res = py("-m", f"txl_mini.{module}", *tiny(text, tmp_path / "r"))
    assert res.returncode != 0 and res.stdout == ""
    last = res.stderr.strip().splitlines()[-1]
    assert last == f"use: python -m txl_mini {module} ..."
    assert not (tmp_path / "r").exists()


def test_the_cli_module_runs_its_command(tmp_path, text):
    res = py("-m", "txl_mini.cli.train", *tiny(text, tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "r" / "last.pt").is_file() and "trained 2 steps" in res.stdout


def start(argv, **kw):
    """A command as a terminal starts it: SIGINT at its default (a test run in the
    background inherits it ignored)."""
    return subprocess.Popen([sys.executable, "-m", "txl_mini", *argv], env=ENV,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                             signal.SIG_DFL), **kw)


def wait_for(pred, timeout=240):
    t0 = time.time()
    while not pred():
        assert time.time() - t0 < timeout, "timed out"
        time.sleep(0.001)


def test_second_ctrl_c_during_a_checkpoint_write_is_one_line(tmp_path, text):
    """Item 2: people press Ctrl-C twice when a big save blocks. It used to end in a
    35-line traceback from torch ('unexpected pos'), exit 1."""
    r = tmp_path / "r"
    big = ["--d-model", "768", "--d-inner", "3072", "--n-layer", "3",
           "--save-every", "1"]  # 14M parameters: a save of ~170 MB with Adam's state
    proc = start(["train", *tiny(text, r, steps=40), *big])
    wait_for(lambda: (r / "last.pt").exists())  # step 1 is saved
    wait_for(lambda: list(r.glob(".last.pt.*.tmp")))  # step 2's save is under way
    proc.send_signal(signal.SIGINT)
    time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.strip() == (f"python -m txl_mini train: SIGINT again: stopped at once "
                           f"without saving; {r}/last.pt, the last checkpoint written, "
                           f"is kept (--resume {r})")
    assert read_checkpoint(r / "last.pt")["extra"]["step"] == 1  # the save was cut
    assert not list(r.glob(".*.tmp"))


@pytest.fixture
def small_disk(tmp_path):
    """small_disk(kb): a real tmpfs of that size (needs root: skipped elsewhere)."""
    mounted = []

    def mount(kb):
        d = tmp_path / f"disk{len(mounted)}"
        d.mkdir()
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kb}k", "tmpfs",
                              str(d)], capture_output=True, text=True)
        if res.returncode:
            pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
        mounted.append(d)
        return d

    yield mount
    for d in mounted:
        subprocess.run(["umount", str(d)], check=True)


def test_a_full_disk_names_the_file_and_claims_nothing_unwritten(small_disk, text):
    """Item 3: it said 'cannot write No space left on device; checkpoints already
    written are kept' at the first save (close() raised, naming no file)."""
    r = small_disk(24) / "r"  # config.json fits, the first last.pt does not
    res = py("-m", "txl_mini", "train", *tiny(text, r, steps=4), "--save-every", "1")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.strip() == (
        f"python -m txl_mini train: error: cannot write {r}/last.pt: No space left "
        f"on device; no checkpoint was written yet (--resume {r} starts it again)")
    r = small_disk(128) / "r"  # the first last.pt fits
    res = py("-m", "txl_mini", "train", *tiny(text, r, steps=4), "--save-every", "1")
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert re.fullmatch(
        rf"python -m txl_mini train: error: cannot write {r}/(last|best)\.pt: No "
        rf"space left on device; {r}/last\.pt, the last checkpoint written, is kept "
        rf"\(--resume {r}\)", res.stderr.strip()), res.stderr


def test_a_run_that_died_before_its_first_checkpoint_resumes(small_disk, text,
                                                             tmp_path):
    """Item 4: --resume asked 'is it a run directory?' and a new run 'already exists;
    pass --resume'. Now it starts again from step 0, bitwise a run never stopped."""
    disk = small_disk(24)
    r = disk / "r"
    res = py("-m", "txl_mini", "train", *tiny(text, r, steps=4), "--save-every", "1")
    assert res.returncode == 1 and sorted(os.listdir(r)) == ["config.json"]
    subprocess.run(["mount", "-o", "remount,size=4m", str(disk)], check=True)
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0 and "resuming at step 0" in res.stdout, res.stderr
    whole = tmp_path / "whole"
    assert py("-m", "txl_mini", "train", *tiny(text, whole, steps=4), "--save-every",
              "1").returncode == 0
    a, b = read_checkpoint(r / "last.pt"), read_checkpoint(whole / "last.pt")
    assert a["extra"]["step"] == 4 and all(
        torch.equal(v, b["state_dict"][k]) for k, v in a["state_dict"].items())


def into_closed_pipe(argv, lines, module="txl_mini"):
    """`python -m MODULE ARGV | head -LINES`: the reader goes after LINES lines
    (0: before anything is written)."""
    read, write = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", module, *argv], env=ENV,
                            stdout=write, stderr=subprocess.PIPE, text=True)
    os.close(write)
    with os.fdopen(read) as reader:
        for _ in range(lines):
            reader.readline()
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err


def test_a_pipe_closed_early_is_quiet(tmp_path, text):
    """Item 5: evaluate, bench, data printed a BrokenPipeError traceback; train, after
    a run that succeeded, 'cannot write Broken pipe' with exit 1. Now: nothing more
    and 141 (128 + SIGPIPE), as sample did and as a writer killed by SIGPIPE does."""
    r = tmp_path / "r"
    runs = [(["train", *tiny(text, r)], 1),
            (["evaluate", str(r), "--path", text, "--quiet"], 1),
            (["data", "offline", "--chars", "20000", "--out", str(tmp_path / "o")], 0),
            (["data", "stats", text], 0),
            (["bench", "--quick"], 1)]
    for argv, lines in runs:
        code, err = into_closed_pipe(argv, lines)
        assert code == 141, (argv, err)
        assert "Traceback" not in err and "Broken pipe" not in err, (argv, err)
        assert "Exception ignored" not in err, (argv, err)
        if argv[0] == "train":  # the run itself finished
            assert read_checkpoint(r / "last.pt")["extra"]["step"] == 2


@pytest.mark.parametrize("module, argv", [
    ("txl_mini", ["--help"]),
    ("txl_mini.cli.train", tiny("{d}/text.txt", "{d}/piped")),
    ("txl_mini.cli.evaluate", ["{d}/r", "--quiet"]),
    ("txl_mini.cli.sample", ["{d}/r", "--quiet", "--chars", "20"]),
    ("txl_mini.cli.data", ["stats", "{d}/text.txt"]),
])
def test_a_pipe_closed_early_is_quiet_however_started(run_dir, module, argv):
    """A fresh probe: `python -m txl_mini --help | true` (the listing was printed
    outside main's try) and `python -m txl_mini.cli.train ... | true` (each module's
    own __main__ block bypassed it) gave a BrokenPipeError traceback."""
    d = str(run_dir)
    code, err = into_closed_pipe([a.replace("{d}", d) for a in argv], 0, module)
    assert code == 141 and err == "", (module, argv, err)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")
def test_ctrl_c_during_data_offline_is_one_line(tmp_path):
    """Item 6: a KeyboardInterrupt traceback; now one line, 130, no file, no temp."""
    out = tmp_path / "made" / "o.txt"  # its folder is made just before generating
    proc = start(["data", "offline", "--chars", "100000000", "--out", str(out)])
    wait_for(out.parent.is_dir)  # imports done: it generates for minutes from here
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.strip() == "python -m txl_mini data offline: interrupted"
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")
@pytest.mark.parametrize("argv", [["train", "--steps", "100000"], ["evaluate", "x.pt"],
                                  ["sample", "x.pt"], ["data", "stats", "x"],
                                  ["bench", "--quick"]])
def test_ctrl_c_while_torch_imports_is_one_line(tmp_path, argv):
    """Item 6: Ctrl-C in the first second of any command, while torch loads, gave a
    KeyboardInterrupt traceback from the package's own import."""
    proc = start(argv, cwd=tmp_path)
    # libtorch is mapped early in `import torch`; its Python half takes a second more
    wait_for(lambda: "libtorch" in open(f"/proc/{proc.pid}/maps").read())
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    named = " ".join(argv[:2] if argv[0] == "data" else argv[:1])  # data's subcommand
    assert err.strip() == f"python -m txl_mini {named}: interrupted"
    assert os.listdir(tmp_path) == []


def test_the_package_names_load_on_first_use():
    """What item 6's fix changed: `import txl_mini` loads no torch; every public name
    still resolves, to the object its module defines."""
    code = ("import sys, txl_mini; assert 'torch' not in sys.modules; "
            "from txl_mini import *; import txl_mini.model as m; "
            "assert TransformerXL is m.TransformerXL; "
            "assert sorted(txl_mini.__all__) == sorted(txl_mini._EXPORTS); "
            "assert all(getattr(txl_mini, n) is not None for n in txl_mini.__all__)")
    res = py("-c", code)
    assert res.returncode == 0, res.stderr


def test_data_offline_sweeps_what_a_kill_9_left(tmp_path):
    """Item 7: a kill -9 of `data offline` mid-write left its .tmp file forever."""
    out = tmp_path / "o.txt"
    proc = start(["data", "offline", "--chars", "10000000", "--out", str(out)])
    wait_for(lambda: list(tmp_path.glob(".o.txt.*.tmp")))  # the write is under way
    proc.kill()
    proc.wait()
    [left] = list(tmp_path.glob(".o.txt.*.tmp"))
    assert not out.exists()  # its flock went with it: dead at any age
    live = tmp_path / ".o.txt.a0b1c2d3.tmp"  # a write in progress elsewhere is kept:
    with open(live, "w") as f:  # its flock held, as files.atomic_path holds it
        fcntl.flock(f, fcntl.LOCK_EX)
        res = py("-m", "txl_mini", "data", "offline", "--chars", "2000", "--out",
                 str(out))
    assert res.returncode == 0, res.stderr
    assert sorted(os.listdir(tmp_path)) == [live.name, "o.txt"]


def test_resume_keeps_metrics_after_a_corrupt_line(tmp_path, text):
    """Item 7: a corrupt middle line in metrics.jsonl dropped every later line."""
    r = tmp_path / "r"
    argv = [*tiny(text, r, steps=6), "--log-every", "1", "--eval-every", "100"]
    assert py("-m", "txl_mini", "train", *argv, "--pause-at", "4").returncode == 0
    metrics = r / "metrics.jsonl"
    lines = metrics.read_text().splitlines()
    lines[1] = '{"step": 2, "lo'  # steps 1-4 logged; step 2's line damaged
    metrics.write_text("\n".join(lines) + "\n")
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0, res.stderr
    assert f"note: {metrics} line 2 is not a metrics record" in res.stderr
    steps = [json.loads(x)["step"] for x in metrics.read_text().splitlines()]
    assert steps == [1, 3, 4, 5, 6, 6]  # 6 twice: its loss and its validation


@pytest.mark.parametrize("edit, line", [
    ({"steps": "10"}, 'has steps = "10", not a valid --steps value'),
    ({"preset": "huge"}, 'has preset = "huge", not a valid --preset value'),
    ({"vanilla": 1}, "has vanilla = 1, not a valid --vanilla value"),
])
def test_a_hand_edited_config_is_one_line(tmp_path, text, edit, line):
    """Item 7: a wrong type in config.json gave a TypeError traceback."""
    r = tmp_path / "r"
    assert py("-m", "txl_mini", "train", *tiny(text, r, steps=4),
              "--pause-at", "2").returncode == 0
    config = json.loads((r / "config.json").read_text())
    config["args"].update(edit)
    (r / "config.json").write_text(json.dumps(config))
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 2 and res.stderr.strip() == (
        f"python -m txl_mini train: error: --resume {r}: config.json {line}")


NULLABLE = ["steps", "batch_size", "warmup", "lr", "clip", "seed", "save_every",
            "log_every", "offline_chars", "preset"]


@pytest.mark.parametrize("keys, value, line", [
    *[(("args", k), None, f"has {k} = null, not a valid --{k.replace('_', '-')} value")
      for k in NULLABLE],
    (("args", "steps"), "drop", "has no steps (the run's --steps)"),
    (("corpus",), "drop", "has no corpus (the record of the text the run trained on)"),
    (("corpus",), "offline",
     'has corpus = "offline", not the record of the text the run trained on'),
    (("corpus", "sha1"), "drop", "has no corpus.sha1 (the text's fingerprint)"),
    (("corpus", "sha1"), 5, "has corpus.sha1 = 5, not the text's fingerprint"),
])
def test_nulls_and_a_damaged_corpus_record_in_config_are_one_line(paused, tmp_path,
                                                                   keys, value, line):
    """A fresh probe: null in config.json's args gave TypeError tracebacks (the type
    check let None through), the corpus record missing, a string or without a str
    sha1 KeyError or TypeError ones, and args without steps trained the default 500."""
    r = tmp_path / "r"
    shutil.copytree(paused, r)
    config = json.loads((r / "config.json").read_text())
    *path, key = keys
    d = config
    for k in path:
        d = d[k]
    if value == "drop":
        del d[key]
    else:
        d[key] = value
    (r / "config.json").write_text(json.dumps(config))
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 2 and res.stderr == (
        f"python -m txl_mini train: error: --resume {r}: config.json {line}\n"
    ), res.stderr


@pytest.mark.parametrize("command", ["train", "evaluate", "sample", "data", "bench"])
def test_help_claims_no_speed_factor(command):
    """Item 8: `evaluate --help` promised '--batch-size 8 is about 10x faster' (1.6x
    measured at one thread): a factor depends on the machine; the commands print
    their times instead."""
    res = py("-m", "txl_mini", command, "--help")
    assert res.returncode == 0
    assert not re.search(r"\d+(\.\d+)?x (faster|slower)", " ".join(res.stdout.split()))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from cli_text import words
    d = tmp_path_factory.mktemp("item9")
    (d / "text.txt").write_text(words(2000))
    (d / "empty.txt").write_text("")
    (d / "no_checkpoint").mkdir()
    assert py("-m", "txl_mini", "train", *tiny(str(d / "text.txt"), d / "r")
              ).returncode == 0
    return d


@pytest.mark.parametrize("argv, code, line", [
    (["train", "--steps", "x"], 2,
     "train: error: argument --steps: invalid int value: 'x' (see --help)"),
    (["train", "--preset", "tiny", "--run-dir", ""], 2,
     "train: error: --run-dir is empty; give a path"),
    (["train", "--preset", "tiny", "--path", "{d}/empty.txt", "--run-dir", "{d}/e"], 2,
     "train: error: --path {d}/empty.txt is empty: there is no text in it"),
    (["evaluate", "{d}/no_checkpoint"], 2,
     "evaluate: error: {d}/no_checkpoint is a directory with no best.pt or last.pt"),
    (["sample", "{d}/r", "--chars", "-1"], 2, "sample: error: --chars must be >= 0"),
    (["sample", "{d}/r", "--top-k", "0"], 2, "sample: error: --top-k must be >= 1"),
    (["data", "offline", "--chars", "2000", "--distances", "64,5000", "--out",
      "{d}/o.txt"], 2,
     "data offline: error: --distances 5000: no name fits that far apart"),
    # an option's value, like every other command's: exit 2, not 1 (a fresh probe)
    (["data", "offline", "--chars", "0", "--out", "{d}/o.txt"], 2,
     "data offline: error: --chars must be between 1,000 and"),
])
def test_smaller_faults_are_one_clear_line(run_dir, argv, code, line):
    """Item 9: argparse's usage block, 'cannot write to : ...', 'is a directory',
    a cryptic split message, an option not named, silence on distances too long."""
    d = str(run_dir)
    res = py("-m", "txl_mini", *[a.replace("{d}", d) for a in argv])
    assert res.returncode == code and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith("python -m txl_mini " + line.replace("{d}", d))
    assert not (run_dir / "e").exists() and not (run_dir / "o.txt").exists()


def test_sample_lowercases_and_has_threads_and_quiet(run_dir):
    """Item 9: sample refused the uppercase that train and evaluate lowercase, and had
    no --threads or --quiet."""
    res = py("-m", "txl_mini", "sample", str(run_dir / "r"), "--prompt", "The Cat",
             "--chars", "5", "--seed", "0", "--threads", "1", "--quiet")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert res.stdout.startswith("the cat") and len(res.stdout) == len("the cat") + 6


def test_train_says_processes_threads_and_a_warmup_it_never_ends(run_dir):
    """Item 9: 'device: cpu x 1' with --threads 2; --warmup >= --steps was silent."""
    res = py("-m", "txl_mini", "train", *tiny(str(run_dir / "text.txt"),
             run_dir / "w"), "--threads", "2", "--warmup", "50")
    assert res.returncode == 0
    assert "device: cpu x 1 process, 2 threads;" in res.stdout
    assert res.stderr == ("python -m txl_mini train: note: --warmup 50 >= --steps 2: "
                          "the learning rate never reaches --lr 0.001\n")


def test_the_books_zoo_and_cue_checkpoints_evaluate_from_the_command_line():
    """Item 9: they said 'trained on a corpus evaluate cannot rebuild'. The chapters'
    corpora have names (cue, names); evaluate finds a checkpoint's by its recorded
    settings, or takes it by name, and on the validation split gives the bpc the zoo
    recorded when it trained the model."""
    zoo = os.path.join(ROOT, "book", "zoo", "ch4_xl_s1.pt")
    meta = read_checkpoint(zoo)["meta"]
    for by_name in ([], ["--corpus", "cue"]):
        res = py("-m", "txl_mini", "evaluate", zoo, "--split", "valid",
                 "--batch-size", "4", "--chars", "1000000", "--json", *by_name)
        assert res.returncode == 0, res.stderr
        got = json.loads(res.stdout)
        assert got["corpus"] == "cue" and got["chars"] == 50_000
        assert abs(got["bpc"] - meta["valid_bpc"]) < 1e-4
    cue = os.path.join(ROOT, "book", "checkpoints", "cue_xl.pt")
    res = py("-m", "txl_mini", "evaluate", cue, "--chars", "2000", "--quiet")
    assert res.returncode == 0 and "bpc over" in res.stdout, res.stderr
    assert "corpus: cue (valid, first 2,000 characters)" in res.stdout


def test_every_book_checkpoint_records_a_named_corpus():
    from txl_mini.corpus import BOOK_CORPORA
    named = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "book", "*", "*.pt"))):
        settings = json.loads(json.dumps(read_checkpoint(path)["meta"]["corpus"]))
        [name] = [n for n, c in BOOK_CORPORA.items() if c == settings] or [path]
        named[name] = named.get(name, 0) + 1
    assert set(named) == {"cue", "names"} and sum(named.values()) >= 38, named


def test_train_takes_a_chapters_corpus_by_name(tmp_path):
    r = tmp_path / "r"
    res = py("-m", "txl_mini", "train", "--preset", "tiny", "--corpus", "cue",
             "--steps", "1", "--warmup", "0", "--eval-chars", "60", "--threads", "1",
             "--quiet", "--run-dir", str(r))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("corpus: cue, 900,000 training chars;")
    res = py("-m", "txl_mini", "train", "--preset", "tiny", "--corpus", "cue",
             "--path", __file__, "--run-dir", str(tmp_path / "p"))
    assert res.returncode == 2 and res.stderr.strip() == (
        "python -m txl_mini train: error: --path: corpus 'cue' is generated from its "
        "recorded settings; it reads no file (drop --path)")


def data_offline(*out):
    return ["data", "offline", "--chars", "2000", *map(str, out)]


def test_an_output_that_is_not_a_regular_file_is_refused(tmp_path, text):
    """Writes, finding 1: every output was written beside it and renamed over it, so a
    FIFO (or /dev/null, as root) became a plain file and the command exited 0. Now
    one line, exit 2, before any work; the FIFO is left as it was."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = tmp_path / "r"
    runs = [(data_offline("--out", fifo), "data offline", "--out"),
            (data_offline("--out", tmp_path / "o.txt", "--deps-out", fifo),
             "data offline", "--deps-out"),
            (["bench", "--quick", "--json", fifo], "bench", "--json"),
            (["train", *tiny(text, r), "--out", fifo, "--overwrite"], "train", "--out")]
    for argv, prog, opt in runs:
        res = py("-m", "txl_mini", *map(str, argv))
        assert res.returncode == 2 and res.stderr == (
            f"python -m txl_mini {prog}: error: {opt} {fifo} is not a regular file (a "
            "device, FIFO or socket); give a file name\n"), (argv, res.stderr)
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt", "fifo"]


def test_a_symlinked_output_writes_its_target_and_keeps_the_link(tmp_path, text):
    """Writes, finding 1: a symlink given as the output was replaced by a plain file
    and its target left stale. A symlink now stands for its target, as with `>`."""
    old, new = tmp_path / "old.txt", tmp_path / "new.pt"
    old.write_text("old")
    for name, to in (("o.txt", old.name), ("dangling.txt", "made.txt"),
                     ("m.pt", new.name)):
        (tmp_path / name).symlink_to(to)
    for out in ("o.txt", "dangling.txt"):  # o.txt's target is replaced: --overwrite
        res = py("-m", "txl_mini", *data_offline("--out", tmp_path / out),
                 "--overwrite")
        assert res.returncode == 0, res.stderr
    res = py("-m", "txl_mini", "train", *tiny(text, tmp_path / "r"), "--out",
             str(tmp_path / "m.pt"), "--overwrite")
    assert res.returncode == 0, res.stderr
    assert all((tmp_path / n).is_symlink() for n in ("o.txt", "dangling.txt", "m.pt"))
    assert len(old.read_text()) == len((tmp_path / "made.txt").read_text()) == 2000
    assert read_checkpoint(new)["meta"]["steps"] == 2
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("deps", ["x.txt", "./x.txt", "link.txt"])
def test_deps_out_is_not_the_corpus_file(tmp_path, deps):
    """Writes, finding 2: --deps-out naming the --out file exited 0, and the file held
    only the TSV: the corpus was lost."""
    (tmp_path / "link.txt").symlink_to("x.txt")
    res = py("-m", "txl_mini", *data_offline("--out", "x.txt", "--deps-out", deps),
             cwd=tmp_path)
    assert res.returncode == 2 and res.stderr == (
        f"python -m txl_mini data offline: error: --deps-out {deps} is the same file "
        "as --out x.txt; give the dependencies a file of their own\n")
    assert os.listdir(tmp_path) == ["link.txt"]


@pytest.mark.parametrize("out", ["config.json", "last.pt", "best.pt", "metrics.jsonl",
                                 "curves.png", "link.pt", "o4"])
def test_out_is_not_the_run_directory_or_its_files(tmp_path, text, out):
    """Writes, finding 3: --out naming one of the run directory's files trained and
    then wrote the final weights over it (a config.json or last.pt that no --resume
    reads); --out naming the run directory itself trained fully, then failed. Now
    one line, exit 2, before training."""
    r = tmp_path / "r"
    argv = tiny(text, r)
    if out == "o4":  # no --run-dir: it is --out without .pt, the same path
        r, argv = tmp_path / "o4", argv[:-2]
        path, why = r, "is the run directory itself; give a file name like " \
            f"{r}.pt"
    elif out == "link.pt":  # a symlink to the run directory's last.pt
        path, why = tmp_path / out, f"is the run directory's own last.pt; give a " \
            f"file outside {r}"
        path.symlink_to("r/last.pt")
    else:
        path, why = r / out, f"is the run directory's own {out}; give a file " \
            f"outside {r}"
    res = py("-m", "txl_mini", "train", *argv, "--out", str(path))
    assert res.returncode == 2 and res.stderr == (
        f"python -m txl_mini train: error: --out {path} {why}\n"), res.stderr
    assert not r.exists()


def test_out_over_a_run_directorys_file_keeps_the_run(tmp_path, text):
    """Writes, finding 3, with --overwrite: the run was trained again and its
    config.json replaced by the weights; the run no longer resumed."""
    r = tmp_path / "r"
    assert py("-m", "txl_mini", "train", *tiny(text, r, steps=4),
              "--pause-at", "2").returncode == 0
    before = {n: (r / n).read_bytes() for n in os.listdir(r)}
    res = py("-m", "txl_mini", "train", *tiny(text, r, steps=4), "--overwrite",
             "--out", str(r / "config.json"))
    assert res.returncode == 2 and "own config.json" in res.stderr, res.stderr
    assert {n: (r / n).read_bytes() for n in os.listdir(r)} == before
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0 and "resuming at step 2" in res.stdout, res.stderr



def test_data_offline_on_a_full_disk_is_one_line_and_keeps_the_old_pair(small_disk,
                                                                        tmp_path):
    """A fresh probe: a full disk gave a 20-line OSError traceback; and with a corpus
    that fit but a --deps-out that did not, the new corpus had already replaced the
    old one, beside the old plantings."""
    disk = small_disk(64)
    out = disk / "c.txt"
    res = py("-m", "txl_mini", "data", "offline", "--chars", "200000", "--out", out)
    assert res.returncode == 1 and res.stderr == (
        f"python -m txl_mini data offline: error: cannot write {out}: No space left "
        "on device\n"), res.stderr
    assert os.listdir(disk) == []  # no temporary left
    corpus, deps = tmp_path / "c.txt", small_disk(4) / "d.tsv"  # one page
    argv = ["data", "offline", "--out", corpus, "--deps-out", deps]
    assert py("-m", "txl_mini", *argv, "--chars", "2000").returncode == 0
    old = corpus.read_text(), deps.read_text()  # the old plantings fill the page
    res = py("-m", "txl_mini", *argv, "--chars", "200000", "--overwrite")
    assert res.returncode == 1 and res.stderr == (
        f"python -m txl_mini data offline: error: cannot write {deps}: No space "
        "left on device\n"), res.stderr
    assert (corpus.read_text(), deps.read_text()) == old
    assert not list(tmp_path.rglob(".*.tmp"))

def unprivileged(tmp_path):
    """The command prefix under which chmod 000 holds: none for a user; for root,
    which reads any file, setpriv dropping the two capabilities that let it (a skip
    where that is not possible)."""
    if os.geteuid() != 0:
        return []
    caps = "-dac_override,-dac_read_search"
    prefix = ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}"]
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    try:
        works = subprocess.run([*prefix, "true"]).returncode == 0 and subprocess.run(
            [*prefix, "cat", str(probe)], capture_output=True).returncode != 0
    except FileNotFoundError:  # no setpriv
        works = False
    probe.unlink()
    if not works:
        pytest.skip("root reads a chmod 000 file and setpriv cannot stop it here")
    return prefix


def test_an_unreadable_checkpoint_is_one_line(run_dir, tmp_path):
    """A fresh probe: with best.pt and last.pt unreadable (chmod 000), sample gave a
    PermissionError traceback, evaluate the raw '[Errno 13] ...', and train --resume
    'Permission denied; no checkpoint was written yet', which was false."""
    prefix = unprivileged(tmp_path)
    a = tmp_path / "a"
    shutil.copytree(run_dir / "r", a)
    for name in ("best.pt", "last.pt"):
        (a / name).chmod(0)
    for argv, name in [(["sample", a], "best.pt"), (["evaluate", a], "best.pt"),
                       (["train", "--resume", a], "last.pt")]:
        res = subprocess.run([*prefix, sys.executable, "-m", "txl_mini", *map(
            str, argv)], env=ENV, text=True, capture_output=True, timeout=300)
        assert res.returncode == 1 and res.stderr == (
            f"python -m txl_mini {argv[0]}: error: cannot read {a}/{name}: "
            "Permission denied\n"), res.stderr


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_a_bad_init_std_is_refused_before_the_corpus(tmp_path, value):
    """A fresh probe: --init-std -1 (nan, inf) was not checked up front: the corpus
    was built, then the model's init failed with a RuntimeError traceback and left
    an empty run directory. Now ModelConfig checks it; a corpus that cannot be read
    shows the option is refused first."""
    r = tmp_path / "r"
    res = py("-m", "txl_mini", "train", "--preset", "tiny", "--init-std", value,
             "--path", str(tmp_path / "no_such.txt"), "--run-dir", str(r))
    assert res.returncode == 2 and res.stderr == (
        "python -m txl_mini train: error: --init-std must be a finite number > 0, "
        f"got {float(value)}\n"), res.stderr
    assert not r.exists()
