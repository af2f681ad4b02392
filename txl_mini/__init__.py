"""txl_mini: a small, readable char-level Transformer-XL (Dai et al., 2019).

Each module is introduced by one chapter of the txl-book; see `book/intro.md` for the map.
"""
