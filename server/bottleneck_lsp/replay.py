"""``bottleneck-lsp replay FILE``: a raw recording -> the result document, without torch.

The recording (``profile --save-raw``) holds an autograd pass's event tree and device
events as they came from the profiler. Replay runs the same attribution and analysis as a
live pass, so a run made on a GPU machine can be read, tested and reported anywhere.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from typing import Any

from . import __version__, analysis
from .contract import SCHEMA_NAME, SCHEMA_VERSION
from .model import Document, ModelError
from .rootmap import RootMap
from .runner import device, recording
from .runner.attribution import Attributor
from .runner.autograddoc import autograd_document
from .runner.lineranges import read_entries, read_header

RecordingError = recording.RecordingError


class RecordedFiles:
    """Which of a recording's file names are the user's files, and where they are here.

    Version 2 says it per name (decided where the recording was made); version 1 knew only
    the script's own name. Files under the recording's first root are looked for under
    ``local_root`` (the folder given, else the recording's own folder)."""

    def __init__(self, header: dict[str, Any], local_root: str) -> None:
        self.local_root = os.path.abspath(local_root)
        roots = header.get("roots")
        self.map = RootMap(
            roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else "",
            self.local_root,
        )
        files = header.get("files")
        self.files: dict[str, str | None] = {}
        if isinstance(files, dict):
            for name, path in files.items():
                if isinstance(name, str) and (path is None or isinstance(path, str)):
                    self.files[name] = self._here(path) if path else None
        self.script = str(header.get("script") or "")
        self.v1 = header.get("format_version") == 1

    def _here(self, path: str) -> str | None:
        """Where a recorded path is here: only ever a file under ``local_root``."""
        return self.map.here(path)

    def resolve(self, file_name: str) -> str | None:
        if file_name in self.files:
            return self.files[file_name]
        if self.v1 and self.script:
            base = os.path.basename(self.script)
            if file_name == base or file_name.endswith("/" + base):
                return os.path.join(self.local_root, base)
        return None

    def script_path(self) -> str:
        fallback = os.path.join(self.local_root, os.path.basename(self.script) or "script.py")
        if self.v1 or not self.script:
            return fallback
        return self._here(self.script) or fallback


def _span_ns(roots: list[recording.Node], activities: list[device.Activity]) -> int:
    starts = [n.start_time_ns for n in roots] + [a.start_ns for a in activities]
    ends = [n.end_time_ns for n in roots] + [a.start_ns + a.duration_ns for a in activities]
    return max(ends) - min(starts) if starts else 0


def _environment(recorded: dict[str, Any]) -> dict[str, Any]:
    cuda = recorded.get("cuda")
    gpu = recorded.get("device")
    return {
        "python": {
            "version": str(recorded.get("python") or "?"),
            "implementation": "",
            "executable": "recorded elsewhere",
        },
        "os": str(recorded.get("platform") or "(recorded elsewhere)"),
        "machine": "",
        "torch": {
            "version": str(recorded.get("torch") or "?"),
            "git_version": "",
            "debug": False,
            "cuda_compiled": cuda,
            "hip_compiled": None,
            "cuda_available": gpu is not None,
            "cudnn": None,
            "cuda_driver": None,
            "devices": [str(gpu)] if gpu else [],
        },
        "packages": [],
    }


def _pass_name(header: dict[str, Any], activities: list[device.Activity]) -> str:
    name = header.get("pass")
    if name in ("cpu", "cuda", "sample"):
        return str(name)
    return "cuda" if any(a.on_device for a in activities) else "cpu"


@dataclass
class Opened:
    """A raw recording read, with where its files are here and the pass it is of."""

    path: str
    header: dict[str, Any]
    roots: list[recording.Node]
    activities: list[device.Activity]
    files: RecordedFiles
    name: str  # the pass: sample, cpu or cuda
    wall_ns: int
    recorded_on: dict[str, Any]

    def attributor(self) -> Attributor:
        """An attributor for this recording's event tree (not yet fed: ``consume`` it)."""
        ranges = read_header(self.header.get("line_ranges"))
        attributor = Attributor(
            self.files,
            self.marker_site,
            recording.REPLAY_KINDS,
            device=self.name == "cuda",
            ranges=ranges or None,
        )
        entries = read_entries(self.header.get("function_entries"))
        if entries is not None:
            attributor.take_function_entries(entries)
        return attributor

    @property
    def marker_site(self) -> tuple[str, int] | None:
        marker = self.header.get("marker_site")
        if isinstance(marker, list) and len(marker) == 2 and isinstance(marker[1], int):
            return (str(marker[0]), int(marker[1]))
        return None


def open_recording(path: str, root: str | None = None) -> Opened:
    """Read a recording; its files are looked for under ``root`` (default: where they were
    recorded when that folder is here, else the recording's folder). RecordingError says
    what is wrong."""
    header, roots, activities = recording.read(path)
    recorded_roots = header.get("roots")
    recorded_root = recorded_roots[0] if isinstance(recorded_roots, list) and recorded_roots else None
    if root is None:
        here = isinstance(recorded_root, str) and os.path.isdir(recorded_root)
        root = (
            recorded_root
            if here and isinstance(recorded_root, str)
            else os.path.dirname(os.path.abspath(path))
        )
    wall = header.get("script_wall_ns")
    found = header.get("recorded_on")
    return Opened(
        path=path,
        header=header,
        roots=roots,
        activities=activities,
        files=RecordedFiles(header, root),
        name=_pass_name(header, activities),
        wall_ns=wall if isinstance(wall, int) and wall > 0 else _span_ns(roots, activities),
        recorded_on=found if isinstance(found, dict) else {},
    )


def replay(path: str, root: str | None = None) -> Document:
    """The result document of one recorded pass; RecordingError says what is wrong."""
    opened = open_recording(path, root)
    header, roots, activities, files = opened.header, opened.roots, opened.activities, opened.files
    name, wall_ns, recorded_on = opened.name, opened.wall_ns, opened.recorded_on
    part: dict[str, Any] = {
        "name": name,
        "status": "ok",
        "exit_code": 0,
        "script_wall_s": round(wall_ns / 1e9, 6),
        "replayed_from": os.path.abspath(path),
        "recorded_on": recorded_on,
        "warm": False,
    }
    if name == "sample":
        runtime = any(not a.on_device for a in activities)
        part["device"] = device.summarize(activities, wall_ns, runtime)
        part["device_event_count"] = sum(1 for a in activities if a.on_device)
    else:
        marker_site = opened.marker_site
        attributor = opened.attributor()
        attributor.consume(roots)
        part.update(autograd_document(attributor, activities if name == "cuda" else None, wall_ns))
        part.update(
            {
                "event_count": attributor.event_count,
                "garbled_frames": attributor.garbled_frames,
                "exact_lines": bool(header.get("exact_lines", marker_site is not None)),
            }
        )
    part["notes"] = [
        f"replayed from {os.path.basename(path)} ({recording.FORMAT}/{header['format_version']}), "
        f"recorded with torch {recorded_on.get('torch', '?')}"
        + (f" on {recorded_on['device']}" if recorded_on.get("device") else "")
    ]
    script = files.script_path()
    doc: dict[str, Any] = {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "tool": {"name": "bottleneck-lsp", "version": __version__},
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "script": script,
        "args": [],
        "cwd": files.local_root,
        "roots": [files.local_root],
        "python": "(recorded elsewhere)",
        "environment": _environment(recorded_on),
        "passes": [part],
        "replay": {"file": os.path.abspath(path), "format_version": header["format_version"]},
        "status": "ok",
    }
    try:
        typed = Document.from_json(doc, "result")
    except ModelError as exc:  # the recording's header or events held values of another type
        raise RecordingError(f"{path}: the recording does not make a valid result: {exc}") from None
    return analysis.conclude(typed)
