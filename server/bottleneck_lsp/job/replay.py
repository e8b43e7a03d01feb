"""``bottleneck-lsp replay FILE``: a raw recording -> the result document, without torch.

The recording (``profile --save-raw``) holds an autograd pass's event tree and device
events as they came from the profiler. Replay runs the same attribution and analysis as a
live pass, so a run made on a GPU machine can be read, tested and reported anywhere.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..analysis import ranking
from ..analysis.recorded import RecordingError, open_recording
from ..runner import device, recording
from ..runner.autograddoc import autograd_document
from ..schema.contract import SCHEMA_NAME, SCHEMA_VERSION
from ..schema.model import Document, ModelError, PassName


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


def replay(path: str, root: str | None = None, windows: Sequence[str] = ()) -> Document:
    """The result document of one recorded pass; RecordingError says what is wrong.
    ``windows``: more recordings of the same pass, the windows of one run after the first
    (``STEM.PASS.windowN.raw.json.gz``), walked in turn as the run walked them."""
    opened = open_recording(path, root)
    header, activities, files = opened.header, opened.activities, opened.files
    name, wall_ns, recorded_on = opened.name, opened.wall_ns, opened.recorded_on
    later = [open_recording(more, root) for more in windows]
    for other in later:
        if other.name != name or other.name == PassName.SAMPLE:
            raise RecordingError(f"{other.path}: not a window of the same pass as {path} ({name})")
    part: dict[str, Any] = {
        "name": name,
        "status": "ok",
        "exit_code": 0,
        "script_wall_s": round(wall_ns / 1e9, 6),
        "replayed_from": os.path.abspath(path),
        "recorded_on": recorded_on,
        "warm": False,
    }
    if name == PassName.SAMPLE:
        runtime = any(not a.on_device for a in activities)
        part["device"] = device.summarize(activities, wall_ns, runtime)
        part["device_event_count"] = sum(1 for a in activities if a.on_device)
    else:
        marker_site = opened.marker_site
        # each recording's device work charged to its own ops before the next is read (a
        # window's correlation ids may repeat an earlier one's); the last recording's header
        # has every line range and graph of the earlier ones
        attributor = (later[-1] if later else opened).attributor()
        every = []
        for window in (opened, *later):
            attributor.consume(window.roots)
            if name == PassName.CUDA:
                attributor.add_device_events(window.activities)
                attributor.end_recording()
                every += window.activities
        wall_ns = sum(window.wall_ns for window in (opened, *later))
        part["script_wall_s"] = round(wall_ns / 1e9, 6)
        found = every if name == PassName.CUDA else None
        part.update(autograd_document(attributor, found, wall_ns, charged=True))
        part.update(
            {
                "event_count": attributor.event_count,
                "garbled_frames": attributor.garbled_frames,
                "exact_lines": bool(header.get("exact_lines", marker_site is not None)),
            }
        )
    also = f" and {len(later)} more window(s) of its run" if later else ""
    part["notes"] = [
        f"replayed from {os.path.basename(path)}{also} ({recording.FORMAT}/{header['format_version']}), "
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
    return ranking.conclude(typed)
