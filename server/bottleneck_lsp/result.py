"""The result document: one versioned JSON object per run (see docs/result-schema.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .contract import PASS_STATUSES, SCHEMA_NAME, SCHEMA_VERSION
from .runner.bounded import load_json

# A result may come from someone else: bounded before it is parsed.
MAX_BYTES = 256 * 1024**2

_TOP_LEVEL: dict[str, type] = {
    "schema": str,
    "version": int,
    "tool": dict,
    "script": str,
    "args": list,
    "cwd": str,
    "roots": list,
    "python": str,
    "passes": list,
    "status": str,
}
_LINE: dict[str, type | tuple[type, ...]] = {
    "file": str,
    "line": int,
    "self_cpu_us": (int, float),
    "cpu_share": (int, float),
    "ops": list,
}


class ResultError(ValueError):
    """The document is not a result this version understands."""


def validate(doc: Any) -> list[str]:
    """Problems found in a document; empty when it is valid."""
    if not isinstance(doc, dict):
        return ["the document is not a JSON object"]
    problems = []
    for key, kind in _TOP_LEVEL.items():
        if not isinstance(doc.get(key), kind):
            problems.append(f"'{key}' is missing or not a {kind.__name__}")
    if doc.get("schema") != SCHEMA_NAME:
        problems.append(f"'schema' is {str(doc.get('schema'))[:40]!r}, expected {SCHEMA_NAME!r}")
    if doc.get("version") != SCHEMA_VERSION:
        problems.append(f"'version' is {str(doc.get('version'))[:20]!r}, this tool reads {SCHEMA_VERSION}")
    passes = doc.get("passes")
    for i, part in enumerate(passes if isinstance(passes, list) else []):
        if not isinstance(part, dict):
            problems.append(f"passes[{i}] is not an object")
            continue
        if part.get("status") not in PASS_STATUSES:
            problems.append(f"passes[{i}].status is {str(part.get('status'))[:40]!r}")
        lines = part.get("lines", [])
        if not isinstance(lines, list):
            problems.append(f"passes[{i}].lines is not a list")
            continue
        for j, line in enumerate(lines):
            if not isinstance(line, dict):
                problems.append(f"passes[{i}].lines[{j}] is not an object")
                continue
            for key, kinds in _LINE.items():
                if not isinstance(line.get(key), kinds):
                    problems.append(f"passes[{i}].lines[{j}].{key} is missing or mistyped")
    return problems


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a document; ResultError says what is wrong."""
    doc = load_json(str(path), MAX_BYTES, ResultError, "result")
    problems = validate(doc)
    if problems:
        raise ResultError(f"{path} is not a valid result: " + "; ".join(problems[:5]))
    valid: dict[str, Any] = doc
    return valid
