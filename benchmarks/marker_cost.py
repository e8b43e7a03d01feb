"""What the cpu pass's line marker costs per torch call, part by part, and per frame it
walks (not a test; measured side by side in one process).

Each torch call made from Python passes through the marker (``linemarker.make_line_marker``):
a TorchFunctionMode that walks from the calling frame up to the innermost frame of the
user's files and runs the call inside a profiler range named after that line. Here a loop
in this file (the user's code) calls ``torch.add`` on a tiny tensor through DEPTH frames of
a library module (outside the user's files, like torchvision's transforms under a
DataLoader), 100,000 times, with torch's profiler on; per way, the best of three loops:

- ``identity``: an identity TorchFunctionMode (what any per-call marker costs at least);
- ``walk``: the marker's walk to the user's frame and its range-name lookup, no range;
- ``walk+range``: and the range (``_RecordFunctionFast``) around the call;
- ``marker``: the marker itself (the above, and its budget, guard and compile checks).

Microseconds per call over the profiler alone. Usage: .venv/bin/python benchmarks/marker_cost.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from bottleneck_lsp.runner.linemarker import make_line_marker
from bottleneck_lsp.runner.lineranges import LineRanges
from bottleneck_lsp.runner.paths import FileClassifier

CALLS = 100_000
LIBRARY = """
def nest(n, fn, *args):
    if n == 0:
        return fn(*args)
    return nest(n - 1, fn, *args)
"""


def main() -> None:
    library = tempfile.mkdtemp(prefix="marker-cost-")
    with open(os.path.join(library, "nested_library.py"), "w") as f:
        f.write(LIBRARY)
    sys.path.insert(0, library)
    from nested_library import nest  # type: ignore[import-not-found]

    files = FileClassifier([os.path.dirname(os.path.abspath(__file__))], search_dirs=sys.path)
    ranges = LineRanges(files)
    fast = torch._C._profiler._RecordFunctionFast
    user, sites, getframe = ranges.user, ranges.sites, sys._getframe

    # LineRanges.innermost's loop, inlined as the marker inlines it (a method call per frame
    # measured 0.3-0.5 us more at one frame): what the marker runs is what is timed
    def innermost() -> Any:
        frame: Any = getframe(2)
        while frame is not None:
            code = frame.f_code
            known = user.get(id(code))
            if known[1] if known is not None else ranges.is_user(code):
                return frame
            frame = frame.f_back
        return None

    class Identity(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return func(*args, **(kwargs or {}))

    class Walk(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            frame = innermost()
            sites.get((id(frame.f_code), frame.f_lasti)) or ranges.name(frame, False)
            return func(*args, **(kwargs or {}))

    class WalkRange(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            frame = innermost()
            name = sites.get((id(frame.f_code), frame.f_lasti)) or ranges.name(frame, False)
            with fast(name):
                return func(*args, **(kwargs or {}))

    x = torch.ones(2)

    def loop(depth: int) -> float:
        begin = time.perf_counter()
        for _ in range(CALLS):
            nest(depth, torch.add, x, 1)
        return (time.perf_counter() - begin) / CALLS * 1e6

    print(f"Python {sys.version.split()[0]}, torch {torch.__version__}")
    print("| library frames walked | bare, us a call | profiler | identity | walk | walk+range | marker |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for depth in (0, 10):
        bare = min(loop(depth) for _ in range(3))
        with torch.autograd.profiler.profile():
            profiled = min(loop(depth) for _ in range(3))
            cells = []
            ways = (
                Identity(),
                Walk(),
                WalkRange(),
                make_line_marker(torch, 0, lambda why: None, None, ranges),
            )
            for mode in ways:
                with mode:
                    cells.append(min(loop(depth) for _ in range(3)) - profiled)
        row = " | ".join(f"+{c:.2f}" for c in cells)
        print(f"| {depth} | {bare:.2f} | +{profiled - bare:.2f} | {row} |")


if __name__ == "__main__":
    main()
