"""The offline corpus: English-like text with planted long-range dependencies.

text8 needs a download; this corpus needs nothing, is deterministic from a seed, uses
the text8 alphabet (a-z and single spaces), and hides made-up names whose second mention
sits at an exact, known distance after the first. A model can predict the second mention
only if it can see the first, which makes "how far back can this model look?" a
measurable question.

Layout of one planting (d = distance, n = len(NAME)):

    ... there was a quiet farmer called NAME <filler of d-n-2 chars> NAME said the ...
                                        ^cue                        ^target = cue + d

The *dependent* characters are target+1 .. target+n-1: every letter of the repeat except
the first. Once the first letter is seen, each later one is a copy of the character
exactly d positions back; without the cue in view it is a guess among made-up syllables.
The first letter is left out because no context, however long, tells a model that the
name starts right here.
"""
from __future__ import annotations

import errno
import os
import random
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from typing import Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import torch

from .corpus_words import INTROS, LEADS, OUTROS, SYLLABLES, TEMPLATES, WORDS
from .files import ANY, PathLike, atomic_path, changed
from .text8 import Splits, split_sizes, split_text8

# Fillers must hit an exact length, so the last word is picked by length from this
# table.
_SINGLE = sorted({w for ws in WORDS.values() for w in ws if " " not in w}
                 | {"a", "of", "was"})
_BY_LENGTH: dict = {}
for _w in _SINGLE:
    _BY_LENGTH.setdefault(len(_w), []).append(_w)
_LONGEST = max(map(len, _SINGLE))
assert all(k in _BY_LENGTH for k in range(1, _LONGEST + 1)), "a word of every length"
MIN_DISTANCE = 32  # a name (<= 12 letters), the longest lead-in, a one-word filler
NAME_KINDS = ("syllables", "letters")  # names from SYLLABLES, or random letters a-z
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# The chapters' generated corpora by name (`--corpus cue` on the command line), the
# settings the book's checkpoints record. cue: random-letter names of 8-12 letters,
# each repeated exactly 24 characters later; names: syllable names repeated 32, 64 or
# 96 characters later, in text of made-up words.
BOOK_CORPORA = {
    "cue": dict(n_chars=1_000_000, seed=0, distances=24, gap=[1, 6], names="letters",
                name_len=[8, 12]),
    "names": dict(n_chars=2_000_000, seed=0, distances=[32, 64, 96], gap=[5, 40]),
}


class Dependency(NamedTuple):
    """One planted name: text[cue:cue+length] == text[target:target+length],
    target - cue == distance; dependent characters are target+1 .. target+length-1."""

    cue: int
    target: int
    length: int
    distance: int


@dataclass(frozen=True)
class OfflineCorpus:
    """Generated text plus where its planted dependencies are."""

    text: str = field(repr=False)  # millions of chars would flood a notebook
    deps: List[Dependency] = field(repr=False)
    distances: Tuple[int, ...]
    seed: int
    name: str = "offline"

    def __repr__(self) -> str:
        return (f"OfflineCorpus(name={self.name!r}, {len(self.text):,} chars, "
                f"seed={self.seed}, distances={self.distances}, "
                f"{len(self.deps)} dependencies)")

    def dependent_mask(self, distance: Optional[int] = None,
                       include_first: bool = False) -> torch.Tensor:
        """BoolTensor (N,) over character positions: True where a character depends.

        Optionally only plantings at `distance`. Feed it through `batchify` /
        `iter_segments` like the tokens; the y-side of each pair then marks the
        dependent *targets*.
        """
        mask = torch.zeros(len(self.text), dtype=torch.bool)
        skip = 0 if include_first else 1
        for d in self.deps:
            if distance is None or d.distance == distance:
                mask[d.target + skip:d.target + d.length] = True
        return mask

    def window(self, start: int, stop: int) -> "OfflineCorpus":
        """text[start:stop] with the dependencies lying entirely inside it, from 0."""
        deps = [d._replace(cue=d.cue - start, target=d.target - start)
                for d in self.deps if d.cue >= start and d.target + d.length <= stop]
        return OfflineCorpus(self.text[start:stop], deps, self.distances, self.seed,
                             self.name)

    def split(self) -> Tuple["OfflineCorpus", "OfflineCorpus", "OfflineCorpus"]:
        """train / valid / test windows in the text8 proportions (90% / 5% / 5%)."""
        n_train, n_valid, _ = split_sizes(len(self.text))
        n = len(self.text)
        return (self.window(0, n_train), self.window(n_train, n_train + n_valid),
                self.window(n_train + n_valid, n))


class _Writer:
    """Draws words and sentences from one seeded RNG, so a seed fixes the whole text."""

    def __init__(self, seed: int, names: str = "syllables",
                 name_len: Tuple[int, int] = (5, 8)):
        self.rng = random.Random(seed)
        self.names, self.name_len = names, name_len

    def fill(self, role_words: Sequence[str]) -> List[str]:
        choice = self.rng.choice
        return [w for r in role_words
                for w in (choice(WORDS[r]).split() if r in WORDS else [r])]

    def sentence(self) -> List[str]:
        return self.fill(self.rng.choice(TEMPLATES))

    def text_of_length(self, k: int) -> str:
        """Exactly k chars of words separated by single spaces (k >= 1)."""
        words: List[str] = []
        # tail: chars left for the last word, once the words so far and their spaces
        # are placed
        tail = k
        while tail > _LONGEST:
            for w in self.sentence():
                if tail - len(w) - 1 < 1:  # w and its space must leave room for 1 more
                    break
                words.append(w)
                tail -= len(w) + 1
        words.append(self.rng.choice(_BY_LENGTH[tail]))
        return " ".join(words)

    def name(self) -> str:
        if self.names == "letters":  # a fresh guess per letter: only a copy predicts it
            n = self.rng.randint(*self.name_len)
            return "".join(self.rng.choice(_LETTERS) for _ in range(n))
        n = self.rng.randint(2, 3)
        return "".join(self.rng.choice(SYLLABLES) for _ in range(n))

    def planting(self, distance: int) -> Tuple[str, str, str]:
        """(text before the cue, NAME, text between the cue's end and the target)."""
        intro = " ".join(self.fill(self.rng.choice(INTROS).split()))
        name = self.name()
        k = distance - len(name) - 2  # NAME + space + filler + space == distance
        lead = self.rng.choice(LEADS)
        # A lead-in like "and then" signals that the story returns to someone, not who.
        mid = (self.text_of_length(k - len(lead) - 1) + " " + lead if k > len(lead) + 1
               else self.text_of_length(k))
        return intro, name, mid


