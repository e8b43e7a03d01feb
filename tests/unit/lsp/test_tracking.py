"""Annotations following edits (lsp/tracking.py)."""

from __future__ import annotations

from lsprotocol import types

from bottleneck_lsp.lsp import annotations, tracking


def _change(
    line: int, col: int, end_line: int, end_col: int, text: str
) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line, col), types.Position(end_line, end_col)), text=text
    )


def test_tracking_moves_keeps_and_drops() -> None:
    a = annotations.Annotation("s", "u", 2, "y = f(x)")
    lines = ["a", "b", "c", "y = f(x)"]
    assert [x.line for x in tracking.apply_change([a], _change(0, 0, 0, 0, "c\n"), lines)] == [3]
    # Enter at the end of the hot line itself: the line's text is still there
    after = ["a", "b", "y = f(x)", ""]
    assert [x.line for x in tracking.apply_change([a], _change(2, 8, 2, 8, "\n"), after)] == [2]
    # the hot line edited: dropped
    edited = ["a", "b", "y = g(x)"]
    assert tracking.apply_change([a], _change(2, 4, 2, 5, "g"), edited) == []
    # lines removed above
    assert [x.line for x in tracking.apply_change([a], _change(0, 0, 1, 0, ""), ["b", "y = f(x)"])] == [1]
    # a whole-document change keeps only what still matches
    full = types.TextDocumentContentChangeWholeDocument(text="x")
    assert tracking.apply_change([a], full, ["a", "b", "y = f(x)"]) == [a]
    assert tracking.apply_change([a], full, ["a", "b", "z"]) == []
