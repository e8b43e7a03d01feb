"""torch's compiler stack (``torch._dynamo``, with sympy): loaded as start-up, or set aside
when the script loads it.

``import torch`` does not load it; torch does, over a second later, the first time a script
builds an optimizer, or calls ``torch.func``, ``torch.utils.checkpoint`` or
``torch.compile``. A line that triggers it would be charged that second of import work, in
every pass. So the runner either loads it before the script starts (``load``: the job
expects the script to need it, see ``compilerguess.py`` on the host), or, when the script
loads it unexpectedly, times the import and lets the pass set it aside (``LazyLoad``): the
sample pass stops charging time while it runs. A script that never needs it pays nothing.
What the first ``torch.compile(...)`` call imports after it (``COMPILE_CALL``: inductor's
code generator) is watched the same way: loaded first when the job's guess saw a
``torch.compile``, else set aside.

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


# What the first ``torch.compile(...)`` call imports after the stack, as ``-X importtime``
# lists it on torch 2.13 (0.68 s here): dynamo's repro hooks with aot_autograd (0.15 s), then
# inductor's code generator (0.53 s, 592 modules); anything else it imports took 2 ms.
COMPILE_CALL = ("torch._dynamo.repro.after_dynamo", "torch._inductor.compile_fx")
WATCHED = (MODULE, *COMPILE_CALL)


def loaded() -> bool:
    return MODULE in sys.modules


def unloaded() -> list[str]:
    """The watched imports this process has not made yet."""
    return [name for name in WATCHED if name not in sys.modules]


def load() -> float:
    """Import the compiler stack now; the seconds it took (0.0 when it was already
    loaded or does not import: the script will meet the same error)."""
    return _timed_import(MODULE)


def has_inductor() -> bool:
    return all(name in sys.modules for name in COMPILE_CALL)


def load_inductor() -> float:
    """Import what ``torch.compile`` needs now (after the stack); the seconds it took (0.0
    when it was already loaded or does not import)."""
    return sum(_timed_import(name) for name in COMPILE_CALL)


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

    def __init__(self, inner: Any, watcher: LazyLoad, name: str) -> None:
        self.inner = inner
        self.watcher = watcher
        self.name = name

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
        self.watcher.begin(self.name)
        try:
            self.inner.exec_module(module)
        finally:
            self.watcher.end(self.name)


class LazyLoad(importlib.abc.MetaPathFinder):
    """Watches for the script making the ``WATCHED`` imports it has not made yet (the
    compiler stack, inductor's code generator). ``on_begin`` and ``on_end`` run around them
    (in the thread that imports; once around an import made inside another); ``seconds``
    says how long each took (one made inside another is in the other's), ``where`` the
    innermost frame of the user's files then (``is_users(filename)``)."""

    def __init__(
        self,
        is_users: Callable[[str], bool],
        on_begin: Callable[[], None] = lambda: None,
        on_end: Callable[[], None] = lambda: None,
        names: Sequence[str] = WATCHED,
    ) -> None:
        self.is_users = is_users
        self.on_begin = on_begin
        self.on_end = on_end
        self.pending = {name for name in names if name not in sys.modules}
        self.seconds: dict[str, float] = {}
        self.where: dict[str, tuple[str, int]] = {}
        self._begun: dict[str, float] = {}
        self._depth = 0
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
        if fullname not in self.pending or self._searching:
            return None
        self._searching = True
        try:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        finally:
            self._searching = False
        self.pending.discard(fullname)  # once is all it can happen
        if not self.pending:
            self.uninstall()
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _TimedLoader(spec.loader, self, fullname)
        return spec

    def begin(self, name: str) -> None:
        for frame, line in traceback.walk_stack(sys._getframe(1)):
            if self.is_users(frame.f_code.co_filename):
                self.where[name] = (frame.f_code.co_filename, line)
                break
        self._begun[name] = time.perf_counter()
        self._depth += 1
        if self._depth == 1:
            self.on_begin()

    def end(self, name: str) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds[name] = time.perf_counter() - self._begun[name]
            self.on_end()

    def seconds_of(self, names: Sequence[str]) -> float | None:
        """Seconds of those imports the script made, None when it made none of them."""
        found = [self.seconds[name] for name in names if name in self.seconds]
        return sum(found) if found else None

    def where_of(self, names: Sequence[str]) -> tuple[str, int] | None:
        return next((self.where[name] for name in names if name in self.where), None)
