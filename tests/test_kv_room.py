"""The cache's room and the padded position keys (txl_mini.kv_cache.Room,
txl_mini.fast_attention.padded): speed-ups that must not change a single number.

- `attend` reads (b) + (d) out of a product with Kp = padded(K + 1) columns; the fused
  path equals the readable one (float64, forward and gradients) for pads of 1 to 16
  columns, B > 1, with and without same_length.
- The cache writes new keys and values into room after the kept ones instead of
  copying them: it equals the standard path across many rooms (generation, L = 1),
  reuses one room while it lasts, never changes a cache it handed out (a branch from
  an older cache gets the same numbers as a fresh run), and follows a dtype change.
"""

import pytest
import torch
from test_kv_cache import make, run_both

from txl_mini.attention import causal_mask
from txl_mini.config import preset
from txl_mini.fast_attention import FastAttention, padded
from txl_mini.kv_cache import forward_cached
from txl_mini.model import TransformerXL


def test_padded_rounds_up_to_16():
    assert [padded(n) for n in (1, 15, 16, 17, 32, 33, 3929)] == [
        16, 16, 16, 32, 32, 48, 3936]


@pytest.mark.parametrize("mem_len", [7, 8, 22, 23, 24])  # K + 1 = 16, 17, 31, 32, 33
@pytest.mark.parametrize("same_length", [False, True])
@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
def test_fast_equals_readable_for_every_pad(mem_len, same_length, train):
    """K = 8 + mem_len keys and Kp - K = 1, 16, 2, 1, 16 pad rows: the logits of a
    segment with full memory and every gradient agree in float64."""
    cfg = preset("tiny", seg_len=8, mem_len=mem_len, same_length=same_length,
                 dropout=0.0, dropatt=0.0)
    torch.manual_seed(0)
    fast = TransformerXL(cfg.replace(fast_attn=True)).double().train(train)
    ref = TransformerXL(cfg.replace(fast_attn=False)).double().train(train)
    ref.load_state_dict(fast.state_dict())
    x = torch.randint(0, 27, (3, 8 * 5), generator=torch.Generator().manual_seed(1))
    outs = []
    for model in (fast, ref):
        mems = None
        for s in range(4):  # memory full from the second segment on (M <= 3 * 8)
            seg, nxt = x[:, 8 * s:8 * s + 8], x[:, 8 * s + 1:8 * s + 9]
            out = model(seg, targets=nxt, mems=mems)
            mems = out.mems
        out.loss.backward()
        grads = {n: p.grad for n, p in model.named_parameters()}
        outs.append((out.logits.detach(), grads))
    (lf, gf), (lr, gr) = outs
    torch.testing.assert_close(lf, lr, rtol=0, atol=1e-10)
    for name in gr:
        torch.testing.assert_close(gf[name], gr[name], rtol=0, atol=1e-10, msg=name)


def test_the_pad_rows_can_hold_anything():
    """attend with Kp = K + 1 + 15 rows, the pad filled with large random numbers,
    gives what it gives with zeros there: the pad meets only masked entries."""
    torch.manual_seed(0)
    attn = FastAttention(preset("tiny")).double().eval()
    H, B, L, M, D = attn.n_head, 2, 5, 11, attn.d_head
    K = M + L  # 16: K + 1 = 17, so 15 pad rows more than rel_shift's one
    q, k, v = (torch.randn(H, B, n, D, dtype=torch.float64) for n in (L, K, K))
    r = torch.randn(H, padded(K + 1), D, dtype=torch.float64)
    r[:, :padded(K + 1) - K] = 0.0
    noisy = r.clone()
    noisy[:, :padded(K + 1) - K] = 1e3 * torch.randn(H, padded(K + 1) - K, D)
    for mask in (causal_mask(L, M), causal_mask(L, M, window=M)):
        torch.testing.assert_close(attn.attend(q, k, v, noisy, mask),
                                   attn.attend(q, k, v, r, mask), rtol=0, atol=1e-12)


def test_cache_equals_standard_path_across_many_rooms():
    """Generation-like: 150 segments of one position, so the cache moves to a new room
    (64 positions of spare each) twice, and segments of 9 after it."""
    model = make(seg_len=4, mem_len=5, same_length=True, clamp_len=6)
    assert run_both(model, [1] * 150 + [9, 9], B=2) == 151


def test_room_is_reused_while_it_lasts():
    """Segments of L = 4 with 8 * max(L, 8) = 64 positions of spare: a new room (one
    copy of the kept keys) only every 16 segments; between, the caches are views of one
    buffer."""
    model = make(seg_len=4, mem_len=6)
    x = torch.randint(0, 27, (2, 4))
    cache, rooms = None, []
    for _ in range(40):
        cache = forward_cached(model, x, cache).cache
        if not rooms or cache.room is not rooms[-1]:
            rooms.append(cache.room)
        storage = cache.room.bufs[0].untyped_storage()
        assert cache.keys[0].untyped_storage().data_ptr() == storage.data_ptr()
    assert len(rooms) == 3  # rooms made at segments 1, 17 and 33


def test_an_older_cache_is_never_changed():
    """A branch from a cache that is no longer the newest in its room gives what a
    fresh run of the same segments gives (it must not read the newer keys), and every
    cache of a chain that runs past its room's end keeps its numbers."""
    model = make(seg_len=4, mem_len=6)
    g = torch.Generator().manual_seed(3)
    xs = [torch.randint(0, 27, (1, 4), generator=g) for _ in range(25)]
    base = None
    for x in xs[:3]:
        base = forward_cached(model, x, base).cache
    forward_cached(model, xs[3], base)  # now the room's newest keys are not base's
    branch = forward_cached(model, xs[4], base).logits
    fresh = None
    for x in xs[:3] + [xs[4]]:
        out = forward_cached(model, x, fresh)
        fresh = out.cache
    assert torch.equal(branch, out.logits)
    chain, kept = [fresh], []
    for x in xs[5:]:  # 20 segments of 4: past the 64 positions of a room
        kept.append([t.clone() for t in chain[-1].keys + chain[-1].values])
        chain.append(forward_cached(model, x, chain[-1]).cache)
    assert len({id(c.room) for c in chain}) > 1
    for cache, saved in zip(chain, kept):
        assert all(torch.equal(a, b) for a, b in zip(cache.keys + cache.values, saved))


def test_dtype_change_moves_to_a_new_room():
    """A float32 cache continued under bf16 autocast: the new keys go into a bf16
    room (as torch.cat's old .to(dtype) did), not into the float32 buffer."""
    torch.manual_seed(0)
    model = TransformerXL(preset("tiny", seg_len=4, mem_len=8)).eval()
    x = torch.randint(0, 27, (2, 4))
    cache = forward_cached(model, x).cache
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = forward_cached(model, x, cache)
        ref = model(x, mems=model(x).mems)
    assert out.cache.keys[0].dtype == torch.bfloat16
    assert out.cache.room is not cache.room
    torch.testing.assert_close(out.logits.float(), ref.logits.float(),
                               rtol=0, atol=0.05)
