"""Fork servers kept warm between profiles: one per interpreter (``bottleneck.keepWarm``).

The first profile with an interpreter starts its fork server (``processes.fork_server.ForkServer``: torch
imported, nothing of any script run) and the server keeps it; later profiles fork their
passes from it and pay no start-up. One ends after ``idle_s`` without a job, when the
settings it depends on change (the interpreter, keeping warm, forking: ``features.lifecycle.WARM_FIELDS``),
and when the language server ends. What it holds is logged.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..processes.fork_server import GONE_TIMEOUT_S, ForkServer, ForkServerError
from ..settings import declared

_KEEP_WARM, _IDLE_MINUTES = declared()["keep_warm"].key, declared()["warm_idle_minutes"].key


@dataclass(eq=False)
class _Warm:
    starting: asyncio.Future[ForkServer]
    users: int = 0
    idle: asyncio.TimerHandle | None = None
    retired: bool = False  # no new job gets it (settings changed, it died): it goes when its last job ends


class Lease:
    """One job's use of a warm fork server: ``server`` (None when none could start), and
    ``release`` when the job ends (once; a second call does nothing)."""

    def __init__(self, server: ForkServer | None, release: Callable[[], None] = lambda: None) -> None:
        self.server = server
        self._release: Callable[[], None] | None = release

    def release(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()


class WarmForks:
    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.idle_s = 15 * 60.0
        self._warm: dict[str, _Warm] = {}  # the one a new job gets, per interpreter
        self._retired: dict[_Warm, str] = {}  # no new job gets them; their jobs still run
        self._closing: set[asyncio.Future[None]] = set()

    async def acquire(self, python: str) -> Lease:
        """A lease on the warm fork server for ``python``, started if there is none; its
        ``server`` is None when one cannot start (the log says why; the job then starts its
        passes as it can). Release the lease when the job ends: the server a job got stays
        its own until then, whatever happens to the others."""
        warm = self._warm.get(python)
        if warm is not None and warm.starting.done() and _dead(warm.starting):
            self._retire(python, warm)  # dead (or unsafe): closed once its jobs are done
            warm = None
        if warm is None:
            warm = _Warm(asyncio.ensure_future(ForkServer.start(python)))
            self._warm[python] = warm
            warm.starting.add_done_callback(functools.partial(self._started, python, warm))
        warm.users += 1
        if warm.idle is not None:
            warm.idle.cancel()
            warm.idle = None
        try:
            server = await asyncio.shield(warm.starting)
        except ForkServerError:
            self._release(python, warm)
            return Lease(None)
        except BaseException:  # cancelled while it started: this job no longer uses it
            self._release(python, warm)
            if warm.starting.cancelled():  # ... or the start was (shutdown): none, then
                return Lease(None)
            raise
        return Lease(server, functools.partial(self._release, python, warm))

    def idle_for(self, idle_s: float) -> None:
        """``bottleneck.warmIdleMinutes`` changed: the idle ones now end ``idle_s`` from now."""
        self.idle_s = idle_s
        loop = asyncio.get_running_loop()
        for python, warm in self._warm.items():
            if warm.idle is not None:
                warm.idle.cancel()
                warm.idle = loop.call_later(idle_s, self._idle, python, warm)

    def retire(self, reason: str) -> None:
        """The settings changed: idle servers end now, busy ones when their jobs end; no new
        job gets one of them."""
        for python, warm in list(self._warm.items()):
            if not warm.users:
                self.log(f"fork server for {python} ends: {reason}")
            self._retire(python, warm)

    async def close(self) -> None:
        """End every fork server (the language server is shutting down)."""
        for python, warm in [*self._warm.items(), *((p, w) for w, p in self._retired.items())]:
            self._forget(python, warm)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    def kill(self) -> None:
        """Last resort at exit, synchronous: every fork server's group, at once."""
        for warm in [*self._warm.values(), *self._retired]:
            if warm.starting.done() and not warm.starting.cancelled() and warm.starting.exception() is None:
                warm.starting.result().kill()

    # -- inside ---------------------------------------------------------------------------
    def _started(self, python: str, warm: _Warm, starting: asyncio.Future[ForkServer]) -> None:
        if starting.cancelled():
            return
        problem = starting.exception()
        if problem is not None:
            self.log(f"no fork server for {python}: {problem}; each pass starts its own interpreter")
            return
        server = starting.result()
        if server.gone:  # it died between its "ready" and now
            self._died(python, warm)
            return
        server.on_lost = functools.partial(self._died, python, warm)
        rss = server.rss_mb()
        held = f", holding {rss:.0f} MB" if rss is not None else ""
        self.log(
            f"fork server for {python} ready in {server.ready_s:.1f} s (import torch "
            f"{server.startup.get('import_torch_s', 0.0):.2f} s){held}; it stays while idle for "
            f"{self.idle_s / 60:g} min (bottleneck.{_KEEP_WARM}, bottleneck.{_IDLE_MINUTES})"
        )

    def _died(self, python: str, warm: _Warm) -> None:
        """It ended by itself (killed, out of memory): an idle one is collected now (it
        stayed a zombie, and its folder on disk, until the next profile or its idle timer);
        one a job still uses goes when that job ends."""
        if self._warm.get(python) is not warm and warm not in self._retired:
            return  # being closed by us
        if not warm.starting.done() or warm.starting.cancelled() or warm.starting.exception():
            return
        self._retire(python, warm)
        saying = asyncio.ensure_future(self._say_died(python, warm.starting.result()))
        self._closing.add(saying)
        saying.add_done_callback(self._closing.discard)

    async def _say_died(self, python: str, server: ForkServer) -> None:
        # its socket closes a moment before it can be reaped: wait for its status
        try:
            await asyncio.wait_for(server.proc.wait(), GONE_TIMEOUT_S)
        except asyncio.TimeoutError:
            pass
        how = server.ended_how()
        said = f" ({how})" if how else ""
        self.log(f"fork server for {python} ended{said}: the next profile starts a new one")

    def _release(self, python: str, warm: _Warm) -> None:
        warm.users = max(warm.users - 1, 0)
        if warm.users:
            return
        if (
            warm.retired
            or self._warm.get(python) is not warm
            or (warm.starting.done() and _dead(warm.starting))
        ):
            self._forget(python, warm)
        else:
            loop = asyncio.get_running_loop()
            warm.idle = loop.call_later(self.idle_s, self._idle, python, warm)

    def _retire(self, python: str, warm: _Warm) -> None:
        """No new job gets it; it ends now if no job uses it, else when the last one ends."""
        warm.retired = True
        if self._warm.get(python) is warm:
            del self._warm[python]
        if warm.users:
            self._retired[warm] = python
        else:
            self._forget(python, warm)

    def _idle(self, python: str, warm: _Warm) -> None:
        if self._warm.get(python) is warm and not warm.users:
            self.log(f"fork server for {python} ends: idle for {self.idle_s / 60:g} min")
            self._forget(python, warm)

    def _forget(self, python: str, warm: _Warm) -> None:
        if self._warm.get(python) is warm:
            del self._warm[python]
        self._retired.pop(warm, None)
        if warm.idle is not None:
            warm.idle.cancel()
        if not warm.starting.done():
            warm.starting.cancel()  # still importing torch: ended now (``ForkServer.start``)
        closing = asyncio.ensure_future(_close(warm.starting))
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)


def _dead(starting: asyncio.Future[ForkServer]) -> bool:
    return starting.cancelled() or starting.exception() is not None or starting.result().gone


async def _close(starting: asyncio.Future[ForkServer]) -> None:
    try:
        server = await starting
    except (ForkServerError, asyncio.CancelledError):
        return
    await server.close()
