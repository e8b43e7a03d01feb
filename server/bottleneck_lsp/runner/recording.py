"""Raw recordings: an autograd pass's event tree and device events as versioned JSON.

``profile --save-raw DIR`` writes one per autograd pass; ``replay FILE`` reads it back and
runs the same attribution and analysis without torch or a GPU (docs/raw-recording.md).
Format ``bottleneck-raw-recording/3`` (a cpu pass recorded without the Python tracer carries
its line marker's ranges); versions 1 (the H200 fixtures) and 2 are read too.

A recording is data from elsewhere: the reader checks types and shapes, builds plain
objects, and never evaluates anything in it.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterable
from typing import Any

from . import comms
from .attribution import EventKinds
from .bounded import load_json
from .device import Activity

FORMAT = "bottleneck-raw-recording"
VERSION = 3
READS = (1, 2, 3)
# A recording is a file someone else may have sent: bounded before it is believed.
MAX_BYTES = 1024**3  # decompressed: a recording bigger than this is refused
MAX_DEPTH = 2000  # nested tree nodes (torch's deepest seen here: a few dozen)
_TAGS = {"PyCall": 1, "PyCCall": 2, "TorchOp": 3, "Kineto": 4, "Allocation": 5}
REPLAY_KINDS = EventKinds(1, 2, 3, 4, "TORCHSCRIPT_FUNCTION", 5, "USER_SCOPE")


class RecordingError(ValueError):
    """The file is not a raw recording this version reads; the message says why."""


# -- writing (in the runner, from a live profile) ------------------------------------------
def _attr(obj: Any, name: str, default: Any = None) -> Any:
    try:
        value = getattr(obj, name)
        return value() if callable(value) else value
    except Exception:  # noqa: BLE001 - a field this torch does not have
        return default


def _frame(frame: Any) -> dict[str, Any] | None:
    if frame is None:
        return None
    try:
        return {
            "file_name": frame.file_name,
            "line_number": frame.line_number,
            "function_name": frame.function_name,
        }
    except UnicodeDecodeError:
        return {"file_name": "<garbled>", "line_number": 0, "function_name": "<garbled>"}


def _tag_name(tag: Any) -> str:
    return str(getattr(tag, "name", tag)).rsplit(".", 1)[-1]


def _node(node: Any) -> dict[str, Any]:
    tag = _tag_name(node.tag)
    fields = node.extra_fields
    extra: dict[str, Any] = {}
    try:
        name = node.name
    except UnicodeDecodeError:
        name = "<garbled>"
    if tag == "TorchOp":
        extra = {
            "sequence_number": _attr(fields, "sequence_number", -1),
            "correlation_id": _attr(fields, "correlation_id", 0),
            "scope": _tag_name(_attr(fields, "scope", "")),
        }
        if name.startswith("c10d::"):
            extra["message_bytes"] = comms.message_bytes(name, fields)
    elif tag == "Allocation":
        extra = {
            "ptr": _attr(fields, "ptr", 0),
            "alloc_size": _attr(fields, "alloc_size", 0),
            "total_allocated": _attr(fields, "total_allocated", 0),
            "total_reserved": _attr(fields, "total_reserved", 0),
            "device": str(_attr(fields, "device", "")),
        }
    elif tag in ("PyCall", "PyCCall"):
        extra["caller"] = _frame(_attr(fields, "caller"))
        if tag == "PyCall":
            extra["callsite"] = _frame(_attr(fields, "callsite"))
    return {
        "tag": tag,
        "name": name,
        "start_time_ns": node.start_time_ns,
        "end_time_ns": node.end_time_ns,
        "duration_time_ns": node.duration_time_ns,
        "correlation_id": _attr(node, "correlation_id", 0),
        "start_tid": _attr(node, "start_tid", 0),
        "extra_fields": extra,
        "children": [],
    }


def dump_tree(roots: Iterable[Any], file_names: set[str]) -> tuple[list[dict[str, Any]], int]:
    """The event tree as nested dictionaries (iteratively: trees are deep), and its size.
    The file names of every frame seen are added to ``file_names``."""
    out: list[dict[str, Any]] = []
    stack = [(n, out) for n in reversed(list(roots))]
    count = 0
    while stack:
        node, into = stack.pop()
        item = _node(node)
        into.append(item)
        count += 1
        for key in ("caller", "callsite"):
            frame = item["extra_fields"].get(key)
            if frame is not None:
                file_names.add(frame["file_name"])
        for child in reversed(list(node.children)):
            stack.append((child, item["children"]))
    return out, count


def _event_name(event: Any) -> str:
    try:
        return str(event.name())
    except UnicodeDecodeError:
        return "<garbled>"


def dump_events(events: Iterable[Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": _event_name(e),
            "device_type": _tag_name(e.device_type()),
            "correlation_id": e.correlation_id(),
            "linked_correlation_id": e.linked_correlation_id(),
            "start_ns": e.start_ns(),
            "duration_ns": e.duration_ns(),
            "sequence_nr": e.sequence_nr(),
            "device_index": e.device_index(),
        }
        for e in events
    ]


def write(path: str, doc: dict[str, Any]) -> None:
    """gzip-compressed JSON, written atomically, readable only by the user."""
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) as handle:
        text = io.TextIOWrapper(handle, encoding="utf-8")
        json.dump({"format": f"{FORMAT}/{VERSION}", **doc}, text, separators=(",", ":"))
        text.flush()
        text.detach()
    os.replace(tmp, path)


# -- reading (replay: no torch needed) -------------------------------------------------------
class Frame:
    __slots__ = ("file_name", "function_name", "line_number")

    def __init__(self, data: Any) -> None:
        data = data if isinstance(data, dict) else {}
        self.file_name = _str(data.get("file_name"))
        self.line_number = _int(data.get("line_number"))
        self.function_name = _str(data.get("function_name"))


class Fields:
    __slots__ = (
        "alloc_size",
        "caller",
        "callsite",
        "correlation_id",
        "device",
        "message_bytes",
        "ptr",
        "scope",
        "sequence_number",
        "total_allocated",
        "total_reserved",
    )

    def __init__(self, data: Any) -> None:
        data = data if isinstance(data, dict) else {}
        self.caller = Frame(data.get("caller"))
        self.callsite = Frame(data.get("callsite"))
        seq = data.get("sequence_number")
        self.sequence_number = _int(seq) if seq is not None else -1
        self.correlation_id = _int(data.get("correlation_id"))
        self.scope = _str(data.get("scope")).rsplit(".", 1)[-1]
        sent = data.get("message_bytes")  # a collective's (c10d:: ops)
        self.message_bytes = _int(sent) if sent is not None else None
        # memory events (Allocation nodes)
        self.ptr = _int(data.get("ptr"))
        self.alloc_size = _int(data.get("alloc_size"))
        self.total_allocated = _int(data.get("total_allocated"))
        self.total_reserved = _int(data.get("total_reserved"))
        self.device = _str(data.get("device"))


class Tag:
    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value


_TAG_OBJECTS = {name: Tag(value) for name, value in _TAGS.items()}
_OTHER_TAG = Tag(0)


class Node:
    """An event-tree node as the attribution reads it (see ``attribution._walk``)."""

    __slots__ = (
        "children",
        "correlation_id",
        "duration_time_ns",
        "end_time_ns",
        "extra_fields",
        "name",
        "start_tid",
        "start_time_ns",
        "tag",
    )

    def __init__(self, data: dict[str, Any]) -> None:
        self.tag = _TAG_OBJECTS.get(_str(data.get("tag")).rsplit(".", 1)[-1], _OTHER_TAG)
        self.name = _str(data.get("name"))
        self.start_time_ns = _int(data.get("start_time_ns"))
        self.end_time_ns = _int(data.get("end_time_ns"))
        self.duration_time_ns = _int(data.get("duration_time_ns"))
        self.correlation_id = _int(data.get("correlation_id"))
        self.start_tid = _int(data.get("start_tid"))
        self.extra_fields = Fields(data.get("extra_fields"))
        self.children: list[Node] = []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _nodes(roots: Any) -> list[Node]:
    if not isinstance(roots, list):
        raise RecordingError("'tree' is not a list")
    out: list[Node] = []
    stack: list[tuple[Any, list[Node], int]] = [(r, out, 1) for r in reversed(roots)]
    while stack:
        data, into, depth = stack.pop()
        if not isinstance(data, dict):
            raise RecordingError("a tree node is not an object")
        if depth > MAX_DEPTH:
            raise RecordingError(f"the event tree is nested deeper than {MAX_DEPTH} levels")
        node = Node(data)
        into.append(node)
        children = data.get("children") or []
        if not isinstance(children, list):
            raise RecordingError("a tree node's 'children' is not a list")
        for child in reversed(children):
            stack.append((child, node.children, depth + 1))
    return out


def activities(events: Any) -> list[Activity]:
    """A recording's events as Activity records (device work, waits, loading)."""
    if not isinstance(events, list):
        raise RecordingError("'events' is not a list")
    out = []
    for e in events:
        if not isinstance(e, dict):
            raise RecordingError("an event is not an object")
        device_type = _str(e.get("device_type")).rsplit(".", 1)[-1]
        out.append(
            Activity(
                _str(e.get("name")),
                device_type not in ("CPU", ""),
                _int(e.get("start_ns")),
                _int(e.get("duration_ns")),
                _int(e.get("linked_correlation_id")),
                _int(e.get("device_index")),
            )
        )
    return out


def read(path: str) -> tuple[dict[str, Any], list[Node], list[Activity]]:
    """(header, tree roots, activities) of a recording, gzip-compressed or not."""
    doc = load_json(path, MAX_BYTES, RecordingError, "recording", gunzip=True)
    if not isinstance(doc, dict):
        raise RecordingError(f"{path} is not a raw recording (not a JSON object)")
    name, _, version = _str(doc.get("format")).partition("/")
    if name != FORMAT:
        raise RecordingError(
            f"{path} is not a raw recording: 'format' is {doc.get('format')!r}, expected '{FORMAT}/N' "
            "(write one with `bottleneck-lsp profile --save-raw DIR`)"
        )
    if not version.isdigit() or int(version) not in READS:
        raise RecordingError(
            f"{path} is {FORMAT} version {version}; this tool reads versions "
            + ", ".join(str(v) for v in READS)
        )
    header = {k: v for k, v in doc.items() if k not in ("tree", "events")}
    header["format_version"] = int(version)
    return header, _nodes(doc.get("tree", [])), activities(doc.get("events", []))
