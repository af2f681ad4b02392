"""The key/value-cached path equals the standard path (txl_mini.kv_cache).

Every test runs the standard `model(idx, mems=...)` and `forward_cached` side by side
over many segments in float64 and compares the logits and the cache with the keys and
values the standard memory would give. tol: float64 round-off only.
"""

import pytest
import torch

from txl_mini import kv_cache
from txl_mini.config import preset
from txl_mini.kv_cache import KVCache, cache_from_mems, forward_cached
from txl_mini.model import TransformerXL, VanillaTransformer

TOL = 1e-10


def make(seed=0, dtype=torch.float64, **changes):
    """A tiny float64 model in eval mode; dropout on, so eval mode must turn it off."""
    cfg = preset("tiny", fast_attn=False, dropout=0.1, dropatt=0.1).replace(**changes)
    torch.manual_seed(seed)
    return TransformerXL(cfg).to(dtype).eval()


def expected_cache(model, mems):
    """Keys and values (H, B, M, D) per layer, projected here from a standard memory."""
    keys, values = [], []
    for block, m in zip(model.blocks, mems):
        a = block.attn
        x = block.ln_attn(m) if block.pre_lnorm else m  # what the attention reads
        B, M, _ = m.shape
        keys.append(a.W_ke(x).view(B, M, a.n_head, a.d_head).permute(2, 0, 1, 3))
        values.append(a.W_v(x).view(B, M, a.n_head, a.d_head).permute(2, 0, 1, 3))
    return keys, values


def run_both(model, lengths, B=2, mem_len=None, seed=1, **settings):
    """Feed segments of the given lengths through both paths; compare after each one.

    Returns the number of segments whose memory was non-empty (so tests can check the
    comparison really involved remembered states).
    """
    gen = torch.Generator().manual_seed(seed)
    V = model.cfg.vocab_size
    mems, cache, with_memory = None, None, 0
    kw = ({} if mem_len is None else {"mem_len": mem_len}) | settings
    with torch.no_grad():
        for L in lengths:
            x = torch.randint(0, V, (B, L), generator=gen)  # (B, L)
            y = torch.randint(0, V, (B, L), generator=gen)
            with_memory += bool(mems)
            ref = model(x, targets=y, mems=mems, **kw)
            out = forward_cached(model, x, cache, targets=y, **kw)
            assert out.logits.shape == ref.logits.shape == (B, L, V)
            torch.testing.assert_close(out.logits, ref.logits, rtol=0, atol=TOL)
            torch.testing.assert_close(out.loss, ref.loss, rtol=0, atol=TOL)
            mems, cache = ref.mems, out.cache
            keys, values = expected_cache(model, mems)
            assert cache.length == (mems[0].shape[1] if mems else 0)
            for k, v, k_ref, v_ref in zip(cache.keys, cache.values, keys, values):
                torch.testing.assert_close(k, k_ref, rtol=0, atol=TOL)
                torch.testing.assert_close(v, v_ref, rtol=0, atol=TOL)
    return with_memory


# M < L, M = L, M > L (and M > 2L, where the cache spans three segments)
@pytest.mark.parametrize("L,M", [(6, 2), (6, 6), (6, 9), (4, 11)])
@pytest.mark.parametrize("fast", [False, True], ids=["readable", "fast"])
def test_equal_over_many_segments(L, M, fast):
    model = make(seg_len=L, mem_len=M, fast_attn=fast)
    assert run_both(model, [L] * 7) == 6


@pytest.mark.parametrize(
    "changes",
    [
        {"same_length": True},
        {"clamp_len": 3},  # distances up to M + L - 1 = 13 share R's row 3
        {"same_length": True, "clamp_len": 5},
        {"pre_lnorm": True},
        {"untie_r": True},
        {"n_layer": 3, "pre_lnorm": True, "untie_r": True, "same_length": True},
    ],
    ids=lambda c: "+".join(c),
)
@pytest.mark.parametrize("M", [3, 8])
def test_equal_with_every_switch(changes, M):
    model = make(seg_len=6, mem_len=M, **changes)
    run_both(model, [6] * 6)


