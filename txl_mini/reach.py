"""How far back a Transformer-XL prediction can reach, for any memory length.

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
    """The farthest dependency of an N-layer model, in characters.

    Number positions globally; segment s covers s*L ... s*L + L - 1. A
    layer's state at position p is computed in segment s = p // L, whose
    queries see the layer below from s*L - M, the start of that
    segment's memory, up to p. Start at the last query of a segment,
    p = T*L + L - 1, and step down N layers with p -> (p // L) * L - M.
    The first step lands M before the query's segment. Each further step
    starts at some s*L - M, which lies in segment s - ceil(M / L), and
    ends M before that segment: it moves back L * ceil(M / L). The
    reach, the distance from the query to where the N steps end, is

        (L - 1) + M + (N - 1) * L * ceil(M / L).

    For M = k*L that is N*M + L - 1; for M = 0 it is L - 1 at any depth.
    It assumes a full memory (a long enough stream) and the plain causal
    mask (same_length=False). It is what the wiring allows, not what a
    trained model uses (chapters 4 and 7).

    >>> reach(2, 32, 8), reach(2, 32, 16), reach(2, 8, 12)
    (71, 79, 35)
    >>> reach(4, 8, 0)
    7
    """
    n_layer = _checked("n_layer", n_layer, 1)
    L = _checked("seg_len", seg_len, 1)
    M = _checked("mem_len", mem_len, 0)
    # The last query of segment 0. Earlier text sits at negative
    # positions (a long stream: every memory is full); // floors, so
    # p // L is still the segment of p.
    query = p = L - 1
    for _ in range(n_layer):  # down a layer, to the start of p's memory
        p = p // L * L - M
    return query - p
