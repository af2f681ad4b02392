"""pos_enc="shaw": Shaw et al. (2018)'s learned embeddings of clipped distances.

A_ij = (q_i.k_j + q_i.R_hat_{min(i-j, k)}) / sqrt(D), terms (a) and (b) only. Proven
here against a formula written out per (i, j), plus the properties the book relies on:
positions enter only through the clipped distance, memory equals one long pass, the
table is per layer and head with k + 1 rows, and a checkpoint round-trips.
"""

import math

import pytest
import torch

from txl_mini.attention import MultiHeadAttention, causal_mask
from txl_mini.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from txl_mini.config import POS_ENCODINGS, PRESETS, preset
from txl_mini.fast_attention import FastAttention
from txl_mini.model import TransformerXL

torch.set_num_threads(1)


def shaw(**changes):
    return preset("tiny", pos_enc="shaw", **changes)


def tokens(cfg, n, seed=1):
    """(2, n) random tokens, the same for every call with the same seed."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, cfg.vocab_size, (2, n), generator=gen)


def attention(cls, k, seed=0):
    """A float64 attention layer with clip k, its table far from its tiny init."""
    torch.manual_seed(seed)
    attn = cls(shaw(shaw_clip=k)).double().eval()
    torch.nn.init.normal_(attn.R_hat)  # std 1, so term (b) is as large as (a)
    return attn


def naive_logits(attn, h, mem, k):
    """A_ij = (q_i.k_j + q_i.R_hat[min(i - j, k)]) / sqrt(D), one entry at a time.

    (B, H, L, K), NaN where key j is in query i's future (i - j < 0).
    """
    B, L, C = h.shape
    M = mem.shape[1]
    H, D = attn.n_head, attn.d_head
    cat = torch.cat([mem, h], dim=1)  # (B, K, C)
    W_q = attn.W_q.weight.view(H, D, C)  # head n's rows of W_q
    W_k = attn.W_ke.weight.view(H, D, C)
    out = torch.full((B, H, L, M + L), float("nan"), dtype=h.dtype)
    for b in range(B):
        for n in range(H):
            for i in range(L):
                q_i = W_q[n] @ h[b, i]  # (D,)
                for j in range(M + i + 1):  # query i sits at key M + i
                    k_j = W_k[n] @ cat[b, j]
                    a_ij = attn.R_hat[min(M + i - j, k), n]  # row of the clipped i - j
                    out[b, n, i, j] = (q_i @ k_j + q_i @ a_ij) / math.sqrt(D)
    return out


# (L, M, k): no memory, M < L, M > L; k below the largest distance (clipping bites)
# and above it (every distance its own row)
SHAPES = [(5, 0, 2), (6, 3, 4), (4, 9, 5), (4, 9, 12), (7, 7, 30)]


@pytest.mark.parametrize("L,M,k", SHAPES, ids=[f"L{L}-M{M}-k{k}" for L, M, k in SHAPES])
@pytest.mark.parametrize("cls", [MultiHeadAttention, FastAttention])
def test_logits_and_output_equal_the_formula_per_pair(cls, L, M, k):
    attn = attention(cls, k)
    C = attn.W_q.in_features
    h = torch.randn(2, L, C, dtype=torch.float64)
    mem = torch.randn(2, M, C, dtype=torch.float64)
    want = naive_logits(attn, h, mem, k)  # (B, H, L, K)
    vis = ~causal_mask(L, M)  # (L, K)
    assert not want[..., vis].isnan().any()
    q, keys, values, r = attn.project(h, mem, None)
    got = attn.scores(q, keys, r)
    assert torch.allclose(got[..., vis], want[..., vis], rtol=0, atol=1e-12)
    t = attn.terms(h, mem, None)  # chapter 4's view: a and b, no c, d
    assert set(t) == {"a", "b", "logits"}
    total = (t["a"] + t["b"]) / math.sqrt(attn.d_head)
    assert torch.allclose(total[..., vis], want[..., vis], rtol=0, atol=1e-12)
    # the layer's output (the fused path's too) is softmax(A) V through W_o
    prob = torch.softmax(want.nan_to_num(float("-inf")), dim=-1)  # (B, H, L, K)
    out = torch.einsum("bhlk,bkhd->blhd", prob, values).reshape(2, L, -1)
    with torch.no_grad():
        assert torch.allclose(attn(h, mem, None, ~vis), attn.W_o(out), atol=1e-12)


def test_without_content_logits_depend_only_on_the_clipped_distance():
    L, M, k = 6, 5, 3
    attn = attention(MultiHeadAttention, k)
    C = attn.W_q.in_features
    with torch.no_grad():
        attn.W_ke.weight.zero_()  # no key content: term (a) vanishes
    # every query the same vector: q_i = q, so (b) = q.R_hat[min(i - j, k)]
    h = torch.randn(1, 1, C, dtype=torch.float64).expand(2, L, C)
    mem = torch.randn(2, M, C, dtype=torch.float64)
    logits = attn.terms(h, mem, None)["logits"]  # (B, H, L, K)
    vis = ~causal_mask(L, M)
    dist = (M + torch.arange(L)[:, None]) - torch.arange(L + M)[None, :]  # (L, K)
    clipped = dist.clamp(max=k)
    assert (dist[vis] > k).any()  # some pairs lie beyond the clip
    per_d = []
    for d in range(k + 1):
        entries = logits[..., (clipped == d) & vis]  # (B, H, n): min(i-j, k) = d
        assert entries.shape[-1] >= 2
        assert torch.allclose(entries, entries[..., :1].expand_as(entries), atol=1e-12)
        per_d.append(entries[..., 0])
    # beyond k all distances share row k; below it every clipped distance differs
    per_d = torch.stack(per_d, dim=-1)  # (B, H, k+1)
    gaps = (per_d[..., :, None] - per_d[..., None, :]).abs()
    assert (gaps + torch.eye(k + 1, dtype=gaps.dtype)).min() > 1e-6


@pytest.mark.parametrize("fast_attn", [False, True], ids=["readable", "fused"])
@pytest.mark.parametrize("changes", [
    dict(mem_len=8), dict(mem_len=16), dict(mem_len=8, shaw_clip=3),
], ids=["M=L", "M=2L", "M=L clip 3"])
def test_memory_equals_one_long_pass(changes, fast_attn):
    """As for the relative model (test_model.py): segment 2 read with segment 1's
    memory equals the last L rows of one pass over both, since Shaw's positions are
    relative too (absolute ones fail this, test_model.py)."""
    cfg = shaw(dropout=0.1, fast_attn=fast_attn, **changes)  # eval turns dropout off
    torch.manual_seed(0)
    model = TransformerXL(cfg).eval()
    L, M = cfg.seg_len, cfg.mem_len
    x = tokens(cfg, 2 * L)
    with torch.no_grad():
        out1 = model(x[:, :L])
        out2 = model(x[:, L:], mems=out1.mems)
        full = model(x)
    assert out1.mems[0].shape[1] == min(M, L)  # all of segment 1 is remembered
    assert torch.allclose(out1.logits, full.logits[:, :L], atol=1e-5)
    assert torch.allclose(out2.logits, full.logits[:, L:], atol=1e-5)


def test_longer_memory_at_evaluation_reads_the_last_row():
    """A memory longer than in training runs: keys beyond the table read its last row
    (proven per pair in test_logits_and_output_equal_the_formula_per_pair)."""
    cfg = shaw(mem_len=4)  # k = L + M - 1 = 11
    torch.manual_seed(0)
    model = TransformerXL(cfg).eval()
    assert model.blocks[0].attn.R_hat.shape[0] == cfg.seg_len + cfg.mem_len
    L = cfg.seg_len
    x = tokens(cfg, 4 * L)
    with torch.no_grad():
        out = model(x[:, :L], mem_len=3 * L)
        out = model(x[:, L:2 * L], mems=out.mems, mem_len=3 * L)
        out = model(x[:, 2 * L:3 * L], mems=out.mems, mem_len=3 * L)  # K = 24 > 12
        assert out.mems[0].shape[1] == 3 * L and torch.isfinite(out.logits).all()


def test_default_table_has_one_trained_row_per_training_distance():
    """shaw_clip = -1: k = L + M - 1, and one segment read with a full memory sends
    gradient to every row of every layer's table (none left at its random init)."""
    cfg = shaw()
    torch.manual_seed(0)
    model = TransformerXL(cfg).train()
    L = cfg.seg_len
    x = tokens(cfg, 2 * L + 1)
    mems = model(x[:, :L]).mems
    model(x[:, L:2 * L], targets=x[:, L + 1:2 * L + 1], mems=mems).loss.backward()
    for block in model.blocks:
        grad = block.attn.R_hat.grad  # (k+1, H, D)
        assert grad.shape[0] == L + cfg.mem_len
        assert (grad.abs().sum(dim=(1, 2)) > 0).all()


