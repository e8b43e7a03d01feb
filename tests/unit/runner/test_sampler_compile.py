"""A compile that turns out to be the profiler's (``ThreadSampler.disown_compile``): torch's
record of why it compiles again comes after the compile began, and what the sampler charged
to the calling line meanwhile goes back off it, as compile time and as wall time, set
aside. A real sampler, its charges made as its looks make them."""

from __future__ import annotations

from pathlib import Path

from bottleneck_lsp.runner.paths import FileClassifier
from bottleneck_lsp.runner.sampler import COMPILE_RUN_KEPT, ThreadSampler

MS = 1_000_000


def test_the_time_charged_since_our_compile_began_goes_back_off_the_line(tmp_path: Path) -> None:
    compiling = [False]
    sampler = ThreadSampler(FileClassifier([str(tmp_path)]), compiling=lambda: compiling[0])
    first, loop = (str(tmp_path / "a.py"), 3), (str(tmp_path / "a.py"), 7)

    def look(key: tuple[str, int], wall_ms: int) -> None:
        sampler.wall_ns += wall_ms * MS
        sampler.cpu_ns += wall_ms * MS
        sampler._charge_main(key, "<module>", wall_ms * MS, wall_ms * MS, True)

    compiling[0] = True
    look(first, 50)  # the script's own compile, at its first call
    compiling[0] = False
    look(first, 5)
    look(loop, 20)
    compiling[0] = True  # a compile begins on the loop's line ...
    look(loop, 3)
    look(loop, 4)
    sampler.disown_compile()  # ... and its record says it is ours
    lines = sampler.lines
    assert (
        lines[loop].wall_ns == 20 * MS and lines[loop].cpu_ns == 20 * MS and lines[loop].python_ns == 20 * MS
    )
    assert sampler.compiling_ns.get(loop, 0) == 0
    assert lines[first].wall_ns == 55 * MS and sampler.compiling_ns[first] == 50 * MS  # the script's stays
    assert sampler.wall_ns == 75 * MS and sampler.paused_ns == 7 * MS
    sampler.disown_compile()  # (nothing more to give back)
    assert lines[loop].wall_ns == 20 * MS and sampler.paused_ns == 7 * MS
    compiling[0] = False
    look(loop, 2)
    compiling[0] = True  # a compile of the script's own: kept
    look(loop, 6)
    assert sampler.compiling_ns[loop] == 6 * MS and lines[loop].wall_ns == 28 * MS


def test_a_long_compile_keeps_its_first_charges_only(tmp_path: Path) -> None:
    sampler = ThreadSampler(FileClassifier([str(tmp_path)]), compiling=lambda: True)
    line = (str(tmp_path / "a.py"), 3)
    for _ in range(COMPILE_RUN_KEPT + 500):
        sampler._charge_main(line, "<module>", MS, MS, True)
    assert len(sampler._compile_run) == COMPILE_RUN_KEPT  # (a tuple per look, bounded)
    sampler.disown_compile()
    assert sampler.lines[line].wall_ns == 500 * MS and sampler.compiling_ns[line] == 500 * MS
