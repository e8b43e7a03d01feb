"""Which files are the user's own, and where profiler file names point on disk."""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Iterable

_PACKAGE_DIR = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_LIBRARY_MARKERS = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def _library_dirs(roots: list[str]) -> list[str]:
    dirs = {_PACKAGE_DIR}
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        real = os.path.realpath(prefix) if prefix else ""
        # A prefix holding the user's root (a project under /usr/local/src) stays in.
        if real and real != os.sep and not any(_is_under(r, real) for r in roots):
            dirs.add(real)
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.realpath(path))
    return sorted(dirs)


def _is_under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# torch.compile's generated code (inductor's wrappers and kernels): never the user's, even
# where its cache lies under the user's folder (TMPDIR or TORCHINDUCTOR_CACHE_DIR there)
_GENERATED_MARKER = os.sep + "torchinductor_"
_GENERATED_VARIABLES = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")


def _generated(real: str) -> bool:
    if _GENERATED_MARKER in real:
        return True
    for variable in _GENERATED_VARIABLES:
        folder = os.environ.get(variable)
        if folder and _is_under(real, os.path.realpath(folder)):
            return True
    return False


_runner_files: dict[str, bool] = {}


def is_runner_file(file_name: str) -> bool:
    """Whether a code object's file is part of this package (seen through any link)."""
    known = _runner_files.get(file_name)
    if known is None:
        known = os.path.isabs(file_name) and _is_under(os.path.realpath(file_name), _PACKAGE_DIR)
        _runner_files[file_name] = known
    return known


class FileClassifier:
    """Maps file names as the profilers report them to the user's files on disk.

    A user file lies under one of ``roots`` and not under the interpreter's prefixes,
    the standard library, any site-packages folder, or this package. Results are
    cached per name: the profilers repeat the same few names millions of times.
    """

    def __init__(self, roots: Iterable[str], search_dirs: Iterable[str] = ()) -> None:
        self.roots = [os.path.realpath(r) for r in roots]
        self.search_dirs = list(search_dirs)
        self._excluded = _library_dirs(self.roots)
        self._cache: dict[str, str | None] = {}

    def claim(self, file_name: str) -> None:
        """Count a name with no file as the user's (the one run's calibration code)."""
        self._cache[file_name] = file_name

    def unclaim(self, file_name: str) -> None:
        self._cache.pop(file_name, None)

    def is_user(self, file_name: str) -> bool:
        """Whether a file name (a code object's, as the profilers report it) is the user's."""
        return self.resolve(file_name) is not None

    def user_files(self) -> set[str]:
        """The user's files resolved so far (their paths)."""
        return {path for path in list(self._cache.values()) if path is not None}

    def resolve(self, file_name: str) -> str | None:
        """The absolute path of a user file, or None when the name is not the user's."""
        try:
            return self._cache[file_name]
        except KeyError:
            pass
        result = self._resolve(file_name)
        self._cache[file_name] = result
        return result

    def _resolve(self, file_name: str) -> str | None:
        if not file_name or file_name.startswith("<") or file_name == "~":
            return None
        if os.path.isabs(file_name):
            candidates = [file_name]
        else:
            bases = [*self.search_dirs, *sys.path, os.getcwd(), *self.roots]
            candidates = [os.path.join(b or os.getcwd(), file_name) for b in bases]
        for candidate in candidates:
            if os.path.isfile(candidate):
                return self._classify(os.path.abspath(candidate))
        return None

    def _classify(self, path: str) -> str | None:
        real = os.path.realpath(path)
        if any(marker in real for marker in _LIBRARY_MARKERS) or _generated(real):
            return None
        if any(_is_under(real, d) for d in self._excluded):
            return None
        if any(_is_under(real, r) for r in self.roots):
            return path
        return None
