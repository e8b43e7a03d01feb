"""The flame graph's stacks for a long run, measured (not a test): a million looks charged to
the sampler's stack table (``runner/stacks.py``), at stacks as varied as a training script's
(a loop's lines, a model's layers, each at a few offsets), then folded for the document.
Prints the time per look, the time to fold, how many stacks the document keeps and its size
in JSON: what the flame graph opens.

Usage: .venv/bin/python benchmarks/flame.py [looks]
"""

from __future__ import annotations

import json
import sys
import time
import types

from bottleneck_lsp.runner.stacks import StackTable

USER = "/home/user/project/train.py"


def _functions() -> tuple[types.CodeType, list[types.CodeType], list[types.CodeType]]:
    module = compile("\n".join(f"x{i} = {i}" for i in range(60)) + "\n", USER, "exec")
    layers = [
        compile(
            "\n" * (10 * i) + f"def layer{i}(x):\n    a = x\n    b = a\n    return b\n", USER, "exec"
        ).co_consts[0]
        for i in range(12)
    ]
    library = [
        compile(
            f"def op{i}(x):\n    return x\n", f"/usr/lib/python3/site-packages/torch/nn/f{i}.py", "exec"
        ).co_consts[0]
        for i in range(30)
    ]
    return module, layers, library


def main() -> None:
    looks = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    module, layers, library = _functions()
    module_offsets = [start for start, _end, line in module.co_lines() if line][:40]
    stacks = []
    for i in range(4_000):  # the distinct stacks the looks fall on
        depth = 3 + i % 3
        stack: list[object] = []
        for d in range(depth):
            code = library[(i // len(library) ** d) % len(library)]  # (i's digits: 4,000 distinct)
            stack += [code, (i % 3) * 2]
        layer = layers[i % len(layers)]
        stack += [layer, [start for start, _e, line in layer.co_lines() if line][i % 3]]
        stack += [module, module_offsets[i % len(module_offsets)]]
        stacks.append(stack)
    table = StackTable()
    begin = time.perf_counter()
    for n in range(looks):
        table.charge(stacks[(n * 7919) % len(stacks)], 1_000_000)  # (7919: prime, every stack)
    charged = time.perf_counter() - begin
    begin = time.perf_counter()
    flame = table.flame(lambda path: path if path.startswith("/home/user/") else None)
    folded = time.perf_counter() - begin
    size = len(json.dumps(flame))
    print(f"looks: {looks:,}; distinct stacks kept: {len(table.stacks):,}")
    print(f"charge: {charged / looks * 1e6:.2f} us a look ({charged:.2f} s in all)")
    print(
        f"fold: {folded * 1000:.0f} ms; in the document: {len(flame['stacks']):,} stacks, "
        f"{len(flame['frames']):,} frames, {size / 1000:.0f} KB of JSON, dropped {flame['dropped_s']:.3f} s"
    )


if __name__ == "__main__":
    main()