def test_untie_r_really_unties():
    """untie_r=True gives each layer its own u, v: the test above covers that case."""
    model = make(untie_r=True)
    assert model.blocks[0].attn.u is not model.blocks[1].attn.u
    tied = make()
    assert tied.blocks[0].attn.u is tied.blocks[1].attn.u


@pytest.mark.parametrize("same_length", [False, True])
def test_equal_with_mem_len_override_and_ragged_segments(same_length):
    """The per-call mem_len (longer than cfg.mem_len here) and segments of any L."""
    model = make(seg_len=4, mem_len=3, same_length=same_length)
    run_both(model, [4, 1, 5, 3, 7, 2, 4, 6], mem_len=9)


def test_equal_with_absolute_positions():
    """Absolute positions (the recurrence chapter's ablation): the cache matches."""
    model = make(seg_len=5, mem_len=7, pos_enc="absolute")
    run_both(model, [5] * 5)


def test_one_position_steps_after_a_prompt():
    """Generation: a prompt in segments, then one position per character (L = 1)."""
    model = make(seg_len=4, mem_len=4, same_length=True, clamp_len=6)
    M = model.cfg.mem_len + model.cfg.seg_len  # as txl_mini.sample.generate remembers
    run_both(model, [4, 4, 2] + [1] * 15, B=1, mem_len=M)
    run_both(model, [1] * 12, B=3, mem_len=5)  # no prompt at all, B > 1


def test_cache_is_trimmed_to_mem_len():
    model = make(seg_len=4, mem_len=6)
    x = torch.randint(0, 27, (2, 4))
    cache = None
    for step in range(5):
        cache = forward_cached(model, x, cache).cache
        assert cache.length == min(6, 4 * (step + 1))
        shapes = {k.shape for k in cache.keys + cache.values}
        assert shapes == {(2, 2, cache.length, 8)}


def test_untrimmed_cache_is_caught(monkeypatch):
    """The equality tests have teeth: without trimming they fail (more keys seen)."""
    monkeypatch.setattr(kv_cache, "_trim", lambda x, mem_len: x)
    with pytest.raises(AssertionError):
        run_both(make(seg_len=4, mem_len=3), [4] * 4)


def test_wrong_position_keys_are_caught(monkeypatch):
    """... and see the position term: keys scored against R from the wrong end fail."""
    real = kv_cache.cached_rel_keys
    monkeypatch.setattr(
        kv_cache, "cached_rel_keys", lambda *a: [t.flip(1) for t in real(*a)]
    )
    with pytest.raises(AssertionError):
        run_both(make(seg_len=4, mem_len=6), [4] * 3)


def test_switch_paths_with_cache_from_mems():
    """A standard memory turned into a cache mid-stream gives the same next segments."""
    model = make(seg_len=5, mem_len=7, pre_lnorm=True)
    x = torch.randint(0, 27, (2, 5), generator=torch.Generator().manual_seed(3))
    mems = None
    for _ in range(3):
        mems = model(x, mems=mems).mems
    cache = cache_from_mems(model, mems)
    for _ in range(3):
        out, ref = forward_cached(model, x, cache), model(x, mems=mems)
        torch.testing.assert_close(out.logits, ref.logits, rtol=0, atol=TOL)
        cache, mems = out.cache, ref.mems
    assert cache_from_mems(model, []).length == 0


