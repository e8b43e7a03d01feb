"""The sampled stacks of the main thread, and the function table made of them (the way
py-spy's ``top`` shows it): per Python function, its *self* time (it was the innermost
Python frame: running, or in a C call it made) and its *total* time (anywhere on the
stack, counted once per look however deep it recurses).

The sampler charges each look's time to the look's whole stack (``charge``). A stack's key
is the tuple of its code objects' ids, one dict update a look; the first look at a stack
keeps its code objects, so no id is reused while the table lives. The runner's own frames
(the script's launch, the sampler's and the windows' handlers) are left out when the table
is made, with the launch's (``runpy``) and the import system's machinery.

Standard library only: it runs in the user's interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import CodeType
from typing import Any

from .paths import is_runner_file

MAX_FUNCTIONS = 200  # rows in the document, the most total time first


class StackTable:
    def __init__(self) -> None:
        self.stacks: dict[tuple[int, ...], list[Any]] = {}  # key -> [ns, codes]

    def charge(self, codes: Sequence[CodeType], ns: int) -> None:
        """``ns`` of the main thread's time, at a stack (``codes``: innermost first)."""
        if not codes or ns <= 0:
            return
        key = tuple(map(id, codes))
        entry = self.stacks.get(key)
        if entry is None:
            self.stacks[key] = [ns, tuple(codes)]
        else:
            entry[0] += ns

    def functions(
        self, resolve: Callable[[str], str | None], limit: int = MAX_FUNCTIONS
    ) -> list[dict[str, Any]]:
        """The function table: ``{file, line (the function's first), function, self_s,
        total_s, user}``, the most total time first. ``resolve``: the user's path of a file,
        or None (others keep the interpreter's file name)."""
        self_ns: dict[tuple[str, int, str], int] = {}
        total_ns: dict[tuple[str, int, str], int] = {}
        names: dict[int, tuple[str, int, str] | None] = {}
        users: dict[str, bool] = {}
        for ns, codes in self.stacks.values():
            seen: set[tuple[str, int, str]] = set()
            innermost = True
            for code in codes:
                ident = id(code)
                if ident in names:
                    key = names[ident]
                else:
                    key = names[ident] = _name(code)
                if key is None:
                    continue  # ours
                if innermost:
                    self_ns[key] = self_ns.get(key, 0) + ns
                    innermost = False
                if key not in seen:
                    seen.add(key)
                    total_ns[key] = total_ns.get(key, 0) + ns
        out = []
        for key, total in sorted(total_ns.items(), key=lambda kv: kv[1], reverse=True)[:limit]:
            path, line, function = key
            user = users.get(path)
            if user is None:
                resolved = resolve(path)
                user = users[path] = resolved is not None
            out.append(
                {
                    "file": resolve(path) or path,
                    "line": line,
                    "function": function,
                    "self_s": round(self_ns.get(key, 0) / 1e9, 6),
                    "total_s": round(total / 1e9, 6),
                    "user": user,
                }
            )
        return out


_LAUNCH = ("<frozen runpy>", "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")


def _name(code: CodeType) -> tuple[str, int, str] | None:
    """The function's row, or None for frames that are not the script's work: the runner's
    and the launch's (``runpy``), and the import system's machinery (an import's time is the
    importing function's, and its modules' own ``<module>`` rows)."""
    if code.co_filename in _LAUNCH or is_runner_file(code.co_filename):
        return None
    return (code.co_filename, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))
