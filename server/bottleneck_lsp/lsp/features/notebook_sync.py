"""A notebook opened, changed or closed in the client (notebook document sync): its cells'
marks placed on its cells and published to the client's cell URIs; typing in a cell moves
them as in a file (``documents.follow``)."""

from __future__ import annotations

from lsprotocol import types

from ..server import BottleneckServer
from .documents import follow


def did_open(ls: BottleneckServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.place_notebook(params.notebook_document.uri)


def did_change(ls: BottleneckServer, params: types.DidChangeNotebookDocumentParams) -> None:
    cells = params.change.cells
    if cells is None:
        return
    if cells.structure is not None:  # cells inserted, deleted or moved: matched again
        ls.place_notebook(params.notebook_document.uri)
        return
    edits: dict[str, list[types.TextDocumentContentChangeEvent]] = {}
    for content in cells.text_content or []:
        edits.setdefault(content.document.uri, []).extend(content.changes)
    for cell_uri, changes in edits.items():
        follow(ls, cell_uri, changes)


def did_close(ls: BottleneckServer, params: types.DidCloseNotebookDocumentParams) -> None:
    """The marks stay, under their keys, for the notebook's next opening; its cells'
    diagnostics go with it."""
    ls.place_notebook(params.notebook_document.uri)


def register(server: BottleneckServer) -> None:
    server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)(did_close)
