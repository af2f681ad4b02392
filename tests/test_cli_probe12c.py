"""Issue 31, a twelfth probe of the command lines (c): a damaged or oversized text8
zip, a file name's control characters, a resume with another number of processes,
evaluate's unbounded lengths, the README. Each test failed on 65e8e35 (subprocesses,
as a user's shell runs them)."""

import os
import random
import subprocess
import sys
import zipfile

import pytest
from test_cli_faults import ENV, ROOT, one_line, tiny, txl

RNG = random.Random(1)
TEXT = bytes(RNG.choice(b"abcdefghijklmnopqrstuvwxyz ")
             for _ in range(10_000))  # compresses to about 6 KB: bytes 200-399 in it
HINT = "Pass the original text8.zip or the unzipped text8 file."


def make_zip(path, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        zf.writestr("text8", TEXT)
    return path


def damaged(path, kind):
    """A small zip holding `text8`, damaged as the probe damaged it."""
    method = {"lzma": zipfile.ZIP_LZMA, "bzip2": zipfile.ZIP_BZIP2,
              "flipped": zipfile.ZIP_STORED}.get(kind, zipfile.ZIP_DEFLATED)
    b = bytearray(make_zip(path, method).read_bytes())
    central = b.rfind(b"PK\x01\x02")
    if kind in ("deflate", "lzma", "bzip2"):  # its compressed bytes 200-399
        b[200:400] = bytes(x ^ 0xFF for x in b[200:400])
    elif kind == "flipped":  # one byte of stored text: 'Bad CRC-32'
        b[100] ^= 1
    elif kind == "method99":  # the compression method, in both headers
        b[8:10] = b[central + 10:central + 12] = (99).to_bytes(2, "little")
    elif kind == "encrypted":  # the flag bit that says so, in both headers
        b[6] |= 1
        b[central + 8] |= 1
    path.write_bytes(bytes(b))
    return path


WHAT = {"deflate": "is a damaged zip file", "lzma": "is a damaged zip file",
        "bzip2": "is a damaged zip file", "flipped": "is a damaged zip file",
        "method99": "is a zip file compressed with a method",
        "encrypted": "is an encrypted zip"}


@pytest.mark.parametrize("kind", list(WHAT))
def test_a_damaged_text8_zip_is_one_line(tmp_path, kind):
    """Finding 1: a deflate zip with bytes 200-399 inverted (zlib.error), a damaged
    ZIP_LZMA (LZMAError), compression method 99 (NotImplementedError), an encrypted
    entry (RuntimeError) gave a traceback, exit 1; a damaged bzip2 zip and a stored
    one with a flipped byte one line, exit 1. Now one line naming --path, exit 2."""
    z = damaged(tmp_path / "z.zip", kind)
    line = one_line(txl("data", "text8", "--path", z), 2)
    assert line.startswith(f"python -m txl_mini data text8: error: --path {z} "
                           f"{WHAT[kind]}") and line.endswith(HINT), line


def test_train_and_evaluate_say_so_too(tmp_path, paused):
    z = damaged(tmp_path / "z.zip", "deflate")
    res = txl("train", "--corpus", "text8", "--path", z, "--preset", "tiny",
              "--steps", "1", "--threads", "1", "--run-dir", tmp_path / "r")
    assert one_line(res, 2).startswith(
        f"python -m txl_mini train: error: --path {z} is a damaged zip file")
    assert not (tmp_path / "r").exists()
    res = txl("evaluate", paused / "last.pt", "--corpus", "text8", "--path", z)
    assert one_line(res, 2).startswith(
        f"python -m txl_mini evaluate: error: --path {z} is a damaged zip file")


RSS = """import resource, subprocess, sys
res = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(res.stderr)
print(res.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak(*argv):
    """`python -m txl_mini ARGV`: (exit status, stderr, its peak memory in KiB)."""
    res = subprocess.run([sys.executable, "-c", RSS, sys.executable, "-m",
                          "txl_mini", *map(str, argv)], env=ENV, capture_output=True,
                         text=True, timeout=300)
    code, kib = map(int, res.stdout.split())
    return code, res.stderr, kib


def test_a_zip_bomb_is_refused_unread(tmp_path):
    """Finding 2: a text8 entry of 5 GiB of spaces (a 5 MB zip) was decompressed
    whole before its size was checked. Its size in the zip's directory is checked
    first now; here 120 MB of spaces (a 120 KB zip) are refused without reading
    them: the command needs no more memory than for a small zip."""
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("text8", "w", force_zip64=True) as f:
            for _ in range(120):
                f.write(b" " * 1_000_000)
    code, err, kib = peak("data", "text8", "--path", bomb)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(
        f"python -m txl_mini data text8: error: text8 in {bomb} failed verification: "
        "expected 100,000,000 bytes, it holds 120,000,000 (not read)"), err
    small = peak("data", "text8", "--path", make_zip(tmp_path / "small.zip"))
    assert small[0] == 2 and kib < small[2] + 50_000, (kib, small)  # read: +120 MB


def test_data_stats_escapes_a_file_name(tmp_path):
    """Finding 3: `data stats` printed the file name raw: a newline broke its line
    in two and an ESC reached the terminal. It is escaped as train's lines are."""
    name = tmp_path / "a\nb\x1b[2Jc.txt"
    name.write_text("the cat sat on the mat " * 20)
    res = txl("data", "stats", name)
    assert res.returncode == 0, res.stderr
    assert "\x1b" not in res.stdout and res.stdout.startswith(
        f"{tmp_path}/a\\nb\\x1b[2Jc.txt: 460 chars, "), res.stdout


def torchrun(*argv):
    """`torchrun --standalone --nproc_per_node 2 -m txl_mini train ARGV`."""
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone",
              "--nproc_per_node", "2", "-m", "txl_mini", "train"]
    return subprocess.run([*launch, *map(str, argv)], env=ENV, capture_output=True,
                          text=True, timeout=300)


