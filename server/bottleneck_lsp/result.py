"""The result document: one versioned JSON object per run (see docs/result-schema.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_NAME = "bottleneck-lsp.result"
SCHEMA_VERSION = 2

PASS_STATUSES = frozenset(
    {"ok", "exit", "error", "syntax_error", "timeout", "cancelled", "terminated", "crashed", "skipped"}
)
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
        problems.append(f"'schema' is {doc.get('schema')!r}, expected {SCHEMA_NAME!r}")
    if doc.get("version") != SCHEMA_VERSION:
        problems.append(f"'version' is {doc.get('version')!r}, this tool reads {SCHEMA_VERSION}")
    for i, part in enumerate(doc.get("passes") or []):
        if not isinstance(part, dict):
            problems.append(f"passes[{i}] is not an object")
            continue
        if part.get("status") not in PASS_STATUSES:
            problems.append(f"passes[{i}].status is {part.get('status')!r}")
        for j, line in enumerate(part.get("lines") or []):
            for key, kinds in _LINE.items():
                if not isinstance(line.get(key), kinds):
                    problems.append(f"passes[{i}].lines[{j}].{key} is missing or mistyped")
    return problems


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a document; ResultError says what is wrong."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultError(f"cannot read result {path}: {exc}") from exc
    problems = validate(doc)
    if problems:
        raise ResultError(f"{path} is not a valid result: " + "; ".join(problems[:5]))
    valid: dict[str, Any] = doc
    return valid


def dump(doc: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
