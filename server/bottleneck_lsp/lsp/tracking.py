"""Keeping annotations on the right code while the user edits.

Lines inserted or removed above an annotation move it; an annotation on a line that was
edited is kept only if its text is still there, otherwise it is dropped. No annotation
is ever left pointing at different code.

Two ways: ``apply_change`` follows one edit as it comes (cheap, at every keystroke);
``place`` puts annotations made from a result (at the lines of the text that was profiled,
their ``origin``) where those lines stand in a document's text now, by a line diff of the
two texts. It serves whenever annotations are made or re-made while the text differs from
what was profiled: unsaved edits when the job started, edits while it ran, a settings
change or a pinned baseline after edits, a file reopened or closed, several changes at once.
"""

from __future__ import annotations

import difflib

from lsprotocol import types

from .annotations import Annotation


def _same(a: Annotation, lines: list[str], index: int) -> bool:
    if not a.text:
        return False
    return 0 <= index < len(lines) and lines[index].strip()[:200] == a.text


def apply_change(
    annotations: list[Annotation], change: types.TextDocumentContentChangeEvent, new_lines: list[str]
) -> list[Annotation]:
    """Annotations after one content change; ``new_lines`` is the document after it."""
    if not isinstance(change, types.TextDocumentContentChangePartial):
        return [a for a in annotations if _same(a, new_lines, a.line)]
    start, end = change.range.start.line, change.range.end.line
    added = change.text.count("\n")
    delta = added - (end - start)
    out = []
    for a in annotations:
        if a.line < start or (a.line > end and delta == 0):
            out.append(a)
        elif a.line > end:
            out.append(a.moved(a.line + delta))
        else:
            # The edited span: keep the annotation only where its text still stands.
            for candidate in range(start, start + added + 1):
                if _same(a, new_lines, candidate):
                    out.append(a.moved(candidate))
                    break
    return out


def place(annotations: list[Annotation], base: list[str] | None, lines: list[str]) -> list[Annotation]:
    """``annotations`` (from one profiled text, ``base``; None when it is not known) at
    their lines in ``lines``, the document's text now. A line that was edited keeps its
    annotation only where its text still stands within the edited block; one that was
    removed loses it."""
    if base is None or base == lines:
        return [
            a if a.line == a.origin else a.moved(a.origin) for a in annotations if _same(a, lines, a.origin)
        ]
    where: dict[int, int] = {}
    blocks: dict[int, tuple[int, int, int]] = {}  # origin in an edited block -> (its start, new start, end)
    # autojunk (lines on more than 1% of a long file's lines match only next to others):
    # 3 ms on 5,000 lines, 150 ms without; a wrong match is caught by the text check below
    matcher = difflib.SequenceMatcher(None, base, lines)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for i in range(i1, i2):
            if tag == "equal":
                where[i] = j1 + i - i1
            elif tag == "replace":
                blocks[i] = (i1, j1, j2)
    out = []
    for a in annotations:
        line = where.get(a.origin)
        if line is None and a.origin in blocks:
            i1, j1, j2 = blocks[a.origin]
            same_place = j1 + a.origin - i1
            candidates = [same_place, *range(j1, j2)] if same_place < j2 else list(range(j1, j2))
            line = next((j for j in candidates if _same(a, lines, j)), None)
        if line is not None and _same(a, lines, line):
            out.append(a if a.line == line else a.moved(line))
    return out
