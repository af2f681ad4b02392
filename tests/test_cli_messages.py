"""The command lines' one-line messages as a hostile probe read them (issue 31): the
right prefix, a count of one in the singular, sentences that say what is wrong, the
options' names (not Python's), an empty argument refused (subprocesses; each case
failed before its fix)."""

import json
import shutil
import signal
import time

import pytest
from cli_text import words
from test_cli_faults import one_line, start, tiny, txl, wait_for

PROG = "python -m txl_mini"


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    """A corpus, a short and a binary file, a trained run, one paused at 2 of 4."""
    d = tmp_path_factory.mktemp("messages")
    (d / "text.txt").write_text(words(2000))
    (d / "short.txt").write_text("hello world\n")  # its valid split: 0 characters
    (d / "binary.bin").write_bytes(bytes(range(256)) * 12)  # 52 of 256 are letters
    (d / "a.txt").write_text("a")
    assert txl("train", *tiny(str(d / "text.txt"), d / "r")).returncode == 0
    assert txl("train", *tiny(str(d / "text.txt"), d / "p", steps=4),
               "--pause-at", "2").returncode == 0
    return d


def refused(d, argv, line, code=2):
    """`argv` ({d}: the fixture's folder) ends with the one line `PROG line...`."""
    res = txl(*[str(a).replace("{d}", str(d)) for a in argv])
    got = one_line(res, code)
    assert got.startswith(f"{PROG} {line.replace('{d}', str(d))}"), got
    return got


# -- 1. the NaN stop line --------------------------------------------------------------

def test_a_nan_loss_line_carries_the_commands_prefix(d):
    """'error: loss is nan at step 1; ...' alone, where every other error line of
    train begins 'python -m txl_mini train: error: ...'."""
    res = txl("train", *tiny(str(d / "text.txt"), d / "nan"), "--init-std", "1e30")
    assert one_line(res, 1) == (
        f"{PROG} train: error: loss is nan at step 1; stopped, no checkpoint was "
        "written yet; start over with other options and --overwrite")


# -- 2. a count of one -----------------------------------------------------------------

@pytest.mark.parametrize("argv, stream, want, wrong", [
    (["train", *tiny("{d}/text.txt", "{d}/one", steps=1)], "stdout",
     ["1 process, 1 thread;", "trained 1 step;"], ["1 threads", "1 steps"]),
    (["data", "offline", "--chars", "1000", "--distances", "512", "--out",
      "{d}/o1000.txt"], "stdout", ["distance 512: 1 planted name (cue"],
     ["1 planted names"]),
    (["train", "--preset", "tiny", "--path", "{d}/short.txt", "--batch-size", "1",
      "--seg-len", "64", "--run-dir", "{d}/short"], "stderr",
     ["the training split has 12 chars: 1 stream of 12,"], ["1 streams"]),
    (["sample", "{d}/r", "--chars", "1", "--seed", "0", "--threads", "1"], "stderr",
     ["1 character in"], ["1 characters"]),
    (["evaluate", "{d}/r", "--chars", "2", "--threads", "1", "--quiet"], "stdout",
     ["bpc over 1 character in"], ["1 characters"]),
    (["data", "stats", "{d}/a.txt"], "stdout", [": 1 char, 1 word, 0 outside"],
     ["1 chars", "1 words"]),
    (["train", "--preset", "tiny", "--n-layer", "1", "--batch-size", "100000000",
      "--run-dir", "{d}/big"], "stderr", ["x 1 layer,"], ["1 layers"]),
])
def test_a_count_of_one_takes_the_singular(d, argv, stream, want, wrong):
    """'1 threads', '1 steps', '1 planted names', '1 streams', '1 characters'..."""
    text = getattr(txl(*[a.replace("{d}", str(d)) for a in argv]), stream)
    assert all(w in text for w in want) and not any(w in text for w in wrong), text


# -- 3, 4. a last.pt that does not fit config.json -------------------------------------

@pytest.mark.parametrize("edit, line", [
    (lambda c: c.update(model_class="VanillaTransformer"),
     "{r}/last.pt holds a TransformerXL, but {r}/config.json describes a "
     "VanillaTransformer; one of the two is from another run or was edited"),
    (lambda c: c["model"].update(n_layer=3),
     "{r}/last.pt holds a model other than the one {r}/config.json describes "
     "(n_layer 2 in last.pt, 3 in config.json); one of the two is from another run "
     "or was edited"),
    (lambda c: c.pop("model_class"), "--resume {r}: config.json has no model_class "
     "(TransformerXL or VanillaTransformer)"),
    (lambda c: c.pop("model"),
     "--resume {r}: config.json has no model (the model config the run trains)"),
    (lambda c: c.update(model=5),
     "--resume {r}: config.json has model = 5, not the model config the run trains"),
])
def test_a_last_pt_that_does_not_fit_config_json_says_what_differs(d, tmp_path, edit,
                                                                   line):
    """'holds a TransformerXL than .../config.json describes (None); it belongs to
    another run' (config.json without model_class), and a config.json without its
    model blamed last.pt as another run's."""
    r = tmp_path / "p"
    shutil.copytree(d / "p", r)
    config = json.loads((r / "config.json").read_text())
    edit(config)
    (r / "config.json").write_text(json.dumps(config))
    assert one_line(txl("train", "--resume", r), 2) == (
        f"{PROG} train: error: " + line.replace("{r}", str(r)))


