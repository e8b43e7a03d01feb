"""The cprofile pass's table holds the script's calls, not the runner's (runner/ownstats.py).

Real cProfile statistics: of a real job, and of code compiled from files that stand for
the runner and the user's script."""

from __future__ import annotations

import cProfile
import pstats
from pathlib import Path
from typing import Any

import pytest

from bottleneck_lsp.formats import report
from bottleneck_lsp.runner.ownstats import without_runner
from helpers import SCRIPTS, compiled, run_typed


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "fresh"])
def test_the_cprofile_pass_counts_the_scripts_calls_only(fork: bool) -> None:
    doc = run_typed("fn_call.py", passes=("cprofile",), fork=fork)
    part = doc.pass_named("cprofile")
    assert part is not None and part.status == "ok"
    # torch.randn, 300 torch.tanh, 300 torch.zeros, the module, and the exec that ran it:
    # not the runner's os.getpid, signal.signal (and its enum calls), register_at_fork
    assert part.totals is not None and part.totals.calls == 603
    names = sorted(f.function for f in part.functions)
    assert names == [
        "<built-in method builtins.exec>",
        "<built-in method torch.randn>",
        "<built-in method torch.tanh>",
        "<built-in method torch.zeros>",
        "<module>",
    ], names
    text = report.render(doc, cwd=str(SCRIPTS))
    assert "603 function calls" in text
    for noise in ("getpid", "signal", "register_at_fork", "enum.py"):
        assert noise not in text.split("cProfile output")[1].split("Hotspots")[0], noise


def test_a_function_both_called_keeps_the_scripts_calls(tmp_path: Path) -> None:
    helper = compiled(tmp_path / "shared.py", "def shared(n):\n    return sorted(range(n))\n")
    user = compiled(
        tmp_path / "script.py",
        "def main(shared):\n    for _ in range(3):\n        shared(10)\n",
    )
    runner = compiled(
        tmp_path / "runner.py",
        "def begin(shared, main):\n    shared(5)\n    own()\n    main(shared)\n    shared(5)\n"
        "def own():\n    return len(repr(list(range(4))))\n",
    )
    profile = cProfile.Profile()
    profile.enable()
    runner["begin"](helper["shared"], user["main"])
    profile.disable()
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    runner_file = str(tmp_path / "runner.py")
    user_file = str(tmp_path / "script.py")
    kept = without_runner(stats, lambda f: f == runner_file, lambda key: key[0] == user_file)
    by_name = {key[2]: value for key, value in kept.items()}
    # the runner's own functions, and what only they called (repr, list, len under own())
    assert "begin" not in by_name and "own" not in by_name
    assert "<built-in method builtins.repr>" not in by_name
    assert "<built-in method builtins.len>" not in by_name
    # the script's function, as it was
    assert by_name["main"][:2] == (1, 1)
    # shared(): 5 calls in all, 3 of them the script's; sorted() under it keeps all 5
    # (cProfile does not say which of shared's calls made which of sorted's)
    assert by_name["shared"][:2] == (3, 3)
    assert list(by_name["shared"][4]) == [(user_file, 1, "main")]
    assert by_name["<built-in method builtins.sorted>"][:2] == (5, 5)
    # the input is left as it was
    assert {key[2] for key in stats} >= {"begin", "own"}
