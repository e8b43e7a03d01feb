"""cProfile's callers data -> the lines in the user's functions that made the calls.

cProfile records which *function* called which; the line is found by reading the
caller's source: the calls in that function whose callee name matches. When exactly
one line matches, the cost is placed on it; otherwise on the caller's def line, marked
inexact.
"""

from __future__ import annotations

import ast
import linecache
import re
from typing import Any

_BUILTIN_NAME = re.compile(r"(?:method|function) '?([\w.]+)'?")
TOP_SITES = 500


def callee_name(key: tuple[str, int, str]) -> str:
    """The bare name a call expression would use for this cProfile function key."""
    name = key[2]
    if name.startswith("<"):
        match = _BUILTIN_NAME.search(name)
        name = match.group(1) if match else name
    return name.rsplit(".", 1)[-1]


def source_position(path: str, line: int) -> tuple[int, str]:
    """(1-based column of the first non-blank character, stripped text) of a line."""
    text = linecache.getline(path, line) if line > 0 else ""
    stripped = text.lstrip()
    column = len(text) - len(stripped) + 1 if stripped else 1
    return column, stripped.rstrip()[:200]


class _CallIndex(ast.NodeVisitor):
    """For each function (by first line, decorators included) the lines calling a name."""

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, list[int]]] = {}
        self._scope: list[list[int]] = [[0, 1]]  # module code: cProfile says line 1 or 0

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        starts = [node.lineno]
        for deco in getattr(node, "decorator_list", []):
            starts.append(deco.lineno)
        self._scope.append(starts)
        self.generic_visit(node)
        self._scope.pop()

    visit_FunctionDef = _function  # noqa: N815
    visit_AsyncFunctionDef = _function  # noqa: N815
    visit_Lambda = _function  # noqa: N815

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name:
            for start in self._scope[-1]:
                lines = self.calls.setdefault(start, {}).setdefault(name, [])
                if node.lineno not in lines:
                    lines.append(node.lineno)
        self.generic_visit(node)


class _Sources:
    def __init__(self) -> None:
        self._indexes: dict[str, _CallIndex | None] = {}

    def lines(self, path: str, def_line: int, name: str) -> list[int]:
        if path not in self._indexes:
            built: _CallIndex | None = _CallIndex()
            try:
                with open(path, "rb") as handle:
                    built.visit(ast.parse(handle.read()))  # type: ignore[union-attr]
            except (OSError, SyntaxError, ValueError):
                built = None
            self._indexes[path] = built
        index = self._indexes[path]
        if index is None:
            return []
        return index.calls.get(def_line, {}).get(name, [])


def position_fields(path: str, line: int) -> dict[str, Any]:
    column, text = source_position(path, line)
    return {"column": column, "text": text}


def attribute(
    stats: dict[Any, Any], user_keys: dict[tuple[str, int, str], str], total_tt: float
) -> list[dict[str, Any]]:
    """Per call edge from a user function into any function: time, calls, and line."""
    sources = _Sources()
    merged: dict[tuple[str, int, str, str, bool], list[float]] = {}
    for callee, (_cc, _nc, _tt, _ct, callers) in stats.items():
        name = callee_name(callee)
        for caller, edge in callers.items():
            path = user_keys.get(caller)
            if path is None:
                continue
            found = sources.lines(path, caller[1], name)
            exact = len(found) == 1
            line = found[0] if exact else caller[1]
            key = (path, line, caller[2], name, exact)
            acc = merged.setdefault(key, [0, 0.0, 0.0])
            acc[0] += edge[0]  # (ncalls, primitive calls, tottime, cumtime)
            acc[1] += edge[2]
            acc[2] += edge[3]
    ranked = sorted(merged.items(), key=lambda kv: kv[1][2], reverse=True)[:TOP_SITES]
    return [
        {
            "file": path,
            "line": line,
            **position_fields(path, line),
            "function": function,
            "callee": callee,
            "exact": exact,
            "ncalls": int(acc[0]),
            "tottime_s": round(acc[1], 6),
            "cumtime_s": round(acc[2], 6),
            "share": round(acc[1] / total_tt, 6) if total_tt > 0 else 0.0,
        }
        for (path, line, function, callee, exact), acc in ranked
    ]
