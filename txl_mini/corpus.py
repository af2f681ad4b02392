"""The offline corpus: generated English-like text with planted long-range dependencies (Chapter 2).

text8 needs a download; this corpus needs nothing, is deterministic from a seed, uses the text8
alphabet (a-z and single spaces), and hides made-up names whose second mention sits at an exact,
known distance after the first. A model can predict the second mention only if it can see the
first, which makes "how far back can this model look?" a measurable question.

Layout of one planting (d = distance, n = len(NAME)):

    ... there was a quiet farmer called NAME <filler of d-n-2 chars> NAME said the ...
                                        ^cue                        ^target = cue + d

The *dependent* characters are target+1 .. target+n-1: every letter of the repeat except the
first. Once the first letter is seen, each later one is a copy of the character exactly d
positions back; without the cue in view it is a guess among made-up syllables. The first letter
is left out because no context, however long, tells a model that the name starts right here.
"""
from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import torch

from .files import PathLike, atomic_path
from .text8 import Splits, split_sizes, split_text8

# A few hundred common words by role; sentences are drawn from TEMPLATES below.
_WORDS = {
    "adj": "tall new good great small large long little young big high famous strange noble "
           "few public bad same fine local sure free real best strong whole clear full special "
           "sad hard quiet dark bright cold warm green red blue white black deep wide short "
           "simple happy kind brave wise poor rich fast slow calm wild gentle proud".split(),
    "noun": "time year people way day man woman child world life hand part place case week "
            "system program question work government number night point home water room mother "
            "area money story fact month lot right study book eye job word business issue side "
            "kind head house service friend father power hour game line end member law car city "
            "name team minute idea body information back parent face level office door health "
            "person art war history party result change morning reason research girl guy moment "
            "air teacher force education farmer king queen river mountain island village garden "
            "letter song ship road bridge tree stone horse bird forest market church school "
            "castle valley".split(),
    "verb": "saw made found took gave told felt left kept began brought wrote heard met built "
            "sold carried opened followed watched helped loved knew remembered painted visited "
            "crossed found asked called moved changed lost won reached".split(),
    "intr": "arrived returned waited slept laughed smiled worked travelled listened sang spoke "
            "rested stayed wandered danced prayed".split(),
    "adv": "slowly quickly often always never again later soon early quietly together alone "
           "happily carefully suddenly finally".split(),
    "prep": "near behind beyond across under over along around inside outside".split(),
    "pron": "he she they we it".split(),
    "det": "the the this that every no some".split(),
    "time": "in the morning|at night|after the war|before the winter|every day|in the spring|"
            "during the summer|for many years|in those days|on the next day".split("|"),
}

# Each template is a list of roles; a role not in _WORDS is a literal word.
TEMPLATES = [t.split() for t in [
    "det adj noun verb det noun",
    "pron verb det adj noun prep det noun",
    "det noun intr adv",
    "time det adj noun intr prep det noun",
    "pron intr and pron verb det noun",
    "det noun of det noun was adj",
    "pron verb that det noun was adj and adj",
    "det adj noun intr time",
    "there was det adj noun prep det noun",
    "many people verb det noun time",
]]
# Fillers must hit an exact length, so the last word is picked by length from this table.
_SINGLE = sorted({w for ws in _WORDS.values() for w in ws if " " not in w} | {"a", "of", "was"})
_BY_LENGTH: dict = {}
for _w in _SINGLE:
    _BY_LENGTH.setdefault(len(_w), []).append(_w)
_LONGEST = max(map(len, _SINGLE))
assert all(k in _BY_LENGTH for k in range(1, _LONGEST + 1)), "need a word of every length"
MIN_DISTANCE = 32  # a name (<= 12 letters), the longest lead-in, a one-word filler
NAME_KINDS = ("syllables", "letters")  # made-up names from _SYLLABLES, or random letters a-z
_LETTERS = "abcdefghijklmnopqrstuvwxyz"

