"""Tests of the offline corpus options added for the cue demonstration (chapters 2
and 4)."""
import pytest

from txl_mini.corpus import make_offline_corpus, offline_splits


def test_letter_names_have_the_requested_length_and_alphabet():
    c = make_offline_corpus(30_000, seed=0, distances=24, gap=(1, 6), names="letters",
                            name_len=(8, 12))
    assert len(c.text) == 30_000 and c.deps
    for d in c.deps:
        name = c.text[d.cue:d.cue + d.length]
        assert 8 <= d.length <= 12 and name.isalpha() and name.islower()
        assert c.text[d.target:d.target + d.length] == name and d.target - d.cue == 24
        # the name is a whole word at both places
        assert c.text[d.cue - 1] == c.text[d.cue + d.length] == " "
        assert c.text[d.target - 1] == c.text[d.target + d.length] == " "
    # dense plantings: about a tenth of the characters are dependent
    assert 0.07 < float(c.dependent_mask().float().mean()) < 0.15


def test_letter_names_allow_short_distances_but_not_too_short():
    make_offline_corpus(5_000, distances=15, names="letters", name_len=(8, 12))
    with pytest.raises(ValueError, match=">= 15"):
        make_offline_corpus(5_000, distances=14, names="letters", name_len=(8, 12))
    with pytest.raises(ValueError, match="names"):
        make_offline_corpus(5_000, names="digits")
    with pytest.raises(ValueError, match="name_len"):
        make_offline_corpus(5_000, distances=64, names="letters", name_len=(5, 3))


def test_defaults_unchanged_and_splits_take_options():
    a = make_offline_corpus(20_000, seed=1)
    names = {a.text[d.cue:d.cue + d.length] for d in a.deps}
    # syllable names, <= 12 letters
    assert not any(n.isalpha() and len(n) > 12 for n in names)
    assert a.distances == (64, 256, 512)
    s = offline_splits(20_000, seed=1, distances=24, names="letters", gap=(1, 6))
    full = make_offline_corpus(20_000, seed=1, distances=24, names="letters",
                               gap=(1, 6))
    assert s.train == full.split()[0].text