def test_no_memory_and_position_table_reuse():
    """mem_len = 0 keeps nothing (logits as without memory); the W_kr R table is shared
    between calls and rebuilt only when a call needs more distances."""
    model = make(seg_len=4, mem_len=0)
    x = torch.randint(0, 27, (1, 4))
    out = forward_cached(model, x)
    assert out.cache.length == 0
    torch.testing.assert_close(out.logits, model(x).logits, rtol=0, atol=TOL)
    out2 = forward_cached(model, x, out.cache)
    torch.testing.assert_close(out2.logits, out.logits, rtol=0, atol=TOL)
    model = make(seg_len=4, mem_len=8)
    cache = forward_cached(model, x).cache
    table = cache.pos_keys[0]
    # built once for M + L = 12 distances, padded to 16 rows (fast_attention.padded)
    assert cache.pos_len == 12 and table.shape[1] == 16
    for _ in range(3):
        cache = forward_cached(model, x, cache).cache
    assert cache.pos_keys[0] is table  # K = 12 never outgrew it


def test_float32_fast_model_close():
    """The model the bench times (float32, fused path) agrees to float32 round-off."""
    torch.manual_seed(0)
    cfg = preset("tiny", seg_len=8, mem_len=16, same_length=True)
    model = TransformerXL(cfg).eval()
    x = torch.randint(0, 27, (2, 8))
    mems, cache = None, None
    for _ in range(4):
        ref, out = model(x, mems=mems), forward_cached(model, x, cache)
        torch.testing.assert_close(out.logits, ref.logits, rtol=1e-5, atol=1e-5)
        mems, cache = ref.mems, out.cache


def test_refusals():
    x = torch.randint(0, 27, (2, 4))
    with pytest.raises(TypeError, match="vanilla"):
        forward_cached(VanillaTransformer(preset("tiny")).eval(), x)
    with pytest.raises(RuntimeError, match="eval"):
        forward_cached(make().train(), x)
    cache = forward_cached(make(), x).cache
    with pytest.raises(ValueError, match="streams"):
        forward_cached(make(), x[:1], cache)
    assert isinstance(cache, KVCache)


def test_autocast_bf16_runs_and_keeps_its_position_table():
    """Under autocast (the bench's bf16 on a GPU; here the CPU) the cache stays in
    bf16, agrees with the standard path to bf16 round-off, and W_kr R is not rebuilt
    every call."""
    torch.manual_seed(0)
    model = TransformerXL(preset("tiny", seg_len=4, mem_len=8)).eval()
    x = torch.randint(0, 27, (2, 4))
    mems, cache = None, None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for step in range(4):
            ref, out = model(x, mems=mems), forward_cached(model, x, cache)
            torch.testing.assert_close(
                out.logits.float(), ref.logits.float(), rtol=0, atol=0.05
            )
            mems, cache = ref.mems, out.cache
            if step == 0:
                table = cache.pos_keys[0]
    assert cache.pos_keys[0] is table and cache.keys[0].dtype == torch.bfloat16


def test_same_length_predictions_do_not_depend_on_segment_length():
    """With same_length every query sees its last mem_len keys, so how a stream is cut
    into segments does not change any prediction: the cached path may run its own L
    (a Table 9 timing may run it so). Without same_length it would (the last check)."""
    x = torch.randint(0, 27, (2, 24), generator=torch.Generator().manual_seed(5))

    def logits(model, L, cached):
        outs, state = [], None
        for s in range(0, 24, L):
            if cached:
                out = forward_cached(model, x[:, s:s + L], state)
                state = out.cache
            else:
                out = model(x[:, s:s + L], mems=state)
                state = out.mems
            outs.append(out.logits)
        return torch.cat(outs, dim=1)  # (B, 24, V)

    model = make(seg_len=8, mem_len=6, same_length=True)
    ref = logits(model, 8, cached=False)
    for L in (1, 3, 12):
        torch.testing.assert_close(logits(model, L, True), ref, rtol=0, atol=TOL)
    plain = make(seg_len=8, mem_len=6)
    assert not torch.allclose(logits(plain, 3, True), logits(plain, 8, False))


