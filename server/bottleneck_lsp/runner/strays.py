"""The script's processes that left the runner's process group.

A pass ends with a SIGKILL to the runner's process group: the script's workers and
whatever they started go with it. A process the script started in a session of its own
(``subprocess.Popen(..., start_new_session=True)``, ``os.setsid()``) is not in that group,
and outlived every pass. ``end_strays`` finds the runner's descendants from ``/proc`` (Linux)
and ends those outside the group; it runs in the runner once its results are written, and
in the parent before it kills a runner that never took its stop. Elsewhere it does nothing.
Standard library only: it runs in the user's interpreter.
"""

from __future__ import annotations

import os
import signal


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, dead and not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):  # no /proc (macOS): alive, as kill said
        return True
    return state not in (b"Z", b"X")


def _parents() -> dict[int, list[int]]:
    """Each live process's children, from ``/proc/PID/stat`` (its fourth field: the parent)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return children
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # ended meanwhile
        fields = stat[stat.rfind(b")") + 2 :].split()  # the name may hold spaces and ')'
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    """``pid``'s live descendants, parents before their children."""
    children = _parents()
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def end_strays(pid: int | None = None) -> int:
    """SIGKILL the descendants of ``pid`` (this process by default) that are not in its
    process group; how many. Twice: one may have started another as it was looked at."""
    pid = os.getpid() if pid is None else pid
    if not os.path.isdir("/proc/self"):
        return 0
    try:
        group = os.getpgid(pid)
    except OSError:
        return 0
    ended: set[int] = set()
    for _ in range(2):
        for stray in descendants(pid):
            try:
                if os.getpgid(stray) != group:
                    os.kill(stray, signal.SIGKILL)
                    ended.add(stray)
            except OSError:
                pass  # ended meanwhile
    return len(ended)
