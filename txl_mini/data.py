"""Data: a 27-symbol char vocabulary, the paper's stream batching, segments.

text8 itself is loaded by `txl_mini.text8`; the offline corpus with planted long-range
dependencies is `txl_mini.corpus`. `python -m txl_mini data --help` fetches
and verifies text8 or writes an offline corpus.
"""
from __future__ import annotations

if __name__ == "__main__":  # run as a file, before its imports fail: say where to go
    raise SystemExit("use: python -m txl_mini data ...")

from pathlib import Path
from typing import Iterator, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from .corpus import BOOK_CORPORA, offline_splits
from .text8 import TEXT8_CHARS, DataError, Splits, load_text8, split_text8

# --------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------

def normalize(text: str) -> str:
    """ASCII-lowercase, and map every other character outside a-z to a space, as text8
    did. One character in, one character out, so positions in `text` stay
    valid."""
    raw = np.frombuffer(text.encode("latin-1", errors="replace"), dtype=np.uint8).copy()
    raw[(raw >= 65) & (raw <= 90)] += 32  # A-Z -> a-z
    raw[(raw < 97) | (raw > 122)] = 32  # everything else -> space
    return raw.tobytes().decode("ascii")


class CharVocab:
    """The 27 text8 symbols, in `TEXT8_CHARS` order: space=0, a=1 .. z=26."""

    def __init__(self, chars: str = TEXT8_CHARS):
        if len(set(chars)) != len(chars) or max(map(ord, chars)) > 255:
            raise ValueError("chars must be distinct single-byte characters")
        self.chars = chars
        # A byte -> id table makes encoding 100M chars one numpy gather instead of a
        # Python loop.
        self._lut = np.full(256, -1, dtype=np.int16)
        self._lut[[ord(c) for c in chars]] = np.arange(len(chars))
        self._itos = np.frombuffer(chars.encode("latin-1"), dtype=np.uint8)

    def __len__(self) -> int:
        return len(self.chars)

    def __repr__(self) -> str:
        return f"CharVocab({self.chars!r})"

    def encode(self, text: str, unknown: str = "error") -> torch.Tensor:
        """text (N chars) -> LongTensor (N,) of ids.

        unknown="error" raises ValueError naming the first unknown character and its
        position; unknown="space" maps every unknown character to the space id instead.
        """
        if unknown not in ("error", "space"):
            raise ValueError(f"unknown must be 'error' or 'space', not {unknown!r}")
        # latin-1 with errors="replace" gives exactly one byte per character ('?' for
        # the rest), so a byte index is a character index.
        raw = np.frombuffer(text.encode("latin-1", errors="replace"), dtype=np.uint8)
        ids = self._lut[raw]  # (N,)
        bad = ids < 0
        if bad.any():
            if unknown == "error":
                pos = int(bad.argmax())
                raise ValueError(f"character {text[pos]!r} at position {pos} is not in "
                                 f"the vocabulary {self.chars!r}; use normalize(text) "
                                 "or encode(text, unknown='space')")
            ids = np.where(bad, self._lut[ord(" ")], ids)
        return torch.from_numpy(ids.astype(np.int64))

    def decode(self, ids: Union[torch.Tensor, Sequence[int], np.ndarray]) -> str:
        """ids (N,) as tensor, array or list -> text of N chars."""
        if isinstance(ids, torch.Tensor):
            ids = ids.detach().cpu().numpy()
        arr = np.asarray(ids, dtype=np.int64).reshape(-1)
        if arr.size and (arr.min() < 0 or arr.max() >= len(self)):
            raise ValueError(f"ids must lie in [0, {len(self)}), got range "
                             f"[{arr.min()}, {arr.max()}]")
        return self._itos[arr].tobytes().decode("latin-1")


# --------------------------------------------------------------------------------------
# Stream batching and segments
# --------------------------------------------------------------------------------------

def batchify(tokens: torch.Tensor, batch_size: int) -> torch.Tensor:
    """(N,) -> (B, N // B): B contiguous streams, row b = tokens[b*T:(b+1)*T].

    The remainder N % B is dropped. Works for any 1-D tensor, e.g. a dependency mask, so
    it stays aligned with the tokens.
    """
    if tokens.dim() != 1:
        raise ValueError(f"tokens must be 1-D, got shape {tuple(tokens.shape)}")
    if batch_size < 1 or tokens.numel() // batch_size < 2:
        raise ValueError(
            f"cannot make {batch_size} streams of >= 2 tokens from {tokens.numel()}"
        )
    T = tokens.numel() // batch_size
    return tokens[: batch_size * T].view(batch_size, T)  # (B, T)


