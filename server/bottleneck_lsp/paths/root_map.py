"""Paths recorded on one machine, found on this one: only ever under the folder given.

A recording or a result made elsewhere names files under the folder it was made in (its
root). Here they are looked for under a local folder that stands for it. A path outside
the recorded root, or one that climbs out of it (``..``), maps to nothing: a file from
someone else must not make the tool read, show or touch files elsewhere.
"""

from __future__ import annotations

import os


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def relative_to(path: str, root: str) -> str | None:
    """``path`` relative to ``root``, or None when it does not lie under it."""
    if not root or not os.path.isabs(path) or not under(path, root):
        return None
    rel = os.path.normpath(os.path.relpath(path, root))
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return None
    return rel


def outermost_root(roots: list[str], script: str) -> str:
    """The widest of a run's roots that holds its script (the workspace folder, or the
    ``--root`` given), else the script's folder: what a result's paths are relative to."""
    holding = [r for r in roots if r and under(script, r)]
    return min(holding, key=len) if holding else os.path.dirname(script)


class RootMap:
    def __init__(self, recorded_root: str, local_root: str) -> None:
        self.recorded_root = recorded_root
        self.local_root = os.path.abspath(local_root)

    def here(self, path: str) -> str | None:
        """Where a recorded absolute path is here, or None (see the module's docstring)."""
        rel = relative_to(path, self.recorded_root)
        return None if rel is None else self.join(rel)

    def join(self, rel: str) -> str | None:
        """A recorded relative path under the local root, or None when it climbs out."""
        rel = os.path.normpath(rel)
        if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
            return None
        here = os.path.normpath(os.path.join(self.local_root, rel))
        return here if under(here, self.local_root) else None
