"""How long ``torch.compile`` compiled in this pass, from TorchDynamo's own timings.

A compiled function's first calls trace and compile it (seconds to minutes with the
inductor backend), and that one-time work lands in the wall time of the lines that made
those calls: a line can top the ranking for its compilation alone. TorchDynamo times each
compilation (``compilation_time_metrics["_compile.compile_inner"]``); the pass reports their
sum as a note. Later passes of the same job mostly find the compiled code in the on-disk
caches. Standard library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

import sys

_TIMED = "_compile.compile_inner"


def compile_note() -> str | None:
    """A note on the time TorchDynamo spent compiling in this process, or None (nothing
    compiled, or a torch whose timings differ)."""
    utils = sys.modules.get("torch._dynamo.utils")
    metrics = getattr(utils, "compilation_time_metrics", None)
    if not isinstance(metrics, dict):
        return None
    times = metrics.get(_TIMED)
    if not isinstance(times, (list, tuple)):
        return None
    try:
        total = float(sum(times))
    except (TypeError, ValueError):
        return None
    if total <= 0:
        return None
    count = len(times)
    return (
        f"torch.compile compiled {count} time{'s' if count != 1 else ''} for {total:.2f} s in all: "
        "one-time work, in the wall time of the lines whose calls set it off (a compiled "
        "function's first calls); the next passes mostly find it in torch's compile caches"
    )
