"""Issue 31, the eighteenth probe, item 1: a kill -9 during train's final --out write
(or bench's --json write) left its `.NAME.XXXXXXXX.tmp` beside it for good: neither
the resume that writes --out nor any later run or bench removed it. Now they sweep
it as `data offline --out` does: only that name's temporaries, only dead ones."""

import fcntl
import os
import time

import pytest
from test_cli_faults import py, tiny


@pytest.fixture
def temps():
    """make(folder, name): a dead temporary (its writer gone: no flock on it) and a
    live one (its flock held until the test ends, as files.atomic_path holds it),
    named as atomic_path names them."""
    held = []

    def make(folder, name):
        stale, live = folder / f".{name}.036d1e0c.tmp", folder / f".{name}.b2c9aa1f.tmp"
        stale.write_bytes(b"half a file")
        held.append(open(live, "wb"))
        held[-1].write(b"half a file")
        fcntl.flock(held[-1], fcntl.LOCK_EX)
        return stale, live
    yield make
    for f in held:
        f.close()


def test_train_out_sweeps_a_killed_writes_temporary(tmp_path, text, temps):
    o = tmp_path / "o"
    o.mkdir()
    stale, live = temps(o, "m7.pt")
    other = o / ".x.pt.036d1e0c.tmp"  # another file's: not ours to remove
    other.write_text("x")
    os.utime(other, (time.time() - 120,) * 2)
    res = py("-m", "txl_mini", "train", *tiny(text, tmp_path / "r"), "--out",
             str(o / "m7.pt"))
    assert res.returncode == 0, res.stderr
    assert sorted(os.listdir(o)) == sorted(["m7.pt", live.name, other.name])


def test_the_resume_that_writes_out_sweeps_it(tmp_path, text, temps):
    """The run's --out write was killed: its resume writes --out from last.pt."""
    r, out = tmp_path / "r7", tmp_path / "m7.pt"
    res = py("-m", "txl_mini", "train", *tiny(text, r), "--out", str(out))
    assert res.returncode == 0, res.stderr
    out.unlink()  # what the kill -9 left: no --out, its temporary
    stale, live = temps(tmp_path, "m7.pt")
    res = py("-m", "txl_mini", "train", "--resume", str(r))
    assert res.returncode == 0, res.stderr
    assert f"wrote {out} from its last.pt" in res.stdout + res.stderr
    assert out.is_file() and not stale.exists() and live.exists()


def test_bench_json_sweeps_a_killed_writes_temporary(tmp_path, temps):
    stale, live = temps(tmp_path, "b.json")
    res = py("-m", "txl_mini", "bench", "--quick", "--device", "cpu", "--json",
             "b.json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert sorted(os.listdir(tmp_path)) == sorted(["b.json", live.name])