def n_segments(T: int, L: int) -> int:
    """How many (x, y) segments `iter_segments` yields for length-T streams."""
    return -(-(T - 1) // L) if T > 1 else 0  # ceil((T - 1) / L) in integers


def segment_at(streams: torch.Tensor, start: int, seg_len: int
               ) -> Tuple[torch.Tensor, torch.Tensor]:
    """(x, y), each (B, l), of the segment at `start` of streams (B, T).

    y is x shifted left by 1; l = seg_len (L), or what is left before the end of the
    streams. x and y are contiguous, so `.view(-1)` works.
    """
    n = min(seg_len, streams.shape[1] - 1 - start)  # L, or what is left at the end
    x = streams[:, start:start + n].contiguous()  # (B, l)
    y = streams[:, start + 1:start + 1 + n].contiguous()  # (B, l)
    return x, y


def iter_segments(streams: torch.Tensor, seg_len: int
                  ) -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
    """Yield (x, y), each (B, l), from streams (B, T); y is x shifted left by 1.

    l = seg_len (L) except possibly for the last segment. Segment k+1 starts where
    segment k's targets end, so a memory carried from k to k+1 is the true past of every
    stream, and each position 1..T-1 is a target exactly once.
    """
    if seg_len < 1:
        raise ValueError(f"seg_len must be >= 1, got {seg_len}")
    for start in range(0, streams.shape[1] - 1, seg_len):
        yield segment_at(streams, start, seg_len)


# --------------------------------------------------------------------------------------
# The one corpus loader of the CLIs (train, evaluate, sample)
# --------------------------------------------------------------------------------------

OFFLINE_CHARS = 2_000_000  # size of the generated offline corpus the CLIs use (seed 0)
MAX_OFFLINE_CHARS = 100_000_000  # text8's size; more takes hours and GiB to generate
MAX_TEXT_BYTES = 1_000_000_000  # a --path corpus is read whole, then normalized
CORPORA = ("offline", "text8", *BOOK_CORPORA)


def read_text_file(path: str) -> str:
    """The text of a corpus file, one character per byte (latin-1); DataError if it
    is not a regular file (e.g. /dev/zero) or too large to read whole."""
    p = Path(path).expanduser()
    try:
        if not p.is_file():
            what = "no such file" if not p.exists() else "not a regular file"
            raise DataError(f"cannot read {path}: {what}")
        if p.stat().st_size > MAX_TEXT_BYTES:
            raise DataError(f"{path} has {p.stat().st_size:,} bytes, more than the "
                            f"{MAX_TEXT_BYTES:,} a corpus file may have; cut it")
        return p.read_bytes().decode("latin-1")
    except OSError as e:
        raise DataError(f"cannot read {path}: {e.strerror}") from None


def corpus_splits(corpus: str, path: Optional[str] = None,
                  offline_chars: int = OFFLINE_CHARS) -> Splits:
    """The train / valid / test text of a corpus, for the CLIs; read or made once.

    "text8": downloaded and verified, or read from `path` (text8.zip or the unzipped
    file).
    "offline": generated here (`offline_chars` chars, seed 0), or, with `path`, any text
    file (e.g. one written by `python -m txl_mini data offline`), normalized to the
    text8 alphabet and split 90/5/5 like text8.
    "cue", "names": the chapters' generated corpora (corpus.BOOK_CORPORA).
    Raises DataError or ValueError with a one-line message.
    """
    if corpus not in CORPORA:
        raise ValueError(
            f"unknown corpus {corpus!r}; choose one of {', '.join(CORPORA)}"
        )
    if corpus == "text8":
        return load_text8(path)
    if corpus in BOOK_CORPORA:
        if path is not None:
            raise ValueError(f"corpus {corpus!r} is generated from its recorded "
                             "settings; it reads no file")
        return offline_splits(**BOOK_CORPORA[corpus])
    if path is not None:
        return split_text8(normalize(read_text_file(path)), name=Path(path).name)
    if not 1000 <= offline_chars <= MAX_OFFLINE_CHARS:
        raise ValueError(f"the offline corpus takes 1,000 to {MAX_OFFLINE_CHARS:,} "
                         f"chars, got {offline_chars:,}")
    return offline_splits(offline_chars, seed=0)


def load_corpus_split(corpus: str, split: str = "train", path: Optional[str] = None,
                      offline_chars: int = OFFLINE_CHARS) -> torch.Tensor:
    """Token ids (N,) of one split of `corpus_splits(corpus, path, offline_chars)`."""
    if split not in ("train", "valid", "test"):
        raise ValueError(f"unknown split {split!r}; choose train, valid or test")
    splits = corpus_splits(corpus, path, offline_chars)
    return CharVocab().encode(getattr(splits, split))
