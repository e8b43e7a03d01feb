"""Memory per line, from the autograd profiler's allocation events (``profile_memory``).

Each allocation is charged to the line whose op made it, by the same rules as op time
(calls, methods, operators; backward ops to the ``.backward()`` line). A free is matched
to its allocation by address. Per line: bytes allocated, their count, bytes of them freed
during the pass, and the bytes it had allocated that were still live at the pass's peak:
the moment the script's allocations (made while profiling) added up to the most. An
activation kept for backward is live at a peak in backward, and is charged to the forward
line that made it. Memory allocated before profiling began is not counted.

Standard library only (the runner imports it).
"""

from __future__ import annotations

from typing import Any

from .attribution import LineStats

# time, address, bytes (<0: a free), the allocator's total, device, line, its reserved bytes
Event = tuple[int, int, int, int, str, LineStats, int]


def _device(events: list[Event], kind: str) -> str | None:
    """The device of ``kind`` ("cpu", "cuda") that allocated the most."""
    sizes: dict[str, int] = {}
    for e in events:
        if e[2] > 0 and e[4].split(":")[0] == kind:
            sizes[e[4]] = sizes.get(e[4], 0) + e[2]
    return max(sizes, key=lambda d: sizes[d]) if sizes else None


def account(events: list[Event], kind: str, start_ns: int) -> dict[str, Any] | None:
    """Charge the device's memory events to their lines (``LineStats.memory``: allocated,
    count, freed, live at the peak) and return the pass's memory summary, or None when no
    allocation on such a device was recorded."""
    device = _device(events, kind)
    if device is None:
        return None
    mine = sorted((e for e in events if e[4] == device), key=lambda e: e[0])
    live: dict[int, tuple[int, LineStats]] = {}
    current = peak = 0
    peak_index = -1
    allocated = count = freed = unmatched = 0
    for i, (_t, ptr, size, _total, _dev, line, _reserved) in enumerate(mine):
        if size > 0:
            live[ptr] = (size, line)
            current += size
            allocated += size
            count += 1
            record = line.memory
            if record is None:
                record = line.memory = [0, 0, 0, 0]
            record[0] += size
            record[1] += 1
            if current > peak:
                peak, peak_index = current, i
        else:
            found = live.pop(ptr, None)
            if found is None:
                unmatched += 1  # allocated before profiling began
                continue
            current -= found[0]
            freed += found[0]
            record = found[1].memory
            if record is not None:
                record[2] += found[0]
    # Again up to the peak: what each line holds then.
    at_peak: dict[int, tuple[int, LineStats]] = {}
    for _t, ptr, size, _total, _dev, line, _reserved in mine[: peak_index + 1]:
        if size > 0:
            at_peak[ptr] = (size, line)
        else:
            at_peak.pop(ptr, None)
    for size, line in at_peak.values():
        if line.memory is not None:
            line.memory[3] += size
    summary: dict[str, Any] = {
        "device": device,
        "peak_bytes": peak,
        "allocated_bytes": allocated,
        "allocations": count,
        "freed_bytes": freed,
        "live_at_end_bytes": current,
        "frees_of_earlier_memory": unmatched,
    }
    if peak_index >= 0:
        t, _ptr, _size, total, _dev, line, reserved = mine[peak_index]
        summary["peak_at_s"] = round(max(t - start_ns, 0) / 1e9, 6)
        summary["allocator_bytes_at_peak"] = total  # the allocator's own total, earlier memory too
        if reserved:  # the CUDA caching allocator's reserved bytes (the CPU allocator has none)
            summary["reserved_bytes_at_peak"] = reserved
        if line.file:
            summary["peak_file"] = line.file
            summary["peak_line"] = line.line
    return summary


def line_fields(s: LineStats, peak: int) -> dict[str, Any]:
    """A line's memory in the pass's document (empty when it allocated nothing)."""
    if s.memory is None:
        return {}
    allocated, count, freed, live = s.memory
    return {
        "memory": {
            "allocated_bytes": allocated,
            "allocations": count,
            "freed_bytes": freed,
            "live_at_peak_bytes": live,
            "peak_share": round(live / peak, 6) if peak > 0 else 0.0,
        }
    }
