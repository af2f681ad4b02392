"""evaluate, sample, bench, data and --help, tried as a new user and a hostile tester.

Refusals instead of silently wrong numbers,
one line instead of a traceback (Ctrl-C, a closed pipe, NaN), and help that says what
each option does.
"""

import os
import signal
import subprocess
import sys

import pytest
import torch
from cli_text import WORDS, words

from txl_mini.checkpoint import load_checkpoint, save_checkpoint
from txl_mini.cli import COMMANDS
from txl_mini.cli import main as cli_main
from txl_mini.cli.evaluate import main as evaluate_main
from txl_mini.cli.train import main as train_main
from txl_mini.config import preset
from txl_mini.evaluate import evaluate_segments
from txl_mini.model import VanillaTransformer

torch.set_num_threads(1)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("usage")
    text = tmp / "corpus.txt"
    text.write_text(words(4000))
    assert train_main(["--preset", "tiny", "--path", str(text), "--steps", "4",
                       "--batch-size", "4", "--warmup", "1", "--eval-chars", "50",
                       "--threads", "1", "--quiet", "--run-dir", str(tmp / "r")]) == 0
    torch.manual_seed(0)
    save_checkpoint(tmp / "vanilla.pt", VanillaTransformer(preset("tiny")),
                    {"corpus": "offline", "corpus_path": str(text)})
    model, meta = load_checkpoint(tmp / "r" / "best.pt")
    with torch.no_grad():
        model.embed.weight[3] = float("nan")  # every 'c' gives NaN logits
    save_checkpoint(tmp / "nan.pt", model, meta)
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(float("nan"))
    save_checkpoint(tmp / "allnan.pt", model, meta)
    save_checkpoint(tmp / "foreign.pt", model, {"corpus": "wikitext-103"})
    return tmp


def ev(capsys, *args):
    code = evaluate_main([*map(str, args), "--threads", "1", "--quiet"])
    out = capsys.readouterr()
    return code, out.out, out.err


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(capsys):
    """`python -m txl_mini ARGS` in this process (a subprocess costs seconds)."""
    def call(*args):
        try:
            code = cli_main([str(a) for a in args])
        except SystemExit as e:  # --help
            code = e.code
        out = capsys.readouterr()
        return Result(code, out.out, out.err)
    return call


@pytest.mark.parametrize("args", [["vanilla.pt", "--same-length"],
                                  ["r", "--same-length", "--mem-len", "0"],
                                  ["vanilla.pt", "--clamp-len", "4"]])
def test_evaluate_refuses_what_would_be_wrong_or_ignored(ckpts, capsys, args):
    """Items 5 and 9: same_length without memory would see one key per query."""
    code, out, err = ev(capsys, ckpts / args[0], *args[1:])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert ("same_length needs memory" if "--same-length" in args
            else "no relative positions") in err


@pytest.mark.parametrize("name, count", [("nan.pt", "of 199"), ("allnan.pt", "199 of")])
def test_evaluate_never_prints_a_bpc_over_nan(ckpts, capsys, name, count):
    """Item 8: NaN losses are not dropped from the mean; all-NaN is no ZeroDivision."""
    code, out, err = ev(capsys, ckpts / name, "--chars", "200", "--json")
    assert code == 2 and out == "" and "NaN or infinite loss" in err and count in err
    model, _ = load_checkpoint(ckpts / name)
    res = evaluate_segments(model, torch.randint(1, 27, (100,)))
    assert res.bpc != res.bpc and res.n_nonfinite > 0  # NaN, not a mean of the rest


def test_evaluate_names_its_file_and_a_corpus_it_cannot_rebuild(ckpts, capsys):
    """Item 20: the file used is printed; a foreign corpus record gives a hint."""
    code, out, _ = ev(capsys, ckpts / "r", "--chars", "40")
    assert code == 0 and out.startswith(f"{ckpts / 'r' / 'best.pt'}: TransformerXL")
    code, _, err = ev(capsys, ckpts / "foreign.pt")
    assert code == 2 and "cannot rebuild" in err and "--corpus and --path" in err


def test_sample_accepts_a_run_directory_and_device(ckpts, cli):
    """Item 20: sample takes what evaluate takes."""
    res = cli("sample", ckpts / "r", "--chars", "5", "--device", "cpu", "--seed", "0")
    assert res.returncode == 0 and f"from {ckpts / 'r' / 'best.pt'}" in res.stderr


@pytest.mark.parametrize("args, words", [
    (["--temperature", "nan"], "--temperature must be a finite number"),
    (["--seed", str(10**26)], "--seed must be between 0 and"),
    (["--prompt", "the!"], "'!' is not in text8's alphabet"),
])
def test_sample_bad_values_are_one_line(ckpts, cli, args, words):
    """Items 13 and 20."""
    res = cli("sample", ckpts / "r", *args)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert words in res.stderr and res.stderr.count("\n") == 1


def test_sample_from_nan_weights_is_one_line(ckpts, cli):
    """Item 13: no 'probability tensor contains either inf, nan' traceback; exit 2,
    as evaluate's for the same weights (issue 31, eighth probe: it was 1)."""
    res = cli("sample", ckpts / "allnan.pt", "--chars", "5")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "NaN" in res.stderr.strip().splitlines()[-1]


