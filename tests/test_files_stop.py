"""A stop (Ctrl-C, SIGTERM raised by the command line's handler) the moment
atomic_path's temporary file exists. mkstemp made it before the block that removes it
was entered, so a signal there left `.o.txt.XXXXXXXX.tmp` behind:
test_cli_signals' data offline test saw it once, on a loaded machine."""

import os

import pytest

from txl_mini.files import TEMP_EXTRA, TEMP_SUFFIX, atomic_path, remove_stale_temps


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_a_stop_just_after_the_temporary_is_made_removes_it(tmp_path, monkeypatch,
                                                            stop):
    real, opened = os.open, []

    def open_then_stop(path, flags, *args, **kwargs):
        fd = real(path, flags, *args, **kwargs)
        opened.append(fd)
        if os.fspath(path).endswith(TEMP_SUFFIX):  # the file is there: stop now
            raise stop
        return fd

    monkeypatch.setattr(os, "open", open_then_stop)
    with pytest.raises(stop):
        with atomic_path(tmp_path / "o.txt"):
            pass
    monkeypatch.undo()
    for fd in opened:  # the descriptor a real stop would leave to the exit
        try:
            os.close(fd)
        except OSError:
            pass
    assert sorted(os.listdir(tmp_path)) == []


def test_its_temporary_is_named_as_the_sweep_and_the_length_check_expect(tmp_path):
    """The name: `.o.txt.` + 8 characters + `.tmp` (files.TEMP_EXTRA counts them), and
    remove_stale_temps finds it."""
    with atomic_path(tmp_path / "o.txt") as tmp:
        name = os.path.basename(tmp)
        assert name.startswith(".o.txt.") and name.endswith(TEMP_SUFFIX)
        assert len(name) == len("o.txt") + TEMP_EXTRA
        assert list(tmp_path.glob(f".o.txt.*{TEMP_SUFFIX}")) == [tmp_path / name]
    assert (tmp_path / "o.txt").exists() and not (tmp_path / name).exists()
    os.utime(tmp_path / "o.txt")  # an old temporary of it: the sweep finds it
    (tmp_path / name).write_text("")
    assert remove_stale_temps(tmp_path / "o.txt") == [str(tmp_path / name)]


def test_a_temporary_name_taken_by_another_file_is_left_alone(tmp_path, monkeypatch):
    """Two writers drawing one name: the second draws again, the first's file stays."""
    with atomic_path(tmp_path / "o.txt") as first:
        with open(first, "w") as f:
            f.write("first")
        import txl_mini.files as files
        names = iter([os.path.basename(first)[len(".o.txt."):-len(TEMP_SUFFIX)],
                      "abcdefgh"])
        monkeypatch.setattr(files, "_draw", lambda: next(names), raising=False)
        with atomic_path(tmp_path / "o.txt") as second:
            assert second != first and second.endswith(".abcdefgh.tmp")
        monkeypatch.undo()
        assert open(first).read() == "first"