# -- 5. a trailing slash in --run-dir --------------------------------------------------

def test_a_trailing_slash_in_run_dir_prints_no_double_slash(d, tmp_path):
    """'wrote runs/base//last.pt and best.pt'."""
    res = txl("train", *tiny(str(d / "text.txt"), f"{tmp_path}/r/", steps=2),
              "--pause-at", "1")
    assert res.returncode == 0 and f"saved {tmp_path}/r/last.pt;" in res.stdout
    res = txl("train", "--resume", f"{tmp_path}/r/", "--threads", "1", "--quiet")
    assert res.returncode == 0 and f"wrote {tmp_path}/r/last.pt" in res.stdout
    assert "//" not in res.stdout + res.stderr, res.stdout


# -- 6. an empty argument --------------------------------------------------------------

@pytest.mark.parametrize("argv, line", [
    (["train", "--resume", ""], "train: error: --resume is empty; give a path"),
    (["evaluate", ""],
     "evaluate: error: the checkpoint argument is empty; give a path"),
    (["sample", ""], "sample: error: the checkpoint argument is empty; give a path"),
    (["evaluate", "{d}/r", "--path", ""],
     "evaluate: error: --path is empty; give a path"),
    (["data", "offline", "--out", ""],
     "data offline: error: --out is empty; give a path"),
    (["data", "offline", "--out", "{d}/o.txt", "--deps-out", ""],
     "data offline: error: --deps-out is empty; give a path"),
    (["data", "text8", "--path", ""],
     "data text8: error: --path is empty; give a path"),
    (["data", "text8", "--cache-dir", ""],
     "data text8: error: --cache-dir is empty; give a path"),
    (["data", "stats", ""],
     "data stats: error: the file argument is empty; give a path"),
    (["bench", "--quick", "--json", ""],
     "bench: error: --json is empty; give a path"),
    (["bench", "--quick", "--device", ""],
     "bench: error: argument --device: invalid choice: ''"),
])
def test_an_empty_argument_is_refused(d, argv, line):
    """Ignored (evaluate --path ''), a default (bench --device '' meant auto), nothing
    (bench --json '' wrote no JSON) or a puzzle (': no such checkpoint file', '--out
    is a directory', 'give --run-dir DIR' for --resume '')."""
    refused(d, argv, line)
    assert not (d / "o.txt").exists()


# -- 7, 8. an option named as the option -----------------------------------------------

def test_a_distance_too_short_is_a_usage_error_naming_the_option(d):
    """'error: distances must be >= 32 (a name plus filler), got (64, 0)', exit 1."""
    refused(d, ["data", "offline", "--distances", "64,0", "--out", "{d}/o.txt"],
            "data offline: error: --distances 0: a distance must be >= 32 (a name "
            "plus filler)")
    assert not (d / "o.txt").exists()


@pytest.mark.parametrize("prompt, line", [
    ("Hi!", "--prompt: '!' is not in text8's alphabet"),
    ("", "--prompt: give at least one character"),
])
def test_a_bad_prompt_names_the_option(d, prompt, line):
    """'prompt: ...', where every other line names its option with its dashes."""
    refused(d, ["sample", "{d}/r", "--prompt", prompt], f"sample: error: {line}")


def test_text8_messages_name_the_options(tmp_path):
    """'or omit path to download', 'Pass cache_dir=...': load_text8's arguments,
    shown to a user of python -m txl_mini data text8."""
    line = one_line(txl("data", "text8", "--path", tmp_path / "nope"), 2)
    assert line.endswith("Give --path text8.zip or the unzipped text8 file, or "
                         "leave it out to download http://mattmahoney.net/dc/text8.zip."
                         ), line
    # a cache folder that cannot be made is bad input, as TXL_MINI_CACHE's (probe14f)
    line = one_line(txl("data", "text8", "--cache-dir", "/proc/no/such"), 2)
    assert line.endswith("Give --cache-dir a directory you can write."), line


