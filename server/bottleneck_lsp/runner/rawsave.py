"""A pass's raw recording: where it was made, which files were the user's, the event tree
and the events (``recording.py`` writes and reads the format).

Standard library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

from typing import Any

from . import recording
from .paths import FileClassifier


def save_raw(path: str, run: Any, wall_ns: int, tree: Any, events: Any, **extra: Any) -> str:
    """Write a raw recording of a pass (``run``: its torch, name, script, files and profiler
    description) and say so; a failure is reported, never raised: the results still count."""
    try:
        names: set[str] = set()
        nodes, count = recording.dump_tree(tree, names)
        names.update(site[0] for site in extra.get("line_ranges", {}).values())
        names.update(entry[0] for entry in extra.get("function_entries", []))
        names.update(
            place[0]
            for graph in extra.get("compiled_graphs", [])
            for kernel in graph["kernels"]
            for place in kernel["places"]
        )
        recording.write(
            path,
            {
                **recording_header(run.torch, run.name, run.script, run.files, names, wall_ns),
                **extra,
                "profiler": run.description,
                "tree_node_count": count,
                "tree": nodes,
                "events": recording.dump_events(events),
            },
        )
    except Exception as exc:  # noqa: BLE001 - the results still count
        return f"raw recording not written: {type(exc).__name__}: {exc}"
    return f"raw recording written to {path}"


def recording_header(
    torch: Any, pass_name: str, script: str, files: FileClassifier, names: set[str], wall_ns: int
) -> dict[str, Any]:
    """What a raw recording says about where it was made, and which of its file names
    were the user's files (decided there, where the files were). ``script``: the script's
    path; ``files.roots[0]`` is its folder."""
    device_name = None
    try:
        if torch.cuda.is_available():
            device_name = torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001 - a name is a nicety
        pass
    import platform
    import sys

    return {
        "pass": pass_name,
        "script": script,
        "recorded_on": {
            "torch": torch.__version__,
            "cuda": getattr(torch.version, "cuda", None),
            "device": device_name,
            "python": platform.python_version(),
            "platform": sys.platform,
        },
        "roots": files.roots,
        "files": {name: files.resolve(name) for name in sorted(names)},
        "script_wall_ns": wall_ns,
    }
