"""Names and weights of the Hugging Face port of the authors' code.

The reference is Hugging Face `transformers`' TransfoXLLMHeadModel (last shipped in
4.57.6), a port of the authors' PyTorch code (github.com/kimiyoung/transformer-xl).
tests/test_hf_port.py copies every txl_mini weight into it with `to_hf_state_dict` and
checks that both models give the same per-token loss. This module only moves tensors and
strings: it never imports `transformers`.

The two codes differ in layout, not in arithmetic:
- the reference projects q, k_E and values with ONE matrix `qkv_net` (rows: W_q; W_kE;
  W_v); txl_mini keeps three, so the mapping concatenates them;
- the reference keeps its memory time-first, (M, B, C); txl_mini keeps it batch-first,
  (B, M, C);
- R has no parameters in either, but the reference stores the sinusoid frequencies as a
  buffer (`pos_emb.inv_freq`), computed in float32 when it is built; the mapping fills
  it in the dtype of the weights, so a float64 model gets float64 frequencies, as
  txl_mini's `sinusoid` does.
"""

from __future__ import annotations

import torch

from .config import ModelConfig
from .positional import inv_freq

HF_PORT = "transformers==4.57.6 TransfoXLLMHeadModel"
_T = "transformer."  # prefix of the reference's body inside its LM-head model


def _check(cfg: ModelConfig) -> None:
    """The reference implements the paper's model only: relative positions, post-LN."""
    if cfg.pos_enc != "relative":
        raise ValueError(
            "the reference has relative positions only; pos_enc must be 'relative'")
    if cfg.pre_lnorm:
        # txl_mini's pre-LN variant ends with a LayerNorm (ln_f); the reference's has
        # none.
        raise ValueError(
            "the reference's pre_lnorm has no final LayerNorm; use pre_lnorm=False")


def mapping_rows(cfg: ModelConfig, per_layer: bool = True
                 ) -> list[tuple[str, str, str]]:
    """Rows (paper symbol, txl_mini parameter, reference parameter) for config `cfg`.

    With `per_layer=False` layer-dependent names carry the placeholder `{i}` (one row
    per kind, a compact table). A slice such as `qkv_net.weight[0:HD]`
    means rows 0..HD-1 of the reference's fused matrix (HD = n_head * d_head). u and v
    appear once per layer in txl_mini's names even when shared (every block holds the
    same Parameter object); the reference then names the shared pair
    `transformer.r_w_bias` / `transformer.r_r_bias`.
    """
    _check(cfg)
    HD = cfg.n_head * cfg.d_head
    rows = [("E (embedding; scaled by sqrt(C))", "embed.weight",
             _T + "word_emb.emb_layers.0.weight")]
    layers = range(cfg.n_layer) if per_layer else ["{i}"]
    for i in layers:
        ours, ref = f"blocks.{i}.", f"{_T}layers.{i}."
        att = ref + "dec_attn."
        rows += [
            ("W_q", ours + "attn.W_q.weight", att + f"qkv_net.weight[0:{HD}]"),
            ("W_{k,E}", ours + "attn.W_ke.weight",
             att + f"qkv_net.weight[{HD}:{2 * HD}]"),
            ("W_v", ours + "attn.W_v.weight",
             att + f"qkv_net.weight[{2 * HD}:{3 * HD}]"),
            ("W_{k,R}", ours + "attn.W_kr.weight", att + "r_net.weight"),
            ("u", ours + "attn.u", (att if cfg.untie_r else _T) + "r_w_bias"),
            ("v", ours + "attn.v", (att if cfg.untie_r else _T) + "r_r_bias"),
            ("W_o (attention output)", ours + "attn.W_o.weight", att + "o_net.weight"),
            ("LayerNorm gain (after attention)", ours + "ln_attn.weight",
             att + "layer_norm.weight"),
            ("LayerNorm bias (after attention)", ours + "ln_attn.bias",
             att + "layer_norm.bias"),
            ("FF W_1", ours + "ff.c_fc.weight", ref + "pos_ff.CoreNet.0.weight"),
            ("FF b_1", ours + "ff.c_fc.bias", ref + "pos_ff.CoreNet.0.bias"),
            ("FF W_2", ours + "ff.c_proj.weight", ref + "pos_ff.CoreNet.3.weight"),
            ("FF b_2", ours + "ff.c_proj.bias", ref + "pos_ff.CoreNet.3.bias"),
            ("LayerNorm gain (after FF)", ours + "ln_ff.weight",
             ref + "pos_ff.layer_norm.weight"),
            ("LayerNorm bias (after FF)", ours + "ln_ff.bias",
             ref + "pos_ff.layer_norm.bias"),
        ]
    softmax = ("E (tied: the output softmax reuses it)" if cfg.tie_weights
               else "softmax weight")
    rows += [
        (softmax, "head.weight", "crit.out_layers.0.weight"),
        ("softmax bias", "head.bias", "crit.out_layers.0.bias"),
    ]
    return rows


def to_hf_state_dict(state_dict: dict, cfg: ModelConfig) -> dict[str, torch.Tensor]:
    """txl_mini's state_dict -> one with the reference's key names (load it strictly).

    Every reference key is produced exactly once; every txl_mini tensor is used. The
    shared u, v (untie_r=False) are written under the model-level key and under every
    layer's key, because the reference's layers hold the same Parameter objects and list
    them in its state_dict too.
    """
    _check(cfg)
    sd = state_dict
    out: dict[str, torch.Tensor] = {}
    for _, ours, ref in mapping_rows(cfg):
        if ".qkv_net.weight[" in ref:
            continue  # fused below
        out[ref] = sd[ours]
    for i in range(cfg.n_layer):
        ours, att = f"blocks.{i}.attn.", f"{_T}layers.{i}.dec_attn."
        # rows stacked in the order the reference's torch.chunk(w_heads, 3) splits them:
        # q, k, v
        out[att + "qkv_net.weight"] = torch.cat(
            [sd[ours + w] for w in ("W_q.weight", "W_ke.weight", "W_v.weight")], dim=0)
        if not cfg.untie_r:
            out[att + "r_w_bias"] = sd["blocks.0.attn.u"]
            out[att + "r_r_bias"] = sd["blocks.0.attn.v"]
    dtype = sd["embed.weight"].dtype
    device = sd["embed.weight"].device
    out[_T + "pos_emb.inv_freq"] = inv_freq(cfg.d_model, dtype, device)
    return out


def to_hf_mems(mems: list) -> list:
    """txl_mini memory, per layer (B, M, C) -> the reference's, per layer (M, B, C)."""
    return [m.transpose(0, 1).contiguous() for m in mems]


def from_hf_mems(mems: list) -> list:
    """The reference's memory, per layer (M, B, C) -> txl_mini's (B, M, C)."""
    return [m.transpose(0, 1).contiguous() for m in mems]
