"""When a later window of the one run closes on time (``Windows._step_done``): after
``WINDOW_S`` it waits for the script to be back on the line it opened on, so that a loop's
step longer than ``WINDOW_S`` is recorded whole, every line of it (pytorch/examples' dcgan:
one of its five hottest lines was missed by windows of 0.3 s); at the latest after
``LONGEST_WINDOW_S``. Real frames of code that passes for the user's, a real sampler."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import FrameType

import torch

from bottleneck_lsp.runner.paths import FileClassifier
from bottleneck_lsp.runner.sampler import ThreadSampler
from bottleneck_lsp.runner.windows import LONGEST_WINDOW_S, WINDOW_S, Windows

STEP = "import sys\n\ndef load():\n    return sys._getframe()\n\ndef train():\n    return sys._getframe()\n"


def test_a_later_window_closes_back_on_the_line_it_opened_on(tmp_path: Path) -> None:
    script = tmp_path / "step.py"
    script.write_text(STEP)
    files = FileClassifier([str(tmp_path)])
    scope: dict[str, object] = {}
    exec(compile(STEP, str(script), "exec"), scope)
    load: FrameType = scope["load"]()  # type: ignore[operator]
    train: FrameType = scope["train"]()  # type: ignore[operator]
    windows = Windows(torch, files, ThreadSampler(files))
    here = sys._getframe()  # (this test's frame: no line of the script's)
    assert windows._user_line(here) is None
    opened_on = windows._user_line(load)
    assert opened_on == (str(script), 4)
    now = time.perf_counter()
    windows.spans = [(0.0, 1.0, 100)]  # the first window is done: this one is a later one
    windows.open_line, windows.opened = opened_on, now - WINDOW_S - 0.01
    assert not windows._step_done(now, train)  # in the step's other part: it goes on
    assert windows._step_done(now, load)  # back where it opened: one whole step recorded
    windows.opened = now - LONGEST_WINDOW_S
    assert windows._step_done(now, train)  # a step too long: it ends anyway
    windows.opened = now - WINDOW_S - 0.01
    windows.open_line = None  # opened on no line of the script's: on time
    assert windows._step_done(now, train)
    windows.open_line, windows.spans = opened_on, []  # the first window: on time
    assert windows._step_done(now, train)
