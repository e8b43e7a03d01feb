"""Keeping annotations on the right code while the user edits.

Lines inserted or removed above an annotation move it; an annotation on a line that was
edited is kept only if its text is still there, otherwise it is dropped. No annotation
is ever left pointing at different code.
"""

from __future__ import annotations

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


def still_valid(annotations: list[Annotation], lines: list[str]) -> list[Annotation]:
    """Annotations whose line still holds the text that was profiled."""
    return [a for a in annotations if _same(a, lines, a.line)]
