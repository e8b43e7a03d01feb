"""Pure functions over a result document: one row per source line, the CPU/GPU verdict.

Every pass measures something different about a line; ``hotspots`` joins them into one
row per line, each column with one stated denominator, and ranks the rows by one column:
device time when the run is GPU-bound, else wall time (the sample pass), else what was
measured. Everything the user sees reads this one ranking: the CLI's hotspot list and
compiler-style lines, the diagnostics, lenses and hovers, the server's summary.

Nothing here runs code or touches the disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Columns, also the diagnostics' codes (the ranking column's).
WALL = "wall-time"  # sample pass: main-thread wall time at the line
PYTHON = "python-time"  # sample pass: of which running Python (not in a C call)
CPU = "cpu-op-time"  # cpu pass: torch ops' self CPU time
DEVICE = "device-time"  # cuda pass: kernels, copies
WAIT = "device-wait"  # cuda pass: the CPU blocked on the device

COLUMNS = (WALL, PYTHON, CPU, DEVICE, WAIT)
KIND_LABEL = {
    WALL: "wall time",
    PYTHON: "Python time",
    CPU: "op CPU time",
    DEVICE: "device time",
    WAIT: "wall time waiting on the device",
}
SHORT = {WALL: "wall", PYTHON: "Python", CPU: "op CPU", DEVICE: "device", WAIT: "wait"}
# What each column's share is a share of: stated once, shown with the report.
DENOMINATOR = {
    WALL: "the main thread's sampled wall time (sample pass)",
    PYTHON: "the same sampled wall time: the part spent running Python, not in a C call",
    CPU: "all torch ops' self CPU time (cpu pass)",
    DEVICE: "all device time: kernels, memcpy, memset (cuda pass)",
    WAIT: "the cuda pass's wall time",
}


@dataclass(frozen=True)
class Thresholds:
    """Which lines are hotspots, and how loud each is. Shares are fractions (0.1 = 10%)."""

    min_share: float = 0.05  # a line at or above this share is always shown
    top: int = 3  # the top N lines are shown even under min_share
    warning_share: float = 0.20  # at or above: a warning (see ``severity``)


@dataclass(slots=True)
class Cell:
    """One column of one line: its time and its share of the column's denominator."""

    time_s: float
    share: float


@dataclass(slots=True)
class Hotspot:
    """One source line, all columns. ``kind``, ``share`` and ``time_s`` are the ranking
    column's; ``cells`` holds every column measured for the line."""

    kind: str
    file: str
    line: int
    column: int
    text: str
    function: str
    exact: bool
    share: float
    time_s: float
    cells: dict[str, Cell] = field(default_factory=dict)
    count: int = 0  # top-level torch ops called from the line (an autograd pass)
    ops: list[dict[str, Any]] = field(default_factory=list)
    backward: bool = False
    forward_lines: list[dict[str, Any]] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)  # compiled regions run from this line
    kernels: list[dict[str, Any]] = field(default_factory=list)  # device work launched here
    device_count: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)  # cProfile: calls made from the line

    @property
    def key(self) -> tuple[str, int]:
        return (self.file, self.line)


def loudness(row: Hotspot) -> float:
    """The share a row's mark is as loud as: its ranking column's, or for a line marked for
    another column (where the CPU waits on the device) that column's."""
    if row.kind in row.cells:
        return row.share
    return max((c.share for c in row.cells.values()), default=0.0)


WARNING, INFORMATION, HINT = "warning", "information", "hint"


def severity(row: Hotspot, thresholds: Thresholds) -> str:
    """How loud a row's mark is, the one scale for the report and the editor: a warning at
    ``warning_share`` or more, information at ``min_share`` or more, a hint for a line
    shown only as one of the top N."""
    share = loudness(row)
    if share >= thresholds.warning_share:
        return WARNING
    return INFORMATION if share >= thresholds.min_share else HINT


