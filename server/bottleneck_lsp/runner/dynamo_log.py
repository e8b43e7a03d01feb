"""torch.compile's own records of the run, on the user's lines: each graph break with
TorchDynamo's reason, each recompile with the guard that failed and the line of the call
that made it, a recompile limit hit, and each ``torch.compile`` call with what became of
what it compiled (graphs, breaks, recompiles).

Read from what the real compile records, not from a second trace (``torch._dynamo.explain``
compiles again): TorchDynamo's structured trace (``torch._logging._internal.trace_log``,
the records ``TORCH_TRACE`` writes), listened to while the script runs. Detected by
feature: a torch without that log gives nothing and the run goes on. The trace's level is
set to DEBUG only while the script runs, as ``TORCH_TRACE`` sets it (torch then builds the
records' texts: graphs and guards as text, a cost of compile time, not of compiled code).

Standard library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .paths import FileClassifier
from .provenance import CompiledGraphs

_BREAK_AT = re.compile(r"Graph break in user code at (?P<file>.+):(?P<line>\d+)")
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<name>.+)_at_\d+$")
_GUARD_ID = re.compile(r"^\d+/\d+: ")  # "0/1: tensor 'x' size mismatch ..." -> the guard alone
_LIMIT = "recompile limit exceeded"
_MODE_STACK = "check_torch_function_mode_stack"  # the guard our line marker's mode makes fail
MAX_EVENTS = 500  # distinct breaks and recompiles kept: a loop of recompiles stays bounded


def base_name(code_name: str) -> str:
    """The function a frame TorchDynamo compiled belongs to: a resume function after a graph
    break (``torch_dynamo_resume_in_f_at_22``) is ``f``'s."""
    match = _RESUME.match(code_name)
    return match.group("name") if match else code_name


_GUARD_SOURCE = re.compile(r"^(?P<guard>.*?)\s{2,}# (?P<code>.*?)\s+# \S+:\d+ in \S+")


def guard_words(text: str) -> str:
    """A failed guard as torch words it, with the source it guards where torch names it:
    ``___stack0 == 3.5  # if y.sum().item() > 0:  # a.py:6 in f`` -> a value the compiled
    code was specialized on (``if y.sum().item() > 0:``) changed."""
    match = _GUARD_SOURCE.match(text.strip())
    if match is None:
        return text.strip()
    guard, code = match.group("guard").strip(), match.group("code").strip()
    if guard.startswith("___stack"):
        return f"a value the compiled code was specialized on changed (`{code}`; guard `{guard}`)"
    return f"{guard} (at `{code}`)"


def break_reason(text: str) -> tuple[str, str, list[str]]:
    """(reason, explanation, hints) of a graph break's record: torch's own words."""
    lines = [line.strip() for line in text.splitlines()]
    explained = next((i for i, line in enumerate(lines) if line.startswith("Explanation:")), None)
    if explained is None:
        head = next((line for line in lines if line.startswith("Graph Break Reason:")), "")
        return head.removeprefix("Graph Break Reason:").strip() or "graph break", "", []
    reason = next(
        (lines[i] for i in range(explained - 1, -1, -1) if lines[i] and not lines[i].startswith("Graph ")),
        "graph break",
    )
    explanation = lines[explained].removeprefix("Explanation:").strip()
    hints = [line.removeprefix("Hint:").strip() for line in lines[explained:] if line.startswith("Hint:")]
    return reason, explanation, list(dict.fromkeys(hints))[:3]


class _Listener(logging.Handler):
    def __init__(self, log: DynamoLog) -> None:
        super().__init__(logging.DEBUG)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.log.record(getattr(record, "metadata", None) or {}, getattr(record, "payload", None))
        except Exception:  # noqa: BLE001 - never in the way of the compile
            pass