def test_parameters_replace_w_kr_u_v_by_one_table_per_layer_and_head():
    rel = TransformerXL(preset("tiny"))
    sh = TransformerXL(shaw(shaw_clip=5))
    k, cfg = 5, sh.cfg
    names_rel = {n for n, _ in rel.named_parameters()}
    names_sh = {n for n, _ in sh.named_parameters()}
    dropped = {n for n in names_rel if ".W_kr." in n or n.endswith((".u", ".v"))}
    added = {f"blocks.{i}.attn.R_hat" for i in range(cfg.n_layer)}
    assert dropped and names_sh == (names_rel - dropped) | added
    tables = [b.attn.R_hat for b in sh.blocks]
    assert all(t.shape == (k + 1, cfg.n_head, cfg.d_head) for t in tables)
    assert len({t.data_ptr() for t in tables}) == cfg.n_layer  # one per layer
    H_D, C = cfg.n_head * cfg.d_head, cfg.d_model
    # no W_kr (H*D x C per layer), no shared u, v; one (k+1, H, D) table per layer
    removed = cfg.n_layer * H_D * C + 2 * H_D
    assert sh.num_params() == rel.num_params() - removed + cfg.n_layer * (k + 1) * H_D


@pytest.mark.parametrize("name", ["tiny", "book", "text8_base"])
def test_parameters_finite_after_init(name):
    torch.manual_seed(0)
    model = TransformerXL(PRESETS[name].replace(pos_enc="shaw"))
    assert all(torch.isfinite(p).all() for p in model.parameters())
    for block in model.blocks:  # initialised like every weight, not left at zero
        std = block.attn.R_hat.std().item()
        assert 0.8 * model.cfg.init_std < std < 1.2 * model.cfg.init_std