def pass_named(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    for part in doc.get("passes", []):
        if part.get("name") == name:
            found: dict[str, Any] = part
            return found
    return None


def kernel_label(name: str) -> str:
    """A device activity's name, short enough for a lens: no ``void``, template arguments
    or parameters, no namespace (``vectorized_elementwise_kernel``, ``Memcpy DtoH``)."""
    text = name[5:] if name.startswith("void ") else name
    text = text.replace("(anonymous namespace)::", "")
    cuts = [i for i in (text.find("<"), text.find("(")) if i > 0]
    text = text[: min(cuts)].strip() if cuts else text
    text = text.rsplit("::", 1)[-1]
    return text if len(text) <= 48 else text[:45] + "..."


def _usable(part: dict[str, Any] | None) -> bool:
    return part is not None and part.get("status") not in ("skipped", "crashed")


MIN_TICKS = 20  # fewer looks than this (a script of a few ms): wall time is too coarse to rank by


def ranking_kind(doc: dict[str, Any]) -> str | None:
    """The column rows are ranked by: device time when GPU-bound, else wall time (when the
    sampler looked at least ``MIN_TICKS`` times), else whatever was measured (op CPU time,
    device time, then wall time however coarse)."""
    sample, cpu, cuda = (pass_named(doc, n) for n in ("sample", "cpu", "cuda"))
    verdict = doc.get("verdict")
    has_device = _usable(cuda) and cuda is not None and cuda.get("totals", {}).get("self_device_us", 0) > 0
    if verdict and verdict.get("bound") == "gpu" and has_device:
        return DEVICE
    samples = (sample.get("samples") or {}) if _usable(sample) and sample is not None else {}
    if samples.get("lines") and samples.get("ticks", 0) >= MIN_TICKS:
        return WALL
    if _usable(cpu) and cpu is not None and cpu.get("lines"):
        return CPU
    if has_device:
        return DEVICE
    if _usable(cuda) and cuda is not None and cuda.get("lines"):
        return CPU
    if samples.get("lines"):
        return WALL
    return None


class _Rows:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, int], Hotspot] = {}

    def get(self, entry: dict[str, Any]) -> Hotspot:
        key = (entry["file"], entry["line"])
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = Hotspot(
                kind="",
                file=entry["file"],
                line=entry["line"],
                column=entry.get("column", 1),
                text=entry.get("text", ""),
                function=entry.get("function", ""),
                exact=entry.get("exact", True),
                share=0.0,
                time_s=0.0,
            )
        elif not row.text and entry.get("text"):
            row.text, row.column = entry["text"], entry.get("column", 1)
        return row


def _add_sampled(rows: _Rows, part: dict[str, Any]) -> None:
    samples = part.get("samples") or {}
    total = float(samples.get("wall_s") or 0.0)
    for entry in samples.get("lines", []):
        row = rows.get(entry)
        row.cells[WALL] = Cell(entry["wall_s"], entry["wall_share"])
        python = float(entry.get("python_s", 0.0))
        row.cells[PYTHON] = Cell(python, round(python / total, 6) if total > 0 else 0.0)


