"""txl_mini: a small, readable char-level Transformer-XL (Dai et al., 2019).

Which module serves which chapter of the txl-book. This map is the one place that ties
code to chapter numbers (they shift as chapters split); docstrings do not repeat it,
save the few whose source a chapter shows, until that chapter is next re-recorded.

  the model, bottom-up
    config.py            ModelConfig and its presets                      ch. 1, 6
    positional.py        sinusoids: R (relative) and U (absolute)         ch. 4
    attention.py         causal mask, rel_shift, terms (a)-(d): readable  ch. 3-5
    fast_attention.py    the same attention fused: kv, attend (default)   ch. 5, 6
    model.py             memory update, block, TransformerXL, vanilla     ch. 1, 3, 6
                         (evaluation settings: call arguments)
  using a model
    text8.py             text8: download, checksum, splits                ch. 1
    corpus.py            the offline corpus (its words: corpus_words.py)  ch. 2
    data.py              vocabulary, stream batching, segments            ch. 1
    train.py             the training loop                                ch. 1, 6
    evaluate.py          bits per character, loss by position             ch. 1, 2, 6
    reach.py             the farthest dependency, for any memory length   ch. 3
    kv_cache.py          cached keys and values: bookkeeping around Block ch. 6
    sample.py, speed.py  generation; evaluation speed (Table 9)           ch. 6
    recl.py              relative effective context length                ch. 7
    checkpoint.py        saving and loading models (files.py: atomic)     ch. 6
    hf_port.py           names and weights of the Hugging Face port       ch. 6
  tooling (no chapter imports it)
    cli/                 python -m txl_mini train|evaluate|sample|data|bench
"""

from importlib import import_module
from typing import TYPE_CHECKING

# name -> module. Loaded on first use, not here: `python -m txl_mini` imports this
# package before its command line can catch a Ctrl-C, and torch takes a second to load.
_EXPORTS = {
    "PRESETS": "config", "ModelConfig": "config", "preset": "config",
    "CharVocab": "data", "batchify": "data", "iter_segments": "data",
    "ModelOutput": "model", "TransformerXL": "model", "VanillaTransformer": "model",
}
__all__ = [
    "PRESETS", "CharVocab", "ModelConfig", "ModelOutput", "TransformerXL",
    "VanillaTransformer", "batchify", "iter_segments", "preset",
]

if TYPE_CHECKING:  # what editors and type checkers see
    from .config import PRESETS, ModelConfig, preset
    from .data import CharVocab, batchify, iter_segments
    from .model import ModelOutput, TransformerXL, VanillaTransformer


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value  # the next lookup is an ordinary one
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
