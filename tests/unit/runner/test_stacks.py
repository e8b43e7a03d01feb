"""The sampled stacks (runner/stacks.py): the function table (own and total time per
function, recursion counted once a look, the runner's and the launch's frames left out) and
the flame graph's folded stacks (the user's frames at their lines), bounded."""

from __future__ import annotations

import types

import pytest

from bottleneck_lsp.runner import stacks
from bottleneck_lsp.runner.stacks import StackTable


def _code(name: str, file: str = "/home/u/train.py", line: int = 1) -> types.CodeType:
    return compile("\n" * (line - 1) + f"def {name}():\n    pass\n", file, "exec").co_consts[0]  # type: ignore[no-any-return]


def at(*codes: types.CodeType) -> list[object]:
    """A look's stack as the sampler captures it: each frame's code and offset (its first)."""
    return [x for code in codes for x in (code, 0)]


def _resolve(path: str) -> str | None:
    return path if path.startswith("/home/u/") else None


def test_own_and_total_time_per_function() -> None:
    main, step, fwd = _code("main", line=3), _code("step", line=10), _code("forward", "/lib/torch/nn.py", 5)
    table = StackTable()
    table.charge(at(fwd, step, main), 3_000_000)  # innermost first
    table.charge(at(step, main), 1_000_000)
    table.charge(at(main), 500_000)
    rows = {r["function"]: r for r in table.functions(_resolve)}
    assert [r["function"] for r in table.functions(_resolve)] == ["main", "step", "forward"]
    assert (rows["main"]["self_s"], rows["main"]["total_s"]) == (0.0005, 0.0045)
    assert (rows["step"]["self_s"], rows["step"]["total_s"]) == (0.001, 0.004)
    assert (rows["forward"]["self_s"], rows["forward"]["total_s"]) == (0.003, 0.003)
    assert rows["step"]["line"] == 10 and rows["step"]["user"] and not rows["forward"]["user"]


def test_recursion_counts_once_a_look() -> None:
    walk, main = _code("walk"), _code("main")
    table = StackTable()
    table.charge(at(walk, walk, walk, main), 2_000_000)
    rows = {r["function"]: r for r in table.functions(_resolve)}
    assert rows["walk"]["total_s"] == 0.002 and rows["walk"]["self_s"] == 0.002


def test_the_launch_and_the_runner_are_left_out() -> None:
    work, main = _code("work"), _code("main")
    launch = _code("_run_code", "<frozen runpy>")
    runner = _code("run_as_main", stacks.__file__.replace("stacks.py", "script.py"))
    table = StackTable()
    table.charge(at(work, main, runner, launch), 1_000_000)
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
    table.charge(at(stdlib, tick, work, main), 1_000_000)  # our tick, inside the script
    table.charge(at(stdlib, tick), 1_000_000)  # our start-up
    table.charge(at(module, importing, work, main), 2_000_000)  # an import the script made
    rows = {r["function"]: r for r in table.functions(_resolve)}
    assert set(rows) == {"<module>", "work", "main"}
    assert rows["work"]["total_s"] == 0.002 and rows["<module>"]["self_s"] == 0.002


def _offset(code: types.CodeType, line: int) -> int:
    """An offset of ``code``'s instructions on ``line``."""
    return next(start for start, _end, number in code.co_lines() if number == line)


STEP = """def step(x):
    y = x + 1
    z = fwd(y)
    return z
"""


def test_the_flame_graphs_stacks_have_the_users_lines_and_the_librarys_functions() -> None:
    step = compile(STEP, "/home/u/train.py", "exec").co_consts[0]
    main = compile("\n".join(["pass"] * 9) + "\nstep(1)\n", "/home/u/train.py", "exec")
    fwd = _code("forward", "/lib/torch/nn.py", 5)
    table = StackTable()
    call, add, top = _offset(step, 3), _offset(step, 2), _offset(main, 10)
    table.charge([fwd, 40, step, call, main, top], 3_000_000)  # in the library, from line 3
    table.charge([fwd, 80, step, call, main, top], 1_000_000)  # another offset of the library's
    table.charge([step, add, main, top], 2_000_000)  # at line 2
    flame = table.flame(_resolve)
    frames = flame["frames"]
    named = [
        [(frames[i]["file"], frames[i]["line"], frames[i]["function"]) for i in s["frames"]]
        for s in flame["stacks"]
    ]
    assert named == [
        [
            ("/home/u/train.py", 10, "<module>"),
            ("/home/u/train.py", 3, "step"),
            ("/lib/torch/nn.py", 5, "forward"),
        ],
        [("/home/u/train.py", 10, "<module>"), ("/home/u/train.py", 2, "step")],
    ]  # the library's two offsets are one frame: its function's
    assert [s["time_s"] for s in flame["stacks"]] == [0.004, 0.002] and flame["dropped_s"] == 0.0
    assert [f["user"] for f in frames] == [True, True, False, True]
    # past the document's limit, the least time is dropped, and said
    assert table.flame(_resolve, limit=1)["dropped_s"] == 0.002


def test_the_table_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its bound a new stack is kept at its functions (no offsets), past twice that
    its time is dropped, and said."""
    monkeypatch.setattr(stacks, "MAX_STACKS", 2)
    step, main = compile(STEP, "/home/u/train.py", "exec").co_consts[0], _code("main")
    table = StackTable()
    for offset in range(0, 40, 2):
        table.charge([step, offset, main, 0], 1_000_000)
    assert len(table.stacks) == 3  # two with offsets, then one at the functions
    other = _code("other")
    table.charge([other, 0], 1_000_000)
    assert len(table.stacks) == 4 and table.dropped_ns == 0  # under twice the bound
    table.charge([_code("more"), 0], 5_000_000)
    assert len(table.stacks) == 4 and table.dropped_ns == 5_000_000
    flame = table.flame(_resolve)
    assert sum(s["time_s"] for s in flame["stacks"]) == pytest.approx(0.021) and flame["dropped_s"] == 0.005


def test_a_torch_call_under_the_line_marker_is_the_scripts() -> None:
    """In a window, the script's torch calls run under the line marker's handler (ours): the
    look is the script's, the handler no row of its own."""
    work, main = _code("work"), _code("main")
    marker = _code("__torch_function__", stacks.__file__.replace("stacks.py", "linemarker.py"))
    table = StackTable()
    dispatch = _code("handle_torch_function", "/lib/site-packages/torch/overrides.py")
    table.charge(at(marker, dispatch, work, main), 3_000_000)
    rows = {r["function"]: r for r in table.functions(_resolve)}
    assert set(rows) == {"work", "main"} and rows["work"]["self_s"] == 0.003
    flame = table.flame(_resolve)
    assert [[flame["frames"][i]["function"] for i in s["frames"]] for s in flame["stacks"]] == [
        ["main", "work"]
    ]
