"""Which script a command means: the script URI it is given, or the script whose hot lines
are in the file it names, or the last one profiled."""

from __future__ import annotations

from typing import Any

from pygls import uris

from ...job.spec import JobError
from ...schema.model import Document
from ..jobspec import script_path
from ..server import BottleneckServer


def named_script(args: tuple[Any, ...]) -> str | None:
    """The path of the script URI a command's arguments start with, or None when none is
    given (no argument, or null); ``JobError`` when it is not a file URI.

    Positional and optional, read here rather than by a typed parameter: pygls structures
    each typed parameter of a command from one argument and refuses a call with fewer
    (``arguments: []``, which clients send for "every script"), or with more."""
    if not args or args[0] is None:
        return None
    return script_path(args[0])


def script_of(ls: BottleneckServer, path: str) -> str:
    """The profiled script a file stands for: itself when it has a result, else the script
    whose hot lines are in it (a helper module; the last one profiled first), else itself."""
    if path in ls.state.results:
        return path
    uri = uris.from_fs_path(path)
    holders = [s for s, files in ls.state.bases.items() if uri in files and s in ls.state.results]
    if ls.state.last_script in holders:
        return ls.state.last_script
    return holders[0] if holders else path


def last_result(ls: BottleneckServer, args: tuple[Any, ...]) -> tuple[str, Document]:
    """The script a command names (its URI argument, or the file of the user's own code it
    annotated; else the last one profiled) and its last result; JobError says what is missing."""
    named = named_script(args)
    script = script_of(ls, named) if named is not None else ls.state.last_script
    doc = ls.state.results.get(script) if script else None
    if script is None or doc is None:
        raise JobError("No profile yet: run bottleneck.profile on a script first.")
    return script, doc
