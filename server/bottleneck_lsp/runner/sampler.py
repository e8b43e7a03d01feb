"""Wall and CPU time per source line of the main thread, from two kinds of looks.

Each look charges the time since the previous charge, at most what that kind of look can
vouch for, to one line of the user's files (the innermost one in the main thread's stack),
with the main thread's CPU clock alongside:

- a plain thread looks every ``interval`` (1 ms) through ``sys._current_frames()``. Torch
  ops release the GIL while they run, so it sees the line that is waiting in C, where a
  signal handler cannot (Python runs handlers between bytecodes only: a tick that falls
  inside a torch op is handled after it returns, often on the *next* line). Its looks
  count only while the main thread is in a C call: while the main thread runs Python it
  holds the GIL, and the thread's look waits for it and lands late, wherever the GIL is
  released next;
- a wall-clock timer (``ITIMER_REAL``, every ``signal_interval``: 0.5 ms) is handled in the
  main thread between bytecodes and at the end of calls. Its ticks arrive at fixed times;
  one handled on time (soon after it arrived) sees the line running now: Python, or a
  short C call that line made and that just returned. A late tick was held back by a C
  call; it charges the time since the last look, once, to the line of the C call the
  thread saw last (which ran until just now), and nothing to where it was handled. Unless
  every C call since the last check point is of the line where it is handled, and the
  thread saw another line: that call ended before the check point (a tick it held would
  have been handled there), so this line's call held the tick and is charged for it.
  And a tick on time at a check point that a C op of another line ran just before, with no
  check point of its own (an operator: ``y = x @ x`` then ``if time.perf_counter() > end``,
  or a ``while`` loop's jump back after it), may have arrived in that op: when the
  thread's last look, at most two of its intervals ago, saw that op running, the tick's
  interval is that line's (before: the cheap line got half of the loop's wall time).

So the time around a switch between Python and C is misplaced by about half an interval
(C time found just after a look at Python on another line gives half an interval back to
that line: the expected time before the call began), and a C call shorter than the
thread's interval that no look saw may go uncounted rather than onto the wrong line.
"Python time" is what the on-time ticks charged (and the thread's looks at Python code
when there is no timer). A C call that holds the GIL (``sorted`` of a long list) delays
both kinds of look until it returns; the tick it held is then handled at its end, the
thread has not looked for more than two of its intervals, and the whole time since the last
charge goes to that call's line (it once got one millisecond of each call: 5% of the time
of a loop measured at 55%). Threads other than the main one are counted apart, by wall
time per line.

The timer's phase (when its ticks arrive) is read from the kernel (``getitimer``) once the
timer runs, not from a clock read before ``setitimer``: a process preempted between the two
once had every tick of its run off by the delay, each then looked held back by a C call,
and a pure Python loop was charged nothing (in a CI run on a busy machine).

The timer is the process's one ``ITIMER_REAL`` (SIGALRM): when the script reaches for it
(``signal.alarm``, ``signal.setitimer(ITIMER_REAL)``, ``signal.signal(SIGALRM)``), the timer
stops and hands SIGALRM back as it was; the thread's looks go on alone.

The thread must never be the one to free a frame. A frame that ends while the thread holds
it keeps its locals until the last reference goes, and whoever drops that reference runs
their destructors, late and in the wrong thread: a DDP model freed after
``destroy_process_group()`` destroys its gloo process group from the reducer, which joins
gloo's thread while holding the GIL that thread waits for, and the rank hangs for ever.
So a look holds frames only while it copies what it needs from them (code, instruction,
line: the rest of the look works on those), and lets go of them only when the main thread
cannot have moved meanwhile: its innermost frame is still the one the look began with, at
the same instruction, so every frame of its stack the look holds is still running. Python
switches threads only at calls and backward jumps, and there is none between that check
and letting go. A look during which the main thread moved keeps its frames until the
process ends (the runner leaves by ``os._exit``, which frees nothing): rare, and small.
It keeps the second look at the stacks too: that look's frame of the main thread is
another one when the main thread moved (until 2026-12-03 it was dropped, and about one run
in six of ``tests/scripts/frees_late.py`` freed a local in this thread).
Other threads' frames are let go on the main thread's check alone: one of them may have
ended during the look (its thread ran at one of the look's switch points), and its locals
are then freed here. Keeping a look's frames whenever any thread moved would keep ended
frames, and the tensors they hold, for the whole run in a script with a busy Python thread
(any look can overlap that thread's turn with the GIL); the hang above came from the main
thread's objects. Not measured: how often another thread's frame ends during a look.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

from .bytecode import CHECKS_AFTER_PYTHON_CALLS, Site, c_ops_before, held_here, in_c_call, line_of
from .paths import FileClassifier, is_runner_file
from .peakrss import PeakWatch
from .provenance import CompiledGraph
from .stacks import StackTable

# The kernel's own view of the timer, kept before ``_TimerGuard`` wraps ``signal.getitimer``
# (a script's call to it hands the timer back; the sampler's own must not).
_getitimer = getattr(signal, "getitimer", None)

# The charges of a compile kept for ``disown_compile``: its first second or so (a compile of
# minutes would otherwise keep a tuple per look)
COMPILE_RUN_KEPT = 2_000


class _Line:
    __slots__ = ("cpu_ns", "function", "python_ns", "ticks", "wall_ns")

    def __init__(self, function: str) -> None:
        self.function = function
        self.wall_ns = 0
        self.cpu_ns = 0
        self.python_ns = 0
        self.ticks = 0


class _TimerGuard:
    """Hands SIGALRM and ITIMER_REAL back to the script the moment it reaches for them."""

    def __init__(self, sampler: ThreadSampler) -> None:
        self.sampler = sampler
        self.saved: dict[str, Any] = {}

    def install(self) -> None:
        for name in ("alarm", "setitimer", "signal", "getsignal", "getitimer"):
            self.saved[name] = getattr(signal, name)
        saved = self.saved

        def release() -> None:
            self.sampler.release_timer()

        def alarm(seconds: int) -> int:
            release()
            result: int = saved["alarm"](seconds)
            return result

        def setitimer(which: int, seconds: float, interval: float = 0.0) -> Any:
            if which == signal.ITIMER_REAL:
                release()
            return saved["setitimer"](which, seconds, interval)

        def getitimer(which: int) -> Any:
            if which == signal.ITIMER_REAL:
                release()
            return saved["getitimer"](which)

        def set_handler(signalnum: int, handler: Any) -> Any:
            if signalnum == signal.SIGALRM:
                release()
            return saved["signal"](signalnum, handler)

        def getsignal(signalnum: int) -> Any:
            if signalnum == signal.SIGALRM:
                release()
            return saved["getsignal"](signalnum)

        signal.alarm = alarm
        signal.setitimer = setitimer
        signal.getitimer = getitimer
        signal.signal = set_handler
        signal.getsignal = getsignal

    def uninstall(self) -> None:
        for name, value in self.saved.items():
            setattr(signal, name, value)
        self.saved = {}


def _on_stack(frame: FrameType | None, function: str) -> bool:
    """Whether a function of that name is running in ``frame`` or one of its callers."""
    while frame is not None:
        if frame.f_code.co_name == function:
            return True
        frame = frame.f_back
    return False


class ThreadSampler:
    """Samples the thread that creates it (the script's main thread)."""

    def __init__(
        self,
        files: FileClassifier,
        interval: float = 0.001,
        signal_interval: float = 0.0005,
        compiling: Callable[[], bool] | None = None,
    ) -> None:
        self.files = files
        # Whether torch.compile is compiling now (``compiletime.compiling_flag``): the time
        # charged meanwhile is also counted per line in ``compiling_ns``
        self.compiling = compiling
        self.compiling_ns: dict[tuple[str, int], int] = {}
        # the charges (line, wall, cpu, python) since torch.compile last began compiling, the
        # first COMPILE_RUN_KEPT: a compile that turns out to be ours gives them back
        # (``disown_compile``; torch says so within milliseconds of its start)
        self._compile_run: list[tuple[tuple[str, int], int, int, int]] = []
        # Whether torch is importing what it loads lazily (its compiler stack, inductor) for the
        # script now (``one_time``): in the one run that time stays on the line that made torch
        # import it, also counted per line in ``importing_ns`` (one-time work, as compiling)
        self.importing = False
        self.importing_ns: dict[tuple[str, int], int] = {}
        self._import_began = self._import_cpu = 0
        self._import_codes: tuple[Any, ...] = ()
        self._import_at: tuple[tuple[str, int], str] | None = None
        self.interval = interval
        self.signal_interval = signal_interval
        self.target = threading.get_ident()
        self.lines: dict[tuple[str, int], _Line] = {}
        self.other: dict[tuple[str, str, int], _Line] = {}  # (thread name, path, line)
        self.ticks = 0
        self.signal_looks = 0
        self.wall_ns = 0  # sampled in all
        self.cpu_ns = 0
        self.outside_ns = 0  # sampled while no frame of the user's files was on the stack
        self.overhead_ns = 0  # the sampler thread's own CPU time
        self.timer_released = False
        self._paths: dict[str, str | None] = {}
        self._wrappers: dict[str, CompiledGraph] = {}  # torch.compile's generated code (``compiled_graph``)
        self._named_codes: dict[tuple[CodeType, str], CodeType] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._thread_looked = 0  # when the thread last ran (it needs the GIL to run at all)
        self._last_wall = 0
        self._last_cpu = 0
        self._last_signal = 0
        self._last_charge = 0
        self._c_seen: tuple[tuple[str, int], str] | None = None  # the last look saw a C call there
        self._python_seen: tuple[tuple[str, int], str] | None = None  # ... or Python running there
        # The thread's own last look, when it saw a C call: (line, function, when, stack)
        self._thread_c: tuple[tuple[str, int], str, int, tuple[Any, ...]] | None = None
        self._signal_ns = int(signal_interval * 1e9)
        self._late_ns = int(signal_interval * 1.25e9)
        self._held_ns = int(signal_interval * 0.16e9)  # handled this long after it arrived: held
        self._blocked_ns = int(2 * interval * 1e9)  # the thread has not run for this long: kept out
        self._timer_start = 0  # the timer's ticks arrive at this + k * interval
        self.late_signals = 0
        self._busy = False  # a look is charging: a signal arriving meanwhile skips its turn
        self._paused = False  # time set aside (torch's compiler stack loading): charged nowhere
        self.paused_ns = 0
        self._paused_at = 0
        self._pauses = 0  # pauses not yet resumed (they nest)
        # Called with the interrupted frame at each of the timer's ticks, in the main thread
        # (``windows.py`` opens and closes its windows there)
        self.on_tick: Callable[[FrameType], None] | None = None
        self.on_release: Callable[[], None] | None = None  # ... and when the script takes the timer
        # ... and whether one of its windows records now: the time charged meanwhile is also
        # counted per line in ``windowed_ns`` (a line no window saw: ``RankedLine.unrecorded``)
        self.windowed: Callable[[], bool] | None = None
        self.windowed_ns: dict[tuple[str, int], int] = {}
        self.ours_ns = 0  # set aside: our own Python running in a window
        self.peak = PeakWatch()  # the process's peak RSS, on the lines that raised it
        self.stacks = StackTable()  # the main thread's time per stack (the function table)
        self._c_codes: tuple[Any, ...] = ()  # the stack of the C call in ``_c_seen``
        self._previous_handler: Any = None
        self._kept: list[Any] = []  # per look during which the main thread moved: its frames
        self._guard = _TimerGuard(self)
        try:
            self._clock: int | None = time.pthread_getcpuclockid(self.target)
        except (AttributeError, OSError):
            self._clock = None  # no per-thread CPU clock here: CPU time is not reported
        # Other threads' CPU clocks (ident -> clock id, its reading at the last look): a
        # thread blocked in a lock, an event, a queue or I/O spends wall time at its line
        # but no CPU time, and the threads column says it waited rather than ran.
        self._other_clocks: dict[int, tuple[int, int]] = {}

    # -- the looks -------------------------------------------------------------------------
    def _capture(
        self, frame: FrameType | None, held: list[Any] | None, codes: list[Any] | None = None
    ) -> list[Site]:
        """The sites of ``frame``'s stack, innermost first, up to the first of the user's
        files known as such (files not seen before are resolved later, by ``_user_site``).
        Attribute reads only. ``held``: where the thread keeps each frame it reaches;
        ``codes``: where the whole stack's code objects and offsets go, ``[code, offset, ...]``
        (``stacks.Stack``; the walk then goes on to the end)."""
        paths = self._paths
        sites: list[Site] = []
        found = False
        while frame is not None:
            code = frame.f_code
            if codes is not None:
                codes.append(code)
                codes.append(frame.f_lasti)
            if not found:
                path = paths.get(code.co_filename, "")
                if path is not None:  # the user's, or not known yet
                    sites.append((code, frame.f_lasti, frame.f_lineno or 0))
                    if path:
                        if codes is None:
                            break
                        found = True
            frame = frame.f_back
            if held is not None:
                held.append(frame)
        return sites

    def _user_site(self, sites: list[Site]) -> tuple[str, Site] | None:
        """The innermost of ``sites`` in the user's files, and its path. A compiled graph's
        wrapper at a kernel's call stands for the line the kernel was made from
        (``compiled_graph``)."""
        paths = self._paths
        for site in sites:
            name = site[0].co_filename
            path = paths.get(name, "")
            if path == "":
                graph = self._wrappers.get(name)
                if graph is not None:  # (never cached in ``paths``: ``_capture`` keeps its frames)
                    placed = self._kernel_site(graph, site)
                    if placed is not None:
                        return placed
                    continue
                path = paths[name] = self.files.resolve(name)
            if path is not None:
                return path, site
        return None

    def compiled_graph(self, graph: CompiledGraph) -> None:
        """torch.compile made ``graph`` (``provenance.py``): a look at its wrapper's call of a
        kernel goes to a line the kernel was made from (in turn, by their ops, for a fused
        kernel), as if that line ran it. A backward graph's stay on the ``.backward()`` line,
        as eager backward ops' do."""
        if graph.backward:
            return
        for name in {graph.wrapper, os.path.realpath(graph.wrapper)}:
            self._wrappers[name] = graph
            self._paths.pop(name, None)

    def _kernel_site(self, graph: CompiledGraph, site: Site) -> tuple[str, Site] | None:
        kernel = graph.at_line.get(site[2])
        if kernel is None:
            return None
        place = kernel.pick()
        code = self._named_codes.get((site[0], place.function))
        if code is None:
            code = self._named_codes[(site[0], place.function)] = site[0].replace(co_name=place.function)
        return place.file, (code, -1, place.line)

    def _key(self, sites: list[Site]) -> tuple[str, int] | None:
        """The user's line a look at ``sites`` is charged to."""
        found = self._user_site(sites)
        return None if found is None else (found[0], line_of(found[1]))

    def _charge(
        self,
        table: dict[Any, _Line],
        key: Any,
        function: str,
        wall: int,
        cpu: int,
        python: int,
        look: int = 1,
    ) -> None:
        entry = table.get(key)
        if entry is None:
            entry = table[key] = _Line(function)
        entry.ticks += look
        entry.wall_ns += wall
        entry.cpu_ns += cpu
        entry.python_ns += python

    def _compiled(self, key: tuple[str, int], wall: int, cpu: int, python: int) -> None:
        """Of the time just charged to ``key``, ``wall`` (``cpu``, ``python``) ran while
        torch.compile compiled: kept for ``disown_compile`` too."""
        self.compiling_ns[key] = self.compiling_ns.get(key, 0) + wall
        if len(self._compile_run) < COMPILE_RUN_KEPT:
            self._compile_run.append((key, wall, cpu, python))

    def _charge_main(self, key: tuple[str, int], function: str, wall: int, cpu: int, python: bool) -> None:
        """Charge the main thread's time since the last charge to ``key``. Time found in a C
        call right after a look saw Python on another line began on that line: the C call
        started somewhere between that look and the next tick, which would have seen it
        running Python (half a timer interval, on average, goes back to the Python line)."""
        compiling = self.compiling is not None and self.compiling()
        if not compiling and self._compile_run:
            self._compile_run = []
        before = self._python_seen
        if not python and before is not None and before[0] != key and wall > 0:
            part = min(wall, self._signal_ns if not self.timer_released else wall) // 2
            part_cpu = cpu * part // wall
            self._charge(self.lines, before[0], before[1], part, part_cpu, part, look=0)
            if compiling:
                self._compiled(before[0], part, part_cpu, part)
            wall, cpu = wall - part, cpu - part_cpu
        self._charge(self.lines, key, function, wall, cpu, wall if python else 0)
        if compiling:
            self._compiled(key, wall, cpu, wall if python else 0)
        # (compiling: one-time work, never set apart with a window's time)
        windowed = not compiling and self.windowed is not None and self.windowed()
        if windowed:
            self.windowed_ns[key] = self.windowed_ns.get(key, 0) + wall
        self.peak.look(key, windowed)
        self._python_seen = (key, function) if python else None

    def _cpu_fraction(self) -> float:
        """How much of the time since the last look the main thread spent on a CPU."""
        clock = self._clock
        now = time.perf_counter_ns()
        cpu_now = time.clock_gettime_ns(clock) if clock is not None else 0
        wall, cpu = now - self._last_wall, cpu_now - self._last_cpu
        self._last_wall, self._last_cpu = now, cpu_now
        return min(cpu / wall, 1.0) if wall > 0 and clock is not None else 0.0

    def _charge_to(
        self, key: tuple[str, int], function: str, now: int, span: int, codes: tuple[Any, ...]
    ) -> None:
        """As ``_look`` charges a C call's time, to a line known already (``codes``: the
        stack it was seen at)."""
        quantum = max(min(span, now - self._last_charge), 0)
        self._last_charge = now
        if self._paused:
            self._c_seen = self._python_seen = None
            return
        self.ticks += 1
        self.wall_ns += quantum
        cpu = int(quantum * self._cpu_fraction())
        self.cpu_ns += cpu
        self.stacks.charge(codes, quantum)
        self._charge_main(key, function, quantum, cpu, False)
        self._c_seen, self._c_codes = (key, function), codes

    def _look(
        self, sites: list[Site], now: int, span: int, python: bool, codes: tuple[Any, ...] = ()
    ) -> None:
        """Charge the time since the last charged look, at most ``span`` ns (this kind of
        look's own period: what it can vouch for), to the user's line in a stack
        (``sites``, innermost first; ``codes``: the whole stack's, for the function table)."""
        quantum = max(min(span, now - self._last_charge), 0)
        self._last_charge = now
        self._c_seen = None
        if self._paused:
            self._python_seen = None
            return
        if (
            python
            and sites
            and self.windowed is not None
            and self.windowed()
            and is_runner_file(sites[0][0].co_filename)
        ):
            # our own Python in a window of the one run (the line marker's handler, the
            # windows' own tick): not the script's time
            self.ours_ns += quantum
            self._python_seen = None
            self._cpu_fraction()  # (the CPU clock moves on with it)
            return
        self.ticks += 1
        self.wall_ns += quantum
        cpu = int(quantum * self._cpu_fraction())
        self.cpu_ns += cpu
        self.stacks.charge(codes, quantum)
        found = self._user_site(sites)
        if found is None:
            self.outside_ns += quantum
            self._python_seen = None
            return
        path, site = found
        key = (path, line_of(site))
        self._charge_main(key, site[0].co_name, quantum, cpu, python)
        if not python:
            self._c_seen, self._c_codes = (key, site[0].co_name), codes

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        """The timer, in the main thread between bytecodes. On time (the previous tick was
        handled one interval ago), the main thread is running Python here. Late (a tick
        was held back by a C call and is handled at the next check point, often a line
        later), it says nothing: the thread's looks cover that C call."""
        if self._busy or self.importing or frame is None or threading.get_ident() != self.target:
            return
        if self.on_tick is not None:
            # (busy meanwhile: a tick handled inside it returns at once)
            self._busy = True
            try:
                self.on_tick(frame)
            finally:
                self._busy = False
        now = time.perf_counter_ns()
        gap, self._last_signal = now - self._last_signal, now
        self._busy = True
        try:
            # How long ago the latest tick arrived (the timer keeps its phase): a tick handled
            # well after it arrived was held back by a C call, even one handled soon after the
            # previous (late) tick.
            held = (now - self._timer_start) % self._signal_ns
            if gap <= self._late_ns and held <= self._held_ns:
                # On time: Python ran here, or a C call shorter than an interval that this
                # line made and that just returned (handlers run at the end of a call).
                self.signal_looks += 1
                codes: list[Any] = []
                sites = self._capture(frame, None, codes)
                python = not in_c_call(frame.f_code, frame.f_lasti)
                earlier = self._thread_c
                if earlier is not None and now - earlier[2] <= self._blocked_ns:
                    found = self._user_site(sites)
                    if found is not None and found[1] is sites[0]:  # a check point of the user's code
                        code, lasti, _line = found[1]
                        before = c_ops_before(code, lasti, line_of(found[1]))
                        if earlier[0][0] == found[0] and earlier[0][1] in before:
                            # Handled at a check point (the end of a call, a loop's jump
                            # back) that a C op of another line ran just before, with no
                            # check point of its own (an operator: ``y = x @ x`` then
                            # ``if time.perf_counter() > end``, or the loop's ``while``):
                            # the thread saw that op running, and the tick arrived in it.
                            self._charge_to(
                                earlier[0], earlier[1], now, min(gap, self._signal_ns), earlier[3]
                            )
                            return
                self._look(sites, now, min(gap, self._signal_ns), python, tuple(codes))
                return
            self.late_signals += 1
            seen, self._c_seen = self._c_seen, None  # that C call is over: charged once
            seen_codes = self._c_codes
            if held_here(frame.f_code, frame.f_lasti):
                held_codes: list[Any] = []
                sites = self._capture(frame, None, held_codes)
                # Python 3.10 also checks at the end of a call to a Python function: the C
                # call the thread saw in a function no longer on the stack (the callee, now
                # returned) held it.
                callee = CHECKS_AFTER_PYTHON_CALLS and seen is not None and not _on_stack(frame, seen[1])
                if (seen is None or seen[0] != self._key(sites)) and not callee:
                    # A C call of this line held it, one no look saw: shorter than the
                    # thread's interval, or one that held the GIL (``sorted`` of a long
                    # list), which kept the thread from looking at all until now: then the
                    # whole time since the last charge is that call's. The call the thread
                    # saw, if any, ended before the last check point: a tick it held would
                    # have been handled there.
                    blocked = now - self._thread_looked > self._blocked_ns
                    span = gap if blocked else min(gap, 2 * self._signal_ns)
                    self._look(sites, now, span, False, tuple(held_codes))
                    self._c_seen = None
                    return
            if seen is not None:
                # The C call the thread saw last ran until just now (this tick waited for
                # it): the rest of its time is its line's (as seen then: frames move on).
                key, function = seen
                wall = max(now - self._last_charge, 0)
                self._last_charge = now
                self.ticks += 1
                self.wall_ns += wall
                cpu = int(wall * self._cpu_fraction())
                self.cpu_ns += cpu
                self.stacks.charge(seen_codes, wall)
                self._charge_main(key, function, wall, cpu, False)
        finally:
            self._busy = False

    def _run(self) -> None:
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # the timer is the main thread's
        own = time.thread_time_ns
        names = {t.ident: t.name for t in threading.enumerate()}
        me = threading.get_ident()
        target = self.target
        timer = self._previous_handler is not None
        handler = ThreadSampler._on_signal.__code__
        last = time.perf_counter_ns()
        while not self._stop.wait(self.interval):
            begin = own()
            now = time.perf_counter_ns()
            span, last = now - last, now
            if self._paused or self.importing:
                continue
            # -- holding frames: copy what the look needs, then let go (module docstring)
            frames = sys._current_frames()
            held: list[Any] = [frames]
            top = frames.get(target)
            if top is None:  # the main thread has ended
                break
            code, lasti = top.f_code, top.f_lasti
            if code is not handler:
                # Not when the timer's handler has just begun: a GIL held by a long C call
                # is let go at the handler's first instruction, and this look then comes
                # from waiting behind that call (the handler must still see it blocked)
                self._thread_looked = now
            main_codes: list[Any] = []
            main = self._capture(top, held, main_codes)
            others = [
                (ident, self._capture(frame, held))
                for ident, frame in frames.items()
                if ident not in (target, me)
            ]
            again = sys._current_frames()
            try:
                still = again[target]
            except KeyError:
                still = None
            if still is not top or top.f_lasti != lasti:  # the main thread moved: keep them
                # ``again`` too: it holds the main thread's frame as it was then, which may
                # be another than ``top`` and may have ended since (Python can switch
                # threads right after ``sys._current_frames()`` returns)
                held.append(again)
                self._kept.append(held)
            del frames, top, held, again, still  # (no switch between the test and this)
            # -- the look, on copies
            # In a C call (the GIL released, or this look could not run): on time, and
            # what only this thread can see. Running Python: the timer's looks are the
            # ones on time there (this look waited for the GIL); without the timer, this.
            in_c = in_c_call(code, lasti)
            if in_c or not timer or self.timer_released:
                self._busy = True
                try:
                    self._look(main, now, span, not in_c, tuple(main_codes))
                finally:
                    self._busy = False
            # what that look charged, when it saw a C call (``_look`` keeps it in ``_c_seen``)
            seen_c = self._c_seen if in_c else None
            self._thread_c = (seen_c[0], seen_c[1], now, self._c_codes) if seen_c is not None else None
            for ident, sites in others:
                found = self._user_site(sites)
                if found is not None:
                    name = names.get(ident)
                    if name is None:
                        names = {t.ident: t.name for t in threading.enumerate()}
                        name = names.get(ident, str(ident))
                    path, site = found
                    cpu = self._other_cpu(ident)
                    self._charge(self.other, (name, path, line_of(site)), site[0].co_name, span, cpu, 0)
            self.overhead_ns += own() - begin

    def _other_cpu(self, ident: int) -> int:
        """Another thread's CPU time since this thread last read its clock (0 the first
        time, and where it has no clock)."""
        known = self._other_clocks.get(ident)
        try:
            clock = known[0] if known is not None else time.pthread_getcpuclockid(ident)
            now = time.clock_gettime_ns(clock)
        except (AttributeError, OSError, OverflowError):
            return 0
        self._other_clocks[ident] = (clock, now)
        return max(now - known[1], 0) if known is not None else 0

    # -- control -----------------------------------------------------------------------------
    def start(self) -> None:
        """From the main thread, where the timer's handler must run."""
        self.peak = PeakWatch()  # (the script's start)
        self._last_wall = self._last_signal = self._last_charge = time.perf_counter_ns()
        self._thread_looked = self._last_charge  # (its first look is an interval away)
        self._last_cpu = time.clock_gettime_ns(self._clock) if self._clock is not None else 0
        if hasattr(signal, "setitimer") and threading.get_ident() == threading.main_thread().ident:
            if signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None):
                self._previous_handler = signal.signal(signal.SIGALRM, self._on_signal)
                asked = time.perf_counter_ns()
                signal.setitimer(signal.ITIMER_REAL, self.signal_interval, self.signal_interval)
                self._timer_start = self._timer_phase(asked)
                self._guard.install()
        self._thread = threading.Thread(target=self._run, name="bottleneck-sampler", daemon=True)
        self._thread.start()

    def _timer_phase(self, fallback: int) -> int:
        """A time at which the timer's tick arrived, or would have: the next expiry as the
        kernel has it, less one interval. The clock read before ``setitimer`` is not enough:
        a process preempted between the two (a busy machine, CI) put every tick of the run
        off by the delay, each one then looked held back by a C call, and a pure Python
        loop was charged nothing at all. A read that took long (preempted) is done again."""
        read = _getitimer
        if read is None:
            return fallback
        for _ in range(5):
            before = time.perf_counter_ns()
            remaining = read(signal.ITIMER_REAL)[0]
            after = time.perf_counter_ns()
            if remaining > 0 and after - before <= 20_000:
                return (before + after) // 2 + int(remaining * 1e9) - self._signal_ns
        return fallback

    def pause(self) -> None:
        """From the main thread: set the time from now until ``resume`` aside (charged to no
        line, not in ``wall_s``). Pauses nest: the time resumes at the last ``resume``."""
        self._pauses += 1
        if self._pauses > 1:
            return
        self._paused = True
        self._c_seen = self._python_seen = None
        self._paused_at = time.perf_counter_ns()

    def disown_compile(self) -> None:
        """From the main thread, as the compile in progress turns out to be the profiler's
        (torch's record of why it compiles again, ``dynamo_log.py``, which comes after its
        start): the time charged to lines since it began goes back off them (their wall, CPU
        and compile time), set aside as a pause's is (measured: 3-11 ms of it stayed on the
        calling line, and made its hover say it compiled). The function table keeps it."""
        run, self._compile_run = self._compile_run, []
        for key, wall, cpu, python in run:
            line = self.lines.get(key)
            if line is None:
                continue
            line.wall_ns -= wall
            line.cpu_ns -= cpu
            line.python_ns -= python
            self.compiling_ns[key] = self.compiling_ns.get(key, 0) - wall
            self.wall_ns -= wall
            self.cpu_ns -= cpu
            self.paused_ns += wall

    def one_time(self, begin: bool) -> None:
        """From ``begin=True`` until ``begin=False``, torch imports what it loads lazily (its
        compiler stack, ``compilerstack.py``), from the thread that calls this. No look is
        taken meanwhile (a look walks the import's stack of 50-100 frames: it slowed the
        import by a quarter); at the end the import's time, timed here, is charged to the
        user's line that made it, as that line's one-time import work (``importing_ns``),
        with its CPU time and its stack for the function table."""
        now = time.perf_counter_ns()
        if begin:
            self._import_began = now
            self._import_cpu = time.thread_time_ns()
            codes: list[Any] = []
            frame: FrameType | None = sys._getframe(1)
            while frame is not None and is_runner_file(frame.f_code.co_filename):
                frame = frame.f_back  # (the import watcher's frames, ours)
            sites = self._capture(frame, None, codes)
            self._import_codes = tuple(codes)
            found = self._user_site(sites)
            self._import_at = None if found is None else ((found[0], line_of(found[1])), found[1][0].co_name)
            self.importing = True
            return
        if not self.importing:
            return
        self.importing = False
        wall, cpu = now - self._import_began, time.thread_time_ns() - self._import_cpu
        self._last_charge = self._last_wall = now  # (the next look charges from here)
        self._last_cpu = time.clock_gettime_ns(self._clock) if self._clock is not None else 0
        self._c_seen = self._python_seen = None
        if self._paused or wall <= 0:
            return
        self.ticks += 1
        self.wall_ns += wall
        self.cpu_ns += cpu
        self.stacks.charge(self._import_codes, wall)
        if self._import_at is None:
            self.outside_ns += wall
            return
        key, function = self._import_at
        self._charge(self.lines, key, function, wall, cpu, wall)
        self.importing_ns[key] = self.importing_ns.get(key, 0) + wall
        self.peak.look(key, False)

    def paused_until_now(self) -> int:
        """Nanoseconds set aside so far, a pause in progress included."""
        now = time.perf_counter_ns()
        return self.paused_ns + (now - self._paused_at if self._paused else 0)

    def resume(self) -> None:
        self._pauses = max(self._pauses - 1, 0)
        if self._pauses or not self._paused:
            return
        now = time.perf_counter_ns()
        self.paused_ns += now - self._paused_at
        self._last_wall = self._last_charge = now
        self._last_cpu = time.clock_gettime_ns(self._clock) if self._clock is not None else 0
        self._c_seen = self._python_seen = None
        self._paused = False

    def release_timer(self) -> None:
        """Stop the timer and give SIGALRM back as it was (the script wants it)."""
        if self._previous_handler is None:
            return
        self._guard.uninstall()
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, self._previous_handler)
        self._previous_handler = None
        self.timer_released = True
        if self.on_release is not None:  # (ticks end here: the one run's windows with them)
            self.on_release()

    def stop(self) -> None:
        if self._previous_handler is not None:
            self.release_timer()
            self.timer_released = False
        if self._thread is None:
            return
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._thread = None

    # -- results -----------------------------------------------------------------------------
    def document(self, functions: bool = True) -> dict[str, Any]:
        """Per line: wall, CPU and Python time of the main thread; shares of the sampled
        wall (and CPU) time. Other threads' lines apart, by wall time. Also while the sampler
        runs (the one run's progress: ``functions`` False), from copies of its tables."""

        def share(part: int, total: int) -> float:
            return round(part / total, 6) if total > 0 else 0.0

        ranked = sorted(self.lines.items(), key=lambda kv: kv[1].wall_ns, reverse=True)
        compiling = self.compiling_ns

        def compiled(key: tuple[str, int]) -> dict[str, float]:
            ns = compiling.get(key, 0)
            found = {"compiling_s": round(ns / 1e9, 6)} if ns > 0 else {}
            imported = self.importing_ns.get(key, 0)
            if imported > 0:
                found["importing_s"] = round(imported / 1e9, 6)
            raised = self.peak.raised_bytes(key)
            if raised > 0:
                found["rss_raised_bytes"] = raised
            if self.windowed is not None:
                found["windowed_s"] = round(self.windowed_ns.get(key, 0) / 1e9, 6)
            return found

        others = sorted(self.other.items(), key=lambda kv: kv[1].wall_ns, reverse=True)
        return {
            "interval_s": self.interval,
            "signal_interval_s": self.signal_interval,
            "ticks": self.ticks,
            "signal_looks": self.signal_looks,
            "late_signals": self.late_signals,
            "kept_looks": len(self._kept),
            "timer_released": self.timer_released,
            "wall_s": round(self.wall_ns / 1e9, 6),
            "cpu_s": round(self.cpu_ns / 1e9, 6) if self._clock is not None else None,
            "outside_s": round(self.outside_ns / 1e9, 6),
            "sampler_cpu_s": round(self.overhead_ns / 1e9, 6),
            **(
                {"windowed_s": round(sum(self.windowed_ns.values()) / 1e9, 6)}
                if self.windowed is not None
                else {}
            ),
            "peak_rss": self.peak.document(),
            "functions": self.stacks.functions(self.files.resolve) if functions else [],
            **({"flame": self.stacks.flame(self.files.resolve)} if functions else {}),
            "lines": [
                {
                    "file": path,
                    "line": line,
                    "function": s.function,
                    "ticks": s.ticks,
                    "wall_s": round(s.wall_ns / 1e9, 6),
                    "cpu_s": round(s.cpu_ns / 1e9, 6),
                    "python_s": round(s.python_ns / 1e9, 6),
                    "wall_share": share(s.wall_ns, self.wall_ns),
                    "cpu_share": share(s.cpu_ns, self.cpu_ns),
                    **compiled((path, line)),
                }
                for (path, line), s in ranked
            ],
            "threads": [
                {
                    "thread": thread,
                    "file": path,
                    "line": line,
                    "function": s.function,
                    "wall_s": round(s.wall_ns / 1e9, 6),
                    "cpu_s": round(s.cpu_ns / 1e9, 6) if self._clock is not None else None,
                }
                for (thread, path, line), s in others[:50]
            ],
        }
