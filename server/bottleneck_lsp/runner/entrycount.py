"""Entries into the user's functions, counted as cProfile counts them, for less.

The "passes disagree" check (``analysis.disagreements``) compares, function by function,
how often each pass entered the user's functions. The cprofile pass has cProfile's counts;
the cpu pass records no Python calls (its lines come from the line marker), so it counts
entries itself, around the script only:

- Python 3.12 and later: ``sys.monitoring`` with PY_START, PY_RESUME and PY_THROW, the
  events cProfile itself counts there (a call, a generator's resumption, a ``throw()``
  into it), all threads, as cProfile counts them there. A code object that is not the
  user's gets ``DISABLE`` back: after its first entry it is never reported again, so
  torch's and the standard library's calls cost nothing, and the interpreter stays on
  its specialised path.
- Python 3.10 and 3.11: a cProfile profiler without timing table (``subcalls=False,
  builtins=False``). Any profile hook takes these interpreters off their fast path, so
  this one costs what cProfile costs (measured in benchmarks/autograd_body.py).

Standard library only: this runs in the user's interpreter.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any

Entry = tuple[str, int, str, int]  # file name, first line, function, entries


class EntryCounter:
    """Counts entries into the code objects ``is_user`` accepts; ``enable`` and ``disable``
    bracket the script, ``entries`` reads the counts."""

    def __init__(self, is_user: Callable[[CodeType], bool]) -> None:
        def safe(code: CodeType) -> bool:
            # a callback's exception would surface in the script, at the call it saw
            try:
                return bool(is_user(code))
            except Exception:  # noqa: BLE001 - not the user's, then
                return False

        self.is_user = safe
        self._monitoring: Any = getattr(sys, "monitoring", None)
        self._tool: int | None = None
        self._counts: dict[int, list[Any]] = {}  # id(code) -> [code, entries]
        self._profile: Any = None
        self.kind = "sys.monitoring" if self._monitoring is not None else "cProfile"

    def enable(self) -> None:
        # A child the script forks (a DataLoader's worker) is not counted, and pays nothing
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self.disable)
        if self._monitoring is not None:
            tool = _free_tool(self._monitoring)
            if tool is not None:
                self._enable_monitoring(tool)
                return
            self.kind = "cProfile"  # every tool id taken (debuggers, coverage...): as 3.11
        import cProfile

        self._profile = cProfile.Profile(subcalls=False, builtins=False)
        self._profile.enable()

    def _enable_monitoring(self, tool: int) -> None:
        mon = self._monitoring
        counts = self._counts
        is_user = self.is_user
        disable = mon.DISABLE

        def entered(code: CodeType, _offset: int) -> Any:
            found = counts.get(id(code))
            if found is None:
                if not is_user(code):
                    return disable
                found = counts[id(code)] = [code, 0]  # kept alive: its id stays its own
            found[1] += 1
            return None

        def thrown(code: CodeType, _offset: int, _exc: object) -> None:
            # PY_THROW cannot be disabled per location (returning DISABLE is an error)
            found = counts.get(id(code))
            if found is None and is_user(code):
                found = counts[id(code)] = [code, 0]
            if found is not None:
                found[1] += 1

        mon.use_tool_id(tool, "bottleneck-lsp")
        events = mon.events
        mon.register_callback(tool, events.PY_START, entered)
        mon.register_callback(tool, events.PY_RESUME, entered)
        mon.register_callback(tool, events.PY_THROW, thrown)
        mon.set_events(tool, events.PY_START | events.PY_RESUME | events.PY_THROW)
        self._tool = tool

    def disable(self) -> None:
        if self._tool is not None:
            mon, tool = self._monitoring, self._tool
            self._tool = None
            mon.set_events(tool, 0)
            for event in (mon.events.PY_START, mon.events.PY_RESUME, mon.events.PY_THROW):
                mon.register_callback(tool, event, None)
            mon.free_tool_id(tool)
        if self._profile is not None:
            self._profile.disable()

    def entries(self) -> list[Entry]:
        """(file name, first line, function, entries) of each user function entered."""
        if self._profile is not None:
            return profile_entries(self._profile, self.is_user)
        return [(c.co_filename, c.co_firstlineno, c.co_name, n) for c, n in self._counts.values() if n]


def profile_entries(profile: Any, is_user: Callable[[CodeType], bool]) -> list[Entry]:
    """(file name, first line, function, entries) of each user function a
    ``cProfile.Profile`` saw entered."""
    return [
        (e.code.co_filename, e.code.co_firstlineno, e.code.co_name, e.callcount)
        for e in profile.getstats()
        if not isinstance(e.code, str) and e.callcount and is_user(e.code)
    ]


def _free_tool(mon: Any) -> int | None:
    """A sys.monitoring tool id nobody uses, from the ones PEP 669 leaves unnamed (3, 4)."""
    for tool in (3, 4):
        if mon.get_tool(tool) is None:
            return tool
    return None
