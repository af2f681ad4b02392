"""The small English-like text the command-line tests train on (one copy for all)."""

WORDS = "the cat sat on a mat while seven dogs ran far away from home and back again "


def words(n_chars: int) -> str:
    """The first n_chars of WORDS repeated."""
    return (WORDS * (n_chars // len(WORDS) + 1))[:n_chars]