def test_sample_into_a_closed_pipe_is_quiet(ckpts):
    """Item 12: `sample ... | head -c 50`."""
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", "sample",
                             str(ckpts / "r"), "--chars", "200000", "--seed", "0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert len(proc.stdout.read(50)) == 50
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and "Traceback" not in err, err


@pytest.mark.parametrize("command", ["evaluate", "sample"])
def test_ctrl_c_is_one_line(ckpts, command):
    """Item 12: SIGINT once the work runs: one line, exit status 130."""
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    args = (["--chars", "100000000", "--batch-size", "1"] if command == "evaluate"
            else ["--chars", "100000000"])
    text = ckpts / "long.txt"
    if command == "evaluate":
        text.write_text(words(50000 * len(WORDS)))  # minutes of evaluation at batch 1
        args += ["--path", str(text), "--quiet"]
    # As a program started from a terminal: SIGINT at its default. A test run started
    # in the background by a non-interactive shell inherits SIGINT ignored, and Python
    # then never turns Ctrl-C into KeyboardInterrupt (the ignore is kept, on purpose).
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", command,
                             str(ckpts / "r"), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                             signal.SIG_DFL))
    stream = proc.stdout if command == "evaluate" else proc.stderr
    stream.readline()  # the line printed just before the work starts
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().endswith(f"{command}: interrupted")


@pytest.mark.parametrize("args, words", [
    (["--steps", "0"], "--steps must be >= 1"),
    (["--rounds", "-1"], "--rounds must be >= 1"),
    (["--threads", "100000"], "--threads must be between"),
    (["--json", "{tmp}"], "is a directory"),
    # its folder is made, and removed again when a later check refuses the run
    (["--json", "{tmp}/missing/x.json", "--batch", "100000000"], "this needs roughly"),
])
def test_bench_checks_everything_before_it_starts(tmp_path, cli, args, words):
    """Items 9 and 14: refused in a second, not after the whole bench."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    res = cli("bench", "--quick", *args)
    assert res.returncode == 2 and words in res.stderr and "Traceback" not in res.stderr
    assert res.stderr.count("\n") == 1 and os.listdir(tmp_path) == []


def test_data_refuses_unbounded_work(tmp_path, cli):
    """Item 15: no endless memory for a huge corpus or /dev/zero."""
    res = cli("data", "offline", "--chars", "1000000000000", "--out", tmp_path / "x")
    # an option's value out of range: a usage error, exit 2 like every command's
    assert res.returncode == 2 and "--chars must be between" in res.stderr
    res = cli("data", "stats", "/dev/zero")  # a device as the text: bad input
    assert res.returncode == 2 and "not a regular file" in res.stderr


def test_binary_path_is_warned_about(tmp_path, capsys):
    """Item 20: a mostly-binary --path would train on spaces."""
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 40)
    code = train_main(["--preset", "tiny", "--path", str(junk), "--steps", "1",
                       "--batch-size", "2", "--threads", "1", "--quiet",
                       "--eval-chars", "20", "--run-dir", str(tmp_path / "r")])
    assert code == 0 and "warning: only 20% of" in capsys.readouterr().err


def helps():
    for name in COMMANDS:
        if name == "data":
            for sub in ("text8", "stats", "offline"):
                yield name, [sub, "--help"]
        else:
            yield name, ["--help"]


@pytest.mark.parametrize("name, argv", list(helps()))
def test_help_has_no_none_defaults_and_every_option_helped(cli, name, argv):
    """Item 19: no '(default: None)', no doubled defaults, no option without help."""
    res = cli(name, *argv)
    out = res.stdout
    assert res.returncode == 0 and "(default: None)" not in out
    assert "(default: False)" not in out and "bench.py" not in out
    for line in out.splitlines():
        assert line.count("default") <= 1, line
    import argparse
    from importlib import import_module

    mod = import_module(f"txl_mini.cli.{name}")
    if hasattr(mod, "build_parser"):
        for action in mod.build_parser()._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help, (name, action.option_strings)


def test_presets_are_described_and_commands_listed(cli):
    """Items 19 and 20."""
    res = cli("train", "--help")
    text = " ".join(res.stdout.split())
    assert "tiny: 2 layers" in text and "initial weights, dropout (default: 0)" in text
    res = cli()
    assert res.returncode == 2 and all(name in res.stderr for name in COMMANDS)


def test_failed_first_download_leaves_no_empty_cache_directory(tmp_path, monkeypatch):
    """Item 21: ~/.cache/txl_mini is not left behind, empty, by a failed download."""
    import socket

    from txl_mini.text8 import DataError, load_text8

    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cache = tmp_path / "cache" / "txl_mini"
    with pytest.raises(DataError, match="could not download"):
        load_text8(cache_dir=cache, url=f"http://127.0.0.1:{port}/text8.zip")
    assert os.listdir(tmp_path) == []


def test_readme_commands_parse():
    """Item 17: every `python -m txl_mini ...` line of the README is a valid command."""
    import shlex
    from importlib import import_module

    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    lines = [line.split("  #")[0] for line in readme.splitlines()
             if line.startswith(("python -m txl_mini ", "torchrun "))]
    assert len(lines) >= 6
    for line in lines:
        argv = shlex.split(line)
        argv = argv[argv.index("txl_mini") + 1:]
        mod = import_module(f"txl_mini.cli.{argv[0]}")
        if hasattr(mod, "build_parser"):
            args = mod.build_parser().parse_args(argv[1:])
            if argv[0] == "train":
                mod.check_values(args)
