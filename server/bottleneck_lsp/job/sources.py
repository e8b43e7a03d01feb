"""The ranking's files as they were when the run ended, one short hash per line
(``Document.sources``): what ``diff`` aligns two versions of a file by, as a text diff does,
so that a line edited in place is compared with its old self.

Hashes, not the text: the document already holds the text of the lines it ranks, and a
result shared with someone need not carry the rest of the user's code. A file that cannot
be read (gone, not text) is left out; ``diff`` then matches its lines by their text.
"""

from __future__ import annotations

import hashlib
import tokenize

from ..notebook.cell_paths import split_cell_path
from ..notebook.document import cell_lines
from ..schema.model import Document, SourceFile

HASH_BYTES = 4  # 8 hex digits: two different lines of one file share one in 4 billion
MAX_FILES = 200  # the ranking's files; a ranking holds the user's lines only
MAX_LINES = 200_000  # a file longer than this (generated code) is left out


def line_hash(text: str) -> str:
    """One line's hash: its text without the indentation and trailing blanks."""
    return hashlib.blake2b(text.strip().encode("utf-8", "surrogatepass"), digest_size=HASH_BYTES).hexdigest()


def file_hashes(path: str) -> list[str] | None:
    """The hash of each line of ``path`` (read with its declared encoding, as Python reads
    it; a notebook cell's: the cell's lines), None when it cannot be read or is too long."""
    cell = split_cell_path(path)
    if cell is not None:
        lines = cell_lines(*cell)
        return [line_hash(text) for text in lines] if lines is not None else None
    try:
        with tokenize.open(path) as handle:
            lines = handle.read().splitlines()
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    return [line_hash(text) for text in lines] if len(lines) <= MAX_LINES else None


def read(doc: Document) -> list[SourceFile]:
    """The hashes of every file the document's ranking names, in file order."""
    files = sorted({row.file for row in doc.ranking.lines} if doc.ranking is not None else set())
    out = []
    for path in files[:MAX_FILES]:
        hashes = file_hashes(path)
        if hashes is not None:
            out.append(SourceFile(file=path, hashes=hashes))
    return out