def test_a_two_process_run_resumed_by_one_is_bad_input(tmp_path, text):
    """Finding 4: --resume of a run trained by 2 processes, in one, said 'was trained
    with 2 process(es); resume it with the same number (now 1)', exit 1; a changed
    option on resume is exit 2."""
    r = tmp_path / "r"
    res = torchrun(*tiny(text, r, steps=3), "--device", "cpu", "--batch-size", "4",
                   "--pause-at", "1")
    assert res.returncode == 0, res.stderr[-3000:]
    assert one_line(txl("train", "--resume", r), 2) == (
        f"python -m txl_mini train: error: {r} was trained with 2 processes; resume "
        "it with the same number (now 1)")


@pytest.mark.parametrize("option", ["--mem-len", "--seg-len"])
def test_evaluate_bounds_the_lengths(paused, option):
    """Finding 5: --mem-len 99999999999999999999 was taken and echoed 'M=9999...';
    --clamp-len is bounded at 2,147,483,647, as a checkpoint's lengths: so are these."""
    res = txl("evaluate", paused / "last.pt", option, "99999999999999999999")
    assert one_line(res, 2) == (
        f"python -m txl_mini evaluate: error: {option} must be <= 2,147,483,647, got "
        "99,999,999,999,999,999,999")


def test_the_readme_says_how_to_list_the_commands(tmp_path, text):
    """Finding 6: the README said `python -m txl_mini` lists the commands; it says
    'error: which command?' (exit 2), and --help lists them. It now also says that
    torchrun prints its own ChildFailedError traceback after our one line."""
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = " ".join(f.read().split())
    assert "`python -m txl_mini` lists" not in readme
    assert "`python -m txl_mini --help` lists" in readme
    res = txl("--help")
    assert res.returncode == 0 and all(c in res.stdout for c in
                                       ("train", "evaluate", "sample", "data", "bench"))
    # and, as it says, torchrun's own traceback follows a refused option's one line
    assert "`ChildFailedError`" in readme
    res = torchrun(*tiny(text, tmp_path / "r"), "--device", "cpu", "--batch-size", "3")
    ours = ("python -m txl_mini train: error: --batch-size 3 must be divisible by the "
            "2 processes\n")
    assert res.returncode == 1 and res.stderr.startswith(ours), res.stderr[-3000:]
    assert res.stderr.count(ours) == 1 and "ChildFailedError" in res.stderr
