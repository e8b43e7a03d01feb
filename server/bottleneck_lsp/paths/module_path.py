"""Which file ``python -m NAME`` runs, found on disk without importing anything.

Importing the module's packages would run the user's code (their ``__init__``) in this
process: the job resolves the name by path instead, in the folders that ``python -m``
searches first (the working directory, then ``PYTHONPATH``), and the runner then runs the
module with runpy in the pass's own process, packages and all.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple


class ModuleLookupError(Exception):
    """The name is not a module of the user's: a message for the user."""


class Found(NamedTuple):
    file: str  # the file that runs as __main__ (a package's __main__.py)
    base: str  # the folder the top package was found in: the user's code starts there


def search_path(cwd: str, pythonpath: str | None) -> list[str]:
    """Where ``python -m`` looks first, in order: the working directory, then each entry of
    ``PYTHONPATH`` (relative ones from the working directory). Installed packages are not
    searched: ``-m`` profiles the user's own code."""
    dirs = [cwd]
    for entry in (pythonpath or "").split(os.pathsep):
        if entry:
            folder = os.path.abspath(os.path.join(cwd, entry))
            if folder not in dirs:
                dirs.append(folder)
    return dirs


def find_module_file(name: str, dirs: list[str]) -> Found:
    """The file ``python -m name`` would run, looked for in ``dirs``; raises ModuleLookupError
    with what was looked for."""
    parts = name.split(".")
    if not name or not all(p.isidentifier() for p in parts):
        hint = " (a file is profiled without -m)" if name.endswith(".py") or os.sep in name else ""
        raise ModuleLookupError(
            f"Not a module name: {name!r}: -m takes a dotted name such as pkg.train{hint}"
        )
    for base in dirs:
        # As Python's import system looks: a regular package, then a module, then a
        # namespace package (a folder without __init__.py).
        stem = os.path.join(base, *parts)
        regular = os.path.isfile(os.path.join(stem, "__init__.py"))
        if not regular and os.path.isfile(stem + ".py") and _packages_exist(base, parts[:-1]):
            return Found(stem + ".py", base)
        if os.path.isdir(stem) and _packages_exist(base, parts):
            main = os.path.join(stem, "__main__.py")
            if os.path.isfile(main):
                return Found(main, base)
            raise ModuleLookupError(
                f"{name} is a package with no __main__.py ({stem}): it cannot be run with -m; "
                f"name a module in it, or add {name}/__main__.py"
            )
    looked = ", ".join(dirs)
    wanted = os.path.join(*parts)
    raise ModuleLookupError(
        f"Module not found: {name} (looked for {wanted}.py and {wanted}{os.sep}__main__.py in {looked}); "
        "-m profiles a module of your own code: run from the folder that holds its package "
        "(--cwd), or add that folder to PYTHONPATH"
    )


def _packages_exist(base: str, packages: list[str]) -> bool:
    """Every enclosing package is a folder (regular, with ``__init__.py``, or a namespace
    package without)."""
    return all(os.path.isdir(os.path.join(base, *packages[: i + 1])) for i in range(len(packages)))


_RELATIVE_IMPORT = re.compile(rb"^[ \t]*from[ \t]+\.", re.MULTILINE)
_SOURCE_LIMIT = 4 * 1024 * 1024  # bytes read to look for a relative import


class Dotted(NamedTuple):
    name: str  # pkg.sub.train
    base: str  # the folder above the outermost package


def module_of_file(path: str) -> Dotted | None:
    """The dotted name a file in a package runs under with ``-m`` (``base``: the folder
    above its outermost package), or None when its folder is not a package."""
    folder = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    if not stem.isidentifier() or not os.path.isfile(os.path.join(folder, "__init__.py")):
        return None
    parts = [] if stem == "__main__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        name = os.path.basename(folder)
        if not name.isidentifier():
            return None
        parts.insert(0, name)
        folder = os.path.dirname(folder)
    return Dotted(".".join(parts), folder)


def uses_relative_imports(path: str) -> bool:
    """Whether a file has a relative import (``from . import x``): run as a file, Python
    stops there ("attempted relative import with no known parent package")."""
    try:
        with open(path, "rb") as handle:
            return _RELATIVE_IMPORT.search(handle.read(_SOURCE_LIMIT)) is not None
    except OSError:
        return False
