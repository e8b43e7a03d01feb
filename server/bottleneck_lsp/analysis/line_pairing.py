"""Two versions of one file, line by line, aligned as a text diff aligns them: each line of
the old version paired with the line of the new one that holds it (the same text, moved or
not) or that replaced it (a line edited in place). What ``compare`` pairs two runs' lines by,
so that the line a user edits to make it faster is compared with its old self.

The versions come as one hash per line (``Document.sources``). Runs of lines that differ
are paired in place when both sides have as many lines (a text diff shows them as changed);
otherwise (lines inserted or deleted among edited ones) by the likeness of the texts the two
runs recorded for their ranked lines (``LIKENESS``), in order, the rest inserted or deleted.
Pure functions, as ``analysis`` is.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

LIKENESS = 0.5  # difflib's ratio of two texts at or above which an edited line is paired


@dataclass(frozen=True)
class Pair:
    new_line: int  # 1-based, in the new version
    changed: bool  # edited in place (else the same text)


def align(
    old: list[str], new: list[str], old_text: dict[int, str], new_text: dict[int, str]
) -> dict[int, Pair]:
    """Each line of ``old`` (1-based) that has a counterpart in ``new``, and that counterpart.
    ``old_text``/``new_text``: the texts known of some lines (the ranked ones), used only to
    pair the lines of unevenly replaced runs."""
    out: dict[int, Pair] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.update({i1 + k + 1: Pair(j1 + k + 1, False) for k in range(i2 - i1)})
        elif tag == "replace" and i2 - i1 == j2 - j1:
            out.update({i1 + k + 1: Pair(j1 + k + 1, True) for k in range(i2 - i1)})
        elif tag == "replace":
            olds = [i for i in range(i1 + 1, i2 + 1) if old_text.get(i)]
            news = [j for j in range(j1 + 1, j2 + 1) if new_text.get(j)]
            for i, j in _by_likeness(olds, news, old_text, new_text):
                out[i] = Pair(j, True)
    return out


def _by_likeness(
    olds: list[int], news: list[int], old_text: dict[int, str], new_text: dict[int, str]
) -> list[tuple[int, int]]:
    """The likeliest pairs first, each at least ``LIKENESS`` alike, none crossing another
    (the lines keep their order) and each line in one pair at most."""
    scored = sorted(
        (
            (difflib.SequenceMatcher(None, old_text[i].strip(), new_text[j].strip()).ratio(), i, j)
            for i in olds
            for j in news
        ),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    taken: list[tuple[int, int]] = []
    for score, i, j in scored:
        if score < LIKENESS:
            break
        if all(i != a and j != b and (i < a) == (j < b) for a, b in taken):
            taken.append((i, j))
    return sorted(taken)