def test_checkpoint_round_trip(tmp_path):
    cfg = shaw(shaw_clip=6, mem_len=4)
    torch.manual_seed(0)
    model = TransformerXL(cfg)
    path = tmp_path / "shaw.pt"
    save_checkpoint(str(path), model, {"corpus": "offline"})
    again, meta = load_checkpoint(str(path))
    assert again.cfg == cfg and again.cfg.shaw_clip == 6
    assert meta == {"corpus": "offline"}
    for a, b in zip(model.blocks, again.blocks):
        assert torch.equal(a.attn.R_hat, b.attn.R_hat)
    x = torch.randint(0, 27, (2, 8), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.equal(model.eval()(x).logits, again(x).logits)
    # the table's size is part of the config: other weights for that config are refused
    save_checkpoint(str(path), TransformerXL(cfg.replace(shaw_clip=3)), {})
    raw = torch.load(path, weights_only=True)
    raw["config"]["shaw_clip"] = 6
    torch.save(raw, path)
    with pytest.raises(CheckpointError, match="R_hat"):
        load_checkpoint(str(path))


@pytest.mark.parametrize("bad", [
    dict(shaw_clip=0), dict(shaw_clip=-2), dict(clamp_len=4),
])
def test_invalid_shaw_configs_raise(bad):
    assert "shaw" in POS_ENCODINGS
    with pytest.raises(ValueError):
        shaw(**bad)
