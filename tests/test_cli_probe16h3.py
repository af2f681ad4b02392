"""Issue 31, a hostile probe, its minor findings: the advice to drop a trailing '/'
given for options that name folders (--run-dir x/, where x is a file: dropped, it
is still a file), and `/dev/null/` or `FIFO/` called 'no such file', where a user
expects to hear that it is no folder (ENOTDIR)."""

import os

import pytest
from test_cli_faults import one_line, txl

PROG = "python -m txl_mini"


def test_a_folder_option_naming_a_file_is_not_told_to_drop_the_slash(tmp_path):
    (tmp_path / "afile").write_text("x")
    why = "afile is a file, not a directory; give a directory"
    for argv, line in (
            (["train", "--preset", "tiny", "--run-dir", "afile/"],
             f"train: error: --run-dir afile/: {why}"),
            (["train", "--resume", "afile/"], f"train: error: --resume afile/: {why}"),
            (["data", "text8", "--cache-dir", "afile/."],
             f"data text8: error: --cache-dir afile/.: {why}")):
        assert one_line(txl(*argv, cwd=tmp_path), 2) == f"{PROG} {line}"
    assert os.listdir(tmp_path) == ["afile"]


def test_a_device_or_fifo_named_as_a_folder_is_not_a_directory(tmp_path):
    os.mkfifo(tmp_path / "ff")
    for argv, line in (
            (["data", "stats", "/dev/null/"],
             "data stats: error: cannot read /dev/null/: /dev/null is not a "
             "directory"),
            (["data", "stats", "ff/x"],
             "data stats: error: cannot read ff/x: ff is not a directory"),
            (["evaluate", "ff/"], "evaluate: error: ff/: ff is not a directory")):
        assert one_line(txl(*argv, cwd=tmp_path), 2) == f"{PROG} {line}"


def test_a_cached_text8_zip_of_the_wrong_size_is_not_hashed(tmp_path, monkeypatch):
    """Its size is known: a wrong one is refused at once (it was hashed in full
    first, a minute for a large file). Then the download, here refused at once."""
    from txl_mini import text8

    def hashed(path):
        raise AssertionError(f"{path} was hashed")

    monkeypatch.setattr(text8, "sha1_file", hashed)
    (tmp_path / "text8.zip").write_bytes(b"not text8")
    with pytest.raises(text8.DataError, match="could not download"):
        text8.load_text8(cache_dir=tmp_path, url="http://127.0.0.1:9/text8.zip",
                         progress=False)
    assert [n for n in os.listdir(tmp_path) if n.startswith("text8.zip.mismatch-")]


def test_a_pytorch_setting_torch_refuses_is_named_not_a_corrupt_file(tmp_path,
                                                                     monkeypatch):
    """checkpoint.py had its own prefix ("TORCH"), cli/errors.py its own
    ("TORCH_", "PYTORCH_"): a PYTORCH_* setting torch refused while loading made a
    good file 'truncated or corrupt'. Both now use txl_mini.torch_env's."""
    import torch

    from txl_mini import checkpoint

    def refuse(*args, **kw):
        raise RuntimeError("PYTORCH_BOGUS_LOAD must be 0 or 1")

    monkeypatch.setenv("PYTORCH_BOGUS_LOAD", "2")
    monkeypatch.setattr(torch, "load", refuse)
    path = tmp_path / "m.pt"
    path.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(checkpoint.CheckpointError, match="torch refused "
                       "PYTORCH_BOGUS_LOAD in the environment"):
        checkpoint.read_checkpoint(str(path))
