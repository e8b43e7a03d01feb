"""A raw recording opened (``profile --save-raw``): its event tree and device events, which
of its file names are the user's files and where they are here, and the pass it is of.
Read by ``job.replay`` (a result document) and ``analysis.timeline`` (ops in time)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..paths.root_map import RootMap
from ..runner import device, recording
from ..runner.attribution import Attributor
from ..runner.lineranges import read_entries, read_header
from ..runner.provenance import CompiledGraphs
from ..schema.model import PassName

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


def _pass_name(header: dict[str, Any], activities: list[device.Activity]) -> PassName:
    name = header.get("pass")
    if name in (PassName.CPU, PassName.CUDA, PassName.SAMPLE):
        return PassName(name)
    return PassName.CUDA if any(a.on_device for a in activities) else PassName.CPU


@dataclass
class Opened:
    """A raw recording read, with where its files are here and the pass it is of."""

    path: str
    header: dict[str, Any]
    roots: list[recording.Node]
    activities: list[device.Activity]
    files: RecordedFiles
    name: PassName  # the pass: sample, cpu or cuda
    wall_ns: int
    recorded_on: dict[str, Any]

    def attributor(self) -> Attributor:
        """An attributor for this recording's event tree (not yet fed: ``consume`` it)."""
        ranges = read_header(self.header.get("line_ranges"))
        attributor = Attributor(
            self.files,
            self.marker_site,
            recording.REPLAY_KINDS,
            device=self.name == PassName.CUDA,
            ranges=ranges or None,
            compiled=CompiledGraphs.from_json(self.header.get("compiled_graphs")),
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
