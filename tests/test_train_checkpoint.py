"""Checkpoint files: round trip, atomic writes, weights_only loading, one-line
errors."""

import os
import zipfile

import pytest
import torch

from txl_mini.checkpoint import (
    CheckpointError,
    CheckpointNotFound,
    load_checkpoint,
    read_checkpoint,
    save_checkpoint,
)
from txl_mini.config import preset
from txl_mini.model import TransformerXL, VanillaTransformer

torch.set_num_threads(1)


def tiny(cls=TransformerXL, **changes):
    torch.manual_seed(0)
    return cls(preset("tiny", **changes))


def logits(model, seed=1):
    x = torch.randint(0, 27, (2, 8), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        return model.eval()(x).logits


@pytest.mark.parametrize("cls", [TransformerXL, VanillaTransformer])
def test_round_trip_rebuilds_the_right_class(tmp_path, cls):
    model = tiny(cls, mem_len=4, clamp_len=6)
    path = tmp_path / "m.pt"
    save_checkpoint(str(path), model, {"corpus": "offline", "steps": 3})
    again, meta = load_checkpoint(str(path))
    assert type(again) is cls and again.cfg == model.cfg
    assert meta == {"corpus": "offline", "steps": 3}
    assert torch.equal(logits(model), logits(again))
    assert sorted(os.listdir(tmp_path)) == ["m.pt"]  # no temp file left behind


def test_float64_model_comes_back_in_float64(tmp_path):
    model = tiny().double()
    save_checkpoint(tmp_path / "m.pt", model, {})
    again, _ = load_checkpoint(tmp_path / "m.pt")
    assert again.embed.weight.dtype == torch.float64
    assert torch.equal(logits(model), logits(again))


def test_optimizer_and_extra_are_stored(tmp_path):
    model = tiny()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    zeros = torch.zeros(1, 8, dtype=torch.long)
    model(zeros, targets=zeros).loss.backward()
    opt.step()
    extra = {"rng": torch.get_rng_state(), "position": 5, "mems": [torch.ones(2, 3)]}
    save_checkpoint(tmp_path / "m.pt", model, {"a": 1}, optimizer=opt, extra=extra)
    ckpt = read_checkpoint(tmp_path / "m.pt")
    opt2 = torch.optim.Adam(tiny().parameters(), lr=1e-3)
    opt2.load_state_dict(ckpt["optimizer"])
    assert ckpt["extra"]["position"] == 5
    assert torch.equal(ckpt["extra"]["rng"], extra["rng"])


def test_save_refuses_objects_that_weights_only_cannot_load(tmp_path):
    with pytest.raises(TypeError, match="plain data"):
        save_checkpoint(tmp_path / "m.pt", tiny(), {"when": object()})
    assert os.listdir(tmp_path) == []


def test_crash_mid_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "last.pt"
    old = tiny()
    save_checkpoint(path, old, {"step": 1})

    def broken_save(obj, f):  # half the bytes, then the process "dies"
        f.write(b"PK\x03\x04" + b"\0" * 100)  # f: the temporary file beside last.pt
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(path, tiny(mem_len=2), {"step": 2})
    monkeypatch.undo()
    again, meta = load_checkpoint(path)
    assert meta == {"step": 1} and torch.equal(logits(old), logits(again))
    assert sorted(os.listdir(tmp_path)) == ["last.pt"]


def bad_file(tmp_path, kind):
    path = tmp_path / f"{kind}.pt"
    good = tmp_path / "good.pt"
    save_checkpoint(good, tiny(), {"corpus": "offline"})
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "random":
        path.write_bytes(bytes(range(256)) * 8)
    elif kind == "truncated":
        path.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    elif kind == "foreign":
        torch.save({"weights": torch.ones(3)}, path)
    elif kind == "pickle":
        torch.save({"config": {}, "state_dict": {}, "evil": zipfile.ZipInfo("x")}, path)
    elif kind == "mismatch":
        ckpt = torch.load(good, weights_only=True)
        ckpt["config"]["d_model"] = 32
        torch.save(ckpt, path)
    elif kind == "nometa":
        ckpt = torch.load(good, weights_only=True)
        del ckpt["meta"]
        torch.save(ckpt, path)
    elif kind == "badconfig":
        ckpt = torch.load(good, weights_only=True)
        ckpt["config"]["n_layer"] = 0
        torch.save(ckpt, path)
    return path


@pytest.mark.parametrize("kind, words", [
    ("empty", "empty file"), ("random", "not a txl_mini checkpoint"),
    ("truncated", "truncated"), ("foreign", "not a txl_mini checkpoint"),
    ("pickle", "weights_only"), ("mismatch", "do not match the stored config"),
    ("nometa", "missing meta"), ("badconfig", "invalid config"),
])
def test_bad_files_give_one_line_naming_the_file(tmp_path, kind, words):
    path = bad_file(tmp_path, kind)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(str(path))
    msg = str(info.value)
    assert words in msg and str(path) in msg and "\n" not in msg


def test_missing_file_is_also_file_not_found(tmp_path):
    with pytest.raises(CheckpointNotFound):
        load_checkpoint(tmp_path / "nope.pt")
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "nope.pt")


def test_loading_never_unpickles_code(tmp_path):
    """A crafted pickle that would run code is refused instead of executed."""
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = tmp_path / "evil.pt"
    torch.save({"config": {}, "state_dict": {}, "x": Evil()}, path)
    with pytest.raises(CheckpointError):
        load_checkpoint(path)
    assert not marker.exists()
