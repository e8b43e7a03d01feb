"""The function table of the sampled stacks (runner/stacks.py): own and total time per
function, recursion counted once a look, the runner's and the launch's frames left out."""

from __future__ import annotations

import types

from bottleneck_lsp.runner import stacks
from bottleneck_lsp.runner.stacks import StackTable


def _code(name: str, file: str = "/home/u/train.py", line: int = 1) -> types.CodeType:
    return compile("\n" * (line - 1) + f"def {name}():\n    pass\n", file, "exec").co_consts[0]  # type: ignore[no-any-return]


def _resolve(path: str) -> str | None:
    return path if path.startswith("/home/u/") else None


def test_own_and_total_time_per_function() -> None:
    main, step, fwd = _code("main", line=3), _code("step", line=10), _code("forward", "/lib/torch/nn.py", 5)
    table = StackTable()
    table.charge([fwd, step, main], 3_000_000)  # innermost first
    table.charge([step, main], 1_000_000)
    table.charge([main], 500_000)
    rows = {r["function"]: r for r in table.functions(_resolve)}
    assert [r["function"] for r in table.functions(_resolve)] == ["main", "step", "forward"]
    assert (rows["main"]["self_s"], rows["main"]["total_s"]) == (0.0005, 0.0045)
    assert (rows["step"]["self_s"], rows["step"]["total_s"]) == (0.001, 0.004)
    assert (rows["forward"]["self_s"], rows["forward"]["total_s"]) == (0.003, 0.003)
    assert rows["step"]["line"] == 10 and rows["step"]["user"] and not rows["forward"]["user"]


def test_recursion_counts_once_a_look() -> None:
    walk, main = _code("walk"), _code("main")
    table = StackTable()
    table.charge([walk, walk, walk, main], 2_000_000)
    rows = {r["function"]: r for r in table.functions(_resolve)}
    assert rows["walk"]["total_s"] == 0.002 and rows["walk"]["self_s"] == 0.002


def test_the_launch_and_the_runner_are_left_out() -> None:
    work, main = _code("work"), _code("main")
    launch = _code("_run_code", "<frozen runpy>")
    runner = _code("run_as_main", stacks.__file__.replace("stacks.py", "script.py"))
    table = StackTable()
    table.charge([work, main, runner, launch], 1_000_000)
    assert {r["function"] for r in table.functions(_resolve)} == {"work", "main"}


def test_our_own_work_is_not_the_scripts() -> None:
    """A look at our tick inside the script's code, and one at our start-up (no frame of the
    script's), count for no function."""
    work, main = _code("work"), _code("main")
    tick = _code("tick", stacks.__file__.replace("stacks.py", "windows.py"))
    stdlib = _code("isfile", "<frozen genericpath>")
    importing = _code("_find_and_load", "<frozen importlib._bootstrap>")
    module = compile("pass\n", "/lib/torch/_dynamo/__init__.py", "exec")  # a module's own code
    table = StackTable()
    table.charge([stdlib, tick, work, main], 1_000_000)  # our tick, inside the script
    table.charge([stdlib, tick], 1_000_000)  # our start-up
    table.charge([module, importing, work, main], 2_000_000)  # an import the script made
    rows = {r["function"]: r for r in table.functions(_resolve)}
    assert set(rows) == {"<module>", "work", "main"}
    assert rows["work"]["total_s"] == 0.002 and rows["<module>"]["self_s"] == 0.002
