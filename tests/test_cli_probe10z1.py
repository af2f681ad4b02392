"""Outputs written into run directories, and bench --json behind a closed pipe (issue
31, probe 10, helper z1). Subprocesses; each test failed before its fix."""

import json
import shutil
import subprocess
import sys

from test_cli_faults import ENV, one_line, tiny, txl

BENCH = ["bench", "--quick", "--rounds", "1", "--steps", "1", "--max-attn-len", "128",
         "--long-segments", "20", "--quiet", "--no-paper-shape", "--threads", "1"]


def copy_run(paused, tmp_path, name="run"):
    """A copy of the paused run (tests/conftest.py), with its bytes to compare."""
    run = tmp_path / name
    shutil.copytree(paused, run)
    return run, {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}


def test_bench_json_refuses_a_runs_own_files(paused, tmp_path):
    """Finding 1: `bench --json RUN/last.pt` exited 0 and wrote its JSON over the
    checkpoint (and over config.json); a resume then failed."""
    run, before = copy_run(paused, tmp_path)
    for name in ("last.pt", "config.json"):
        line = one_line(txl(*BENCH, "--json", run / name), 2)
        assert line == (f"python -m txl_mini bench: error: --json {run / name} is the "
                        f"{name} of a run, {run}; give a file outside it")
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before


def test_no_output_goes_inside_a_run_directory(paused, tmp_path, text):
    """Findings 2 and 3: bench --json RUN/new.json, data offline --out RUN/corpus.txt
    (and --deps-out) and train --out RUN/x.pt of another run were written there; the
    run was then 'not a run directory' for --overwrite (it held that file)."""
    run, before = copy_run(paused, tmp_path)
    cases = [(["bench", *BENCH[1:], "--json"], "--json", "new.json"),
             (["data", "offline", "--out"], "--out", "corpus.txt"),
             (["data", "offline", "--out", tmp_path / "c.txt", "--deps-out"],
              "--deps-out", "sub/deps.tsv"),
             (["train", *tiny(text, tmp_path / "other"), "--out"], "--out", "x.pt")]
    for argv, opt, name in cases:
        res = txl(*argv, run / name)
        assert one_line(res, 2).endswith(
            f"error: {opt} {run / name} is inside the run directory {run}; give a "
            "file outside it"), argv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "run"]
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
    res = txl("train", *tiny(text, run, steps=4), "--overwrite")
    assert res.returncode == 0, res.stderr


def test_overwrite_twice_after_an_out_inside_the_run_dir(tmp_path, text):
    """Finding 2: `--run-dir o6 --out o6/final.pt`, then `--run-dir o6 --overwrite`
    kept final.pt, recorded by no config.json: the next --overwrite refused o6, 'not a
    run directory ... (it holds final.pt)'. --overwrite now removes the old run's
    --out with its other files when the run wrote it into its own directory."""
    d = tmp_path / "o6"
    assert txl("train", *tiny(text, d), "--out", d / "final.pt").returncode == 0
    for _ in range(2):
        res = txl("train", *tiny(text, d), "--overwrite")
        assert res.returncode == 0, res.stderr
        assert not (d / "final.pt").exists()
    res = txl("train", *tiny(text, tmp_path / "n"), "--out", tmp_path / "n/s/f.pt")
    assert one_line(res, 2).endswith(f"--out {tmp_path}/n/s/f.pt is inside the run "
                                     f"directory {tmp_path}/n; give a file outside it")
    assert not (tmp_path / "n").exists()  # below its own: a folder --overwrite refused


