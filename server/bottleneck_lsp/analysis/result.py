"""The result document: one versioned JSON object per run (see docs/result-schema.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..runner.bounded import load_json
from ..schema.contract import READABLE_VERSIONS, SCHEMA_NAME
from ..schema.model import Document, ModelError
from .ranking import conclude

# A result may come from someone else: bounded before it is parsed.
MAX_BYTES = 256 * 1024**2


class ResultError(ValueError):
    """The document is not a result this version understands."""


def _problems(doc: Any) -> list[str]:
    if not isinstance(doc, dict):
        return ["the document is not a JSON object"]
    problems = []
    if doc.get("schema") != SCHEMA_NAME:
        problems.append(f"'schema' is {str(doc.get('schema'))[:40]!r}, expected {SCHEMA_NAME!r}")
    if doc.get("version") not in READABLE_VERSIONS:
        readable = " and ".join(str(v) for v in READABLE_VERSIONS)
        problems.append(f"'version' is {str(doc.get('version'))[:20]!r}, this tool reads {readable}")
    return problems


def validate(doc: Any) -> list[str]:
    """Problems found in a document (at most one past its name and version: the first
    place where it does not fit ``model.Document``); empty when it is valid."""
    problems = _problems(doc)
    if problems:
        return problems  # another kind of file, or another version's shape
    try:
        Document.from_json(doc, "result")  # (a pass's status among ``PassStatus`` too)
    except ModelError as exc:
        return [str(exc)]
    return []


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a document; ResultError says what is wrong."""
    doc = load_json(str(path), MAX_BYTES, ResultError, "result")
    problems = validate(doc)
    if problems:
        raise ResultError(f"{path} is not a valid result: " + "; ".join(problems[:5]))
    valid: dict[str, Any] = doc
    return valid


def load_document(path: str | Path) -> Document:
    """A result from disk as the typed document (read and checked once), with its ranking
    (documents written before the ranking existed get one); ResultError says what is wrong."""
    data = load_json(str(path), MAX_BYTES, ResultError, "result")
    problems = _problems(data)
    typed = None
    if not problems:
        try:
            typed = Document.from_json(data, "result")
        except ModelError as exc:
            problems = [str(exc)]
    if problems or typed is None:
        raise ResultError(f"{path} is not a valid result: " + "; ".join(problems[:5]))
    return typed if typed.ranking is not None else conclude(typed)