def make_offline_corpus(n_chars: int, *, seed: int = 0,
                        distances: Union[int, Iterable[int]] = (64, 256, 512),
                        gap: Tuple[int, int] = (40, 200), names: str = "syllables",
                        name_len: Tuple[int, int] = (5, 8)) -> OfflineCorpus:
    """Exactly n_chars of English-like text, names repeated at known distances.

    Plantings cycle through `distances` (so each gets about the same number) and are
    separated by ordinary sentences of a random length in `gap`. A single distance:
    `distances=300`. `names="syllables"` (default) builds names from made-up syllables;
    `names="letters"` draws each letter uniformly from a-z, `name_len` (min, max)
    letters long, so that every dependent character is worth log2(26) = 4.7 bits to a
    model that copies it. Letter names are at most name_len[1]
    letters, so distances down to name_len[1] + 3 work.
    """
    if n_chars < 0:
        raise ValueError(f"n_chars must be >= 0, got {n_chars}")
    if names not in NAME_KINDS:
        raise ValueError(f"names must be one of {NAME_KINDS}, got {names!r}")
    if names == "letters" and not 2 <= name_len[0] <= name_len[1]:
        raise ValueError(
            f"name_len must be (min, max) with 2 <= min <= max, got {name_len}")
    distances = (distances,) if isinstance(distances, int) else tuple(distances)
    # A planting needs the name, two spaces and a filler word of at least one letter.
    min_distance = MIN_DISTANCE if names == "syllables" else name_len[1] + 3
    if not distances or min(distances) < min_distance:
        raise ValueError(f"distances must be >= {min_distance} (a name plus filler), "
                         f"got {distances}")
    w = _Writer(seed, names, name_len)
    parts: List[str] = []
    deps: List[Dependency] = []
    pos = 0  # length of "".join(parts): tracked so cue and target positions are exact
    i = 0
    while pos < n_chars:
        gap_text = w.text_of_length(w.rng.randint(*gap)) + " "
        intro, name, mid = w.planting(distances[i % len(distances)])
        cue = pos + len(gap_text) + len(intro) + 1
        outro = " ".join(w.fill(w.rng.choice(OUTROS).split()))
        parts += [gap_text, intro, " ", name, " ", mid, " ", name, " ", outro, " "]
        target = cue + len(name) + 1 + len(mid) + 1
        deps.append(Dependency(cue, target, len(name), target - cue))
        pos = target + len(name) + 1 + len(outro) + 1
        i += 1
    text = "".join(parts)[:n_chars]
    deps = [d for d in deps if d.target + d.length <= n_chars]
    return OfflineCorpus(text, deps, distances, seed)


def offline_splits(n_chars: int, *, seed: int = 0,
                   distances: Union[int, Iterable[int]] = (64, 256, 512),
                   **options) -> Splits:
    """The offline corpus as train / valid / test text, named "offline".

    `options` (gap, names, name_len) go to make_offline_corpus."""
    return split_text8(make_offline_corpus(n_chars, seed=seed, distances=distances,
                                           **options).text, name="offline")


def deps_tsv(corpus: OfflineCorpus) -> str:
    """The plantings as write_offline_corpus writes them: a header, a row each."""
    rows = ["cue\ttarget\tlength\tdistance"]
    rows += ["\t".join(map(str, d)) for d in corpus.deps]
    return "\n".join(rows) + "\n"


def write_offline_corpus(corpus: OfflineCorpus, path: PathLike,
                         deps_path: Optional[PathLike] = None,
                         hold=nullcontext, was=(ANY, ANY)) -> None:
    """Write the text (and optionally a TSV of the plantings), atomically. Both are
    written and fsync'ed before either is renamed, so a failure (a full disk) leaves the
    old pair, never a new corpus beside old plantings; the two renames happen inside
    `hold()` (stop.held: a Ctrl-C between them left new plantings beside the old
    corpus). An OSError names the file; one not `was` (snapshot): neither written."""
    files = list(zip((path, deps_path), (corpus.text, deps_tsv(corpus)), was))
    files = files[:1 + (deps_path is not None)]  # (name, text, was) a file
    with ExitStack() as held, ExitStack() as renames:  # atomic_path renames at exit
        for name, text, had in files:
            try:
                tmp = renames.enter_context(atomic_path(name, had))
                with open(tmp, "w", encoding="ascii", newline="") as f:
                    f.write(text)
                    f.flush()
                    os.fsync(f.fileno())  # the slow part, before any rename
            except OSError as e:  # ENOSPC names no file
                raise OSError(e.errno, e.strerror, os.fspath(name)) from None
        held.enter_context(hold())  # left after `renames` is: both renames, or none
        for name, _, had in files:  # before either rename: no half-renamed pair
            if why := changed(name, had):
                raise FileExistsError(errno.EEXIST, why, os.fspath(name))
