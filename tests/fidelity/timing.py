"""Ground truth for one corpus script, measured without any profiler.

Run as ``python timing.py SCRIPT``: the script runs as ``__main__`` with every measured
statement wrapped in ``time.perf_counter`` calls (``# PLANT:label`` statements, or the
``# MEASURE:label`` statements that stand for a planted line elsewhere, such as the call of
a helper whose only work is that line). Prints JSON: seconds per label and the script's
total, wall clock and the main thread's CPU time (``cpu_seconds``, ``cpu_total``), start-up
(``import torch``) excluded as the profiler's runner excludes it.

torch's compiler stack (``torch._dynamo``, over a second), which torch imports lazily at a
script's first optimizer, is the script's in a bare run: it stays in the wall truth, on the
line that made it (the one run keeps it there, as its ``import`` column). It is no op work:
the CPU truth (what the op CPU column is compared with) leaves it out, of the line and of
the total (``lazy_import``: its wall and CPU seconds, and the label it ran under).
Standard library and torch only.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import re
import sys
import time
import types
from collections.abc import Sequence

MARK = re.compile(r"#.*\b(PLANT|MEASURE):(\w+)")


def targets(source: str) -> dict[int, str]:
    planted: dict[int, str] = {}
    measured: dict[int, str] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        match = MARK.search(line)
        if match:
            (planted if match.group(1) == "PLANT" else measured)[number] = match.group(2)
    covered = set(measured.values())
    return {**{n: lab for n, lab in planted.items() if lab not in covered}, **measured}


class Wrap(ast.NodeTransformer):
    def __init__(self, lines: dict[int, str]) -> None:
        self.lines = lines
        self.count = 0

    def _timed(self, stmt: ast.stmt) -> list[ast.stmt]:
        label = self.lines[stmt.lineno]
        self.count += 1
        t0 = f"_bt_t0_{self.count}"
        c0 = f"_bt_c0_{self.count}"
        before = ast.parse(f"{t0} = _bt_clock(); {c0} = _bt_cpu_clock()").body
        after = ast.parse(
            f"_bt_acc[{label!r}] = _bt_acc.get({label!r}, 0.0) + _bt_clock() - {t0}; "
            f"_bt_cpu[{label!r}] = _bt_cpu.get({label!r}, 0.0) + _bt_cpu_clock() - {c0}"
        ).body
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            keep = f"_bt_value_{self.count}"
            assign = ast.Assign(targets=[ast.Name(keep, ast.Store())], value=stmt.value, lineno=stmt.lineno)
            back = ast.Return(value=ast.Name(keep, ast.Load()), lineno=stmt.lineno)
            return [*before, assign, *after, back]
        return [*before, stmt, *after]

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                new: list[ast.stmt] = []
                for stmt in body:
                    new += self._timed(stmt) if stmt.lineno in self.lines else [stmt]
                setattr(node, name, new)
        return node


def main() -> None:
    script = os.path.abspath(sys.argv[1])
    os.chdir(os.path.dirname(script))
    sys.path[0] = os.path.dirname(script)
    sys.argv[:] = [script]
    import torch  # noqa: F401

    with open(script, encoding="utf-8") as handle:
        source = handle.read()
    lines = targets(source)
    lazy = LazyImport(script, lines)
    sys.meta_path.insert(0, lazy)
    tree = ast.fix_missing_locations(Wrap(lines).visit(ast.parse(source)))
    code = compile(tree, script, "exec")
    acc: dict[str, float] = {}
    cpu: dict[str, float] = {}
    namespace = {
        "__name__": "__main__",
        "__file__": script,
        "_bt_acc": acc,
        "_bt_clock": time.perf_counter,
        "_bt_cpu": cpu,
        "_bt_cpu_clock": time.thread_time,
    }
    begin, cpu_begin = time.perf_counter(), time.thread_time()
    exec(code, namespace)
    total, cpu_total = time.perf_counter() - begin, time.thread_time() - cpu_begin
    if lazy.cpu:
        cpu_total -= lazy.cpu
        if lazy.label in cpu:
            cpu[lazy.label] = max(cpu[lazy.label] - lazy.cpu, 0.0)
    found = {"seconds": acc, "total": total, "cpu_seconds": cpu, "cpu_total": cpu_total}
    found["lazy_import"] = {"wall": lazy.wall, "cpu": lazy.cpu, "label": lazy.label}
    print("FIDELITY " + json.dumps(found))


class LazyImport(importlib.abc.MetaPathFinder):
    """Times torch's lazy import of its compiler stack (``torch._dynamo``) when the script
    makes it: wall and CPU seconds, and the label of the script's line it ran under."""

    NAME = "torch._dynamo"

    def __init__(self, script: str, lines: dict[int, str]) -> None:
        self.script = script
        self.lines = lines
        self.wall = self.cpu = 0.0
        self.label: str | None = None

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.NAME or fullname in sys.modules:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != self.script:
            frame = frame.f_back
        self.label = self.lines.get(frame.f_lineno) if frame is not None else None
        inner, outer = spec.loader, self

        class Timed(importlib.abc.Loader):
            def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
                return inner.create_module(spec)

            def exec_module(self, module: types.ModuleType) -> None:
                wall, cpu = time.perf_counter(), time.thread_time()
                try:
                    inner.exec_module(module)
                finally:
                    outer.wall += time.perf_counter() - wall
                    outer.cpu += time.thread_time() - cpu

        spec.loader = Timed()
        return spec


if __name__ == "__main__":
    main()
