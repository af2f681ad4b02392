"""The fast attention path (cfg.fast_attn=True, the default) computes the reference
path's function.

Forward logits, new memory and the gradient of every parameter are compared between two
models with identical weights, one per path: float32 to 1e-5, float64 to 1e-10, with
and without memory, same_length, clamp_len, relative, Shaw and absolute positions, eval
and train mode (dropout 0, so train mode is deterministic). No GPU needed.
"""

import pytest
import torch
import torch.nn.functional as F

from txl_mini.attention import MultiHeadAttention
from txl_mini.config import preset
from txl_mini.fast_attention import FastAttention
from txl_mini.model import TransformerXL, VanillaTransformer

TOL = {torch.float32: 1e-5, torch.float64: 1e-10}


def pair(cfg, dtype, cls=TransformerXL):
    torch.manual_seed(0)
    fast = cls(cfg.replace(fast_attn=True)).to(dtype)
    ref = cls(cfg.replace(fast_attn=False)).to(dtype)
    ref.load_state_dict(fast.state_dict())  # same keys in both paths
    return fast, ref


def run(model, x, n_segments, train):
    """Logits of every segment, the final memory and all gradients of the last
    segment's loss."""
    model.train(train)
    L = model.cfg.seg_len
    mems, logits = None, []
    for s in range(n_segments):
        model.zero_grad()
        out = model(x[:, s * L:(s + 1) * L],
                    targets=x[:, s * L + 1:(s + 1) * L + 1], mems=mems)
        mems = out.mems
        logits.append(out.logits.detach())
    out.loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    return logits, mems, grads


def assert_close(a, b, tol, what):
    err = (a - b).abs().max().item()
    scale = max(1.0, b.abs().max().item())
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:g} x {scale:.3g}"