# -- 10. evaluate on a file that is no corpus for it -----------------------------------

@pytest.mark.parametrize("argv, line", [
    (["evaluate", "{d}/r", "--path", "{d}/short.txt"],
     "evaluate: error: --path {d}/short.txt: its valid split (5% of the text) has 0 "
     "characters; the evaluation needs at least 2; give a longer text"),
    (["evaluate", "{d}/r", "--mode", "sliding", "--path", "{d}/short.txt"],
     "evaluate: error: --path {d}/short.txt: its valid split (5% of the text) has 0 "
     "characters; the sliding window of L=8 needs at least 10; give a longer text"),
    (["evaluate", "{d}/r", "--chars", "5", "--mode", "sliding"],
     "evaluate: error: --chars 5: the sliding window of L=8 needs at least 10"),
    (["evaluate", "{d}/r", "--batch-size", "1000"],
     "evaluate: error: --batch-size 1000: the valid split's 100 characters make "
     "1,000 streams of 0, too short for segments of 8 (need > 8 per stream); lower "
     "--batch-size"),
    (["train", "--preset", "tiny", "--path", "{d}/short.txt", "--batch-size", "1",
      "--run-dir", "{d}/v"],
     "train: error: --path {d}/short.txt: its valid split (5% of the text) has 0 "
     "characters; validation needs at least 2; give a longer text"),
])
def test_a_text_too_short_is_blamed_not_chars(d, argv, line):
    """'--chars: 0 characters cannot make 1 streams' for a file too short; train said
    '1 streams of 12, too short for segments of 8 (need > 8 per stream)'."""
    refused(d, argv, line)
    assert not (d / "v").exists()


def test_evaluate_warns_of_a_file_that_is_not_text(d):
    """A bpc for binary bytes, without a word (train warns)."""
    res = txl("evaluate", d / "r", "--path", d / "binary.bin", "--quiet")
    assert res.returncode == 0 and res.stderr.startswith(
        f"{PROG} evaluate: warning: only 20% of {d}/binary.bin's first MiB are "
        "letters"), res.stderr


# -- 11. a huge --vocab-size ----------------------------------------------------------

def test_a_huge_vocab_size_is_refused_with_its_bound(d):
    """'this needs roughly 166,893.0 GiB (...); lower --batch-size, --seg-len or
    --mem-len', none of which would help (and below the memory check, an
    allocation that fails mid-run)."""
    refused(d, ["train", "--preset", "tiny", "--vocab-size", "100000000000",
                "--run-dir", "{d}/v"], "train: error: --vocab-size must be 27, the "
            "corpus' characters (a-z and space), got 100,000,000,000")
    assert not (d / "v").exists()


# -- 12. bench --device ----------------------------------------------------------------

def test_bench_offers_only_the_devices_it_times(d):
    """'--device x: choose one of auto, cpu, cuda, mps', then mps refused."""
    refused(d, ["bench", "--device", "mps"], "bench: error: argument --device: "
            "invalid choice: 'mps' (choose from 'auto', 'cpu', 'cuda')")
    res = txl("bench", "--help")
    assert "{auto,cpu,cuda}" in res.stdout and "mps" not in res.stdout


# -- 13. evaluate's sliding window and M -----------------------------------------------

def test_the_sliding_window_shows_and_takes_no_memory(d):
    """'TransformerXL, sliding, L=8, M=4' for a window that uses no memory."""
    refused(d, ["evaluate", "{d}/r", "--mode", "sliding", "--mem-len", "4"],
            "evaluate: error: --mem-len: the sliding window has no memory; drop it")
    res = txl("evaluate", d / "r", "--mode", "sliding", "--quiet")
    assert res.returncode == 0 and ", sliding, L=8;" in res.stdout, res.stdout
    res = txl("evaluate", d / "r", "--mode", "sliding", "--json")
    assert json.loads(res.stdout)["mem_len"] == 0


# -- 14. a double Ctrl-C ---------------------------------------------------------------

@pytest.mark.parametrize("gap", [0.001, 0.05])
def test_a_double_ctrl_c_says_interrupted_once(tmp_path, gap):
    """Two 'interrupted' lines (the second from the package's own handler), or one and
    a KeyboardInterrupt traceback from an exit handler of torch's."""
    made = tmp_path / "made"  # --out's folder, made just before generating
    proc = start(["data", "offline", "--chars", "100000000", "--out",
                  str(made / "o.txt")])
    wait_for(made.is_dir)  # imports done: it generates for minutes from here
    proc.send_signal(signal.SIGINT)
    time.sleep(gap)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip() == f"{PROG} data offline: interrupted", err
    assert list(tmp_path.iterdir()) == []
