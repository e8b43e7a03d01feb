"""The sampled stacks of the main thread, and what is made of them: the function table
(the way py-spy's ``top`` shows it: per Python function, its *self* time, when it was the
innermost Python frame, running or in a C call it made, and its *total* time, anywhere on
the stack, counted once per look however deep it recurses), and the flame graph's folded
stacks (``flame``: each distinct stack, outermost first, with its time; the user's frames
at the line they were at, ``file:line``, library frames as their function).

The sampler charges each look's time to the look's whole stack (``charge``): its frames'
code objects and the offsets they were at, innermost first. A stack's key is the tuple of
the code objects' ids and the offsets, one dict update a look; the first look at a stack
keeps its code objects, so no id is reused while the table lives. Its size is bounded:
past ``MAX_STACKS`` distinct stacks a new one is kept without its offsets (its frames at
their function's first line), and past twice that its time is counted as dropped. The
runner's own frames (the script's launch, the sampler's and the windows' handlers) are left
out when the tables are made, with the launch's (``runpy``) and the import system's
machinery.

Standard library only: it runs in the user's interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import CodeType
from typing import Any

from .bytecode import line_of
from .paths import is_runner_file

MAX_FUNCTIONS = 200  # rows in the document, the most total time first
MAX_STACKS = 50_000  # distinct stacks kept with their offsets (see the module's docstring)
MAX_FLAME_STACKS = 5_000  # folded stacks in the document, the most time first (the rest: dropped_s)

# A look's stack: ``[code, offset, code, offset, ...]``, innermost first (``Sampler._capture``)
Stack = Sequence[Any]


class StackTable:
    def __init__(self) -> None:
        self.stacks: dict[tuple[int, ...], list[Any]] = {}  # key -> [ns, stack]
        self.dropped_ns = 0  # looks at stacks beyond the table's bound

    def charge(self, stack: Stack, ns: int) -> None:
        """``ns`` of the main thread's time, at a stack (``[code, offset, ...]``, innermost first)."""
        if not stack or ns <= 0:
            return
        key = (*map(id, stack[0::2]), *stack[1::2])
        entry = self.stacks.get(key)
        if entry is not None:
            entry[0] += ns
            return
        if len(self.stacks) >= MAX_STACKS:
            codes = stack[0::2]
            stack = [x for code in codes for x in (code, -1)]  # each frame at its function
            key = (*map(id, codes), *stack[1::2])
            entry = self.stacks.get(key)
            if entry is not None:
                entry[0] += ns
                return
            if len(self.stacks) >= 2 * MAX_STACKS:
                self.dropped_ns += ns
                return
        self.stacks[key] = [ns, tuple(stack)]

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
        for ns, stack in list(self.stacks.values()):  # (a copy: the sampler's thread may add one)
            keys = []
            for code in stack[0::2]:
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

    def flame(self, resolve: Callable[[str], str | None], limit: int = MAX_FLAME_STACKS) -> dict[str, Any]:
        """The folded stacks of the script's looks: ``{frames: [{file, line, function,
        user}], stacks: [{frames: [index, ...] (outermost first), time_s}], dropped_s}``, the
        most time first; ``dropped_s``: the looks of stacks past ``limit`` or past the
        table's bound. The user's frames are at their line (a call's, or the line running),
        library frames at their function's first line."""
        names: dict[int, Key] = {}
        users: dict[str, bool] = {}
        lines: dict[tuple[int, int], int] = {}
        folded: dict[tuple[Frame, ...], int] = {}
        for ns, stack in list(self.stacks.values()):
            codes = stack[0::2]
            keys = []
            for code in codes:
                ident = id(code)
                key = names.get(ident)
                if key is None:
                    key = names[ident] = _name(code)
                keys.append(key)
            if not _the_scripts(keys, resolve, users):
                continue
            frames = []
            for key, code, offset in zip(keys, codes, stack[1::2], strict=True):
                if key is PASSED or key is OURS:
                    continue
                line = key[1]
                if offset >= 0 and _user(key[0], resolve, users):
                    at = lines.get((id(code), offset))
                    if at is None:
                        at = lines[(id(code), offset)] = line_of((code, offset, 0))
                    line = at
                frames.append((key[0], line, key[2]))
            frames.reverse()
            path = tuple(frames)
            folded[path] = folded.get(path, 0) + ns
        table: dict[Frame, int] = {}
        listed = []
        dropped = self.dropped_ns
        for i, (path, ns) in enumerate(sorted(folded.items(), key=lambda kv: kv[1], reverse=True)):
            if i >= limit:
                dropped += ns
                continue
            listed.append(
                {"frames": [table.setdefault(f, len(table)) for f in path], "time_s": round(ns / 1e9, 6)}
            )
        frames_out = [
            {
                "file": resolve(f[0]) or f[0],
                "line": f[1],
                "function": f[2],
                "user": _user(f[0], resolve, users),
            }
            for f in table
        ]
        return {"frames": frames_out, "stacks": listed, "dropped_s": round(dropped / 1e9, 6)}


Frame = tuple[str, int, str]  # a frame of the flame graph: file, line, function


def _user(path: str, resolve: Callable[[str], str | None], users: dict[str, bool]) -> bool:
    known = users.get(path)
    if known is None:
        known = users[path] = resolve(path) is not None
    return known


Key = tuple[str, int, str]  # a function: file, first line, qualified name
OURS = ("", 0, "ours")  # a frame of the runner's
# a frame of the launch, of the import system, or the line marker's handler (a window's torch
# call runs under it: the script's time): no row of its own
PASSED = ("", 0, "passed")


def _the_scripts(keys: list[Key], resolve: Callable[[str], str | None], users: dict[str, bool]) -> bool:
    """Whether a stack (innermost first) is the script's work: its outermost function (past
    the launch) is the user's (not our start-up or end), and no frame of ours runs inside the
    script's (our tick, a window's reading)."""
    rows = [i for i, key in enumerate(keys) if key is not OURS and key is not PASSED]
    if not rows or not _user(keys[rows[-1]][0], resolve, users):
        return False
    return all(key is not OURS for key in keys[: rows[-1]])


_LAUNCH = ("<frozen runpy>", "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")
# torch's dispatch to a TorchFunctionMode (``handle_torch_function``): in a window, the way
# to the line marker, on the stack of every torch call the script makes there
_DISPATCH = "torch/overrides.py"


def _name(code: CodeType) -> Key:
    """The function's row; ``OURS`` for the runner's frames; ``PASSED`` for the launch's
    (``runpy``) and the import system's machinery (an import's time is the importing
    function's, and its modules' own ``<module>`` rows), and for the line marker's handler
    and torch's dispatch to it (the torch call it passes on, recorded in a window, is the
    calling line's)."""
    if is_runner_file(code.co_filename):
        return PASSED if code.co_name == "__torch_function__" else OURS
    if code.co_filename in _LAUNCH or code.co_filename.endswith(_DISPATCH):
        return PASSED
    return (code.co_filename, code.co_firstlineno, getattr(code, "co_qualname", code.co_name))
