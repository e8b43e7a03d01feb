"""A profile command's job, from the command's arguments over the settings: the script,
its arguments, working directory, passes, and whether it runs as a module."""

from __future__ import annotations

import os
from typing import Any

from pygls import uris
from pygls.workspace import Workspace

from ..job.spec import JobError, JobSpec
from ..notebook.cell_paths import is_notebook
from ..paths import module_path
from ..settings import Settings, overlay
from .arguments import ProfileArguments

MAX_ARGS = 1000
MAX_ARG_CHARS = 100_000


def script_path(uri: Any) -> str:
    """The path of the file URI ``uri``; ``JobError`` for anything else."""
    if not isinstance(uri, str) or len(uri) > MAX_ARG_CHARS:
        raise JobError("the script must be given as a file URI string")
    if not uri.startswith("file:"):
        raise JobError(f"not a file URI: {uri[:200]}")
    path = uris.to_fs_path(uri)
    if not path:
        raise JobError(f"not a file URI: {uri[:200]}")
    return path


def job_spec(settings: Settings, workspace: Workspace, arguments: ProfileArguments) -> JobSpec:
    """The job that ``arguments`` ask for, their settings laid over the server's;
    ``JobError`` says what is wrong with them."""
    script = script_path(arguments.uri)
    given = overlay(settings, arguments.settings)
    for values, what in ((given.args, "script arguments"), (given.torchrun_args, "torchrun options")):
        if len(values) > MAX_ARGS or any(len(a) > MAX_ARG_CHARS for a in values):
            raise JobError(f"too many or too long {what}")
    cwd = given.cwd
    folder = workspace_folder_of(workspace, script)
    if cwd is None:  # a notebook runs in its folder, as Jupyter runs it
        cwd = os.path.dirname(script) if is_notebook(script) else folder or os.path.dirname(script)
    elif cwd.startswith("file:"):
        cwd = uris.to_fs_path(cwd) or cwd
    roots = (folder,) if folder else ()
    nproc, launcher = given.nproc_per_node, given.torchrun_args
    return JobSpec(
        script=script,
        module=module_to_run(script, cwd, arguments.module),
        args=given.args,
        python=given.python,
        cwd=cwd,
        roots=roots,
        passes=given.passes,
        timeout=given.timeout,
        duration=given.duration,
        exact_lines=given.exact_lines,
        separate_cprofile=given.separate_cprofile,
        separate_runs=given.separate_runs,
        event_budget=given.event_budget,
        fork=given.fork,
        nproc_per_node=nproc,
        launcher=launcher,
        # a setting for every profile: it applies to the distributed ones (the CLI refuses the
        # flag without --nproc-per-node, one request at a time)
        collective_sizes=given.collective_sizes and (nproc > 1 or bool(launcher)),
    )


def module_to_run(script: str, cwd: str, asked: bool | None) -> str | None:
    """The dotted name to run ``script`` under with ``-m``, or None to run it as a file
    (see ``ProfileArguments.module``)."""
    if asked is False:
        return None
    dotted = module_path.module_of_file(script)
    if dotted is None:
        if asked:
            raise JobError(
                f"{os.path.basename(script)} is not in a package (no __init__.py beside it): "
                "it runs as a file, not with -m"
            )
        return None
    found = dotted.base in module_path.search_path(os.path.abspath(cwd), os.environ.get("PYTHONPATH"))
    if asked and not found:
        raise JobError(
            f"{dotted.name} cannot run with -m from {cwd}: its top package is in {dotted.base}, "
            "which is neither the working directory nor on PYTHONPATH (set bottleneck.cwd to it)"
        )
    if asked or (found and module_path.uses_relative_imports(script)):
        return dotted.name
    return None


def workspace_folder_of(workspace: Workspace, path: str) -> str | None:
    """The innermost workspace folder holding ``path`` (else the root path's), or None."""
    best = None
    for folder in workspace.folders.values():
        root = uris.to_fs_path(folder.uri)
        if root and (path == root or path.startswith(root.rstrip(os.sep) + os.sep)):
            if best is None or len(root) > len(best):
                best = root
    if best is None and workspace.root_path:
        root = workspace.root_path
        if path.startswith(root.rstrip(os.sep) + os.sep):
            best = root
    return best


def local_path(text: str) -> str:
    """A path given as a file URI or a path (``~`` expanded)."""
    if len(text) > MAX_ARG_CHARS:
        raise JobError("the path is too long")
    return (uris.to_fs_path(text) or text) if text.startswith("file:") else os.path.expanduser(text)