def test_bench_json_is_written_before_the_report_meets_a_closed_pipe(tmp_path):
    """Finding 4: `bench --json X | head -1` ran every benchmark, then exited 141
    without X: the report was printed before the JSON was written."""
    out = tmp_path / "b.json"
    proc = subprocess.Popen([sys.executable, "-m", "txl_mini", *BENCH, "--json",
                             str(out)], env=ENV, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith("device: ")
    proc.stdout.close()  # as `head -1` exits
    assert proc.wait(timeout=300) == 141, proc.stderr.read()
    assert "long_context" in json.loads(out.read_text()) or json.loads(out.read_text())


def test_names_on_stdout_are_one_line_each(tmp_path, text):
    """Minor: `data offline --out $'off/new\\nline.txt'` printed its result line with
    the name raw, split in two (and so did train's first and last lines for a run
    directory or --out with a newline): escaped now, as stderr's lines are."""
    out, deps = tmp_path / "off" / "new\nline.txt", tmp_path / "off" / "d\nx.tsv"
    res = txl("data", "offline", "--chars", "2000", "--distances", "100", "--out",
              out, "--deps-out", deps)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].endswith(f"to {tmp_path}/off/new\\nline.txt") and len(lines) == 3
    assert lines[2].endswith(f"to {tmp_path}/off/d\\nx.tsv")
    assert out.is_file() and deps.is_file()
    d = tmp_path / "r\nun"
    res = txl("train", *tiny(text, d)[:-2], "--run-dir", d, "--out", d / "m.pt")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 2 and lines[0].endswith(f"run dir: {tmp_path}/r\\nun")
    assert lines[1].endswith(f"wrote {tmp_path}/r\\nun/last.pt and best.pt and "
                             f"{tmp_path}/r\\nun/m.pt")


def test_a_run_without_best_pt_is_read_through_last_pt_with_a_note(paused, tmp_path):
    """Minor: evaluate and sample on a run directory stopped before its first
    validation (no best.pt) used its last.pt silently; --help says 'a run directory
    (its best.pt)'. Now one note on stderr says so (not for evaluate --json or
    sample --quiet, which leave out their other notes too)."""
    note = f"note: {paused} has no best.pt; using its last.pt (step 2 of 4)"
    res = txl("evaluate", paused, "--threads", "1", "--quiet", "--chars", "200")
    assert res.returncode == 0 and res.stdout.startswith(f"{paused}/last.pt: ")
    assert res.stderr == f"python -m txl_mini evaluate: {note}\n"
    res = txl("sample", paused, "--threads", "1", "--chars", "5", "--prompt", "the ")
    assert res.returncode == 0 and res.stdout.startswith("the ")
    assert res.stderr.startswith(f"python -m txl_mini sample: {note}\n"
                                 f"TransformerXL from {paused}/last.pt ")
    for cmd, quiet in (("evaluate", "--json"), ("sample", "--quiet")):  # as their
        res = txl(cmd, paused, "--threads", "1", quiet)  # other notes: none
        assert res.returncode == 0 and res.stderr == "", res.stderr


def test_broken_weights_print_nothing_on_stdout(paused, tmp_path):
    """Minor: evaluate of a checkpoint whose weights are all NaN printed its header
    line on stdout, then 'error: ... its weights are broken', exit 2; sample printed
    its prompt 'the ' and an empty line first. Now stdout stays empty."""
    import torch

    ckpt = torch.load(paused / "last.pt", weights_only=False)
    for t in ckpt["state_dict"].values():
        if t.is_floating_point():
            t.fill_(float("nan"))
    torch.save(ckpt, tmp_path / "allnan.pt")
    res = txl("evaluate", tmp_path / "allnan.pt", "--chars", "100", "--threads", "1",
              "--quiet")
    assert one_line(res, 2).endswith("its weights are broken, so there is no bpc to "
                                     "report") and res.stdout == ""
    res = txl("sample", tmp_path / "allnan.pt", "--chars", "5", "--threads", "1",
              "--quiet", "--prompt", "the ")
    assert one_line(res, 2).endswith("its weights are broken") and res.stdout == ""


def test_data_offline_takes_its_documented_minimum_with_default_distances(tmp_path):
    """Minor: `data offline --chars 1000` (the documented minimum) was refused with
    the default --distances ('--distances 512: no name fits that far apart in 1,000
    characters'), while train --offline-chars 1000 builds that corpus, 512 empty.
    Now the same corpus is written, and the empty distance said; one given is still
    refused."""
    res = txl("data", "offline", "--chars", "1000", "--out", tmp_path / "c.txt")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == ("  distance 512: none planted (too far "
                                           "apart for 1,000 characters)")
    assert (tmp_path / "c.txt").stat().st_size == 1000
    res = txl("data", "offline", "--chars", "1000", "--distances", "64,700", "--out",
              tmp_path / "d.txt")
    assert one_line(res, 2).endswith("--distances 700: no name fits that far apart "
                                     "in 1,000 characters; lower it or raise --chars")
