"""How long ``torch.compile`` compiled in this pass, from TorchDynamo's own timings.

A compiled function's first calls trace and compile it (seconds to minutes with the
inductor backend), and that one-time work lands in the wall time of the lines that made
those calls: a line can top the ranking for its compilation alone. A graph that needs
gradients has its backward compiled later, at the first ``.backward()`` through it
(AOTAutograd's lazy backward), outside TorchDynamo's compile session. TorchDynamo times each
compilation (``compilation_time_metrics["_compile.compile_inner"]``, and
``["backward._backward_impl"]`` for a lazy backward); the pass reports their sums as a note.
Later passes of the same job mostly find the compiled code in the on-disk caches. Standard
library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

_TIMED = "_compile.compile_inner"
_TIMED_BACKWARD = "backward._backward_impl"  # a lazy backward's compile (AOTAutograd)
# AOTAutograd names the graph it compiles here, forward or backward, while it compiles it
_AOT_LOGGING = "torch._functorch._aot_autograd.logging_utils"


def tracing_check(torch: Any) -> Callable[[], bool]:
    """``torch.compiler.is_compiling`` (True while TorchDynamo traces, and in 2.13 for the
    whole compile session), or a function saying False where torch has none."""
    return getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)


def compiling_flag(torch: Any = None) -> Callable[[], bool] | None:
    """A cheap look at whether torch.compile is compiling now, for the sampler: torch's
    own flag, where torch holds it for the whole compile session (2.13: its
    ``_compile_session_context``; before, only while TorchDynamo traces, which would miss
    the backend's part), or AOTAutograd compiling a graph outside it (a lazy backward, at
    the first ``.backward()``: the name of the graph it compiles, set meanwhile). None
    elsewhere."""
    torch = torch if torch is not None else sys.modules.get("torch")  # imported by the runner first
    compiler = getattr(torch, "compiler", None) if torch is not None else None
    if compiler is None or not hasattr(compiler, "_compile_session_context"):
        return None
    if not isinstance(getattr(compiler, "_is_compiling_flag", None), bool):
        return None
    modules = sys.modules

    def compiling() -> bool:
        if compiler._is_compiling_flag:
            return True
        aot = modules.get(_AOT_LOGGING)  # (loaded with torch.compile's stack, at its first use)
        return aot is not None and bool(getattr(aot, "graph_being_compiled", None))

    return compiling


def _seconds(metrics: dict[Any, Any], key: str) -> tuple[int, float]:
    """How many times TorchDynamo timed ``key``, and for how long in all; (0, 0.0) when it
    did not, or a torch whose timings differ."""
    times = metrics.get(key)
    if not isinstance(times, (list, tuple)):
        return 0, 0.0
    try:
        return len(times), float(sum(times))
    except (TypeError, ValueError):
        return 0, 0.0


Timings = tuple[int, float, int, float]  # compiles, their seconds; lazy backwards, theirs
NONE: Timings = (0, 0.0, 0, 0.0)


def timings() -> Timings:
    """TorchDynamo's timings so far in this process (all 0 before its first compile)."""
    utils = sys.modules.get("torch._dynamo.utils")
    metrics = getattr(utils, "compilation_time_metrics", None)
    if not isinstance(metrics, dict):
        return 0, 0.0, 0, 0.0
    return (*_seconds(metrics, _TIMED), *_seconds(metrics, _TIMED_BACKWARD))


def compile_note(
    where: list[tuple[str, int, float]] | None = None, since: Timings = NONE, ours: Timings = NONE
) -> str | None:
    """A note on the time TorchDynamo spent compiling in this process (after ``since``,
    ``timings()`` then: a kernel's cell), or None (nothing compiled, or a torch whose
    timings differ). ``where``: the lines the sample pass found running while it
    compiled, and how long (the most first). ``ours``: the compiles the one run's windows
    made torch do again (``DynamoLog.profiler_compiles``), set aside: not the script's."""
    now = timings()
    count, total = now[0] - since[0] - ours[0], max(now[1] - since[1] - ours[1], 0.0)
    backwards, backward_s = now[2] - since[2] - ours[2], max(now[3] - since[3] - ours[3], 0.0)
    if total <= 0 and backward_s <= 0:
        return None
    said = f"torch.compile compiled {count} time{'s' if count != 1 else ''} for {total:.2f} s in all"
    if backward_s > 0:
        said += (
            f", and {backwards} backward graph{'s' if backwards != 1 else ''} for {backward_s:.2f} s "
            "at the first .backward() through it"
        )
    said += (
        ": one-time work, in the wall time of the lines whose calls set it off (a compiled "
        "function's first calls)"
    )
    if where:
        lines = ", ".join(
            f"{os.path.basename(path)}:{line} {seconds:.2f} s" for path, line, seconds in where[:3]
        )
        said += f"; sampled while it compiled: {lines}"
    said += "; a next run finds most of it in torch's compile caches"
    if ours[0] or ours[2]:
        made = ours[0] + ours[2]
        said += (
            f" (left out: {made} more compile{'s' if made != 1 else ''}, {ours[1] + ours[3]:.2f} s, that "
            "the profiler's recording windows made torch do: not in the lines' time)"
        )
    return said
