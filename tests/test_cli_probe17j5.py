"""Issue 31, the seventeenth probe (a refactor): what an output held when a command
checked it was kept in a module-level dict (outputs.CHECKED) that nothing cleared.
A process that ran a command and then wrote the same file through the library (or
ran a second command) carried the first command's record into the second write,
which then refused a file it had never checked. The record now travels with the
command (prepare_run_dir's and check_args' return values)."""

from txl_mini.cli import data
from txl_mini.cli.bench_json import write_json


def test_a_command_leaves_no_record_for_the_next_write(tmp_path, capsys):
    out = tmp_path / "c.txt"
    # data offline checks --out (nothing there yet) and writes it
    assert data.main(["offline", "--chars", "2000", "--out", str(out)]) == 0
    capsys.readouterr()
    # later, the same process writes that name through the library: it was told
    # 'a file appeared there while we ran', from the first command's check
    assert write_json(str(out), {"device": "cpu"}) is None
    assert out.read_text().startswith("{")
