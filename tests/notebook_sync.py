"""A notebook as VS Code's Jupyter editor opens it on a language server (notebook document
sync: every cell, with cell URIs of the editor's own): the tests' one builder of its
``notebookDocument/didOpen`` parameters, for the real server and for the server's workspace."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types
from pygls import uris


def cell_uri(path: Path, index: int, session: str = "W") -> str:
    """A cell URI as code-server's notebook editor makes it: nothing of it names the cell's
    number that the server could read."""
    return f"vscode-notebook-cell://127.0.0.1:8080{path}#{session}{index}sdnNjb2RlLXJlbW90ZQ%3D%3D"


def cell_sources(path: Path) -> list[tuple[str, str]]:
    """(kind, source) of each cell of the notebook at ``path``."""
    cells = json.loads(path.read_text())["cells"]
    return [(c["cell_type"], "".join(c["source"])) for c in cells]


def cell_item(uri: str, kind: str, text: str) -> types.TextDocumentItem:
    language = "python" if kind == "code" else "markdown"
    return types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)


def notebook_cell(uri: str, kind: str) -> types.NotebookCell:
    return types.NotebookCell(
        kind=types.NotebookCellKind.Code if kind == "code" else types.NotebookCellKind.Markup, document=uri
    )


def open_params(
    path: Path, session: str = "W", shown: Path | None = None
) -> tuple[types.DidOpenNotebookDocumentParams, list[str]]:
    """didOpen's parameters for the notebook as on disk (or with the cells of ``shown``: as
    the editor holds it with unsaved edits), and the cells' URIs, in order."""
    cells = cell_sources(shown or path)
    names = [cell_uri(path, i, session) for i in range(len(cells))]
    params = types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=uris.from_fs_path(str(path)) or "",
            notebook_type="jupyter-notebook",
            version=0,
            cells=[notebook_cell(name, kind) for name, (kind, _) in zip(names, cells, strict=True)],
        ),
        cell_text_documents=[
            cell_item(name, kind, text) for name, (kind, text) in zip(names, cells, strict=True)
        ],
    )
    return params, names
