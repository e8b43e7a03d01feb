"""A document opened, changed or closed: its annotations follow its text
(``tracking``); diagnostics are republished once typing pauses."""

from __future__ import annotations

from collections.abc import Sequence

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
    uri = ls.key_of(uri)
    items = ls.state.annotations.get(uri)
    if not items or lines is None:
        return  # never publish an empty list here: it would wipe other sources' results
    ls.state.annotations[uri] = ls.place(items, uri, lines)
    ls.publish(uri)


def did_change(ls: BottleneckServer, params: types.DidChangeTextDocumentParams) -> None:
    follow(ls, params.text_document.uri, params.content_changes)


def follow(ls: BottleneckServer, uri: str, changes: Sequence[types.TextDocumentContentChangeEvent]) -> None:
    """The annotations of the document at ``uri`` (a file, or a notebook's cell) after
    ``changes``, which the workspace's copy of its text has taken already."""
    key = ls.key_of(uri)
    items = ls.state.annotations.get(key)
    if not items:
        return
    document = ls.workspace.get_text_document(uri)
    lines = document.source.splitlines()
    if len(changes) == 1:
        items = tracking.apply_change(items, changes[0], lines)
    else:
        # Several changes at once (multi-cursor edits, a rename): each one's range is of the
        # text between the changes, which is gone; place from the profiled text instead.
        items = ls.place(items, key, lines)
    ls.state.annotations[key] = items
    ls.publish_soon(key)


def register(server: BottleneckServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
