"""Paths on the command line, a third hostile probe (issue 31): `~` in every
command's paths, symlink loops given as inputs or implied as the run directory, and
a finished run's --out when resumed (damaged, another model's, a dangling link).
Subprocesses; each test failed before its fix."""

import os
import shutil
import subprocess
import sys

import torch
from test_cli_faults import ENV, one_line, tiny, txl

from txl_mini.checkpoint import read_checkpoint

ERR = "python -m txl_mini {}: error: "


def test_a_tilde_is_the_home_in_every_command(tmp_path, paused):
    """evaluate ~/r, sample ~/r.pt and data offline --out=~/c.txt looked for (or
    wrote into) a folder named '~' in the current directory; train and data stats
    expanded it."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir(), cwd.mkdir()
    shutil.copytree(paused, home / "r")
    shutil.copy(paused / "last.pt", home / "r.pt")
    env = dict(ENV, HOME=str(home))
    for argv in (["evaluate", "~/r", "--chars", "100", "--quiet"],
                 ["sample", "~/r.pt", "--chars", "5", "--quiet"],
                 ["data", "offline", "--chars", "2000", "--out=~/c.txt",
                  "--deps-out=~/d.tsv"],
                 ["data", "stats", "~/c.txt"],
                 ["evaluate", "~/r.pt", "--chars", "100", "--path=~/c.txt"]):
        res = subprocess.run([sys.executable, "-m", "txl_mini", *argv], cwd=cwd,
                             env=env, text=True, capture_output=True, timeout=300)
        assert res.returncode == 0, (argv, res.stderr)
    assert (home / "c.txt").is_file() and (home / "d.tsv").is_file()
    assert os.listdir(cwd) == []


def test_a_symlink_loop_as_an_input_says_loop(tmp_path):
    """A checkpoint (evaluate, sample) or a text file (data stats) that is a symlink
    to itself: 'no such checkpoint file' / 'no such file', exit 1."""
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    for argv, what in ((["evaluate", loop], "a checkpoint"),
                       (["sample", loop], "a checkpoint"),
                       (["data", "stats", loop], "a text file")):
        prog = " ".join(argv[:2]) if argv[0] == "data" else argv[0]
        line = one_line(txl(*argv), 2)
        assert line == (ERR.format(prog) + f"{loop} is a symbolic link loop; "
                        f"give {what}")


def test_a_loop_where_the_run_directory_goes_is_named(tmp_path, text):
    """train --out loop.pt, with no --run-dir, its run directory 'loop' a symlink
    loop: '--run-dir: cannot write to loop: it is a broken symbolic link (Too many
    levels of symbolic links)' blamed an option not given, and called a loop broken."""
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    res = txl("train", *tiny(text, "unused")[:-2], "--out", f"{loop}.pt")
    assert one_line(res, 2) == (ERR.format("train") + f"the run directory of --out "
                                f"{loop}.pt: cannot write to {loop}: it is a "
                                "symbolic link loop")
    res = txl("train", *tiny(text, loop))  # given: --run-dir is to blame
    assert one_line(res, 2) == (ERR.format("train") + f"--run-dir: cannot write to "
                                f"{loop}: it is a symbolic link loop")
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt", "loop"]


def same_weights(a, b) -> bool:
    x, y = read_checkpoint(a), read_checkpoint(b)
    return x["config"] == y["config"] and all(
        torch.equal(v, y["state_dict"][k]) for k, v in x["state_dict"].items())


def test_a_finished_runs_out_is_checked_when_resumed(tmp_path, text):
    """train --resume of a finished run rewrote --out only when it was missing: a
    damaged one stayed (exit 0, 'nothing to do'; now refused and kept, as --out is
    written whole and a damaged file there is not the run's: probe 24b), and a
    dangling link to a folder gone was 'No such file or directory; ... is kept
    (--resume r)', which fails again."""
    r, out = tmp_path / "r", tmp_path / "r.pt"
    assert txl("train", *tiny(text, r), "--out", out).returncode == 0
    again = f"python -m txl_mini train: {r} is finished: step 2 of 2; "
    out.write_bytes(b"not weights")  # not the run's (written atomically): kept
    res = txl("train", "--resume", r)
    assert one_line(res, 2) == (ERR.format("train") + f"--out {out} is not a "
                                "checkpoint the run wrote (not a txl_mini checkpoint "
                                "(not a PyTorch zip file)); it is left as it is; move "
                                f"it away, and --resume {r} writes the model there")
    assert out.read_bytes() == b"not weights"
    out.unlink()  # missing: written again from last.pt
    res = txl("train", "--resume", r)
    assert one_line(res, 0) == again + f"wrote {out} from its last.pt"
    assert same_weights(out, r / "last.pt")
    res = txl("train", "--resume", r)  # the run's own weights: left alone
    assert one_line(res, 0) == again + ("nothing to do (its last.pt, best.pt and "
                                        f"{out} are unchanged)")
    other = torch.load(out, weights_only=True)  # another model: kept, refused
    for w in other["state_dict"].values():
        w.add_(1.0)
    torch.save(other, out)
    res = txl("train", "--resume", r)
    assert one_line(res, 2) == (ERR.format("train") + f"--out {out} holds a model "
                                f"other than {r}/last.pt's; move it away, and "
                                f"--resume {r} writes it again")
    assert not same_weights(out, r / "last.pt")
    out.unlink()
    out.symlink_to("gone/x.pt")  # a dangling link: written through, as train does
    res = txl("train", "--resume", r)
    assert one_line(res, 0) == again + f"wrote {out} from its last.pt"
    assert out.is_symlink() and same_weights(tmp_path / "gone" / "x.pt", r / "last.pt")
    out.unlink()
    (tmp_path / "afile").write_text("x")
    out.symlink_to("afile/x.pt")  # a link into a file: what is there, one way out
    res = txl("train", "--resume", r)
    assert one_line(res, 2) == (ERR.format("train") + f"--out {out} is a symbolic "
                                f"link to afile/x.pt, which cannot be written: "
                                f"{tmp_path}/afile is a file, not a directory; "
                                "remove the link")
    assert (tmp_path / "afile").read_text() == "x"
