"""Issue 31, the seventeenth probe: an existing empty file at `data offline --out` or
`--deps-out` was refused as one 'with other contents'. The refusal stays (README:
data offline replaces a file only with --overwrite, or when it holds what would be
written); its words now say the file is empty. train --out and bench --json: as
README says (refused; replaced)."""

import json

import pytest
from test_cli_faults import tiny, txl  # noqa: F401

PROG = "python -m txl_mini"


@pytest.mark.parametrize("opt", ["--out", "--deps-out"])
def test_data_offline_refuses_an_empty_file_as_empty(tmp_path, opt):
    (tmp_path / "f").write_text("")
    argv = {"--out": ["--out", "f"],
            "--deps-out": ["--out", "c.txt", "--deps-out", "f"]}
    res = txl("data", "offline", "--chars", "2000", *argv[opt], cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert res.stderr == (f"{PROG} data offline: error: {opt} f already exists (an "
                          "empty file); pass --overwrite to replace it\n")
    assert (tmp_path / "f").read_text() == "" and not (tmp_path / "c.txt").exists()


def test_data_offline_overwrite_replaces_an_empty_file(tmp_path):
    (tmp_path / "f").write_text("")
    res = txl("data", "offline", "--chars", "2000", "--out", "f", "--overwrite",
              cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert len((tmp_path / "f").read_text()) == 2000


def test_train_out_an_empty_file_is_refused_without_other_contents(tmp_path, text):
    (tmp_path / "f.pt").write_text("")
    res = txl("train", *tiny(text, tmp_path / "r"), "--out", "f.pt", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert res.stderr == (f"{PROG} train: error: --out {tmp_path}/f.pt already "
                          "exists; pass --overwrite to replace it\n")
    assert (tmp_path / "f.pt").read_text() == "" and not (tmp_path / "r").exists()


def test_bench_json_replaces_an_empty_file(tmp_path):
    (tmp_path / "b.json").write_text("")
    res = txl("bench", "--quick", "--device", "cpu", "--json", "b.json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "other contents" not in res.stderr
    assert isinstance(json.loads((tmp_path / "b.json").read_text()), dict)
