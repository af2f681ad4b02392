"""txl_mini.TransformerXL against a reference implementation.

The reference is Hugging Face `transformers`' TransfoXLLMHeadModel, pinned to 4.57.6
(the last release that ships it) in requirements.txt as a TEST dependency; txl_mini
never imports it. Both models get the same char-level shape (cutoffs=[], div_val=1,
adaptive=False, tied embeddings, vocabulary 27) and the same weights, copied with
txl_mini.hf_port's documented mapping. They then read the same text as 4 consecutive
segments with memory, in float64, and must give the same per-token negative
log-likelihood, the same log-probabilities and the same memories, with same_length
on/off, clamp_len on/off, and u, v shared or per layer.

What it takes to run the reference in float64 (each is the reference's own code; said
here, not hidden):
- its sinusoid frequencies `pos_emb.inv_freq` are a buffer computed in float32 when the
  model is built (`model.double()` only widens the rounded values); the mapping
  overwrites the buffer with frequencies computed in float64, as txl_mini computes them
  (`to_hf_state_dict`).
- 4.57.6's TransfoXLModel.forward builds its distances with
  `torch.arange(..., dtype=torch.int64).type_as(dtype=word_emb.dtype)`, a call torch
  rejects (TypeError: type_as() needs `other`). The shim lets exactly that keyword form
  mean `.to(dtype)`, which is what the line intends: float distances K-1 ... 0 in the
  model's dtype.
- its masking step is written for float16 models: `attn_score.float().masked_fill(mask,
  finfo(attn_score.dtype).min)`. For a float64 model the fill value overflows float32
  (RuntimeError), and the scores would be rounded to float32. The shim makes `.float()`
  a no-op on float64 tensors, so the mask is applied in float64.
`reference_call_shim` does both, only while the reference runs; no other arithmetic of
the reference changes. With it the two models agree to float64 rounding (TOL = 1e-10);
a broken shift or swapped u and v misses that by many orders of magnitude (the last
tests show it, so the comparison cannot pass vacuously).
"""

from __future__ import annotations

import contextlib
import warnings

import pytest
import torch
import torch.nn.functional as F

from txl_mini import attention
from txl_mini.config import ModelConfig
from txl_mini.hf_port import (
    from_hf_mems,
    mapping_rows,
    to_hf_mems,
    to_hf_state_dict,
)
from txl_mini.model import TransformerXL

with warnings.catch_warnings():
    # the deprecated model announces its deprecation on import
    warnings.simplefilter("ignore")
    from transformers import TransfoXLConfig, TransfoXLLMHeadModel

# >= 3: the third segment's memory already holds states computed from memory
N_SEGMENTS = 4
TOL = 1e-10  # nats; float64 rounding through 3 layers and 4 segments is ~1e-14
BASE = ModelConfig(
    vocab_size=27, n_layer=3, n_head=2, d_head=8, d_model=16, d_inner=32, dropout=0.0,
    # M != L, so a wrong shift or window cannot line up by accident
    seg_len=8, mem_len=12,
)


@contextlib.contextmanager
def reference_call_shim():
    """While the reference runs: `t.type_as(dtype=d)` means `t.to(d)`, and `.float()`
    keeps float64 tensors float64 (see the module docstring for why each is needed)."""
    type_as, to_float = torch.Tensor.type_as, torch.Tensor.float

    def type_as_shim(self, other=None, *, dtype=None):
        if other is None and dtype is not None:
            return self.to(dtype)
        return type_as(self, other)

    def float_shim(self, *args, **kwargs):
        return self if self.dtype == torch.float64 else to_float(self, *args, **kwargs)

    torch.Tensor.type_as, torch.Tensor.float = type_as_shim, float_shim
    try:
        yield
    finally:
        # back to torch's own (from TensorBase)
        del torch.Tensor.type_as, torch.Tensor.float
        assert torch.Tensor.type_as is type_as and torch.Tensor.float is to_float