class DynamoLog:
    def __init__(self, torch: Any, files: FileClassifier, graphs: CompiledGraphs | None = None) -> None:
        """``graphs``: where inductor's records of the graphs it compiles go (``provenance.py``)."""
        self.torch = torch
        self.files = files
        self.compiled = graphs
        internal = getattr(getattr(torch, "_logging", None), "_internal", None)
        self.logger: logging.Logger | None = getattr(internal, "trace_log", None)
        self.listener = _Listener(self)
        self.level = logging.NOTSET
        self.frames: dict[int, str] = {}  # frame_id -> the compiled function's base name
        self.graphs: dict[str, int] = {}  # function -> graphs compiled
        self.breaks: dict[tuple[str, int, str], dict[str, Any]] = {}
        self.recompiles: dict[tuple[str, int, str, str], dict[str, Any]] = {}
        self.calls: list[dict[str, Any]] = []  # torch.compile calls: site, target's names
        # compiles (frame_id, frame_compile_id) made again because our recording windows put
        # the line marker's mode on torch's mode stack: not the script's doing, left out
        self.ours: set[tuple[Any, Any]] = set()
        # (the sampler's pause and resume, where windows run): the time torch spends on those
        # compiles, and on their lazy backwards, is set aside, not the lines' (``_set_aside``)
        self.set_aside: tuple[Callable[[], None], Callable[[], None]] | None = None
        self.aside: list[float] = [0, 0.0, 0, 0.0]  # compiles, their seconds; backwards, theirs
        self._aside_since: dict[str, tuple[float, bool]] = {}  # compile id -> (began, backward)
        self._callbacks: Any = None  # torch's compile callback handler, once ours are on it
        self._compile: Any = None

    # -- listening ----------------------------------------------------------------------------
    def install(self, wrap: bool = True) -> bool:
        """Listen to the trace; ``wrap``: and to torch.compile's calls (their lines)."""
        logger = self.logger
        if logger is None or not isinstance(logger, logging.Logger):
            return False
        self.level = logger.level
        if not logger.isEnabledFor(logging.DEBUG):
            logger.setLevel(logging.DEBUG)
        logger.addHandler(self.listener)
        if wrap:
            self._wrap_compile()
        return True

    def uninstall(self) -> None:
        for compile_id in list(self._aside_since):
            self._resume(compile_id)
        if self._callbacks is not None:
            with contextlib.suppress(Exception):
                self._callbacks.remove_start_callback(self._compile_started)
                self._callbacks.remove_end_callback(self._compile_ended)
            self._callbacks = None
        logger = self.logger
        if logger is None or self.listener not in logger.handlers:
            return
        logger.removeHandler(self.listener)
        logger.setLevel(self.level)
        if self._compile is not None and getattr(self.torch, "compile", None) is not self._compile:
            self.torch.compile = self._compile

    def record(self, metadata: dict[str, Any], payload: Any) -> None:
        if self.compiled is not None:  # (a graph compiled again for our windows runs too)
            self.compiled.record(metadata, payload)
        frame = metadata.get("frame_id")
        if (frame, metadata.get("frame_compile_id")) in self.ours:
            return
        if "dynamo_start" in metadata:
            stack = metadata["dynamo_start"].get("stack") or []
            if stack and isinstance(frame, int):
                self.frames[frame] = base_name(str(stack[-1].get("name", "")))
        elif "compilation_metrics" in metadata:
            self._metrics(frame, metadata["compilation_metrics"])
        elif "artifact" in metadata and isinstance(payload, str):
            name = metadata["artifact"].get("name")
            if name == "dynamo_graph_break_reason":
                self._graph_break(frame, payload)
            elif name == "recompile_reasons":
                self._recompile(frame, metadata.get("frame_compile_id"), payload)

    def _metrics(self, frame: Any, metrics: dict[str, Any]) -> None:
        function = self.frames.get(frame, "") if isinstance(frame, int) else ""
        fail = str(metrics.get("fail_reason") or "")
        if _LIMIT in fail.lower():
            reason = _GUARD_ID.sub("", str(metrics.get("recompile_reason") or ""))
            self._add_recompile(function, reason or fail.splitlines()[0], limit=True)
        elif metrics.get("graph_op_count") and not metrics.get("fail_type"):
            self.graphs[function] = self.graphs.get(function, 0) + 1

    def _graph_break(self, frame: Any, text: str) -> None:
        place = self._user_place(text)
        if place is None:
            return
        reason, explanation, hints = break_reason(text)
        key = (place[0], place[1], reason)
        found = self.breaks.get(key)
        if found is not None:
            found["count"] += 1
        elif len(self.breaks) < MAX_EVENTS:
            function = self.frames.get(frame, "") if isinstance(frame, int) else ""
            self.breaks[key] = {
                "file": place[0],
                "line": place[1],
                "reason": reason,
                "explanation": explanation,
                "hints": hints,
                "count": 1,
                "function": function,
            }

    def _user_place(self, text: str) -> tuple[str, int] | None:
        """The innermost line of the user's files in a graph break's record."""
        found: tuple[str, int] | None = None
        head = _BREAK_AT.search(text)
        candidates = [(m.group("file"), int(m.group("line"))) for m in _FRAME.finditer(text)]
        if head is not None:
            candidates.insert(0, (head.group("file"), int(head.group("line"))))
        for file, line in candidates:
            path = self.files.resolve(file)
            if path is not None:
                found = (path, line)
        return found

    def _recompile(self, frame: Any, compile_id: Any, payload: str) -> None:
        """A recompile: one failed guard per compiled version tried. Where each failed on torch's
        mode stack alone, our windows' line marker made it (``ours``); else the script did, and
        the first other guard says why."""
        try:
            reasons = json.loads(payload)
        except ValueError:
            reasons = [payload]
        reasons = [str(r) for r in reasons] if isinstance(reasons, list) else [str(reasons)]
        theirs = [r for r in reasons if _MODE_STACK not in r]
        if not theirs:
            self.ours.add((frame, compile_id))
            self._set_aside(f"{frame}/{compile_id}", backward=False)
            return
        function = self.frames.get(frame, "") if isinstance(frame, int) else ""
        self._add_recompile(function, guard_words(_GUARD_ID.sub("", theirs[0].splitlines()[0])))

    # -- the profiler's compiles, set aside ---------------------------------------------------
    def _set_aside(self, compile_id: str, backward: bool) -> None:
        """A compile of ours began (its record says so, as it starts): from now until torch's
        callback at its end, the sampler charges no line (``set_aside``). The bare run does
        not make it: its seconds would read as the script's compile time on the calling
        line. Only from the main thread (the sampler's pause is the main thread's)."""
        if self.set_aside is None or compile_id in self._aside_since:
            return
        if threading.current_thread() is not threading.main_thread():
            return
        if self._callbacks is None:
            handler = getattr(sys.modules.get("torch._dynamo"), "callback_handler", None)
            if handler is None or not hasattr(handler, "register_end_callback"):
                return  # (a torch without them: the compile stays on its line, as before)
            handler.register_start_callback(self._compile_started)
            handler.register_end_callback(self._compile_ended)
            self._callbacks = handler
        self._aside_since[compile_id] = (time.perf_counter(), backward)
        self.set_aside[0]()

    def _resume(self, compile_id: str) -> None:
        found = self._aside_since.pop(compile_id, None)
        if found is None or self.set_aside is None:
            return
        began, backward = found
        self.aside[2 if backward else 0] += 1
        self.aside[3 if backward else 1] += time.perf_counter() - began
        self.set_aside[1]()

    def _compile_started(self, args: Any) -> None:
        """torch's callback as a compile starts: the lazy backward of a graph we made again
        (compiled at its first ``.backward()``, under its forward's compile id) is ours too."""
        trigger = getattr(getattr(args, "callback_trigger", None), "name", "")
        compile_id = str(getattr(args, "compile_id", ""))
        if trigger == "LAZY_BACKWARD" and any(f"{f}/{c}" == compile_id for f, c in self.ours):
            self._set_aside(compile_id, backward=True)

    def _compile_ended(self, args: Any) -> None:
        """torch's callback as its outermost compile ends (nested ones call none): nothing
        compiles any more."""
        for compile_id in list(self._aside_since):
            self._resume(compile_id)

    def profiler_compiles(self) -> tuple[int, float, int, float]:
        """The compiles of ours set aside, and their seconds; lazy backwards, theirs."""
        count, seconds, backwards, backward_s = self.aside
        return int(count), seconds, int(backwards), backward_s

    def _add_recompile(self, function: str, reason: str, limit: bool = False) -> None:
        place = self._call_site(function)
        if place is None:
            return
        key = (place[0], place[1], function, reason)
        found = self.recompiles.get(key)
        if found is not None:
            found["count"] += 0 if limit else 1
            found["limit"] = found["limit"] or limit
        elif len(self.recompiles) < MAX_EVENTS:
            self.recompiles[key] = {
                "file": place[0],
                "line": place[1],
                "function": function,
                "reason": reason,
                "count": 0 if limit else 1,
                "limit": limit,
            }

    def _call_site(self, function: str) -> tuple[str, int] | None:
        """The innermost line of the user's files on the stack now, outside the function
        being compiled: the call that made torch compile it (again)."""
        frame = sys._getframe(2)
        while frame is not None:
            code = frame.f_code
            if base_name(code.co_name) != function or not function:
                path = self.files.resolve(code.co_filename)
                if path is not None:
                    return path, frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return None

    # -- torch.compile calls ------------------------------------------------------------------
    def _wrap_compile(self) -> None:
        original = getattr(self.torch, "compile", None)
        if original is None or not callable(original):
            return
        self._compile = original
        log = self
        torch_file = getattr(self.torch, "__file__", None)

        def compile(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            try:
                if sys._getframe(1).f_code.co_filename == torch_file:
                    return result  # torch's decorator form calling torch.compile again: one call
                target = args[0] if args else kwargs.get("model")
                site = log._site()
                if site is not None:
                    entry = {"file": site[0], "line": site[1], "target": "", "names": []}
                    log.calls.append(entry)
                    if target is None and callable(result):  # @torch.compile(...): decorates later
                        return _Decorator(result, entry)
                    _describe(entry, target)
            except Exception:  # noqa: BLE001 - never in the way of the compile
                pass
            return result

        compile.__doc__ = getattr(original, "__doc__", None)
        compile.__wrapped__ = original  # type: ignore[attr-defined]
        self.torch.compile = compile

    def _site(self) -> tuple[str, int] | None:
        frame = sys._getframe(2)
        while frame is not None:
            path = self.files.resolve(frame.f_code.co_filename)
            if path is not None:
                return path, frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return None

    # -- the part -----------------------------------------------------------------------------
    def document(self) -> dict[str, Any] | None:
        if not (self.calls or self.breaks or self.recompiles or self.graphs or self.ours):
            return None
        breaks = sorted(self.breaks.values(), key=lambda b: (-b["count"], b["file"], b["line"]))
        recompiles = sorted(self.recompiles.values(), key=lambda r: (-r["count"], r["file"], r["line"]))
        calls = []
        for entry in self.calls:
            names = set(entry["names"])
            calls.append(
                {
                    "file": entry["file"],
                    "line": entry["line"],
                    "target": entry["target"],
                    "graphs": sum(n for f, n in self.graphs.items() if f in names),
                    "graph_breaks": sum(b["count"] for b in breaks if b["function"] in names),
                    "recompiles": sum(r["count"] for r in recompiles if r["function"] in names),
                    "limit": any(r["limit"] for r in recompiles if r["function"] in names),
                }
            )
        out: dict[str, Any] = {"calls": calls, "graph_breaks": breaks, "recompiles": recompiles}
        if self.ours:
            out["profiler_recompiles"] = len(self.ours)
        return out


class _Decorator:
    """``@torch.compile(mode=...)``: the call gives a decorator; what it decorates is named
    when it is applied."""

    def __init__(self, decorate: Any, entry: dict[str, Any]) -> None:
        self.decorate = decorate
        self.entry = entry

    def __call__(self, target: Any) -> Any:
        try:
            _describe(self.entry, target)
        except Exception:  # noqa: BLE001 - never in the way of the compile
            pass
        return self.decorate(target)


def _describe(entry: dict[str, Any], target: Any) -> None:
    """The compiled target's name, and the names of the frames TorchDynamo compiles for it:
    a function's own; a module's ``forward`` and the call that runs it (``_call_impl``)."""
    code = getattr(target, "__code__", None)
    if code is not None:
        entry["target"] = code.co_name
        entry["names"] = [code.co_name]
        return
    forward = getattr(type(target), "forward", None)
    code = getattr(forward, "__code__", None)
    entry["target"] = type(target).__name__
    entry["names"] = ["forward", "_call_impl", "_wrapped_call_impl", "__call__"]
    if code is not None:
        entry["names"].insert(0, code.co_name)
