"""Author-year labels for the book's bibliography (Sphinx extension, site build only).

The citations in the text are author-year ({cite:p} -> (Dai et al., 2019), set by
`bibtex_reference_style: author_year` in _config.yml), but pybtex's bibliography styles
label entries alphabetically ([DYY+19]) or by number ([1]). This registers a pybtex
formatting style, "author_year", whose labels read like the citations:
[Dai et al., 2019].
_config.yml loads this file (sphinx.local_extensions) and selects the style with
`bibtex_default_style: author_year`.

It also drops the back-references of the bibliography's entries: docutils would print
them after the label as numbered links, "[Dai et al., 2019] (1,2,3)", which reads like
broken markdown; a label is plain text ("[Dai et al., 2019]") and the entry follows it.
"""
from __future__ import annotations

from collections import Counter

from docutils import nodes
from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from sphinx.transforms.post_transforms import SphinxPostTransform


def _surname(person) -> str:
    return " ".join(person.prelast_names + person.last_names)


def author_year(entry) -> str:
    """'Dai et al., 2019', 'Press and Smith, 2022', 'Mahoney, 2011' for one entry."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_surname(p) for p in people]
    if not names:
        who = entry.fields.get("organization", entry.key)
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabelStyle(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        sorted_entries = list(sorted_entries)
        labels = [author_year(e) for e in sorted_entries]
        repeated = {lab for lab, n in Counter(labels).items() if n > 1}
        seen: Counter = Counter()
        for lab in labels:
            if lab in repeated:  # two papers with one label: 2019a, 2019b
                seen[lab] += 1
                lab += "abcdefghijklmnopqrstuvwxyz"[seen[lab] - 1]
            yield lab


class AuthorYearStyle(UnsrtStyle):
    default_label_style = "author_year"
    default_sorting_style = "author_year_title"


class DropCitationBackrefs(SphinxPostTransform):
    """Remove the back-links sphinxcontrib-bibtex puts on each entry (its transform runs
    at priority 5; this one after it)."""

    default_priority = 6

    def run(self, **kwargs) -> None:
        for citation in self.document.findall(nodes.citation):
            citation["backrefs"] = []


def setup(app):
    register_plugin("pybtex.style.labels", "author_year", AuthorYearLabelStyle)
    register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)
    app.add_post_transform(DropCitationBackrefs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
