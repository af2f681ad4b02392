"""txl_mini: a small, readable char-level Transformer-XL (Dai et al., 2019).

Which module serves which chapter of the txl-book:

  the model, bottom-up
    config.py          ModelConfig and its presets                         ch. 1, 6
    positional.py      sinusoids: R (relative) and U (absolute)             ch. 4
    attention.py       causal mask, rel_shift, terms (a)-(d), readable path ch. 3-5
    fast_attention.py  the same attention in fused kernels (the default)    ch. 5
    model.py           memory update, block, TransformerXL, vanilla model   ch. 1, 3, 6
  using a model
    text8.py, corpus.py,           text8, the offline corpus (its words in  ch. 1, 2
    corpus_words.py, data.py       corpus_words), vocabulary, batching
    train.py, evaluate.py          the training loop, bits per character    ch. 1, 2, 6
    sample.py, speed.py            generation, evaluation speed (Table 9)      ch. 6
    recl.py                        relative effective context length           ch. 7
    checkpoint.py, files.py        saving and loading models, atomic writes    ch. 6
    hf_port.py                     names and weights of the Hugging Face port  ch. 6
  tooling (no chapter imports it)
    cli/                           python -m txl_mini train|evaluate|sample|data|bench
"""

from .config import PRESETS, ModelConfig, preset
from .data import CharVocab, batchify, iter_segments
from .model import ModelOutput, TransformerXL, VanillaTransformer

__all__ = [
    "PRESETS", "CharVocab", "ModelConfig", "ModelOutput", "TransformerXL",
    "VanillaTransformer", "batchify", "iter_segments", "preset",
]
