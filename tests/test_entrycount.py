"""The cpu pass's entry counter counts the user's functions as cProfile counts them.

The "passes disagree" check compares the cprofile pass's cProfile counts with this
counter's: any difference between the two ways of counting would be reported to the user
as a script that did different work in two passes. So each interpreter found here runs
the same workload under both and the counts must be equal, function by function. On
Python 3.12 and later the counter is ``sys.monitoring`` (threads, generator resumptions,
``throw()`` and inlined comprehensions as cProfile counts them there); on 3.10 and 3.11 it
is cProfile itself. Standard library only: no torch needed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from helpers import interpreters

SERVER = Path(__file__).resolve().parents[1] / "server"

WORKLOAD = """
import asyncio, contextlib, threading

def f(n):
    return n + 1

def gen(n):
    for i in range(n):
        yield f(i)

def thrower():
    try:
        yield 1
        yield 2
    except ValueError:
        yield 3

def rec(n):
    return 0 if n == 0 else rec(n - 1)

def boom():
    raise KeyError

async def co():
    await asyncio.sleep(0)
    return f(1)

@contextlib.contextmanager
def managed():
    yield f(0)

class Thing:
    def method(self):
        return f(2)

def main():
    for _ in range(10):
        f(1)
    sum(gen(5))
    g = thrower(); next(g); g.throw(ValueError); g.close()
    rec(7)
    for _ in range(3):
        try:
            boom()
        except KeyError:
            pass
    asyncio.run(co())
    t = threading.Thread(target=lambda: [f(2) for _ in range(4)])
    t.start(); t.join()
    list(map(f, range(6)))
    [f(x) for x in range(2)]
    with managed():
        pass
    try:
        with managed():
            raise OSError
    except OSError:
        pass
    Thing().method()
    sorted(range(3), key=lambda x: -f(x))
"""

COMPARE = r"""
import cProfile, json, os, sys
sys.path.insert(0, os.environ["WORK"])
import work
from bottleneck_lsp.runner.entrycount import EntryCounter

def mine(code):
    return code.co_filename == work.__file__

taken = sys.argv[1:] == ["taken"]
if taken:  # every free tool id in use (a debugger, coverage): the counter falls back
    for tool in (3, 4):
        sys.monitoring.use_tool_id(tool, "someone else")
profile = cProfile.Profile(subcalls=False, builtins=False)
profile.enable()
work.main()
profile.disable()
expected = sorted(
    [e.code.co_name, e.code.co_firstlineno, e.callcount]
    for e in profile.getstats()
    if not isinstance(e.code, str) and mine(e.code)
)
counter = EntryCounter(mine)
counter.enable()
work.main()
counter.disable()
counted = sorted([name, line, n] for _file, line, name, n in counter.entries())
# nothing left behind: a second counter can take the tool id again
again = EntryCounter(mine)
again.enable()
work.f(0)
again.disable()
# a predicate that fails counts nothing and never reaches the script
broken = EntryCounter(lambda code: 1 / 0)
broken.enable()
work.main()
broken.disable()
print(json.dumps({"broken": broken.entries(), "kind": counter.kind, "expected": expected, "counted": counted,
                  "again": again.entries()[0][3], "version": list(sys.version_info[:2])}))
"""


@pytest.mark.parametrize("python", interpreters())
def test_counts_equal_cprofiles_in_every_interpreter(python: str, tmp_path: Path) -> None:
    result = _compare(python, tmp_path)
    assert result["expected"], result  # the workload's functions were seen at all
    assert result["counted"] == result["expected"]
    assert result["again"] == 1
    assert result["broken"] == []
    names = {name for name, _line, _n in result["counted"]}
    assert {"f", "gen", "thrower", "rec", "boom", "co", "managed", "method"} <= names
    if tuple(result["version"]) >= (3, 12):
        assert result["kind"] == "sys.monitoring"
        # cProfile counts every thread there, and so does the counter (the thread's lambda)
        assert "<lambda>" in names
    else:
        assert result["kind"] == "cProfile"


def test_counter_falls_back_to_cprofile_when_no_tool_id_is_free(tmp_path: Path) -> None:
    newer = [p for p in interpreters() if _version(p) >= (3, 12)]
    if not newer:
        pytest.skip("no Python 3.12+ interpreter on this machine")
    result = _compare(newer[0], tmp_path, "taken")
    assert result["kind"] == "cProfile"
    assert result["counted"] == result["expected"]


def _compare(python: str, tmp_path: Path, *extra: str) -> dict:
    (tmp_path / "work.py").write_text(WORKLOAD)
    done = subprocess.run(
        [python, "-c", COMPARE, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "WORK": str(tmp_path), "PYTHONPATH": str(SERVER)},
    )
    assert done.returncode == 0, done.stderr
    assert "Callback removed" not in done.stderr, done.stderr
    result: dict = json.loads(done.stdout)
    return result


def _version(python: str) -> tuple[int, int]:
    done = subprocess.run(
        [python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True, timeout=60
    )
    major, minor = done.stdout.split()
    return int(major), int(minor)
