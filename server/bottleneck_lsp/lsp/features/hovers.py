"""textDocument/hover: every figure of an annotated line, and its ops."""

from __future__ import annotations

from lsprotocol import types

from ..annotations import hover
from ..server import BottleneckServer


def hover_of(ls: BottleneckServer, params: types.HoverParams) -> types.Hover | None:
    line = params.position.line
    uri = ls.key_of(params.text_document.uri)
    items = [a for a in ls.state.annotations.get(uri, []) if a.line == line]
    if not items:
        return None
    doc = ls.state.results.get(items[0].script)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover(items, doc)),
        range=types.Range(types.Position(line, 0), types.Position(line + 1, 0)),
    )


def register(server: BottleneckServer) -> None:
    server.feature(types.TEXT_DOCUMENT_HOVER)(hover_of)
