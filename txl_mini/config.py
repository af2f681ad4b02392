"""Model configuration and named presets; every chapter uses one.

Shape letters used across txl_mini: B batch, L segment length, M memory length,
K = M + L keys, H heads, D head dim, C d_model, V vocab.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

POS_ENCODINGS = ("relative", "absolute", "shaw")


@dataclass(frozen=True)
class ModelConfig:
    """Every hyper-parameter of TransformerXL and of the vanilla baseline.

    Ablations are switches: `mem_len=0` removes recurrence, `pos_enc="absolute"`
    replaces the relative encoding by sinusoids added to the input, as in
    the vanilla Transformer, and `pos_enc="shaw"` by the paper's relative baseline,
    Shaw et al. (2018): learned embeddings of clipped distances, terms (a), (b) only.
    """

    vocab_size: int = 27  # text8: a-z and space
    # N in the paper; memory reach grows by one segment per layer
    n_layer: int = 4
    n_head: int = 4  # H
    d_head: int = 32  # D; H * D need not equal C, the projections map between them
    d_model: int = 128  # C, width of the residual stream and of the embeddings
    d_inner: int = 512  # hidden width of the position-wise feed-forward net
    dropout: float = 0.1  # on embeddings, R, attention output and feed-forward
    dropatt: float = 0.0  # on attention probabilities
    seg_len: int = 64  # L, tokens per training segment
    mem_len: int = 64  # M, cached hidden states per layer; 0 turns recurrence off
    # relative distances above this share one R row; -1 never clamps
    clamp_len: int = -1
    # every query sees the same number of keys (eval trick, §3.3 fn)
    same_length: bool = False
    # "relative" (the paper), "absolute" (the ablation / vanilla) or "shaw" (the
    # paper's relative baseline, Table 6 and RECL; see MultiHeadAttention)
    pos_enc: str = "relative"
    # Shaw's k: distances above it share one learned row; -1 = L + M - 1, one row per
    # distance training sees, as in the paper's own baseline (why: MultiHeadAttention)
    shaw_clip: int = -1
    # one u, v per layer; the paper's equation and text8 scripts share one pair
    untie_r: bool = False
    # fused kernels (bench); False = the readable code the chapters teach
    fast_attn: bool = True
    pre_lnorm: bool = False  # the paper is post-LN; pre-LN trains more easily when deep
    tie_weights: bool = True  # output softmax shares the input embedding matrix
    init_std: float = 0.02  # normal init of weights, as in the reference implementation

    def __post_init__(self) -> None:
        positive = (
            "vocab_size", "n_layer", "n_head", "d_head", "d_model", "d_inner", "seg_len"
        )
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(
                    f"ModelConfig.{name} must be >= 1, got {getattr(self, name)}"
                )
        if self.vocab_size < 2:
            raise ValueError(
                f"ModelConfig.vocab_size must be >= 2, got {self.vocab_size}"
            )
        if self.mem_len < 0:
            raise ValueError(
                "ModelConfig.mem_len must be >= 0 (0 = no memory), "
                f"got {self.mem_len}"
            )
        if self.clamp_len < -1 or self.clamp_len == 0:
            raise ValueError(
                "ModelConfig.clamp_len must be -1 (off) or >= 1, "
                f"got {self.clamp_len}"
            )
        if self.shaw_clip < -1 or self.shaw_clip == 0:
            # k = 0 puts every distance in one row: no position information at all
            raise ValueError(
                "ModelConfig.shaw_clip must be -1 (L + M - 1) or >= 1, "
                f"got {self.shaw_clip}"
            )
        if self.pos_enc == "shaw" and self.clamp_len != -1:
            # clamp_len clamps the sinusoid R, which Shaw's encoding has not
            raise ValueError(
                "ModelConfig.clamp_len does nothing with ModelConfig.pos_enc "
                "'shaw'; its clipping distance is ModelConfig.shaw_clip"
            )
        for name in ("dropout", "dropatt"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(
                    f"ModelConfig.{name} must be in [0, 1), got {getattr(self, name)}"
                )
        if not (math.isfinite(self.init_std) and self.init_std > 0):
            # normal_ refuses a negative std; nan or inf weights train nothing
            raise ValueError(
                "ModelConfig.init_std must be a finite number > 0, "
                f"got {self.init_std}"
            )
        if self.pos_enc not in POS_ENCODINGS:
            raise ValueError(
                f"ModelConfig.pos_enc must be one of {POS_ENCODINGS}, "
                f"got {self.pos_enc!r}"
            )
        if self.d_model % 2:
            # sinusoids come in sin/cos pairs, one pair per frequency
            raise ValueError(
                "ModelConfig.d_model must be even for sinusoid encodings, "
                f"got {self.d_model}"
            )

    def replace(self, **changes) -> "ModelConfig":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


# Named presets. `tiny` is for tests, `book` for the chapters on a 2-core CPU,
# `text8_base` / `text8_large` are the paper's text8 settings
# (Dai et al., 2019, Appendix / code).
PRESETS: dict[str, ModelConfig] = {
    "tiny": ModelConfig(
        n_layer=2, n_head=2, d_head=8, d_model=16, d_inner=32, dropout=0.0,
        seg_len=8, mem_len=8,
    ),
    "book": ModelConfig(
        n_layer=4, n_head=4, d_head=32, d_model=128, d_inner=512, dropout=0.1,
        seg_len=64, mem_len=64,
    ),
    "text8_base": ModelConfig(
        n_layer=12, n_head=8, d_head=64, d_model=512, d_inner=2048, dropout=0.1,
        seg_len=512, mem_len=512,
    ),
    "text8_large": ModelConfig(
        n_layer=24, n_head=8, d_head=128, d_model=1024, d_inner=3072, dropout=0.15,
        seg_len=768, mem_len=768,
    ),
}


def preset(name: str, **changes) -> ModelConfig:
    """The named preset, optionally with fields changed: `preset("book", mem_len=0)`."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    return PRESETS[name].replace(**changes)