def build_pair(cfg: ModelConfig, seed: int = 0):
    """(txl_mini model, reference model), both float64, eval mode, with identical
    weights."""
    torch.manual_seed(seed)
    ours = TransformerXL(cfg)
    with torch.no_grad():
        # Larger-than-init random weights, so every term of the attention score matters.
        for name, p in ours.named_parameters():
            scale = 1.0 if name.endswith((".u", ".v")) else 0.3
            p.normal_(0.0, scale)
    ours = ours.double().eval()

    ref_cfg = TransfoXLConfig(
        vocab_size=cfg.vocab_size, cutoffs=[], div_val=1, adaptive=False,
        d_model=cfg.d_model, d_embed=cfg.d_model, n_head=cfg.n_head, d_head=cfg.d_head,
        d_inner=cfg.d_inner, n_layer=cfg.n_layer, mem_len=cfg.mem_len,
        clamp_len=cfg.clamp_len, same_length=cfg.same_length, untie_r=cfg.untie_r,
        pre_lnorm=cfg.pre_lnorm, dropout=0.0, dropatt=0.0,
        tie_word_embeddings=cfg.tie_weights,
        layer_norm_epsilon=1e-5,  # torch's nn.LayerNorm default, which txl_mini uses
    )
    with warnings.catch_warnings():
        # DeprecationWarning about its future output format
        warnings.simplefilter("ignore")
        ref = TransfoXLLMHeadModel(ref_cfg)
    ref = ref.double().eval()
    # strict: every reference tensor (the inv_freq buffer included) comes from
    # the mapping
    ref.load_state_dict(to_hf_state_dict(ours.state_dict(), cfg), strict=True)
    return ours, ref


def run_both(ours, ref, cfg: ModelConfig, seed: int = 1):
    """Per segment: (our NLL, reference NLL, our log-probs, reference log-probs, mems,
    mems)."""
    g = torch.Generator().manual_seed(seed)
    B, L = 2, cfg.seg_len
    text = torch.randint(0, cfg.vocab_size, (B, N_SEGMENTS * L + 1), generator=g)
    our_mems = None
    # The reference starts with zero-filled memory of length mem_len unless given one;
    # give it an EMPTY memory (M = 0), which is what txl_mini starts with.
    ref_mems = [torch.zeros(0, B, cfg.d_model, dtype=torch.float64)
                for _ in range(cfg.n_layer)]
    results = []
    with torch.no_grad():
        for s in range(N_SEGMENTS):
            x = text[:, s * L:(s + 1) * L]  # (B, L)
            y = text[:, s * L + 1:(s + 1) * L + 1]  # (B, L) next characters
            out = ours(x, mems=our_mems)
            our_mems = out.mems
            our_lp = F.log_softmax(out.logits, dim=-1)  # (B, L, V)
            with reference_call_shim():
                r = ref(input_ids=x, mems=ref_mems, return_dict=True)
            ref_mems = r.mems
            # (B, L, V): the reference returns log-probabilities
            ref_lp = r.prediction_scores
            our_nll = -our_lp.gather(-1, y[..., None])[..., 0]  # (B, L)
            ref_nll = -ref_lp.gather(-1, y[..., None])[..., 0]
            results.append(
                (our_nll, ref_nll, our_lp, ref_lp, our_mems, from_hf_mems(ref_mems)))
    return results


def max_nll_gap(results) -> float:
    return max((a - b).abs().max().item() for a, b, *_ in results)


CASES = [  # both attention paths: the readable one (chapters 3-5) and the fast default
    pytest.param(dict(same_length=sl, clamp_len=cl, untie_r=ut, fast_attn=fa),
                 id=f"same_length={sl}-clamp_len={cl}-untie_r={ut}-fast_attn={fa}")
    for sl in (False, True) for cl in (-1, 5) for ut in (False, True)
    for fa in (False, True)
]


