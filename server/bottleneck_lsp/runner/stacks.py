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
        self_ns: dict[Key, int] = {}
        total_ns: dict[Key, int] = {}
        names: dict[int, Key] = {}
        users: dict[str, bool] = {}
        for ns, codes in list(self.stacks.values()):  # (a copy: the sampler's thread may add one)
            keys = []
            for code in codes:
                ident = id(code)
                if ident in names:
                    key = names[ident]
                else:
                    key = names[ident] = _name(code)
                keys.append(key)
            if not _the_scripts(keys, resolve, users):
                continue
            seen: set[Key] = set()
            innermost = True
            for key in keys:
                if key is PASSED or key is OURS:
                    continue  # (ours: only outside the script's frames, its launch)
                if innermost:
                    self_ns[key] = self_ns.get(key, 0) + ns
                    innermost = False
                if key not in seen:
                    seen.add(key)
                    total_ns[key] = total_ns.get(key, 0) + ns
        out = []
        for key, total in sorted(total_ns.items(), key=lambda kv: kv[1], reverse=True)[:limit]:
            path, line, function = key
            user = _user(path, resolve, users)
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


def _user(path: str, resolve: Callable[[str], str | None], users: dict[str, bool]) -> bool:
    known = users.get(path)
    if known is None:
        known = users[path] = resolve(path) is not None
    return known


Key = tuple[str, int, str]  # a function: file, first line, qualified name
OURS = ("", 0, "ours")  # a frame of the runner's
PASSED = ("", 0, "passed")  # a frame of the launch or of the import system: no row of its own


def _the_scripts(keys: list[Key], resolve: Callable[[str], str | None], users: dict[str, bool]) -> bool:
    """Whether a stack (innermost first) is the script's work: its outermost function (past
    the launch) is the user's (not our start-up or end), and no frame of ours runs inside the
    script's (our tick, a window's reading)."""
    rows = [i for i, key in enumerate(keys) if key is not OURS and key is not PASSED]
    if not rows or not _user(keys[rows[-1]][0], resolve, users):
        return False
    return all(key is not OURS for key in keys[: rows[-1]])


_LAUNCH = ("<frozen runpy>", "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")


def _name(code: CodeType) -> Key:
    """The function's row; ``OURS`` for the runner's frames; ``PASSED`` for the launch's
    (``runpy``) and the import system's machinery (an import's time is the importing
    function's, and its modules' own ``<module>`` rows)."""
    if is_runner_file(code.co_filename):
        return OURS
    if code.co_filename in _LAUNCH:
        return PASSED
    return (code.co_filename, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))
