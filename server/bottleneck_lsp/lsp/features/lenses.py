"""textDocument/codeLens: a lens above each of a file's loudest lines."""

from __future__ import annotations

from lsprotocol import types

from ..annotations import code_lens
from ..server import BottleneckServer

MAX_LENSES = 500  # per file, the loudest lines: more would bury the code (all are in hovers)


def lenses_of(ls: BottleneckServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    if not ls.state.settings.code_lens:
        return None
    items = ls.state.annotations.get(ls.key_of(params.text_document.uri), [])
    lenses = []
    for a in items:  # loudest first (build keeps the ranking's order)
        lens = code_lens(a)
        if lens is not None:
            lenses.append(lens)
            if len(lenses) == MAX_LENSES:
                break
    return lenses


def register(server: BottleneckServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_LENS)(lenses_of)
