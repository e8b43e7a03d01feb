"""A document opened, changed or closed: its annotations follow its text
(``tracking``); diagnostics are republished once typing pauses."""

from __future__ import annotations

from lsprotocol import types
from pygls import uris

from .. import tracking
from ..annotations import canonical_uri, read_lines
from ..server import BottleneckServer


def did_open(ls: BottleneckServer, params: types.DidOpenTextDocumentParams) -> None:
    """Place annotations in the opened text; publish only when some exist."""
    _place_again(ls, params.text_document.uri, params.text_document.text.splitlines())


def did_close(ls: BottleneckServer, params: types.DidCloseTextDocumentParams) -> None:
    """Closed: the file is what is on disk again (unsaved edits discarded, or saved)."""
    uri = canonical_uri(params.text_document.uri)
    path = uris.to_fs_path(uri)
    _place_again(ls, uri, read_lines(path) if path else None)


def _place_again(ls: BottleneckServer, uri: str, lines: list[str] | None) -> None:
    uri = canonical_uri(uri)
    items = ls.state.annotations.get(uri)
    if not items or lines is None:
        return  # never publish an empty list here: it would wipe other sources' results
    ls.state.annotations[uri] = ls.place(items, uri, lines)
    ls.publish(uri)


def did_change(ls: BottleneckServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = canonical_uri(params.text_document.uri)
    items = ls.state.annotations.get(uri)
    if not items:
        return
    document = ls.workspace.get_text_document(params.text_document.uri)
    lines = document.source.splitlines()
    if len(params.content_changes) == 1:
        items = tracking.apply_change(items, params.content_changes[0], lines)
    else:
        # Several changes at once (multi-cursor edits, a rename): each one's range is of the
        # text between the changes, which is gone; place from the profiled text instead.
        items = ls.place(items, uri, lines)
    ls.state.annotations[uri] = items
    ls.publish_soon(uri)


def register(server: BottleneckServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
