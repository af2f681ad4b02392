"""Fixtures the command-line tests share."""

import pytest
from cli_text import words


@pytest.fixture
def text(tmp_path):
    """A 2,000-character corpus file: 1,800 training characters, 16 streams x 112,
    14 segments of the tiny preset's L = 8."""
    path = tmp_path / "corpus.txt"
    path.write_text(words(2000))
    return str(path)