def _add_ops(rows: _Rows, part: dict[str, Any], with_cpu: bool) -> None:
    wall = float(part.get("script_wall_s") or 0.0)
    for entry in part.get("lines", []):
        if not entry.get("exact", True) and entry.get("function") == "<module>":
            # Known only as "somewhere at module level" (--no-exact-lines): no line to
            # show it on (the module's "def line" is line 1, an import or a docstring).
            continue
        has_cpu = with_cpu and entry["self_cpu_us"] > 0
        on_device = part["name"] == "cuda" and (
            entry.get("self_device_us", 0.0) > 0 or entry.get("wait_us", 0.0) > 0
        )
        if not (has_cpu or on_device):
            continue  # nothing of this pass's columns to show for the line
        row = rows.get(entry)
        if has_cpu:
            row.cells[CPU] = Cell(entry["self_cpu_us"] / 1e6, entry["cpu_share"])
            row.count = entry.get("count", 0)
            row.ops = entry.get("ops", [])
            row.backward = row.backward or entry.get("backward", False)
            row.forward_lines = entry.get("forward_lines", []) or row.forward_lines
            row.opaque = entry.get("opaque", []) or row.opaque
            row.exact = row.exact and entry.get("exact", True)
        if part["name"] != "cuda":
            continue
        if entry.get("self_device_us", 0.0) > 0:
            row.cells[DEVICE] = Cell(entry["self_device_us"] / 1e6, entry.get("device_share", 0.0))
            row.kernels = entry.get("kernels", [])
            row.device_count = entry.get("device_count", 0)
            row.backward = row.backward or entry.get("backward", False)
            if not row.ops:
                row.ops = entry.get("ops", [])
            links = entry.get("forward_lines", [])
            if any(link.get("backward_device_us") for link in links):
                row.forward_lines = links
        wait = entry.get("wait_us", 0.0) / 1e6
        if wait > 0:
            row.cells[WAIT] = Cell(wait, round(min(wait / wall, 1.0), 6) if wall > 0 else 0.0)


def _add_calls(rows: dict[tuple[str, int], Hotspot], part: dict[str, Any]) -> None:
    """cProfile's calls made from a line, as detail of rows that exist (exact sites only)."""
    for site in part.get("call_sites", []):
        row = rows.get((site["file"], site["line"]))
        if row is not None and site["exact"]:
            row.calls.append(
                {"name": site["callee"], "cumtime_s": site["cumtime_s"], "count": site["ncalls"]}
            )
    for row in rows.values():
        row.calls.sort(key=lambda c: c["cumtime_s"], reverse=True)
        del row.calls[5:]


def all_rows(doc: dict[str, Any]) -> list[Hotspot]:
    """Every measured line as one row, ranked (see the module's docstring)."""
    kind = ranking_kind(doc)
    if kind is None:
        return []
    rows = _Rows()
    sample, cprofile, cpu, cuda = (pass_named(doc, n) for n in ("sample", "cprofile", "cpu", "cuda"))
    if _usable(sample) and sample is not None:
        _add_sampled(rows, sample)
    if _usable(cpu) and cpu is not None:
        _add_ops(rows, cpu, with_cpu=True)
    if _usable(cuda) and cuda is not None:
        _add_ops(rows, cuda, with_cpu=not (_usable(cpu) and cpu is not None))
    if cprofile is not None:
        _add_calls(rows.rows, cprofile)
    out = []
    for row in rows.rows.values():
        cell = row.cells.get(kind)
        row.kind = kind
        row.share, row.time_s = (cell.share, cell.time_s) if cell is not None else (0.0, 0.0)
        out.append(row)
    out.sort(key=lambda r: (-r.share, -sum(c.share for c in r.cells.values()), r.file, r.line))
    return out


def ranking(doc: dict[str, Any]) -> dict[str, Any]:
    """The one ranking, as the document carries it (``doc["ranking"]``): what the report,
    the diagnostics, lenses and hovers show, in the same order."""
    rows = all_rows(doc)
    return {
        "ranked_by": rows[0].kind if rows else ranking_kind(doc),
        "disagreements": disagreements(doc),
        "denominators": {k: DENOMINATOR[k] for k in COLUMNS},
        "lines": [
            {
                "file": r.file,
                "line": r.line,
                "column": r.column,
                "text": r.text,
                "function": r.function,
                "exact": r.exact,
                "share": r.share,
                "time_s": r.time_s,
                "columns": {k: {"share": c.share, "time_s": c.time_s} for k, c in r.cells.items()},
                "count": r.count,
                "ops": r.ops,
                "device_count": r.device_count,
                "kernels": r.kernels,
                "backward": r.backward,
                "forward_lines": r.forward_lines,
                "calls": r.calls,
                "opaque": r.opaque,
            }
            for r in rows
        ],
    }


