"""Data: the text8 corpus, a 27-symbol char vocabulary, and the paper's stream batching (Chapter 1).

The offline corpus with planted long-range dependencies (Chapter 2) lives in `txl_mini.corpus`.
Run `python -m txl_mini.data --help` to fetch and verify text8 or to write an offline corpus.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Iterator, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from .corpus import make_offline_corpus, offline_splits, write_offline_corpus
from .text8 import (TEXT8_CHARS, TEXT8_SHA1, TEXT8_SIZE, TEXT8_URL, TEXT8_ZIP_SHA1,  # noqa: F401
                    TEXT8_ZIP_SIZE, DataError, Splits, default_cache_dir, load_text8, split_sizes,
                    split_text8)

# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

def normalize(text: str) -> str:
    """ASCII-lowercase, and map every other character outside a-z to a space, as text8 did
    (Chapter 1). One character in, one character out, so positions in `text` stay valid."""
    raw = np.frombuffer(text.encode("latin-1", errors="replace"), dtype=np.uint8).copy()
    raw[(raw >= 65) & (raw <= 90)] += 32  # A-Z -> a-z
    raw[(raw < 97) | (raw > 122)] = 32  # everything else -> space
    return raw.tobytes().decode("ascii")


class CharVocab:
    """The 27 text8 symbols; index order is `TEXT8_CHARS`: space=0, a=1 .. z=26 (Chapter 1)."""

    def __init__(self, chars: str = TEXT8_CHARS):
        if len(set(chars)) != len(chars) or max(map(ord, chars)) > 255:
            raise ValueError("chars must be distinct single-byte characters")
        self.chars = chars
        # A byte -> id table makes encoding 100M chars one numpy gather instead of a Python loop.
        self._lut = np.full(256, -1, dtype=np.int16)
        self._lut[[ord(c) for c in chars]] = np.arange(len(chars))
        self._itos = np.frombuffer(chars.encode("latin-1"), dtype=np.uint8)

    def __len__(self) -> int:
        return len(self.chars)

    def __repr__(self) -> str:
        return f"CharVocab({self.chars!r})"

    def encode(self, text: str, unknown: str = "error") -> torch.Tensor:
        """text (N chars) -> LongTensor (N,) of ids.

        unknown="error" raises ValueError naming the first unknown character and its position;
        unknown="space" maps every unknown character to the space id instead.
        """
        if unknown not in ("error", "space"):
            raise ValueError(f"unknown must be 'error' or 'space', not {unknown!r}")
        # latin-1 with errors="replace" gives exactly one byte per character ('?' for the rest),
        # so a byte index is a character index.
        raw = np.frombuffer(text.encode("latin-1", errors="replace"), dtype=np.uint8)
        ids = self._lut[raw]  # (N,)
        bad = ids < 0
        if bad.any():
            if unknown == "error":
                pos = int(bad.argmax())
                raise ValueError(f"character {text[pos]!r} at position {pos} is not in the "
                                 f"vocabulary {self.chars!r}; use normalize(text) or "
                                 "encode(text, unknown='space')")
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


# ---------------------------------------------------------------------------------------------
# Stream batching and segments
# ---------------------------------------------------------------------------------------------

def batchify(tokens: torch.Tensor, batch_size: int) -> torch.Tensor:
    """(N,) -> (B, N // B): B contiguous streams, row b = tokens[b*T:(b+1)*T] (Chapter 1).

    The remainder N % B is dropped. Works for any 1-D tensor, e.g. a dependency mask, so it
    stays aligned with the tokens.
    """
    if tokens.dim() != 1:
        raise ValueError(f"tokens must be 1-D, got shape {tuple(tokens.shape)}")
    if batch_size < 1 or tokens.numel() // batch_size < 2:
        raise ValueError(f"cannot make {batch_size} streams of >= 2 tokens from {tokens.numel()}")
    T = tokens.numel() // batch_size
    return tokens[: batch_size * T].view(batch_size, T)  # (B, T)


def n_segments(T: int, L: int) -> int:
    """How many (x, y) segments `iter_segments` yields for streams of length T (Chapter 1)."""
    return -(-(T - 1) // L) if T > 1 else 0  # ceil((T - 1) / L) in integers


def iter_segments(streams: torch.Tensor, seg_len: int
                  ) -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
    """Yield (x, y), each (B, l), from streams (B, T); y is x shifted left by one (Chapter 1).

    l = seg_len (L) except possibly for the last segment. Segment k+1 starts where segment k's
    targets end, so a memory carried from k to k+1 is the true past of every stream, and each
    position 1..T-1 is a target exactly once. x and y are contiguous, so `.view(-1)` works.
    """
    if seg_len < 1:
        raise ValueError(f"seg_len must be >= 1, got {seg_len}")
    T = streams.shape[1]
    for start in range(0, T - 1, seg_len):
        n = min(seg_len, T - 1 - start)  # = L, or what is left for the last segment
        x = streams[:, start:start + n].contiguous()  # (B, l)
        y = streams[:, start + 1:start + 1 + n].contiguous()  # (B, l)
        yield x, y


# ---------------------------------------------------------------------------------------------
# The one corpus loader of the CLIs (train, evaluate, sample)
# ---------------------------------------------------------------------------------------------

OFFLINE_CHARS = 2_000_000  # size of the generated offline corpus the CLIs use (seed 0)
CORPORA = ("offline", "text8")


def load_corpus_split(corpus: str, split: str = "train", path: Optional[str] = None,
                      offline_chars: int = OFFLINE_CHARS) -> torch.Tensor:
    """Token ids (N,) of one split of a corpus, for the CLIs (Chapter 1).

    "text8": downloaded and verified, or read from `path` (text8.zip or the unzipped file).
    "offline": generated here (`offline_chars` chars, seed 0), or, with `path`, any text file
    (e.g. one written by `python -m txl_mini.data offline`), normalized to the text8 alphabet
    and split 90/5/5 like text8. Raises DataError or ValueError with a one-line message.
    """
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r}; choose one of {', '.join(CORPORA)}")
    if split not in ("train", "valid", "test"):
        raise ValueError(f"unknown split {split!r}; choose train, valid or test")
    if corpus == "text8":
        splits = load_text8(path)
    elif path is not None:
        try:
            text = Path(path).expanduser().read_bytes().decode("latin-1")
        except OSError as e:
            raise DataError(f"cannot read {path}: {e.strerror}") from None
        splits = split_text8(normalize(text), name=Path(path).name)
    else:
        if offline_chars < 1000:
            raise ValueError(f"offline corpus needs >= 1000 chars, got {offline_chars}")
        splits = offline_splits(offline_chars, seed=0)
    return CharVocab().encode(getattr(splits, split))


# ---------------------------------------------------------------------------------------------
# CLI: python -m txl_mini.data
# ---------------------------------------------------------------------------------------------

def _print_stats(text: str, label: str) -> None:
    raw = np.frombuffer(text.encode("latin-1", errors="replace"), dtype=np.uint8)  # (N,)
    counts = np.bincount(raw, minlength=256)
    in_alphabet = sum(int(counts[ord(c)]) for c in TEXT8_CHARS)
    is_space = raw == ord(" ")
    n_words = int((~is_space[1:] & is_space[:-1]).sum() + (raw.size > 0 and not is_space[0]))
    p = counts[counts > 0] / max(raw.size, 1)
    top = sorted(((int(counts[ord(c)]), c) for c in TEXT8_CHARS), reverse=True)[:8]
    print(f"{label}: {raw.size:,} chars, {n_words:,} words, {raw.size - in_alphabet:,} outside "
          f"the text8 alphabet, unigram entropy {0.0 - (p * np.log2(p)).sum():.3f} bits/char")
    print("  most frequent: " + ", ".join(f"{c!r} {n / max(raw.size, 1):.3f}" for n, c in top))


def _cmd_text8(args: argparse.Namespace) -> None:
    s = load_text8(args.path, cache_dir=args.cache_dir, progress=not args.quiet)
    print(f"corpus: {s.name} (sha1-verified)")
    for part in ("train", "valid", "test"):
        _print_stats(getattr(s, part), f"{s.name} {part}")


def _cmd_stats(args: argparse.Namespace) -> None:
    try:
        text = Path(args.file).read_bytes().decode("latin-1")
    except OSError as e:
        raise DataError(f"cannot read {args.file}: {e.strerror}") from None
    _print_stats(text, args.file)


def _cmd_offline(args: argparse.Namespace) -> None:
    for opt, path in (("--out", args.out), ("--deps-out", args.deps_out)):
        if path is None:
            continue
        folder = Path(path).expanduser().resolve().parent
        if Path(path).is_dir():
            raise DataError(f"{opt} {path} is a directory; give a file name")
        if not folder.is_dir():
            raise DataError(f"{opt} {path}: directory {folder} does not exist; create it first")
        if not os.access(folder, os.W_OK):
            raise DataError(f"{opt} {path}: directory {folder} is not writable")
    corpus = make_offline_corpus(args.chars, seed=args.seed, distances=args.distances)
    write_offline_corpus(corpus, args.out, deps_path=args.deps_out)
    print(f"wrote {len(corpus.text):,} chars of corpus '{corpus.name}' (seed {args.seed}) "
          f"to {args.out}")
    for d in corpus.distances:
        deps = [x for x in corpus.deps if x.distance == d]
        first = ", ".join(f"{x.cue}->{x.target}" for x in deps[:3])
        print(f"  distance {d}: {len(deps)} planted names (cue->target: {first}, ...)")
    if args.deps_out:
        print(f"dependencies (cue, target, length, distance) written to {args.deps_out}")


def _distances(s: str) -> Tuple[int, ...]:
    try:
        return tuple(int(x) for x in s.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {s!r}") from None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of `python -m txl_mini.data` (Chapter 1; the offline corpus: Chapter 2)."""
    fmt = argparse.ArgumentDefaultsHelpFormatter  # --help shows every default
    ap = argparse.ArgumentParser(prog="python -m txl_mini.data", description=__doc__.split("\n")[0],
                                 formatter_class=fmt)
    sub = ap.add_subparsers(dest="cmd")
    p = sub.add_parser("text8", formatter_class=fmt,
                       help="download (or read) text8, verify it, print split statistics")
    p.add_argument("--path", help="local text8.zip or unzipped text8 file (no download)")
    p.add_argument("--cache-dir", help="where to keep text8.zip (default: $TXL_MINI_CACHE, "
                   "else $XDG_CACHE_HOME/txl_mini, else ~/.cache/txl_mini)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(fn=_cmd_text8)
    p = sub.add_parser("stats", formatter_class=fmt,
                       help="character statistics of any text file")
    p.add_argument("file", help="the text file")
    p.set_defaults(fn=_cmd_stats)
    p = sub.add_parser("offline", formatter_class=fmt,
                       help="write the generated offline corpus (Chapter 2)")
    p.add_argument("--chars", type=int, default=5_000_000, help="corpus length in characters")
    p.add_argument("--seed", type=int, default=0, help="random seed; same seed, same text")
    p.add_argument("--distances", type=_distances, default=(64, 256, 512),
                   help="comma-separated planted dependency distances (default: 64,256,512)")
    p.add_argument("--out", required=True, help="output text file")
    p.add_argument("--deps-out", help="optional TSV of the plantings: cue target length distance")
    p.set_defaults(fn=_cmd_offline)
    args = ap.parse_args(argv)
    if args.cmd is None:  # no subcommand: show what there is
        ap.print_help()
        return 2
    try:
        args.fn(args)
    except (DataError, ValueError) as e:
        print(f"{ap.prog}: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
