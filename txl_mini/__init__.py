"""txl_mini: a small, readable char-level Transformer-XL (Dai et al., 2019).

Each module is introduced by one chapter of the txl-book; see `book/intro.md` for the map.
The names a reader uses most are importable from the package itself:

    from txl_mini import TransformerXL, VanillaTransformer, ModelConfig, preset, CharVocab

They are imported on first use (PEP 562), not here: some modules are also command-line tools
(`python -m txl_mini.data`), and runpy warns when such a module was imported before it runs.
"""

from importlib import import_module

_EXPORTS = {  # name -> the module that defines it
    "attention": ["causal_mask", "naive_rel_term", "rel_shift"],
    "config": ["PRESETS", "ModelConfig", "preset"],
    "corpus": ["OfflineCorpus", "make_offline_corpus", "offline_splits"],
    "data": ["CharVocab", "batchify", "iter_segments"],
    "evaluate": ["EvalResult", "bits_per_char", "evaluate_segments", "evaluate_sliding_window",
                 "loss_by_position"],
    "model": ["ModelOutput", "TransformerXL", "VanillaTransformer"],
    "positional": ["absolute_encoding", "relative_encoding"],
    "text8": ["DataError", "load_text8"],
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module 'txl_mini' has no attribute {name!r}")
    return getattr(import_module(f".{_HOME[name]}", __name__), name)


def __dir__():
    return sorted(set(globals()) | set(__all__))
