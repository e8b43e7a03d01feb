"""The project a script belongs to: the nearest folder above it that a repository or a
Python project starts in, as pytest, ruff and editors find theirs. Its files are the
user's own too (a ``scripts/train.py`` that imports ``src/mypkg/model.py``), as the
workspace folder is in the editor. Never the home folder or the filesystem's root: a home
kept in git would make everything under it the user's."""

from __future__ import annotations

import os

MARKERS = (".git", ".hg", "pyproject.toml", "setup.py", "setup.cfg")


def project_root(script: str) -> str | None:
    """The nearest folder holding the script (its own included) with one of ``MARKERS``,
    or None. Named as the script's path names it (``/tmp/...`` where ``/tmp`` is a link,
    as on macOS: the other roots and the script are compared as given), else through the
    links the script's path takes."""
    for folder in (os.path.dirname(os.path.abspath(script)), os.path.dirname(os.path.realpath(script))):
        found = _marked_above(folder)
        if found is not None:
            return found
    return None


def _marked_above(folder: str) -> str | None:
    home = os.path.realpath(os.path.expanduser("~"))
    while True:
        if os.path.realpath(folder) == home or folder == os.path.dirname(folder):
            return None
        if any(os.path.exists(os.path.join(folder, marker)) for marker in MARKERS):
            return folder
        folder = os.path.dirname(folder)
