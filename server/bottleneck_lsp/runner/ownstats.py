"""cProfile's statistics less what the runner itself called while the profile was on.

The runner starts and stops the profiler around the script, and in between a few of its
own calls are recorded: its functions, and what only they called (``os.getpid``, the
standard library's ``signal.signal`` and the ``enum`` calls under it, the at-fork hook's
registration). In a short script's table they rank among the user's, and they were never
the script's work. Dropped: the runner's own functions, then, until nothing changes, any
function all of whose callers were dropped, unless it led to the user's code (``exec``
runs the script, and keeps its call), and a function never seen called (no call, no caller:
it was running when a window of the one run turned the profile on) that led to none of the
user's code. A function that both the script and the runner
called keeps the script's part only: each caller's share is in cProfile's ``callers``.

Standard library only: this runs in the user's interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Key = tuple[str, int, str]  # file name, first line, function name, as pstats keys them


def without_runner(
    stats: dict[Key, Any], is_runner: Callable[[str], bool], is_user: Callable[[Key], bool]
) -> dict[Key, Any]:
    """``stats`` as ``pstats.Stats(...).stats`` has them: (primitive calls, calls, own
    time, cumulative time, callers), each caller's (calls, primitive calls, own time,
    cumulative time) of this function. Returns new stats; ``stats`` is left as it was."""
    leads_to_user = _ancestors({key for key in stats if is_user(key)}, stats)
    # and what was running, never seen called, when a window turned the profile on (the
    # runner's own bytecode reading, under its line marker) and led to none of the user's code
    dropped = {
        key
        for key, value in stats.items()
        if is_runner(key[0]) or (value[1] == 0 and not value[4] and key not in leads_to_user)
    }
    changed = True
    while changed:
        changed = False
        for key, value in stats.items():
            callers = value[4]
            if key in dropped or key in leads_to_user or not callers:
                continue
            if all(caller in dropped for caller in callers):
                dropped.add(key)
                changed = True
    out: dict[Key, Any] = {}
    for key, (cc, nc, tt, ct, callers) in stats.items():
        if key in dropped:
            continue
        kept = {}
        for caller, part in callers.items():
            if caller in dropped and key not in leads_to_user:
                # the runner's calls of a function the script called too
                cnc, ccc, ctt, cct = part[:4]
                nc, cc, tt, ct = nc - cnc, cc - ccc, tt - ctt, ct - cct
            else:
                kept[caller] = part
        out[key] = (cc, nc, max(tt, 0.0), max(ct, 0.0), kept)
    return out


def through_runner(stats: dict[Key, Any], is_runner: Callable[[str], bool]) -> dict[Key, Any]:
    """A table recorded beside the cpu pass's line marker (``CProfilePass(within=True)``)
    made to read as the script's alone, before ``without_runner`` (called with ``is_runner``
    then too).

    The marker is a TorchFunctionMode: at each torch call, torch calls its Python handler,
    through ``torch.overrides.handle_torch_function`` for torch's Python functions, and the
    handler calls the torch function again. ``is_runner`` covers the marker and that
    dispatch code (``marked_files``). Spliced out, as if they were not there:

    - a function that enters them and that they call again (a re-dispatch: ``x.relu()`` is
      relu, the handler, relu again; ``loss.backward()`` is Tensor.backward,
      handle_torch_function, the handler, Tensor.backward again) keeps its own and
      cumulative time, which hold the call's, and loses the second count of each call;
    - a function of the script that entered them without a call cProfile sees (an operator,
      ``a @ b``, or a tensor's attribute) gets their whole time from there as its own time:
      without the marker the op ran inline there, and the op's C call, which only they made,
      goes with them (``without_runner``).

    The handler's own time (the marker's cost) stays in the callers' cumulative times, as
    any profiler's cost does."""
    out: dict[Key, Any] = {
        key: [cc, nc, tt, ct, dict(callers)] for key, (cc, nc, tt, ct, callers) in stats.items()
    }
    inside = {key for key in stats if is_runner(key[0])}
    entered: dict[Key, float] = {}  # a function outside -> the time it spent in them
    for key in inside:
        for caller, (_nc, _cc, _tt, edge_ct) in stats[key][4].items():
            if caller not in inside:
                entered[caller] = entered.get(caller, 0.0) + edge_ct
    for key, spent in entered.items():
        row = out.get(key)
        if row is None:  # a caller without a row of its own (not seen returning)
            continue
        again = [caller for caller in row[4] if caller in inside]
        if again:  # a re-dispatch: the second count goes
            for caller in again:
                row[1] -= row[4].pop(caller)[0]
            row[0] = min(row[0], row[1])
        else:  # entered them without a call cProfile saw: their time is its own
            row[2] += spent
    # (a function both they and the script called, and that does not enter them, keeps the
    # script's part only: without_runner subtracts theirs)
    return {key: (cc, nc, tt, ct, callers) for key, (cc, nc, tt, ct, callers) in out.items()}


def _ancestors(keys: set[Key], stats: dict[Key, Any]) -> set[Key]:
    """``keys`` and every function that called one of them, directly or not."""
    found = set(keys)
    todo = list(keys)
    while todo:
        key = todo.pop()
        value = stats.get(key)
        if value is None:
            continue
        for caller in value[4]:
            if caller not in found:
                found.add(caller)
                todo.append(caller)
    return found
