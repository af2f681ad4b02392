"""Issue 31, an eleventh probe of the command lines (b): run directories and their
files. Each test failed on 65e8e35 (subprocesses, as a user's shell runs them)."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from test_cli_faults import ENV, ROOT, one_line, small_disk, tiny, txl  # noqa: F401

PROG = "python -m txl_mini train"


def txl_env(env, *argv):
    """`python -m txl_mini ARGV` with `env` as its whole environment."""
    return subprocess.run([sys.executable, "-m", "txl_mini", *map(str, argv)],
                          env=env, text=True, capture_output=True, timeout=300)


def train(text, r, *more, steps=4, **kw):
    return txl("train", *tiny(text, r, steps=steps), *more, **kw)


def resume(r, **kw):
    return txl("train", "--resume", r, **kw)


def test_a_moved_run_directory_takes_its_out_along(text, tmp_path):
    """Finding 1: config.json recorded --out r4/model.pt absolute, so after `mv r4
    r5` --resume r5 wrote /.../r4/model.pt (making r4 again), and --run-dir r5
    --overwrite said 'not a run directory (it holds model.pt)'. An --out inside the
    run directory is now recorded by its name there; one outside stays absolute."""
    r4, r5, outside = tmp_path / "r4", tmp_path / "r5", tmp_path / "o" / "m.pt"
    assert train(text, r4, "--out", r4 / "model.pt", "--pause-at", "2"
                 ).returncode == 0
    assert json.loads((r4 / "config.json").read_text())["args"]["out"] == "model.pt"
    os.rename(r4, r5)
    res = resume(r5)
    assert res.returncode == 0 and res.stdout.endswith(f"{r5}/model.pt\n"), res.stderr
    assert (r5 / "model.pt").is_file() and not r4.exists()
    res = train(text, r5, "--overwrite", steps=2)  # the run's own out goes with it
    assert res.returncode == 0 and not (r5 / "model.pt").exists(), res.stderr
    link = tmp_path / "link"  # reached through a symbolic link: the same folder
    link.symlink_to(r5)
    assert train(text, link, "--overwrite", "--out", r5 / "m.pt", "--pause-at", "2"
                 ).returncode == 0
    assert json.loads((r5 / "config.json").read_text())["args"]["out"] == "m.pt"
    shutil.copytree(r5, tmp_path / "copy")  # a copy resumes on its own
    assert resume(tmp_path / "copy").returncode == 0
    assert (tmp_path / "copy" / "m.pt").is_file() and not (r5 / "m.pt").exists()
    r6 = tmp_path / "r6"  # outside the run: absolute, as before
    assert train(text, r6, "--out", outside, steps=2).returncode == 0
    assert json.loads((r6 / "config.json").read_text())["args"]["out"] == str(outside)


def test_a_recorded_out_that_became_a_folder_is_one_line(text, tmp_path):
    """Finding 2: --resume said '--out R/model.pt is a directory; give a file name
    like R/model.pt/model.pt', an option the user never gave. Now it names where the
    --out comes from and what to do, exit 2, before any training."""
    r = tmp_path / "r"
    assert train(text, r, "--out", r / "model.pt", "--pause-at", "2").returncode == 0
    (r / "model.pt").mkdir()
    res = resume(r)
    assert one_line(res, 2) == (
        f"{PROG}: error: {r}/model.pt, the --out {r}/config.json records, is a "
        f"directory now; move it away, and --resume {r} writes the model there")
    assert "trained" not in res.stdout


@pytest.mark.parametrize("broken", ["package", "pyplot"])
def test_a_broken_matplotlib_is_one_warning(text, tmp_path, broken):
    """Finding 3: a matplotlib that fails to import (its package, or pyplot) left no
    curves.png and said nothing: the ImportError was taken for 'not installed', and
    the note for that was not printed either (find_spec finds the package)."""
    fake = tmp_path / "fake" / "matplotlib"
    fake.mkdir(parents=True)
    init = ("raise ImportError('broken build')" if broken == "package" else
            "def use(backend):\n    pass")
    (fake / "__init__.py").write_text(init + "\n")
    (fake / "pyplot.py").write_text("raise ImportError('broken build')\n")
    env = dict(ENV, PYTHONPATH=f"{fake.parent}{os.pathsep}{ROOT}")
    res = txl_env(env, "train", *tiny(text, tmp_path / "r"))
    assert res.returncode == 0 and "trained 2 steps" in res.stdout
    assert res.stderr == (f"{PROG}: warning: cannot draw curves.png: ImportError: "
                          "broken build; the checkpoints and metrics.jsonl are "
                          "written, only the plot is not\n")
    assert not (tmp_path / "r" / "curves.png").exists()


def test_run_dir_dash_is_refused_as_out_dash_is(text, tmp_path):
    """Finding 4: --run-dir - made a run folder named '-'; --out - is refused."""
    res = txl("train", *tiny(text, "-"), cwd=tmp_path)
    assert one_line(res, 2) == (
        f"{PROG}: error: --run-dir - would be a folder named '-', not standard output "
        "(the report goes there); give a folder name (./- for that one)")
    assert not (tmp_path / "-").exists()


@pytest.mark.skipif(not os.path.isfile("/proc/self/status"), reason="needs /proc")
def test_a_proc_file_is_read_not_sized(tmp_path):
    """Finding 5: /proc/self/status has a stat size of 0 but text in it: train and
    evaluate called it empty, while data stats counted its characters."""
    r = tmp_path / "r"
    res = train("/proc/self/status", r, steps=2)
    assert res.returncode == 0 and "trained 2 steps" in res.stdout, res.stderr
    res = txl("evaluate", r, "--path", "/proc/self/status", "--threads", "1",
              "--quiet", "--chars", "50")
    assert res.returncode == 0 and "bpc" in res.stdout, res.stderr
    assert txl("data", "stats", "/proc/self/status").returncode == 0


@pytest.mark.parametrize("value, why", [
    ("/proc/self/x", ": cannot make /proc/self/x (No such file or directory); give "
     "another folder"),
    (" ", " is blank; give a folder, or unset it"),
])
def test_a_cache_folder_that_cannot_be_made_is_bad_input(tmp_path, value, why):
    """Finding 6: TXL_MINI_CACHE=/proc/self/x was 'cannot create cache directory',
    exit 1, and ' ' a download to ' /text8.zip'. Both are now bad input, one line
    naming the variable (its value quoted: a space shows), exit 2."""
    env = dict(ENV, TXL_MINI_CACHE=value)
    res = txl_env(env, "train", "--preset", "tiny", "--corpus", "text8",
                  "--run-dir", tmp_path / "r", "--quiet")
    assert one_line(res, 2) == (
        f"{PROG}: error: TXL_MINI_CACHE={value!r} in the environment{why}")
    assert not (tmp_path / "r").exists()


def test_a_full_disk_on_resume_leaves_no_empty_metrics(small_disk, paused):  # noqa: F811
    """Finding 7: a --resume on a disk with no page left wrote an empty metrics.jsonl
    (the trim of a file that was not there), then failed at its first line. Now no
    file is made unless there is something in it, and a failed line is undone."""
    pages = sum(-(-os.path.getsize(paused / n) // 4096) for n in os.listdir(paused))
    r = small_disk(4 * pages) / "r"
    shutil.copytree(paused, r)
    assert "metrics.jsonl" not in os.listdir(r)
    res = resume(r)
    assert res.returncode == 1 and "No space left on device" in res.stderr
    assert "metrics.jsonl" not in os.listdir(r), os.listdir(r)
    subprocess.run(["mount", "-o", "remount,size=4m", str(r.parent)], check=True)
    assert resume(r).returncode == 0 and len((r / "metrics.jsonl").read_text()
                                             .splitlines()) == 2


def test_a_finished_run_without_best_pt_is_not_called_stopped(text, tmp_path):
    """Finding 8: evaluate on a finished run whose best.pt was deleted said 'no
    best.pt yet (stopped at step 2 of 2)'. Now the note says what is so."""
    r = tmp_path / "r"
    assert train(text, r, steps=2).returncode == 0
    (r / "best.pt").unlink()
    res = txl("evaluate", r, "--threads", "1", "--quiet", "--chars", "50")
    assert res.returncode == 0 and res.stderr == (
        f"python -m txl_mini evaluate: note: {r} has no best.pt; using its last.pt "
        "(step 2 of 2)\n")


def test_an_out_named_like_a_temporary_is_refused(text, tmp_path):
    """Finding 9: --out R/.last.pt.mine.tmp was written, then removed by the next
    run's sweep of what a kill -9 left (and not counted as the run's file either)."""
    r = tmp_path / "r"
    res = train(text, r, "--out", r / ".last.pt.mine.tmp", steps=2)
    assert one_line(res, 2) == (
        f"{PROG}: error: --out {r}/.last.pt.mine.tmp is named like a temporary file "
        "of the run, which a later run removes; give another name")
    assert not r.exists()