CASES = {
    "no memory": dict(mem_len=0),
    "memory": dict(),
    "memory shorter than segment": dict(mem_len=5),
    "same_length": dict(same_length=True),
    "clamp_len": dict(clamp_len=3),
    "absolute": dict(pos_enc="absolute"),
    "absolute with memory, same_length": dict(pos_enc="absolute", same_length=True),
    "untied u, v and pre-LN": dict(untie_r=True, pre_lnorm=True),
    "shaw": dict(pos_enc="shaw"),
    "shaw clipped, memory shorter than segment": dict(
        pos_enc="shaw", shaw_clip=3, mem_len=5
    ),
    "shaw, same_length": dict(pos_enc="shaw", same_length=True),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("case", list(CASES))
def test_fast_equals_reference(case, train, dtype):
    cfg = preset("tiny", dropout=0.0, dropatt=0.0, **CASES[case])
    fast, ref = pair(cfg, dtype)
    # u, v, R_hat away from their tiny init so (b)-(d) matter
    with torch.no_grad():
        for m in (fast, ref):
            for n, p in m.named_parameters():
                if n.endswith((".u", ".v", ".R_hat")):
                    p.copy_(torch.linspace(-1, 1, p.numel(), dtype=dtype).view_as(p))
    L = cfg.seg_len
    x = torch.randint(0, cfg.vocab_size, (3, 3 * L + 1),
                      generator=torch.Generator().manual_seed(1))
    lf, mf, gf = run(fast, x, 3, train)
    lr, mr, gr = run(ref, x, 3, train)
    tol = TOL[dtype]
    for s, (a, b) in enumerate(zip(lf, lr)):
        assert_close(a, b, tol, f"logits of segment {s}")
    assert len(mf) == len(mr)
    for a, b in zip(mf, mr):
        assert a.shape == b.shape
        assert_close(a, b, tol, "memory")
    assert gf.keys() == gr.keys()
    for n in gr:
        assert gr[n].abs().sum() > 0, (
            f"{n} gets no gradient: the comparison would be empty")
        assert_close(gf[n], gr[n], tol, f"grad of {n}")


def test_fast_path_really_differs_in_code():
    """The switch is real: only the fast model runs FastAttention.forward; same
    names."""
    cfg = preset("tiny", dropout=0.0)
    fast, ref = pair(cfg, torch.float32)
    assert [n for n, _ in fast.named_parameters()] == [
        n for n, _ in ref.named_parameters()
    ]
    assert all(type(b.attn) is FastAttention for b in fast.blocks)
    assert all(type(b.attn) is MultiHeadAttention for b in ref.blocks)
    called = []
    orig = FastAttention.forward

    def spy(self, *a):
        called.append(type(self))
        return orig(self, *a)

    FastAttention.forward = spy
    try:
        x = torch.randint(0, cfg.vocab_size, (2, cfg.seg_len))
        fast(x)
        ref(x)
    finally:
        FastAttention.forward = orig
    assert called == [FastAttention] * cfg.n_layer  # the fast model only


def test_readable_path_runs_rel_shift_and_fast_path_does_not(monkeypatch):
    """Chapter 5's claim: the readable model calls rel_shift once per layer; the fused
    path does the same shift as a view of its own matmul, without calling it."""
    import txl_mini.attention as attention

    calls = []
    real = attention.rel_shift
    monkeypatch.setattr(attention, "rel_shift", lambda x: calls.append(1) or real(x))
    cfg = preset("tiny", dropout=0.0)
    fast, ref = pair(cfg, torch.float32)
    x = torch.randint(0, cfg.vocab_size, (2, cfg.seg_len))
    fast(x)
    assert calls == []
    ref(x)
    assert len(calls) == cfg.n_layer


def test_untie_r_false_shares_u_v_in_fast_path():
    cfg = preset("tiny", dropout=0.0)
    model = TransformerXL(cfg)
    assert all(b.attn.u is model.blocks[0].attn.u for b in model.blocks)
    x = torch.randint(0, cfg.vocab_size, (2, cfg.seg_len + 1))
    model(x[:, :-1], targets=x[:, 1:]).loss.backward()
    assert (model.blocks[0].attn.u.grad is not None
            and model.blocks[0].attn.u.grad.abs().sum() > 0)


def test_vanilla_fast_equals_reference():
    cfg = preset("tiny", dropout=0.0)
    fast, ref = pair(cfg, torch.float64, VanillaTransformer)
    gen = torch.Generator().manual_seed(3)
    x = torch.randint(0, cfg.vocab_size, (2, cfg.seg_len + 1), generator=gen)
    (lf,), _, gf = run(fast, x, 1, True)
    (lr,), _, gr = run(ref, x, 1, True)
    assert_close(lf, lr, 1e-10, "vanilla logits")
    for n in gr:
        assert_close(gf[n], gr[n], 1e-10, f"vanilla grad of {n}")


def test_absolute_path_uses_the_causal_kernel_only_for_a_plain_causal_mask(
        monkeypatch):
    """Without memory or a same_length window the vanilla attention asks SDPA for
    is_causal (no L x L mask to apply); with memory it passes the mask. Both equal the
    readable path (test_vanilla_fast_equals_reference, the CASES above)."""
    import txl_mini.fast_attention as fast_attention

    seen = []
    real = F.scaled_dot_product_attention

    def spy(*args, **kw):
        seen.append((kw.get("is_causal", False), kw.get("attn_mask") is None))
        return real(*args, **kw)

    monkeypatch.setattr(fast_attention.F, "scaled_dot_product_attention", spy)
    cfg = preset("tiny", dropout=0.0)
    x = torch.randint(0, cfg.vocab_size, (2, cfg.seg_len))
    VanillaTransformer(cfg).eval()(x)
    assert seen == [(True, True)] * cfg.n_layer
    seen.clear()
    model = TransformerXL(cfg.replace(pos_enc="absolute")).eval()
    model(x, mems=model(x).mems)  # second call: memory present
    assert seen[cfg.n_layer:] == [(False, False)] * cfg.n_layer
    seen.clear()
    # same_length with memory 0 leaves each query a window of one key: not causal
    TransformerXL(cfg.replace(pos_enc="absolute", mem_len=0,
                              same_length=True)).eval()(x)
    assert seen == [(False, False)] * cfg.n_layer


def test_cache_is_safe_across_inference_mode_and_training():
    """R and the mask are cached; one made under inference_mode must not reach a
    backward pass."""
    cfg = preset("tiny", dropout=0.0)
    model = TransformerXL(cfg)
    x = torch.randint(0, cfg.vocab_size, (2, cfg.seg_len + 1))
    with torch.inference_mode():
        model(x[:, :-1])
    # would raise if the cache leaked
    model(x[:, :-1], targets=x[:, 1:]).loss.backward()
    assert model.embed.weight.grad is not None


def test_memory_does_not_keep_a_larger_tensor_alive():
    cfg = preset("tiny", dropout=0.0, mem_len=4)
    model = TransformerXL(cfg)
    x = torch.randint(0, cfg.vocab_size, (2, cfg.seg_len))
    mems = model(x).mems
    mems = model(x, mems=mems).mems
    for m in mems:
        assert m.shape == (2, 4, cfg.d_model)
        assert m.untyped_storage().nbytes() == m.numel() * m.element_size()
