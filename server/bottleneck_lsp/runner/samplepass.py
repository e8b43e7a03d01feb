"""The sample pass, run first: the script at nearly its own speed, sampled line by line
(``sampler.py``), with the device's activity alone on a GPU (the CPU/GPU verdict).

Standard library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

from ..schema.contract import WINDOWS_NOTE
from . import compiletime, device, provenance, scriptprofiler
from .callsites import position_fields
from .dynamo_log import DynamoLog
from .paths import FileClassifier
from .profilerconfig import make_profiler
from .provenance import CompiledGraphs
from .rawsave import save_raw
from .sampler import ThreadSampler
from .windows import Windows

RAW_SUFFIX = ".sample.raw.json.gz"  # the sample pass's raw recording (``Job.raw_path``)
PLACED_AT_LEAST = 0.5  # of the script's wall time, placed on lines by the sample pass, or a note
PROGRESS_EVERY_S = 1.0  # the one run's progress is written at most this often (as windows close)


def device_recording(torch: Any) -> tuple[Any, str]:
    """A recording of the device's activity alone (kernels, memcpys: no CPU ops, no stacks),
    and its description: the whole run's, or one segment of it between windows."""
    return make_profiler(torch, with_stack=False, device="cuda", cpu=False)


class SamplePass:
    """The light pass, run first: a thread samples the main thread's line every
    millisecond (wall, CPU and Python time per line; see ``sampler.py``), and, with a GPU,
    the device's activity is recorded alone (no Python stacks, no CPU ops, no line marker).
    The script runs at nearly its own speed, so the busy time measured here against wall
    time decides the CPU/GPU verdict (a traced run inflates the CPU side)."""

    name = "sample"

    def __init__(
        self, files: FileClassifier, torch: Any = None, save_raw: str | None = None, script: str = ""
    ) -> None:
        self.files = files
        self.torch = torch
        self.script = script
        self.save_raw = save_raw
        self.sampler = ThreadSampler(files, compiling=compiletime.compiling_flag(torch))
        self.device: Any = None
        self.description = ""
        if torch is not None:
            self.device, self.description = device_recording(torch)
        # With windows on a GPU the device's recording pauses while each window records
        # (torch runs one profiler at a time; the window records the device too): its
        # recordings, one per stretch between windows, in order (``device`` the first)
        self.segments: list[Any] = []
        self.device_on = False  # the last segment records now
        self.device_error = ""  # why the segments ended early (the note says it)
        self.started = 0.0
        self.stopped = 0.0
        self.running = False
        self.device_until = 0.0  # when the device's recording ended
        self.device_paused_ns = 0  # time set aside (the sampler's) before that
        self._unyield: Callable[[], None] | None = None  # scriptprofiler, while it records
        self.script_profiler: scriptprofiler.Starter | None = None  # who started one, where
        self.windows: Windows | None = None  # the cpu pass, recorded in windows of this run
        self.dynamo: DynamoLog | None = None  # torch.compile's graph breaks and recompiles
        self.graphs: CompiledGraphs | None = None  # ... and the graphs it made (``provenance.py``)
        self.progress = ""  # where the one run's progress goes (``contract.progress_file``)
        self.progressed = 0.0  # when it was last written

    def record_windows(
        self, torch: Any, memory: bool, with_cprofile: bool, progress: str | None = None, device: bool = False
    ) -> None:
        """Record the cpu pass in windows of this run (``windows.py``), before ``start``;
        what was measured so far goes to ``progress`` as each window closes (``_progress``).
        ``device`` (on a GPU): the windows record the device's activity too (the cuda
        pass), and this pass's device recording pauses while they do."""
        on_gpu = "cuda" if device and self.device is not None else None
        self.windows = Windows(torch, self.files, self.sampler, memory, with_cprofile, device=on_gpu)
        self.windows.script = self.script
        if on_gpu is not None:
            self.windows.pause_device = self._pause_device
            self.windows.resume_device = self._resume_device
        if self.save_raw and self.save_raw.endswith(RAW_SUFFIX):
            # each window's recording beside this pass's (the job asks for them in a one run on
            # a GPU only: a CPU's --save-raw runs each pass apart, recorded whole)
            self.windows.raw_stem = self.save_raw[: -len(RAW_SUFFIX)]
        if progress is not None:
            self.progress = progress
            self.windows.on_close = self._progress
        self.sampler.on_tick = self.windows.tick
        self.sampler.on_release = self.windows.timer_taken
        windows = self.windows
        # (an import torch makes for the script is not recorded: its time is never set apart)
        self.sampler.windowed = lambda: windows.hooked and not windows.importing
        windows.calibrate(os.path.dirname(self.script) or os.getcwd())
        if self.graphs is not None:
            windows.attributor.compiled = self.graphs

    def listen_to_compile(self, torch: Any, undo: list[Callable[[], None]] | None = None) -> None:
        """Keep torch.compile's graph breaks and recompiles of this run (``dynamo_log.py``),
        and the graphs it makes, whose kernels go to the lines they were made from, in the
        sampler's looks and the windows' ops (``provenance.py``), from ``start`` to ``stop``.
        ``undo``: gets what puts inductor's settings back (``provenance.enable``)."""
        if provenance.enable(undo):
            self.graphs = CompiledGraphs(self.files)
            self.graphs.on_graph.append(self.sampler.compiled_graph)
            if self.windows is not None:
                self.windows.attributor.compiled = self.graphs
        self.dynamo = DynamoLog(torch, self.files, self.graphs)

    def start(self) -> None:
        if self.dynamo is not None and not self.dynamo.install():
            self.dynamo = None
        if self.dynamo is not None and self.windows is not None:
            # a compile the windows' line marker makes torch do again is ours: set aside
            self.dynamo.set_aside = (self._set_aside, self.sampler.resume)
        if self.device is not None:
            self._unyield = scriptprofiler.yield_to_script(self._yield_to_script)
        self.running = True
        if self.device is not None and (self.windows is None or self.windows.device is None):
            self._resume_device()
        self.started = time.perf_counter()
        if self.windows is not None:
            self.windows.start()  # (on a GPU, the device's recording starts as its first window ends)
            if self.device is not None and self.windows.profiler is None:
                self._resume_device()  # (no first window)
        self.sampler.start()

    def _set_aside(self) -> None:
        """A compile in progress is ours (``DynamoLog._set_aside``): what the sampler charged
        since it began, and its time from now, are set aside."""
        self.sampler.disown_compile()
        self.sampler.pause()

    def _progress(self) -> None:
        """A window was just read (in the timer's tick): what this run measured so far, as
        the sample pass's part with its windowed part, replaces the progress file (at most
        once a ``PROGRESS_EVERY_S``). Our work, set aside; a failure only skips it."""
        windows = self.windows
        if windows is None or windows.ended or time.perf_counter() - self.progressed < PROGRESS_EVERY_S:
            return  # (ended: the results follow)
        self.sampler.pause()
        try:
            samples = self.sampler.document(functions=False)
            for line in (*samples["lines"], *samples["threads"]):
                line.update(position_fields(line["file"], line["line"]))
            wall_s = time.perf_counter() - self.started - self.sampler.paused_until_now() / 1e9
            part = {
                "name": self.name,
                "status": "ok",
                "script_wall_s": round(wall_s, 6),
                "samples": samples,
                "windowed": {"name": "cpu", "status": "ok", **windows.so_far()},
            }
            written = self.progress + ".tmp"
            with open(written, "w", encoding="utf-8") as handle:
                json.dump(part, handle, separators=(",", ":"), allow_nan=False)
            os.replace(written, self.progress)
        except Exception:  # noqa: BLE001 - the end's results do not depend on it
            pass
        finally:
            self.sampler.resume()
            self.progressed = time.perf_counter()

    def profiler_compiles(self) -> compiletime.Timings:
        """The compiles the windows made torch do again, set aside (``DynamoLog``)."""
        return self.dynamo.profiler_compiles() if self.dynamo is not None else compiletime.NONE

    def compiled_at(self) -> list[tuple[str, int, float]]:
        """The lines the sampler found running while torch.compile compiled, and how long
        (seconds, the most first)."""
        found = sorted(self.sampler.compiling_ns.items(), key=lambda kv: kv[1], reverse=True)
        return [(path, line, ns / 1e9) for (path, line), ns in found if ns >= 10_000_000]

    def set_aside(self, begin: bool) -> None:
        """Time charged to no line, left out of the pass's wall time, from ``begin=True``
        until ``begin=False`` (torch's compiler stack loading, ``compilerstack.py``). In the
        one run (windows) it stays on the line that made torch import it, as one-time work:
        no other run pays it, and the bare run does."""
        if self.windows is not None:
            self.sampler.one_time(begin)
            self.windows.one_time(begin)
        elif begin:
            self.sampler.pause()
        else:
            self.sampler.resume()

    def _yield_to_script(self, here: bool) -> None:
        """The script starts torch's profiler itself (``scriptprofiler.py``): the device's
        recording ends (kept), and the verdict covers the part recorded. ``here`` False:
        started from another thread (said in the note)."""
        self._unyield = None
        self.script_profiler = scriptprofiler.starter(self.files.is_user, thread=not here)
        self._end_device()

    def _end_device(self) -> None:
        if self.device is None or self.device_until:
            return
        self.device_until = time.perf_counter()
        self.device_paused_ns = self.sampler.paused_until_now()  # set aside by then
        self._pause_device()

    def _pause_device(self) -> None:
        """The device's recording stops (a window opens, or the run ends); kept. Called from
        the windows, maybe inside the script's torch call: never raises into it."""
        if not self.device_on:
            return
        self.device_on = False
        device.settle(self.torch)
        try:
            self.segments[-1].__exit__(None, None, None)
        except Exception as exc:  # noqa: BLE001 - the verdict covers what the other segments hold
            self.segments.pop()
            self._device_failed(exc)

    def _resume_device(self) -> None:
        """The device's recording starts, or goes on after a window in a new segment (not
        after the run's end, nor once the script started a profiler of its own). Never
        raises into the script (see ``_pause_device``): a failure ends the segments."""
        if self.device is None or self.device_on or self.device_until or not self.running:
            return
        try:
            segment = self.device if not self.segments else device_recording(self.torch)[0]
            with scriptprofiler.ours():
                segment.__enter__()
        except Exception as exc:  # noqa: BLE001
            self._device_failed(exc)
            return
        self.segments.append(segment)
        self.device_on = True

    def _device_failed(self, exc: Exception) -> None:
        self.device_until = self.device_until or time.perf_counter()
        self.device_paused_ns = self.sampler.paused_until_now()
        self.device_error = f"the device's recording between windows failed: {type(exc).__name__}: {exc}"

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        if self.windows is not None:
            self.windows.stop()  # (before the sampler stops: its last window is read, the reading set aside)
        self.sampler.stop()
        self.stopped = time.perf_counter()
        if self._unyield is not None:
            self._unyield()
            self._unyield = None
        self._end_device()  # (from another thread: see AutogradPass.stop)
        if self.dynamo is not None:
            self.dynamo.uninstall()

    def finish(self) -> dict[str, Any]:
        begin = time.perf_counter()
        samples = self.sampler.document()
        for line in (*samples["lines"], *samples["threads"]):
            line.update(position_fields(line["file"], line["line"]))
        wall_ns = int((self.stopped - self.started) * 1e9) - self.sampler.paused_ns
        out: dict[str, Any] = {"script_wall_s": round(wall_ns / 1e9, 6), "samples": samples, "notes": []}
        placed = samples["wall_s"] - samples["outside_s"]
        if wall_ns >= 50_000_000 and placed < PLACED_AT_LEAST * wall_ns / 1e9:
            # 97-99% of it normally: the shares are then of a part of the run only
            heard = samples["signal_looks"] + samples["late_signals"]
            due = int(wall_ns / 1e9 / samples["signal_interval_s"])
            # A few ticks may come before the script blocks the signal (in CI: some did)
            unheard = heard < 0.1 * due and not samples["timer_released"]
            why = (
                f"its timer's signal, SIGALRM, reached the main thread {heard} times of about {due}: "
                "does the script block it?"
                if unheard
                else "its looks came late: a busy machine?"
            )
            out["notes"].append(
                f"the sample pass placed only {placed / (wall_ns / 1e9):.0%} of the script's "
                f"{wall_ns / 1e9:.2f} s on its lines ({why}); the wall time column covers that "
                "part of the run only"
            )
        if self.device is not None:
            events = [e for segment in self.segments for e in segment.kineto_results.events()]
            if self.save_raw:
                out["notes"].append(save_raw(self.save_raw, self, wall_ns, [], events))
            activities, runtime = device.from_kineto(events)
            if self.windows is not None and self.windows.device is not None:
                # the device's work while the windows recorded it (their runtime calls and
                # waits are not in the segments': the verdict's waits stay unknown)
                activities += [a for a in self.windows.activities if a.on_device or a.name in device.LOADING]
            recorded_ns = wall_ns
            said = self.script_profiler
            if said is not None:
                recorded_ns = int((self.device_until - self.started) * 1e9) - self.device_paused_ns
                recorded_ns = max(0, min(wall_ns, recorded_ns))
                if said.thread and not events:
                    # ended from that thread, the main thread's recording gave nothing back
                    recorded_ns = 0
                    what = "the device's activity recorded until then was lost (stopped from that thread)"
                else:
                    what = (
                        f"the device's activity was recorded for the first {recorded_ns / 1e9:.2f} s "
                        f"of the script's {wall_ns / 1e9:.2f} s only, and the CPU/GPU verdict covers "
                        "that part"
                    )
                out["notes"].append(
                    f"{said.words()}: {what} ({scriptprofiler.OWN_PROFILER_ADVICE[bool(said.library)]})"
                )
            if self.device_error:
                out["notes"].append(
                    f"{self.device_error}: the CPU/GPU verdict counts the device's work recorded until "
                    "then and in the windows, over the whole run (it may read the device less busy "
                    "than it was)"
                )
            out["device"] = device.summarize(activities, recorded_ns, runtime)
            out["device_event_count"] = sum(1 for a in activities if a.on_device)
        compiled = self.dynamo.document() if self.dynamo is not None else None
        if compiled is not None:
            out["dynamo"] = compiled
        windows = self.windows
        if windows is not None:
            windowed = windows.finish()
            if windows.spans:
                recorded = sum(span for _, span, _ in windows.spans)
                cut = _take_out_recording(samples, windowed.get("lines", []), windows.per_call_s)
                out["notes"].append(
                    f"{WINDOWS_NOTE} {len(windows.spans)} window(s) of this run, {recorded:.2f} s "
                    f"of it: what recording cost the lines there ({windows.per_call_s * 1e6:.1f} us a "
                    f"torch call, measured before the script ran: {cut:.2f} s in all), the line marker's own "
                    f"Python ({self.sampler.ours_ns / 1e9:.2f} s) and reading the windows "
                    f"({windows.read_s:.2f} s) are left out of the wall time"
                )
            out["windowed"] = windowed
            if windows.device is not None:
                out["windowed_device"] = windows.finish_device()
        out["postprocess_s"] = round(time.perf_counter() - begin, 6)
        return out


def _take_out_recording(samples: dict[str, Any], recorded: list[dict[str, Any]], per_call_s: float) -> float:
    """The wall time the windows' recording added to each line, taken out of the sampled
    lines (at most the line's time in the windows): its recorded torch calls times what
    recording costs one. Shares follow. Returns the seconds taken out."""
    counts = {(r["file"], r["line"]): r.get("count", 0) for r in recorded}
    taken = 0.0
    for line in samples["lines"]:
        windowed = line.get("windowed_s") or 0.0
        cut = min(windowed, counts.get((line["file"], line["line"]), 0) * per_call_s)
        if cut <= 0:
            continue
        line["wall_s"] = round(line["wall_s"] - cut, 6)
        line["windowed_s"] = round(windowed - cut, 6)
        line["cpu_s"] = round(max(line["cpu_s"] - cut, 0.0), 6)
        taken += cut
    if taken:
        samples["wall_s"] = round(samples["wall_s"] - taken, 6)
        samples["windowed_s"] = round((samples.get("windowed_s") or 0.0) - taken, 6)
        total = samples["wall_s"]
        for line in samples["lines"]:
            line["wall_share"] = round(line["wall_s"] / total, 6) if total > 0 else 0.0
    return taken