@pytest.mark.parametrize("changes", CASES)
def test_same_nll_logprobs_and_memory_as_the_reference(changes):
    cfg = BASE.replace(**changes)
    ours, ref = build_pair(cfg)
    results = run_both(ours, ref, cfg)
    for s, (our_nll, ref_nll, our_lp, ref_lp, our_mems, ref_mems) in enumerate(results):
        torch.testing.assert_close(our_nll, ref_nll, rtol=0, atol=TOL,
                                   msg=f"NLL, segment {s}")
        torch.testing.assert_close(our_lp, ref_lp, rtol=0, atol=TOL,
                                   msg=f"log-probs, segment {s}")
        assert len(our_mems) == len(ref_mems) == cfg.n_layer
        for m, rm in zip(our_mems, ref_mems):
            assert m.shape == rm.shape == (
                2, min(cfg.mem_len, (s + 1) * cfg.seg_len), cfg.d_model)
            torch.testing.assert_close(m, rm, rtol=0, atol=TOL)
    # the losses really are different per token (not a degenerate all-equal case)
    assert results[-1][0].std() > 0.1


def test_shared_u_v_are_one_parameter_in_both_models():
    for untie in (False, True):
        cfg = BASE.replace(untie_r=untie)
        ours, ref = build_pair(cfg)
        ours_u = {id(b.attn.u) for b in ours.blocks}
        ref_u = {id(layer.dec_attn.r_w_bias) for layer in ref.transformer.layers}
        assert len(ours_u) == len(ref_u) == (cfg.n_layer if untie else 1)


def test_mapping_covers_every_parameter_once():
    for untie in (False, True):
        cfg = BASE.replace(untie_r=untie)
        rows = mapping_rows(cfg)
        ours_names = {r[1] for r in rows}
        model = TransformerXL(cfg)
        # every txl_mini tensor, nothing invented
        assert ours_names == set(model.state_dict())
        ref_sd = to_hf_state_dict(model.state_dict(), cfg)
        _, ref = build_pair(cfg)
        assert set(ref_sd) == set(ref.state_dict())
        for name, t in ref_sd.items():
            assert t.shape == ref.state_dict()[name].shape, name
    compact = mapping_rows(BASE, per_layer=False)
    assert len(compact) == 1 + 15 + 2 and all("{i}" in r[1] for r in compact[1:16])


def test_mapping_rejects_what_the_reference_lacks():
    with pytest.raises(ValueError, match="pre_lnorm"):
        mapping_rows(BASE.replace(pre_lnorm=True))
    with pytest.raises(ValueError, match="relative"):
        mapping_rows(BASE.replace(pos_enc="absolute"))


def test_memory_layout_round_trip():
    mems = [torch.randn(2, 5, 16) for _ in range(3)]  # (B, M, C)
    ref = to_hf_mems(mems)
    assert ref[0].shape == (5, 2, 16)
    assert all(torch.equal(a, b) for a, b in zip(mems, from_hf_mems(ref)))


# --- the comparison is sensitive: the mistakes the efficient-shift and
# relative-encoding chapters warn about are caught


def test_a_broken_shift_is_caught(monkeypatch):
    # the readable path calls rel_shift; the fast path inlines the same shift as a view
    # (tests/test_fast.py proves the two paths equal, and the cases above run both)
    cfg = BASE.replace(same_length=True, clamp_len=5, fast_attn=False)
    ours, ref = build_pair(cfg)
    assert max_nll_gap(run_both(ours, ref, cfg)) < TOL

    # the classic mistake: forget to drop the first re-read row
    def shift_off_by_one(x):
        *batch, L, K = x.shape
        x = torch.cat([x.new_zeros(*batch, L, 1), x], dim=-1).view(*batch, K + 1, L)
        return x[..., :-1, :].reshape(*batch, L, K)

    monkeypatch.setattr(attention, "rel_shift", shift_off_by_one)
    assert max_nll_gap(run_both(ours, ref, cfg)) > 1e3 * TOL


@pytest.mark.parametrize("untie_r", [False, True])
def test_swapped_u_and_v_are_caught(untie_r):
    cfg = BASE.replace(untie_r=untie_r)
    ours, ref = build_pair(cfg)
    with torch.no_grad():
        for block in ours.blocks:
            if untie_r or block is ours.blocks[0]:  # shared: swap the one pair once
                u = block.attn.u.clone()
                block.attn.u.copy_(block.attn.v)
                block.attn.v.copy_(u)
    assert max_nll_gap(run_both(ours, ref, cfg)) > 1e3 * TOL
