"""Pure functions over a result document: hotspots, severity, the CPU/GPU verdict.

Nothing here runs code or touches the disk; the CLI and the server present its output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Kinds of hotspot, as diagnostic codes.
CPU = "cpu-op-time"
DEVICE = "device-time"
PYTHON = "python-time"
WAIT = "device-wait"

KIND_LABEL = {
    CPU: "CPU time",
    DEVICE: "device time",
    PYTHON: "Python time",
    WAIT: "wall time waiting on the device",
}


@dataclass(frozen=True)
class Thresholds:
    """Which lines are hotspots, and how loud each is. Shares are fractions (0.1 = 10%)."""

    min_share: float = 0.05  # a line at or above this share is always shown
    top: int = 10  # the top N lines per kind are shown even under min_share
    warning_share: float = 0.20  # at or above: warning; below: information


@dataclass(slots=True)
class Hotspot:
    kind: str
    pass_name: str
    file: str
    line: int
    column: int
    text: str
    function: str
    exact: bool
    share: float
    time_s: float
    count: int
    ops: list[dict[str, Any]] = field(default_factory=list)
    backward: bool = False
    forward_lines: list[dict[str, Any]] = field(default_factory=list)
    callee: str = ""
    opaque: list[str] = field(default_factory=list)  # compiled regions run from this line
    kernels: list[dict[str, Any]] = field(default_factory=list)  # device work launched here
    wait_s: float = 0.0  # the CPU blocked on the device here (CUDA pass)

    @property
    def key(self) -> tuple[str, int]:
        return (self.file, self.line)


def severity(share: float, thresholds: Thresholds) -> str:
    return "warning" if share >= thresholds.warning_share else "information"


def pass_named(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    for part in doc.get("passes", []):
        if part.get("name") == name:
            found: dict[str, Any] = part
            return found
    return None


def _select(items: list[Hotspot], thresholds: Thresholds) -> list[Hotspot]:
    items = sorted(items, key=lambda h: h.share, reverse=True)
    return [
        h
        for rank, h in enumerate(items)
        if h.share > 0 and (h.share >= thresholds.min_share or rank < thresholds.top)
    ]


def kernel_label(name: str) -> str:
    """A device activity's name, short enough for a lens: no ``void``, template arguments
    or parameters, no namespace (``vectorized_elementwise_kernel``, ``Memcpy DtoH``)."""
    text = name[5:] if name.startswith("void ") else name
    text = text.replace("(anonymous namespace)::", "")
    cuts = [i for i in (text.find("<"), text.find("(")) if i > 0]
    text = text[: min(cuts)].strip() if cuts else text
    text = text.rsplit("::", 1)[-1]
    return text if len(text) <= 48 else text[:45] + "..."


def _line_hotspots(part: dict[str, Any], kind: str) -> list[Hotspot]:
    out = []
    device = kind == DEVICE
    wait = kind == WAIT
    wall = float(part.get("script_wall_s") or 0.0)
    for line in part.get("lines", []):
        if wait:
            time_us = line.get("wait_us", 0.0)
            share = min(time_us / 1e6 / wall, 1.0) if wall > 0 else 0.0
        elif device:
            share, time_us = line.get("device_share", 0.0), line.get("self_device_us", 0.0)
        else:
            share, time_us = line["cpu_share"], line["self_cpu_us"]
        if time_us <= 0:
            continue
        out.append(
            Hotspot(
                kind=kind,
                pass_name=part["name"],
                file=line["file"],
                line=line["line"],
                column=line.get("column", 1),
                text=line.get("text", ""),
                function=line.get("function", ""),
                exact=line.get("exact", True),
                share=share,
                time_s=time_us / 1e6,
                count=line.get("device_count", 0) if device else line.get("count", 0),
                ops=line.get("ops", []),
                backward=line.get("backward", False),
                forward_lines=line.get("forward_lines", []),
                opaque=line.get("opaque", []),
                kernels=line.get("kernels", []) if device else [],
                wait_s=line.get("wait_us", 0.0) / 1e6,
            )
        )
    return out


def _python_hotspots(part: dict[str, Any]) -> list[Hotspot]:
    """Python time per line, from the cProfile pass's line sampler.

    The calls cProfile saw made from the same line are listed as its "ops". Without
    samples (an older document, or no SIGPROF on the platform) nothing is reported here:
    cProfile alone cannot name lines.
    """
    samples = part.get("samples") or {}
    callees: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for site in part.get("call_sites", []):
        if site["exact"]:
            callees.setdefault((site["file"], site["line"]), []).append(
                {"name": site["callee"], "cumtime_s": site["cumtime_s"], "count": site["ncalls"]}
            )
    out = []
    for line in samples.get("lines", []):
        calls = sorted(
            callees.get((line["file"], line["line"]), []), key=lambda c: c["cumtime_s"], reverse=True
        )
        out.append(
            Hotspot(
                kind=PYTHON,
                pass_name=part["name"],
                file=line["file"],
                line=line["line"],
                column=line.get("column", 1),
                text=line.get("text", ""),
                function=line["function"],
                exact=True,
                share=line["share"],
                time_s=line["time_s"],
                count=line["samples"],
                ops=calls[:5],
            )
        )
    return out


def hotspots(doc: dict[str, Any], thresholds: Thresholds | None = None) -> list[Hotspot]:
    """The lines worth showing, per kind, loudest first."""
    thresholds = thresholds or Thresholds()
    found: list[Hotspot] = []
    for part in doc.get("passes", []):
        name = part.get("name")
        if name == "cprofile":
            found += _select(_python_hotspots(part), thresholds)
        elif name == "cpu":
            found += _select(_line_hotspots(part, CPU), thresholds)
        elif name == "cuda":
            found += _select(_line_hotspots(part, DEVICE), thresholds)
            found += _select(_line_hotspots(part, WAIT), thresholds)
            if pass_named(doc, "cpu") is None:
                found += _select(_line_hotspots(part, CPU), thresholds)
    return sorted(found, key=lambda h: h.share, reverse=True)


def hot_functions(doc: dict[str, Any], thresholds: Thresholds | None = None) -> list[dict[str, Any]]:
    """User functions from cProfile whose cumulative time passes the threshold."""
    thresholds = thresholds or Thresholds()
    part = pass_named(doc, "cprofile")
    if part is None:
        return []
    total = part.get("totals", {}).get("tottime_s", 0.0)
    if total <= 0:
        return []
    funcs = [f for f in part.get("functions", []) if f["user"] and f["function"] != "<module>"]
    funcs.sort(key=lambda f: f["cumtime_s"], reverse=True)
    return [
        f
        for rank, f in enumerate(funcs)
        if f["cumtime_s"] > 0 and (f["cumtime_s"] / total >= thresholds.min_share or rank < thresholds.top)
    ]


GPU_BOUND_BUSY = 0.5
_TIMELINE_SOURCE = "the timeline pass (device activity only: no Python stacks, no CPU ops)"
_TRACED_SOURCE = (
    "the CUDA pass (traced with Python stacks and CPU ops, which slow the CPU side: "
    "the verdict leans towards CPU-bound there)"
)


def verdict(doc: dict[str, Any]) -> dict[str, Any] | None:
    """CPU-bound or GPU-bound, from the lightest run that measured the device.

    The device is the limit when it is busy (kernels, copies: the union of their
    intervals) for at least half of the run's wall time, CUDA's one-time lazy module
    loading set aside. The timeline pass decides when it ran: it records device activity
    only, so its own overhead does not decide the answer. Otherwise the CUDA pass does,
    and the verdict says it was traced.
    """
    for name, source, traced in (("timeline", _TIMELINE_SOURCE, False), ("cuda", _TRACED_SOURCE, True)):
        part = pass_named(doc, name)
        if part is None or not isinstance(part.get("device"), dict):
            continue
        summary = part["device"]
        wall = float(summary["wall_s"])
        if wall <= 0:
            continue
        loading = min(float(summary.get("module_loading_s") or 0.0), wall)
        busy = float(summary["busy_s"])
        fraction = min(busy / max(wall - loading, 1e-9), 1.0)
        wait = summary.get("wait_s")
        cpu = pass_named(doc, "cpu") or part
        return {
            "bound": "gpu" if fraction >= GPU_BOUND_BUSY else "cpu",
            "device_busy_fraction": round(fraction, 4),
            "busy_s": round(busy, 6),
            "device_time_s": summary["device_time_s"],
            "cpu_op_time_s": round(float((cpu.get("totals") or {}).get("self_cpu_us", 0.0)) / 1e6, 6),
            "wall_s": round(wall, 6),
            "module_loading_s": round(loading, 6),
            "wait_s": wait,
            "wait_fraction": round(float(wait) / wall, 4) if wait is not None else None,
            "pass": name,
            "source": source,
            "traced": traced,
            "rule": "GPU-bound when the device is busy (kernels, copies) for at least half of the "
            "run's wall time, one-time CUDA module loading set aside; otherwise the CPU side "
            "(Python, op dispatch, data loading) is the limit.",
        }
    return None


def overall_status(doc: dict[str, Any]) -> tuple[str, int | None]:
    """The job's status and the exit code to pass through: the first pass that did
    not end cleanly decides; a run where every pass ended cleanly is "ok", 0."""
    for part in doc.get("passes", []):
        status = part.get("status")
        if status in ("ok", "skipped"):
            continue
        code = part.get("exit_code")
        if status == "timeout":
            code = 124
        elif status in ("cancelled", "terminated"):
            code = 130
        elif not isinstance(code, int) or code == 0:
            code = 1
        return status, code
    return "ok", 0


def first_error(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The first pass's error with its source location, when the script failed."""
    for part in doc.get("passes", []):
        error = part.get("error")
        if error:
            return {**error, "pass": part["name"], "status": part["status"]}
    return None
