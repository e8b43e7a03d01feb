"""torch's compiler stack (``torch._dynamo``, with sympy): loaded as start-up, or set aside
when the script loads it.

``import torch`` does not load it; torch does, over a second later, the first time a script
builds an optimizer, or calls ``torch.func``, ``torch.utils.checkpoint`` or
``torch.compile``. A line that triggers it would be charged that second of import work, in
every pass. So the runner either loads it before the script starts (``load``: the job
expects the script to need it, see ``compilerguess.py`` on the host), or, when the script
loads it unexpectedly, times the import and lets the pass set it aside (``LazyLoad``): the
sample pass stops charging time while it runs. A script that never needs it pays nothing.

Standard library only, like the rest of the runner.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

MODULE = "torch._dynamo"


# what the first ``torch.compile(...)`` call imports after the stack (594 modules, 0.7 s here)
INDUCTOR = "torch._inductor.compile_fx"


def loaded() -> bool:
    return MODULE in sys.modules


def load() -> float:
    """Import the compiler stack now; the seconds it took (0.0 when it was already
    loaded or does not import: the script will meet the same error)."""
    return _timed_import(MODULE)


def load_inductor() -> float:
    """Import inductor's code generator now (after the stack); the seconds it took (0.0 when
    it was already loaded or does not import)."""
    return _timed_import(INDUCTOR)


def _timed_import(name: str) -> float:
    if name in sys.modules:
        return 0.0
    begin = time.perf_counter()
    try:
        __import__(name)
    except Exception:  # noqa: BLE001 - optional here
        return 0.0
    return time.perf_counter() - begin


class _TimedLoader(importlib.abc.Loader):
    """Runs the real loader's ``exec_module`` (the whole import: every submodule it pulls in
    is imported inside it), between the watcher's two calls."""

    def __init__(self, inner: Any, watcher: LazyLoad) -> None:
        self.inner = inner
        self.watcher = watcher

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self.inner, "create_module", None)
        return create(spec) if create is not None else None

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, ...
        return getattr(self.inner, name)

    def exec_module(self, module: ModuleType) -> None:
        # The module keeps the real loader (linecache, importlib.resources read it).
        module.__loader__ = self.inner
        if module.__spec__ is not None:
            module.__spec__.loader = self.inner
        self.watcher.begin()
        try:
            self.inner.exec_module(module)
        finally:
            self.watcher.end()


class LazyLoad(importlib.abc.MetaPathFinder):
    """Watches for the script loading the compiler stack. ``on_begin`` and ``on_end`` run
    around the import (in the thread that imports it); ``seconds`` is how long it took,
    ``where`` the innermost frame of the user's files then (``is_users(filename)``)."""

    def __init__(
        self,
        is_users: Callable[[str], bool],
        on_begin: Callable[[], None] = lambda: None,
        on_end: Callable[[], None] = lambda: None,
    ) -> None:
        self.is_users = is_users
        self.on_begin = on_begin
        self.on_end = on_end
        self.seconds = 0.0
        self.where: tuple[str, int] | None = None
        self._begun = 0.0
        self._searching = False

    def install(self) -> LazyLoad:
        sys.meta_path.insert(0, self)
        return self

    def uninstall(self) -> None:
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != MODULE or self._searching:
            return None
        self._searching = True
        try:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        finally:
            self._searching = False
        self.uninstall()  # once is all it can happen
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _TimedLoader(spec.loader, self)
        return spec

    def begin(self) -> None:
        for frame, line in traceback.walk_stack(sys._getframe(1)):
            if self.is_users(frame.f_code.co_filename):
                self.where = (frame.f_code.co_filename, line)
                break
        self._begun = time.perf_counter()
        self.on_begin()

    def end(self) -> None:
        self.seconds = time.perf_counter() - self._begun
        self.on_end()