@pytest.mark.parametrize(
    "changes",
    [{}, {"same_length": True}, {"pre_lnorm": True}, {"shaw_clip": 3},
     {"n_layer": 3, "pre_lnorm": True, "same_length": True, "shaw_clip": 2}],
    ids=lambda c: "+".join(c) or "plain",
)
@pytest.mark.parametrize("M", [3, 8])
def test_equal_with_shaw(changes, M):
    """Shaw et al.'s learned rows go through the cache like R: the same position keys
    (sliced from one table), clipped distances included."""
    model = make(seg_len=6, mem_len=M, pos_enc="shaw", **changes)
    with torch.no_grad():  # the rows start as the init's; make them distinct
        for b in model.blocks:
            b.attn.R_hat.normal_(0.0, 0.5)
    assert run_both(model, [6] * 6) == 5


@pytest.mark.parametrize("pos_enc", ["relative", "absolute", "shaw"])
@pytest.mark.parametrize("fast", [False, True], ids=["readable", "fast"])
def test_equal_with_every_pos_enc_and_ragged_steps(pos_enc, fast):
    """Every encoding, both attention paths, segments of any length and L = 1 steps."""
    model = make(seg_len=5, mem_len=7, pos_enc=pos_enc, fast_attn=fast,
                 pre_lnorm=pos_enc == "absolute")
    run_both(model, [5, 5, 2, 1, 1, 4, 1], mem_len=9)


def test_equal_with_evaluation_settings_as_arguments():
    """same_length and clamp_len passed per call (not written into cfg) reach both
    paths alike, and really change the prediction."""
    model = make(seg_len=6, mem_len=5)
    cfg = model.cfg
    run_both(model, [6] * 5, same_length=True, clamp_len=3)
    run_both(model, [6, 2, 1, 6], mem_len=8, clamp_len=2)
    assert model.cfg is cfg  # nothing was assigned into the frozen config
    x = torch.randint(0, 27, (1, 6))
    mems = model(x).mems
    plain = model(x, mems=mems).logits
    for kw in ({"same_length": True}, {"clamp_len": 2}):
        assert not torch.allclose(model(x, mems=mems, **kw).logits, plain)
    # the cache's position table follows the clamp it is given
    cache = forward_cached(model, x).cache
    out = forward_cached(model, x, cache, clamp_len=2)
    torch.testing.assert_close(out.logits, model(x, mems=mems, clamp_len=2).logits,
                               rtol=0, atol=TOL)


@pytest.mark.parametrize(
    "kw,match",
    [({"mem_len": -1}, "mem_len must be an int >= 0"),
     ({"mem_len": 2.5}, "mem_len must be an int >= 0"),
     ({"same_length": 1}, "same_length must be True or False"),
     ({"clamp_len": 0}, "clamp_len must be -1"),
     ({"clamp_len": -3}, "clamp_len must be -1")],
)
def test_bad_evaluation_settings_are_refused(kw, match):
    """A bad setting is one clear ValueError from both paths, before any work."""
    model = make()
    x = torch.randint(0, 27, (1, 4))
    with pytest.raises(ValueError, match=match):
        model(x, **kw)
    with pytest.raises(ValueError, match=match):
        forward_cached(model, x, **kw)


def test_settings_a_model_cannot_honour_are_refused():
    x = torch.randint(0, 27, (1, 4))
    for pos_enc in ("absolute", "shaw"):  # nothing sinusoid to clamp
        model = make(pos_enc=pos_enc)
        with pytest.raises(ValueError, match="clamp_len clamps the sinusoid R"):
            model(x, clamp_len=3)
        with pytest.raises(ValueError, match="clamp_len clamps the sinusoid R"):
            forward_cached(model, x, clamp_len=3)
    vanilla = VanillaTransformer(preset("tiny")).eval()
    with pytest.raises(ValueError, match="no memory"):
        vanilla(x, same_length=True)
    with pytest.raises(ValueError, match="clamp_len"):
        vanilla(x, clamp_len=3)
