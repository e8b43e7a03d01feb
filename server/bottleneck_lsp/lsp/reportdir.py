"""The server's private folder of full reports (``bottleneck.report`` writes them there for
the client to open), and the clean-up of folders a killed server left behind.

The folder goes with the server (shutdown, SIGTERM, interpreter exit). A server killed with
SIGKILL cannot remove it, so the folder's name carries its server's process id and the next
server to start removes those whose server is gone (POSIX only: elsewhere there is no safe
way to ask whether a process id is alive, and nothing is removed).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile

from ..runner.strays import alive

PREFIX = "bottleneck-lsp-reports-"


def make() -> str:
    """A new private folder (0700) for this server's reports, named after its process id."""
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def sweep_stale(folder: str | None = None) -> list[str]:
    """Remove the report folders, in ``folder`` (the temporary directory by default), of this
    user's servers that are no longer running; returns the paths removed."""
    if os.name != "posix":
        return []
    where = folder or tempfile.gettempdir()
    try:
        names = os.listdir(where)
    except OSError:
        return []
    uid = os.getuid()
    removed: list[str] = []
    for name in names:
        if not name.startswith(PREFIX):
            continue
        owner = name[len(PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or int(owner) == os.getpid():
            continue  # no owner in the name (an older server's): left alone
        path = os.path.join(where, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or alive(int(owner)):
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed
