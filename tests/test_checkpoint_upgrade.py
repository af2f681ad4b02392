"""Checkpoint format version 2: every committed checkpoint still loads, bitwise.

Version 1 stored the feed-forward as an nn.Sequential, so its two layers were named by
index (blocks.N.ff.net.0 and .net.3); version 2 names them ff.c_fc and ff.c_proj. The
reader renames old keys. Each committed checkpoint is compared with the same weights
loaded by their OLD names into a model whose feed-forward is the old nn.Sequential
(rebuilt here), so the test needs no stored reference numbers.
"""

import glob
import os

import pytest
import torch
import torch.nn as nn

from txl_mini.checkpoint import (
    VERSION,
    CheckpointError,
    load_checkpoint,
    read_checkpoint,
    save_checkpoint,
    upgrade_state_dict,
)
from txl_mini.config import ModelConfig, preset
from txl_mini.kv_cache import forward_cached
from txl_mini.model import TransformerXL, VanillaTransformer

torch.set_num_threads(1)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMITTED = sorted(glob.glob(os.path.join(ROOT, "book", "zoo", "*.pt"))
                   + glob.glob(os.path.join(ROOT, "book", "checkpoints", "*.pt")))


class OldFeedForward(nn.Module):
    """The version-1 feed-forward, as it was: an nn.Sequential named by index."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.d_inner), nn.ReLU(), nn.Dropout(cfg.dropout),
            nn.Linear(cfg.d_inner, cfg.d_model), nn.Dropout(cfg.dropout),
        )

    def forward(self, x):
        return self.net(x)


def old_layout_model(raw: dict):
    """The raw version-1 weights, loaded strictly under their old names."""
    cls = VanillaTransformer if raw["model_class"] == "VanillaTransformer" else (
        TransformerXL)
    model = cls(ModelConfig(**raw["config"]))
    for block in model.blocks:
        block.ff = OldFeedForward(model.cfg)
    dtypes = {t.dtype for t in raw["state_dict"].values() if t.is_floating_point()}
    model.to(dtypes.pop())
    model.load_state_dict(raw["state_dict"])  # strict: every old name fits
    return model.eval()


def test_the_committed_checkpoints_are_found():
    assert len(COMMITTED) >= 26  # the zoo (three seeds per model) and the cue models


@pytest.mark.parametrize("path", COMMITTED, ids=os.path.basename)
def test_committed_checkpoint_gives_bitwise_the_same_logits(path):
    raw = torch.load(path, map_location="cpu", weights_only=True)
    old_keys = [k for k in raw["state_dict"] if ".ff.net." in k]
    if raw.get("version", 1) == 1:
        assert old_keys, "a version-1 file names its feed-forward by index"
    model, _ = load_checkpoint(path)
    assert not any(".ff.net." in k for k in model.state_dict())
    old = old_layout_model(raw) if old_keys else None
    cfg = model.cfg
    x = torch.randint(0, cfg.vocab_size, (2, cfg.seg_len),
                      generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        first = model(x)
        second = model(x, mems=first.mems)
        if old is not None:
            ref = old(x)
            assert torch.equal(first.logits, ref.logits)
            assert torch.equal(second.logits, old(x, mems=ref.mems).logits)
    if type(model) is TransformerXL and cfg.mem_len:  # Shaw models too
        out = forward_cached(model, x)
        out = forward_cached(model, x, out.cache)
        torch.testing.assert_close(out.logits, second.logits, rtol=1e-4, atol=1e-4)


def test_upgrade_renames_only_the_feed_forward():
    state = {"blocks.0.ff.net.0.weight": 1, "blocks.0.ff.net.3.bias": 2,
             "blocks.11.ff.net.0.bias": 3, "blocks.0.attn.W_q.weight": 4}
    assert upgrade_state_dict(state) == {
        "blocks.0.ff.c_fc.weight": 1, "blocks.0.ff.c_proj.bias": 2,
        "blocks.11.ff.c_fc.bias": 3, "blocks.0.attn.W_q.weight": 4}


def test_new_files_are_version_2_and_a_newer_version_is_refused(tmp_path):
    torch.manual_seed(0)
    model = TransformerXL(preset("tiny"))
    path = str(tmp_path / "m.pt")
    save_checkpoint(path, model, {"corpus": "offline"})
    raw = torch.load(path, weights_only=True)
    assert raw["version"] == VERSION == 2
    assert "blocks.0.ff.c_fc.weight" in raw["state_dict"]
    assert read_checkpoint(path)["state_dict"].keys() == model.state_dict().keys()
    raw["version"] = 3
    torch.save(raw, path)
    with pytest.raises(CheckpointError, match="version 3"):
        read_checkpoint(path)
