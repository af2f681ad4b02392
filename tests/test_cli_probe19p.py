"""Issue 31, the nineteenth probe (19a), as a user's shell runs the commands.

1. `data offline --out C --deps-out D --overwrite`: a Ctrl-C between the two renames
   left the new plantings beside the old corpus. Both are now fsync'ed first and
   renamed with the stop held: the old pair or the new one, never a mix.
2. A run folder with a newline in its name split the pause line (stdout) and the
   stop line (stderr) in two.
3. The way-out hints (`continue with --resume X`, ...) could not be pasted where X
   starts with '-' or holds a space or a control character: now quoted as bash reads
   them back.
4. Under `umask 0222` every write failed 'Permission denied' in a writable folder.
5. `train --resume R` with a truncated R/last.pt named no way out."""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from test_cli_faults import ENV, start, tiny, txl, wait_for

from txl_mini.corpus import deps_tsv, make_offline_corpus

PROG = "python -m txl_mini train"


def test_a_ctrl_c_between_the_renames_never_leaves_a_mixed_pair(tmp_path):
    """The probe's race, tried several times: SIGINT as soon as D's temporary is
    renamed while C's is still there (C's fsync is the slow part)."""
    chars = 4_000_000
    c, d = tmp_path / "c.txt", tmp_path / "d.tsv"
    old = make_offline_corpus(chars, seed=1)
    old_c, old_d = old.text.encode(), deps_tsv(old).encode()
    new = make_offline_corpus(chars, seed=2)
    new_c, new_d = new.text.encode(), deps_tsv(new).encode()
    del old, new
    raced = 0
    for _ in range(4):
        c.write_bytes(old_c)
        d.write_bytes(old_d)
        proc = start(["data", "offline", "--chars", str(chars), "--seed", "2",
                      "--out", str(c), "--deps-out", str(d), "--overwrite"])
        both = False
        while proc.poll() is None:
            names = os.listdir(tmp_path)
            has_c = any(n.startswith(".c.txt.") for n in names)
            has_d = any(n.startswith(".d.tsv.") for n in names)
            if has_c and has_d:
                both = True
            elif both and has_c:  # D renamed (or gone), C not yet: the probe's moment
                proc.send_signal(signal.SIGINT)
                raced += 1
                break
            time.sleep(0.0005)
        out, err = proc.communicate(timeout=120)
        assert "Traceback" not in err, err
        pair = (c.read_bytes(), d.read_bytes())
        assert pair in ((old_c, old_d), (new_c, new_d)), (
            f"a mixed pair: corpus {'old' if pair[0] == old_c else 'new'}, plantings "
            f"{'old' if pair[1] == old_d else 'new'}; {err}")
        assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    print(f"raced {raced} of 4")


def _pasted(tmp_path, hint: str):
    """`python -m txl_mini train HINT...` as bash reads the pasted words."""
    return subprocess.run(["bash", "-c", f"{sys.executable} -m txl_mini train {hint}"],
                          cwd=tmp_path, env=ENV, text=True, capture_output=True,
                          timeout=300)


@pytest.mark.parametrize("name", ["-r", "my run", "a\nb", "it's \\ \x1b"])
def test_the_pause_line_is_one_line_and_its_hint_pastes(tmp_path, text, name):
    res = txl("train", *tiny(text, "x", steps=4)[:-2], f"--run-dir={name}",
              "--pause-at", "2", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    line = res.stdout.splitlines()[-1]
    shown = name.replace("\n", "\\n").replace("\x1b", "\\x1b")
    assert line.startswith(f"paused at step 2: saved {shown}/last.pt; continue with "
                           "--resume "), res.stdout
    hint = line.split("continue with ", 1)[1]
    res = _pasted(tmp_path, hint)
    assert res.returncode == 0, res.stderr
    assert "resuming at step 2" in res.stderr + res.stdout, (hint, res.stderr)


def test_the_stop_line_of_a_run_folder_with_a_newline_is_one_line(tmp_path, text):
    r = tmp_path / "a\nb"
    proc = start(["train", *tiny(text, r, steps=100000), "--save-every", "1"])
    wait_for(lambda: (r / "last.pt").exists())  # the loop is running
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    shown = str(r).replace("\n", "\\n")
    assert err.count("\n") == 1 and err.startswith(f"SIGINT: saved {shown}/last.pt at "
                                                   "step "), err
    assert err.endswith(f"; continue with --resume $'{shown}'\n"), err


def test_the_refusals_hints_paste_too(tmp_path, text):
    res = txl("train", *tiny(text, "x", steps=4)[:-2], "--run-dir=-r", "--pause-at",
              "2", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = txl("train", *tiny(text, "x", steps=4)[:-2], "--run-dir=-r", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr == (
        f"{PROG}: error: run directory -r already exists; pass --resume ./-r to "
        "continue it or --overwrite to start over\n"), res.stderr
    os.remove(tmp_path / "-r" / "last.pt")
    res = txl("train", "--resume=-r", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.endswith(
        "put it back to continue, or start the run again with --run-dir ./-r "
        "--overwrite and its options\n"), res.stderr


def test_a_truncated_last_pt_names_the_way_out(tmp_path, text):
    r = tmp_path / "my run"
    res = txl("train", *tiny(text, r, steps=4), "--pause-at", "2")
    assert res.returncode == 0, res.stderr
    last = r / "last.pt"
    last.write_bytes(last.read_bytes()[:5000])
    res = txl("train", "--resume", r)
    assert res.returncode == 2 and res.stderr == (
        f"{PROG}: error: {last}: truncated or corrupt (5,000 bytes; cannot read the "
        "archive); put back a good copy, or start the run again with --run-dir "
        f"'{r}' --overwrite and its options\n"), res.stderr


def _umask_0222(tmp_path, argv):
    """`python -m txl_mini ARGV` under `umask 0222`; as root, without the
    capability that lets root write a 0400 file."""
    cmd = f"umask 0222; exec {sys.executable} -m txl_mini " + " ".join(
        f"'{a}'" for a in argv)
    pre = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root without setpriv: the umask's effect is not seen")
        caps = "-dac_override,-dac_read_search"
        pre = ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}"]
    return subprocess.run([*pre, "bash", "-c", cmd], cwd=tmp_path, env=ENV,
                          text=True, capture_output=True, timeout=300)


def test_files_are_written_under_a_umask_without_the_owners_write_bit(tmp_path, text):
    res = _umask_0222(tmp_path, ["data", "offline", "--chars", "1000", "--out",
                                 "c.txt", "--deps-out", "d.tsv"])
    assert res.returncode == 0, res.stderr
    assert len((tmp_path / "c.txt").read_text()) == 1000
    assert (tmp_path / "d.tsv").read_text().startswith("cue")
    os.mkdir(tmp_path / "r")  # a writable folder: the run's files go in it
    res = _umask_0222(tmp_path, ["train", *tiny(text, "r", steps=2), "--out",
                                 "m.pt"])
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "m.pt").is_file() and (tmp_path / "r" / "last.pt").is_file()
    assert not [n for n in os.listdir(tmp_path / "r") if n.endswith(".tmp")]
