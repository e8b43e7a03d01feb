"""Device activity (CUDA kernels, memcpy, memset) and the CPU's waits on the device.

Pure functions over plain records, so that a live profile and a raw recording (replay)
go through the same code. Nothing here imports torch (``settle`` is given it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# CUDA runtime and driver calls in which the CPU blocks until the device has caught up.
# ``cudaMemcpy`` (not ...Async) is a blocking copy; ``.item()`` and ``.cpu()`` show up as
# ``cudaMemcpyAsync`` followed by ``cudaStreamSynchronize``.
WAIT_CALLS = frozenset(
    {
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cudaMemcpy",
        "cudaMemcpy2D",
        "cudaMemcpyFromSymbol",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
        "cuEventSynchronize",
        "cuMemcpyDtoH_v2",
        "cuMemcpyHtoD_v2",
        "hipDeviceSynchronize",
        "hipStreamSynchronize",
        "hipEventSynchronize",
        "hipMemcpy",
    }
)
# One-time costs of CUDA's lazy module loading, reported by CUPTI: start-up, not work.
LOADING = frozenset({"Runtime Triggered Module Loading", "Lazy Function Loading"})


@dataclass(frozen=True, slots=True)
class Activity:
    """One profiler event, reduced to what the device analysis reads."""

    name: str
    on_device: bool  # a kernel, memcpy or memset run by the device
    start_ns: int
    duration_ns: int
    linked_correlation_id: int  # for device work: the correlation id of the op that launched it
    device_index: int


_RUNTIME_PREFIXES = ("cuda", "cu", "hip")


def from_kineto(events: Iterable[Any]) -> tuple[list[Activity], bool]:
    """``kineto_results.events()`` -> Activity records (device work, the CPU's waits,
    module loading; CPU ops are left out: the event tree has them), and whether any
    runtime call was recorded at all (if not, waits are unknown rather than zero)."""
    from torch._C._autograd import DeviceType

    cpu = DeviceType.CPU
    out = []
    runtime = False
    for event in events:
        on_device = event.device_type() != cpu
        name = event.name()
        if not on_device and name not in WAIT_CALLS and name not in LOADING:
            runtime = runtime or name.startswith(_RUNTIME_PREFIXES)
            continue
        out.append(
            Activity(
                name,
                on_device,
                int(event.start_ns()),
                int(event.duration_ns()),
                int(event.linked_correlation_id()),
                int(event.device_index()),
            )
        )
    return out, runtime or any(not a.on_device and a.name in WAIT_CALLS for a in out)


def settle(torch: Any) -> None:
    """Wait for the device's queued work, so that a recording about to stop holds its last
    kernels; a device that fails here still leaves what was recorded (never raises)."""
    try:
        torch.cuda.synchronize()
    except Exception:  # noqa: BLE001 - what was recorded still counts
        pass


def union_ns(intervals: list[tuple[int, int]]) -> int:
    """The length of the union of ``(start, end)`` intervals."""
    total = 0
    end_so_far: int | None = None
    start_so_far = 0
    for start, end in sorted(intervals):
        if end_so_far is None or start > end_so_far:
            if end_so_far is not None:
                total += end_so_far - start_so_far
            start_so_far, end_so_far = start, end
        elif end > end_so_far:
            end_so_far = end
    if end_so_far is not None:
        total += end_so_far - start_so_far
    return total


def kind_of(name: str) -> str:
    """``memcpy``, ``memset`` or ``kernel``, from a device activity's name."""
    lowered = name.lower()
    if lowered.startswith("memcpy"):
        return "memcpy"
    if lowered.startswith("memset"):
        return "memset"
    return "kernel"


TOP_KERNELS = 10


def summarize(activities: Iterable[Activity], wall_ns: int, runtime_recorded: bool) -> dict[str, Any]:
    """Per pass: device time summed, busy time (the union of device intervals, per device
    and on any device), the CPU's waits on the device and one-time module loading.

    ``wall_ns``: the measured window (the script's run). ``runtime_recorded``: whether
    runtime calls were recorded at all (when not, the waits are unknown, not zero).
    """
    per_device: dict[int, list[tuple[int, int]]] = {}
    by_kind = {"kernel": [0, 0], "memcpy": [0, 0], "memset": [0, 0]}
    by_name: dict[str, list[int]] = {}
    wait_ns = 0
    wait_calls = 0
    loading_ns = 0
    for a in activities:
        if a.on_device:
            per_device.setdefault(a.device_index, []).append((a.start_ns, a.start_ns + a.duration_ns))
            acc = by_kind[kind_of(a.name)]
            acc[0] += a.duration_ns
            acc[1] += 1
            named = by_name.setdefault(a.name, [0, 0])
            named[0] += a.duration_ns
            named[1] += 1
        elif a.name in WAIT_CALLS:
            wait_ns += a.duration_ns
            wait_calls += 1
        elif a.name in LOADING:
            loading_ns += a.duration_ns
    every = [iv for ivs in per_device.values() for iv in ivs]
    busy = union_ns(every)
    wall = max(wall_ns, busy)
    return {
        "wall_s": round(wall / 1e9, 6),
        "device_time_s": round(sum(v[0] for v in by_kind.values()) / 1e9, 6),
        "busy_s": round(busy / 1e9, 6),
        "busy_by_device": [
            {"device": index, "busy_s": round(union_ns(ivs) / 1e9, 6)}
            for index, ivs in sorted(per_device.items())
        ],
        "by_kind": {k: {"time_s": round(v[0] / 1e9, 6), "count": v[1]} for k, v in by_kind.items()},
        "wait_s": round(wait_ns / 1e9, 6) if runtime_recorded else None,
        "wait_calls": wait_calls if runtime_recorded else None,
        "module_loading_s": round(loading_ns / 1e9, 6),
        "top_kernels": [
            {"name": name[:300], "kind": kind_of(name), "time_s": round(v[0] / 1e9, 6), "count": v[1]}
            for name, v in sorted(by_name.items(), key=lambda kv: kv[1][0], reverse=True)[:TOP_KERNELS]
        ],
    }
