"""`ulimit -n` too low for a run (a fifteenth probe): train stopped with the file it
could not open, which was torch's own module, `.../torch/utils/serialization/
__init__.py: Too many open files`, or the run dir's; a limit is the process', so the
line names it, `too many open files (ulimit -n 7; raise it)`, as the import's did."""
import subprocess
import sys

from cli_text import words
from test_cli_faults import ENV, tiny


def test_too_many_open_files_names_the_limit(tmp_path):
    (tmp_path / "text.txt").write_text(words(3000), encoding="utf-8")
    hit = []
    for n in (6, 7, 8):  # here: the run dir, the first save, the plot
        argv = [sys.executable, "-m", "txl_mini", "train",
                *tiny(str(tmp_path / "text.txt"), tmp_path / f"r{n}", steps=1)]
        res = subprocess.run(["/bin/sh", "-c", f'ulimit -n {n} && exec "$@"', "sh",
                              *map(str, argv)], env=ENV, capture_output=True,
                             text=True, timeout=120)
        lines = [x for x in res.stderr.splitlines() if "open files" in x]
        assert all(f"too many open files (ulimit -n {n}; raise it)" in x
                   for x in lines), (n, res.stderr)
        hit += [n] * bool(lines)
    assert hit, "no limit was low enough to hit"  # the test would test nothing
