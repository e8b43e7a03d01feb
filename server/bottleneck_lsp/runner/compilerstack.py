"""torch's compiler stack (``torch._dynamo``, with sympy): loaded as start-up, or set aside
when the script loads it.

``import torch`` does not load it; torch does, over a second later, the first time a script
builds an optimizer, or calls ``torch.func``, ``torch.utils.checkpoint`` or
``torch.compile``. A line that triggers it would be charged that second of import work, in
every pass. So the runner either loads it before the script starts (``load``: the job
expects the script to need it, see ``job/compiler_guess.py`` on the host), or, when the script
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
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

MODULE = "torch._dynamo"


# What the first ``torch.compile(...)`` call imports after the stack, as ``-X importtime``
# lists it on torch 2.13 (0.68 s here): dynamo's repro hooks with aot_autograd inside them
# (0.15 s), then inductor's code generator (0.53 s, 592 modules), the default backend's; with
# ``backend="eager"``, aot_autograd first (0.15 s), then the hooks (2 ms), and no code
# generator. Anything else either imports took 2-4 ms.
AOT_AUTOGRAD = "torch._functorch.aot_autograd"
AFTER_DYNAMO = "torch._dynamo.repro.after_dynamo"
HOOKS = (AOT_AUTOGRAD, AFTER_DYNAMO)
COMPILE_FX = "torch._inductor.compile_fx"
COMPILE_CALL = (*HOOKS, COMPILE_FX)
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
        outermost = self.watcher.begin(self.name)
        imported = False
        try:
            self.inner.exec_module(module)
            imported = True
        finally:
            self.watcher.end(self.name, outermost, imported)


class LazyLoad(importlib.abc.MetaPathFinder):
    """Watches for the script making the ``WATCHED`` imports it has not made yet (the
    compiler stack, what a ``torch.compile`` call imports). ``on_begin`` and ``on_end`` run
    around them: once while any thread makes one, however they nest or overlap. ``seconds``
    says how long each import that succeeded took, counting only the outermost of a thread
    (one made inside another is in the other's time), ``where`` the innermost frame of the
    user's files when that outermost one began (``is_users(filename)``)."""

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
        self._thread = threading.local()  # depth, begun, searching: per importing thread
        self._lock = threading.Lock()
        self._active = 0  # threads inside a watched import

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
        here = self._thread
        if fullname not in self.pending or getattr(here, "searching", False):
            return None
        here.searching = True
        try:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        finally:
            here.searching = False
        self.pending.discard(fullname)  # once is all it can happen
        if not self.pending:
            self.uninstall()
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _TimedLoader(spec.loader, self, fullname)
        return spec

    def begin(self, name: str) -> bool:
        """Before a watched import runs; True when it is this thread's outermost."""
        here = self._thread
        depth = getattr(here, "depth", 0)
        here.depth = depth + 1
        if depth:
            return False
        for frame, line in traceback.walk_stack(sys._getframe(1)):
            if self.is_users(frame.f_code.co_filename):
                self.where[name] = (frame.f_code.co_filename, line)
                break
        here.begun = time.perf_counter()
        with self._lock:
            self._active += 1
            first = self._active == 1
        if first:
            _quietly(self.on_begin)
        return True

    def end(self, name: str, outermost: bool, imported: bool) -> None:
        here = self._thread
        here.depth -= 1
        if not outermost:
            return
        if imported:
            self.seconds[name] = time.perf_counter() - here.begun
        else:
            self.where.pop(name, None)
        with self._lock:
            self._active -= 1
            last = self._active == 0
        if last:
            _quietly(self.on_end)

    def seconds_of(self, names: Sequence[str]) -> float | None:
        """Seconds of those imports the script made, None when it made none of them."""
        found = [self.seconds[name] for name in names if name in self.seconds]
        return sum(found) if found else None

    def where_of(self, names: Sequence[str]) -> tuple[str, int] | None:
        return next((self.where[name] for name in names if name in self.where), None)


def _quietly(callback: Callable[[], None]) -> None:
    """A pass's set-aside callback: an error in it must not fail the script's import."""
    try:
        callback()
    except Exception:  # noqa: BLE001 - the time is then charged as it would have been
        traceback.print_exc()
