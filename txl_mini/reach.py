"""How far back a Transformer-XL prediction can reach, for any memory length (ch. 3).

Shapes and symbols: N layers, L segment length, M memory length.
"""

from __future__ import annotations

import operator


def _checked(name: str, value, least: int) -> int:
    """value as an int (numpy ints too), or a clear error."""
    # bool is an int in Python, but reach(True, ...) is surely a mistake
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None
    if value < least:
        raise ValueError(f"{name} must be >= {least}, got {value}")
    return value


def reach(n_layer: int, seg_len: int, mem_len: int) -> int:
    """The farthest dependency, in characters back from a query, of an N-layer model.

    Chapter 3 derives it. Number positions globally, segment s covering s*L ... s*L+L-1.
    A layer's state at position p is computed in segment s = p // L, whose queries see
    the layer below from the start of that segment's memory, s*L - M, up to p. Start at
    the last query of a segment, p = T*L + L - 1, and step down N layers with
    p -> (p // L) * L - M. The first step lands M before the query's segment; each
    further step goes from segment s to s*L - M, which lies ceil(M / L) segments before
    s. So the segment starts move back L * ceil(M / L) per step, the last step ends M
    before one of them, and the distance from the query is

        reach = (L - 1) + M + (N - 1) * L * ceil(M / L).

    For M = k*L this is N*M + L - 1; for M = 0 it is L - 1 at any depth. It assumes
    the memory is full (the stream is long enough) and the plain causal mask
    (`same_length=False`). Reach is what the wiring allows, not what a trained model
    uses (chapter 7 measures that).

    >>> reach(2, 32, 8), reach(2, 32, 16), reach(2, 8, 12), reach(4, 8, 0)
    (71, 79, 35, 7)
    """
    n_layer = _checked("n_layer", n_layer, 1)
    L = _checked("seg_len", seg_len, 1)
    M = _checked("mem_len", mem_len, 0)
    # The last query of segment 0. Earlier text sits at negative positions (a long
    # stream, so every memory is full); // floors, so p // L is still p's segment.
    query = p = L - 1
    for _ in range(n_layer):  # one layer down: back to the start of p's memory
        p = p // L * L - M
    return query - p
