"""The command line's entry points, light on purpose: a ``profile`` command starts its fork
server (``fork_launch.early``) before the rest of the package is imported, so that torch's
import there runs beside those imports. Everything else is ``cli.py``'s."""

from __future__ import annotations

import sys
from typing import Any

STOPPED_EARLY = "bottleneck-lsp: stopped before any pass ran"


def _load(early: list[str] | None, name: str) -> Any:
    """Start the fork server early for a profile command line (``early``: its arguments),
    then import the command line's entry point ``name``. Ctrl-C in this first tenth of a
    second, before the command line's own handler is set: a plain line and None, not a
    traceback of whichever import it fell in (the fork server started early is killed at exit, as always)."""
    try:
        from .processes import fork_launch

        if early is not None:
            fork_launch.early(early)
        from . import cli
    except KeyboardInterrupt:
        print(f"\n{STOPPED_EARLY}", file=sys.stderr)
        return None
    return getattr(cli, name)


def main() -> int:
    """``bottleneck-lsp ...``"""
    argv = sys.argv[1:]
    run = _load(argv[1:] if argv[:1] == ["profile"] else None, "main")
    return 130 if run is None else int(run(argv))


def dropin_main() -> int:
    """``python -m bottleneck_lsp script.py [args]``: a profile command line."""
    argv = sys.argv[1:]
    run = _load(argv, "dropin_main")  # always a profile
    return 130 if run is None else int(run(argv))