_SYLLABLES = ("ka zor mil vex dra tul quin bor sel yam grik lo pha nev tas rum jo wex fen "
              "ostr ix ul ba zen thar cru vim ock del").split()
_INTROS = ("there was a adj noun called|one day pron met a adj noun named|"
           "the noun of the village was called|long ago lived a adj noun known as").split("|")
_LEADS = ["and then", "later", "after that", "so", "one day", "at last"]
_OUTROS = ["said the noun", "verb det noun", "intr adv", "was adj", "intr prep det noun"]


class Dependency(NamedTuple):
    """One planted name (Chapter 2): text[cue:cue+length] == text[target:target+length],
    target - cue == distance; dependent characters are target+1 .. target+length-1."""

    cue: int
    target: int
    length: int
    distance: int


@dataclass(frozen=True)
class OfflineCorpus:
    """Generated text plus where its planted dependencies are (Chapter 2)."""

    text: str = field(repr=False)  # repr=False: millions of chars would flood a notebook
    deps: List[Dependency] = field(repr=False)
    distances: Tuple[int, ...]
    seed: int
    name: str = "offline"

    def __repr__(self) -> str:
        return (f"OfflineCorpus(name={self.name!r}, {len(self.text):,} chars, seed={self.seed}, "
                f"distances={self.distances}, {len(self.deps)} dependencies)")

    def dependent_mask(self, distance: Optional[int] = None,
                       include_first: bool = False) -> torch.Tensor:
        """BoolTensor (N,) over character positions: True where a character is dependent.

        Optionally only plantings at `distance`. Feed it through `batchify` / `iter_segments`
        like the tokens; the y-side of each pair then marks the dependent *targets*.
        """
        mask = torch.zeros(len(self.text), dtype=torch.bool)
        skip = 0 if include_first else 1
        for d in self.deps:
            if distance is None or d.distance == distance:
                mask[d.target + skip:d.target + d.length] = True
        return mask

    def window(self, start: int, stop: int) -> "OfflineCorpus":
        """text[start:stop] with the dependencies lying entirely inside it, re-based to 0."""
        deps = [d._replace(cue=d.cue - start, target=d.target - start) for d in self.deps
                if d.cue >= start and d.target + d.length <= stop]
        return OfflineCorpus(self.text[start:stop], deps, self.distances, self.seed, self.name)

    def split(self) -> Tuple["OfflineCorpus", "OfflineCorpus", "OfflineCorpus"]:
        """train / valid / test windows in the text8 proportions (90% / 5% / 5%)."""
        n_train, n_valid, _ = split_sizes(len(self.text))
        n = len(self.text)
        return (self.window(0, n_train), self.window(n_train, n_train + n_valid),
                self.window(n_train + n_valid, n))


class _Writer:
    """Draws words and sentences from one seeded RNG, so a seed fixes the whole text."""

    def __init__(self, seed: int, names: str = "syllables", name_len: Tuple[int, int] = (5, 8)):
        self.rng = random.Random(seed)
        self.names, self.name_len = names, name_len

    def fill(self, role_words: Sequence[str]) -> List[str]:
        choice = self.rng.choice
        return [w for r in role_words for w in (choice(_WORDS[r]).split() if r in _WORDS else [r])]

    def sentence(self) -> List[str]:
        return self.fill(self.rng.choice(TEMPLATES))

    def text_of_length(self, k: int) -> str:
        """Exactly k chars of words separated by single spaces (k >= 1)."""
        words: List[str] = []
        tail = k  # chars left for the last word, once the words so far and their spaces are placed
        while tail > _LONGEST:
            for w in self.sentence():
                if tail - len(w) - 1 < 1:  # w and its space must leave room for a last word
                    break
                words.append(w)
                tail -= len(w) + 1
        words.append(self.rng.choice(_BY_LENGTH[tail]))
        return " ".join(words)

    def name(self) -> str:
        if self.names == "letters":  # every letter a fresh guess: only a copy can predict it
            return "".join(self.rng.choice(_LETTERS) for _ in range(self.rng.randint(*self.name_len)))
        return "".join(self.rng.choice(_SYLLABLES) for _ in range(self.rng.randint(2, 3)))

    def planting(self, distance: int) -> Tuple[str, str, str]:
        """(text before the cue, NAME, text between the cue's end and the target)."""
        intro = " ".join(self.fill(self.rng.choice(_INTROS).split()))
        name = self.name()
        k = distance - len(name) - 2  # NAME + space + filler + space == distance
        lead = self.rng.choice(_LEADS)
        # A lead-in like "and then" signals that the story returns to someone, not who.
        mid = (self.text_of_length(k - len(lead) - 1) + " " + lead if k > len(lead) + 1
               else self.text_of_length(k))
        return intro, name, mid


