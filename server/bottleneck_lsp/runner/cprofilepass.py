"""The cprofile pass: the script under cProfile, its table and the user's call sites.

Standard library only: it runs in the user's interpreter.
"""

from __future__ import annotations

import os
import time
from typing import Any

from . import callsites
from .entrycount import Entry, profile_entries
from .ownstats import through_runner, without_runner
from .paths import FileClassifier, is_runner_file
from .units import share

TOP_FUNCTIONS = 30
# torch's dispatch to a TorchFunctionMode's handler, in Python (torch.overrides)
_DISPATCH = os.path.join("torch", "overrides.py")


def marked_files(file_name: str) -> bool:
    """The runner's files, and torch's code that calls the line marker's handler: what a
    table recorded beside the marker leaves out (``ownstats.through_runner``)."""
    return is_runner_file(file_name) or file_name.endswith(_DISPATCH)


class CProfilePass:
    name = "cprofile"

    def __init__(self, files: FileClassifier, within: bool = False) -> None:
        """``within``: recorded in the cpu pass's run, beside its line marker (the job's
        cprofile pass then needs no run of its own: job/job.py, job/cprofile_ride.py)."""
        import cProfile

        self.files = files
        self.within = within
        self.profiler = cProfile.Profile()
        self.started = 0.0
        self.stopped = 0.0

    def start(self) -> None:
        # A child the script forks (a DataLoader's worker) runs unprofiled, as without us:
        # install_exit_hooks drops the 3.11 profile hook, not 3.12's sys.monitoring tool.
        # (Before the profile starts: calls made here after it would be in its table.)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self.profiler.disable)
        self.started = time.perf_counter()
        self.profiler.enable()

    def stop(self) -> None:
        self.profiler.disable()
        if not self.stopped:
            self.stopped = time.perf_counter()

    def entries(self) -> list[Entry]:
        """Entries into the user's functions, as ``entrycount.EntryCounter`` gives them
        (this profiler in its place)."""
        return profile_entries(self.profiler, lambda code: self.files.is_user(code.co_filename))

    def finish(self) -> dict[str, Any]:
        import pstats

        begin = time.perf_counter()
        stats: dict[Any, Any] = pstats.Stats(self.profiler).stats  # type: ignore[attr-defined]
        is_runner = is_runner_file
        if self.within:
            is_runner = marked_files
            stats = through_runner(stats, is_runner)
        # The runner's own calls (it starts and stops the profiler) are not the script's work.
        stats = without_runner(stats, is_runner, lambda key: self.files.is_user(key[0]))
        total_tt = sum(v[2] for v in stats.values())
        total_calls = sum(v[1] for v in stats.values())
        functions: list[dict[str, Any]] = []
        user_keys: dict[tuple[str, int, str], str] = {}
        for key in stats:
            path = self.files.resolve(key[0])
            if path is not None:
                user_keys[key] = path
        ranked = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)
        chosen = {k for k, _ in ranked[:TOP_FUNCTIONS]} | set(user_keys)
        for key, (cc, nc, tt, ct, _callers) in ranked:
            if key not in chosen:
                continue
            path = user_keys.get(key)
            functions.append(
                {
                    "file": path or key[0],
                    "line": key[1],
                    "function": key[2],
                    "user": path is not None,
                    "ncalls": nc,
                    "primitive_calls": cc,
                    "tottime_s": round(tt, 6),
                    "cumtime_s": round(ct, 6),
                    "share": share(tt, total_tt),
                }
            )
        sites = callsites.attribute(stats, user_keys, total_tt)
        return {
            "script_wall_s": round(self.stopped - self.started, 6),
            "event_count": total_calls,
            "totals": {"tottime_s": round(total_tt, 6), "calls": total_calls},
            "functions": functions,
            "call_sites": sites,
            "postprocess_s": round(time.perf_counter() - begin, 6),
        }
