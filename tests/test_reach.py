"""reach(N, L, M) equals the farthest dependency measured by perturbation."""

import doctest
import math

import pytest
import torch

import txl_mini.reach
from txl_mini.config import preset
from txl_mini.model import TransformerXL
from txl_mini.reach import reach


@torch.no_grad()
def measured_changes(n_layer, seg_len, mem_len, n_segments, init_std=0.3, **changes):
    """change[p, q] = max |change of the logits at q| when input p changes: (T, T).

    A real TransformerXL in float64, eval mode, dropout 0, reads the stream segment by
    segment carrying its memory: once as drawn, and once for every p with character p
    changed. Each stream runs alone (batch 1): in a batch, the same numbers in another
    row can round differently (by 1e-15, seen here), which would fake a dependency.
    An entry that is exactly 0.0 means that no path leads from input p to prediction q.
    """
    torch.manual_seed(0)
    # init_std 0.3 makes every effect within reach larger than 1e-4 here; at the
    # default 0.02 every layer hop shrinks an effect about 1000-fold (see below)
    cfg = preset("tiny", n_layer=n_layer, seg_len=seg_len, mem_len=mem_len,
                 dropout=0.0, init_std=init_std, **changes)
    model = TransformerXL(cfg).double().eval()
    L, T = seg_len, n_segments * seg_len
    gen = torch.Generator().manual_seed(1)
    stream = torch.randint(0, cfg.vocab_size, (T,), generator=gen)
    x = stream.repeat(T + 1, 1)  # (T + 1, T): row 0 as drawn, row 1 + p changed at p
    p = torch.arange(T)
    x[1 + p, p] = (x[1 + p, p] + 1) % cfg.vocab_size
    logits = []
    for row in x:
        row_logits, mems = [], None
        for s in range(0, T, L):  # segment after segment, with memory
            out = model(row[None, s:s + L], mems=mems)
            row_logits.append(out.logits[0])  # (L, V)
            mems = out.mems
        logits.append(torch.cat(row_logits))  # (T, V)
    logits = torch.stack(logits)  # (T + 1, T, V)
    assert logits.dtype == torch.float64
    return (logits[1:] - logits[:1]).abs().amax(dim=-1)  # (T, T): [p, q]


# (N, L, M): M < L, M > L, M not a multiple of L, M = k L, M = 0; N = 1 ... 5
CONFIGS = [
    (1, 8, 5), (2, 8, 3), (3, 8, 5), (5, 4, 3),  # M < L
    (2, 8, 12), (3, 4, 6), (4, 4, 7), (2, 4, 13),  # M > L, not a multiple
    (2, 32, 8), (2, 32, 16),  # 71 and 79, where N M + L - 1 says 47 and 63
    (1, 8, 8), (3, 4, 8), (4, 4, 4),  # M a multiple of L: N M + L - 1
    (1, 8, 0), (3, 8, 0), (4, 4, 0),  # no memory: L - 1 at any depth
]


@pytest.mark.parametrize("N,L,M", CONFIGS)
def test_reach_equals_perturbation(N, L, M):
    expected = reach(N, L, M)
    # one segment more than the reach needs, so every memory on the way is full and
    # distance reach + 1 exists in the stream
    n_segments = math.ceil((expected + 1) / L) + 1
    T = n_segments * L
    change = measured_changes(N, L, M, n_segments)  # (T, T)
    p = torch.arange(T)
    distance = p[None, :] - p[:, None]  # [p, q]: q - p
    assert (change[distance < 0] == 0).all()  # causal: nothing changes before p
    # the last query of the last segment depends on every distance up to the reach,
    # and on nothing beyond it: compared with exactly zero, no tolerance
    last = change[:, T - 1].flip(0)  # (T,): [d] for the input d before the query
    assert (last[: expected + 1] > 0).all()
    assert (last[expected + 1:] == 0).all()
    assert expected + 1 < T  # "beyond" was really measured
    # and no query anywhere in the stream depends on anything farther back
    farthest = int(distance[change > 0].max())
    assert farthest == expected


@pytest.mark.parametrize("N,L,M", [(2, 8, 12), (3, 8, 5)])
@pytest.mark.parametrize("changes", [{"fast_attn": False}, {"pos_enc": "absolute"}])
def test_reach_holds_for_readable_path_and_absolute_positions(N, L, M, changes):
    # reach is wiring (masks and memory): the readable attention path and absolute
    # positions give the same frontier as the default fused relative model
    expected = reach(N, L, M)
    n_segments = math.ceil((expected + 1) / L) + 1
    change = measured_changes(N, L, M, n_segments, **changes)
    last = change[:, -1].flip(0)
    assert (last[: expected + 1] > 0).all()
    assert (last[expected + 1:] == 0).all()


@pytest.mark.parametrize("N,L,M", [(5, 4, 3), (4, 4, 7)])
def test_tiny_effects_of_deep_models_are_real(N, L, M):
    # At the default init the farthest effects of a deep model are about 1e-14 in
    # float64: small, but real. Exact zero separates "no path" from "a small path";
    # a tolerance of 1e-12 would put the measured reach several characters short.
    expected = reach(N, L, M)
    n_segments = math.ceil((expected + 1) / L) + 1
    last = measured_changes(N, L, M, n_segments, init_std=0.02)[:, -1].flip(0)
    assert last[expected] < 1e-11  # tiny (about 1e-14 and 6e-13 when recorded)
    assert (last[: expected + 1] > 0).all()
    assert (last[expected + 1:] == 0).all()
    farthest_above_tolerance = int((last > 1e-12).nonzero().max())
    assert farthest_above_tolerance < expected


def test_reach_where_n_m_plus_l_is_wrong_and_special_cases():
    assert reach(2, 32, 8) == 71
    assert reach(2, 32, 16) == 79
    assert reach(2, 8, 12) == 35
    for N in range(1, 6):
        for L in range(1, 17):
            assert reach(N, L, 0) == L - 1  # no memory: the segment only
            for k in range(1, 4):
                assert reach(N, L, k * L) == N * k * L + L - 1  # M = k L
            for M in range(3 * L + 1):
                # the closed form of the docstring
                assert reach(N, L, M) == L - 1 + M + (N - 1) * L * math.ceil(M / L)


def test_reach_docstring_example():
    failures, tried = doctest.testmod(txl_mini.reach)
    assert tried >= 1 and failures == 0


@pytest.mark.parametrize(
    "args,error,match",
    [
        ((0, 8, 8), ValueError, "n_layer must be >= 1"),
        ((2, 0, 8), ValueError, "seg_len must be >= 1"),
        ((2, 8, -1), ValueError, "mem_len must be >= 0"),
        ((2.0, 8, 8), TypeError, "n_layer must be an integer"),
        ((2, 8, 8.5), TypeError, "mem_len must be an integer"),
        ((True, 8, 8), TypeError, "n_layer must be an integer"),
    ],
)
def test_reach_rejects_bad_arguments(args, error, match):
    with pytest.raises(error, match=match):
        reach(*args)