def make_offline_corpus(n_chars: int, *, seed: int = 0,
                        distances: Union[int, Iterable[int]] = (64, 256, 512),
                        gap: Tuple[int, int] = (40, 200), names: str = "syllables",
                        name_len: Tuple[int, int] = (5, 8)) -> OfflineCorpus:
    """Exactly n_chars of English-like text with names repeated at known distances (Chapter 2).

    Plantings cycle through `distances` (so each gets about the same number) and are separated
    by ordinary sentences of a random length in `gap`. A single distance: `distances=300`.
    `names="syllables"` (default) builds names from made-up syllables; `names="letters"` draws
    each letter uniformly from a-z, `name_len` (min, max) letters long, so that every dependent
    character is worth log2(26) = 4.7 bits to a model that copies it (chapters 2 and 4).
    Letter names are at most name_len[1] letters, so distances down to name_len[1] + 3 work.
    """
    if n_chars < 0:
        raise ValueError(f"n_chars must be >= 0, got {n_chars}")
    if names not in NAME_KINDS:
        raise ValueError(f"names must be one of {NAME_KINDS}, got {names!r}")
    if names == "letters" and not 2 <= name_len[0] <= name_len[1]:
        raise ValueError(f"name_len must be (min, max) with 2 <= min <= max, got {name_len}")
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
        outro = " ".join(w.fill(w.rng.choice(_OUTROS).split()))
        parts += [gap_text, intro, " ", name, " ", mid, " ", name, " ", outro, " "]
        target = cue + len(name) + 1 + len(mid) + 1
        deps.append(Dependency(cue, target, len(name), target - cue))
        pos = target + len(name) + 1 + len(outro) + 1
        i += 1
    text = "".join(parts)[:n_chars]
    deps = [d for d in deps if d.target + d.length <= n_chars]
    return OfflineCorpus(text, deps, distances, seed)


def offline_splits(n_chars: int, *, seed: int = 0,
                   distances: Union[int, Iterable[int]] = (64, 256, 512), **options) -> Splits:
    """The offline corpus as train / valid / test text, named "offline" (Chapter 2).

    `options` (gap, names, name_len) go to make_offline_corpus."""
    return split_text8(make_offline_corpus(n_chars, seed=seed, distances=distances,
                                           **options).text, name="offline")


def write_offline_corpus(corpus: OfflineCorpus, path: PathLike,
                         deps_path: Optional[PathLike] = None) -> None:
    """Write the text (and optionally a TSV of the plantings) via temp file + rename (Chapter 2)."""
    _write_text(path, corpus.text)
    if deps_path is not None:
        rows = ["cue\ttarget\tlength\tdistance"] + ["\t".join(map(str, d)) for d in corpus.deps]
        _write_text(deps_path, "\n".join(rows) + "\n")


def _write_text(path: PathLike, text: str) -> None:
    # A reader never sees a half-written corpus: the name appears only when complete.
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="ascii", newline="") as f:
            f.write(text)