def hotspots(doc: dict[str, Any], thresholds: Thresholds | None = None) -> list[Hotspot]:
    """The rows worth showing, loudest first: at or above ``min_share`` in the ranking
    column, or among its ``top`` N."""
    thresholds = thresholds or Thresholds()

    def waits(r: Hotspot) -> bool:  # where the CPU waits on the device: always worth a mark
        cell = r.cells.get(WAIT)
        return cell is not None and r.kind != WAIT and cell.share >= thresholds.min_share

    return [
        r
        for rank, r in enumerate(all_rows(doc))
        if (r.share > 0 and (r.share >= thresholds.min_share or rank < thresholds.top)) or waits(r)
    ]


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


def _entries(
    part: dict[str, Any] | None, key: str, count: str, first_line: dict[tuple[str, str], int]
) -> dict[tuple[str, str], int]:
    """A pass's entries into the user's functions, summed by (file, function name): torch
    names a generator's resumption by the line it resumes at, cProfile by its first line."""
    out: dict[tuple[str, str], int] = {}
    if part is None or part.get("status") != "ok" or part.get("event_budget"):
        return out  # a pass cut short did not run (or record) the whole script
    for f in part.get(key, []):
        if f.get("user", True) and f[count] > 0:
            k = (f["file"], f["function"])
            out[k] = out.get(k, 0) + f[count]
            if f["line"] > 0:
                first_line[k] = min(first_line.get(k, f["line"]), f["line"])
    return out


def found_disagreements(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The disagreements the document's ranking carries (computed once, when it was made)."""
    found: list[dict[str, Any]] = (doc.get("ranking") or {}).get("disagreements") or []
    return found


def disagreements(doc: dict[str, Any], limit: int = 3) -> list[dict[str, Any]]:
    """Functions of the user's files that the passes entered a different number of times.

    Every pass runs the script afresh; a script whose work depends on unseeded randomness,
    the clock or outside data does not do the same work each time, and figures from
    different passes then describe different runs. Counted: cProfile's calls and the
    autograd passes' Python call events, main thread only, passes that ran to the end."""
    lines: dict[tuple[str, str], int] = {}
    counts = {
        "cprofile": _entries(pass_named(doc, "cprofile"), "functions", "ncalls", lines),
        "cpu": _entries(pass_named(doc, "cpu"), "function_calls", "count", lines),
        "cuda": _entries(pass_named(doc, "cuda"), "function_calls", "count", lines),
    }
    present = {name: c for name, c in counts.items() if c}
    out: list[dict[str, Any]] = []
    if len(present) >= 2:
        keys = set.intersection(*(set(c) for c in present.values()))
        for key in sorted(keys):
            seen = {name: c[key] for name, c in present.items()}
            if len(set(seen.values())) > 1:
                spread = max(seen.values()) - min(seen.values())
                out.append(
                    {
                        "file": key[0],
                        "line": lines.get(key, 1),
                        "function": key[1],
                        "counts": seen,
                        "spread": spread,
                    }
                )
    out.sort(key=lambda d: -int(d["spread"]))
    return out[:limit]


GPU_BOUND_BUSY = 0.5
_LIGHT_SOURCE = "the sample pass (device activity only: no Python stacks, no CPU ops)"
_TRACED_SOURCE = (
    "the CUDA pass (traced with Python stacks and CPU ops, which slow the CPU side: "
    "the verdict leans towards CPU-bound there)"
)


def verdict(doc: dict[str, Any]) -> dict[str, Any] | None:
    """CPU-bound or GPU-bound, from the lightest run that measured the device.

    The device is the limit when it is busy (kernels, copies: the union of their
    intervals) for at least half of the run's wall time, CUDA's one-time lazy module
    loading set aside. The sample pass decides when it recorded the device: it records
    device activity only, so its own overhead does not decide the answer. Otherwise the CUDA pass does,
    and the verdict says it was traced.
    """
    for name, source, traced in (("sample", _LIGHT_SOURCE, False), ("cuda", _TRACED_SOURCE, True)):
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
