"""The command line's entry points, light on purpose: a ``profile`` command starts its fork
server (``forklaunch.early``) before the rest of the package is imported, so that torch's
import there runs beside those imports. Everything else is ``cli.py``'s."""

from __future__ import annotations

import sys

STOPPED_EARLY = "bottleneck-lsp: stopped before any pass ran"


def main() -> int:
    """``bottleneck-lsp ...``"""
    argv = sys.argv[1:]
    try:
        from . import forklaunch

        if argv[:1] == ["profile"]:
            forklaunch.early(argv[1:])
        from .cli import main as cli_main
    except KeyboardInterrupt:
        # Ctrl-C in the first tenth of a second, before the command line's own handler is
        # set: a plain line, not a traceback of whichever import it fell in (the fork
        # server started early is killed at exit, as always)
        print(f"\n{STOPPED_EARLY}", file=sys.stderr)
        return 130
    return cli_main(argv)


def dropin_main() -> int:
    """``python -m bottleneck_lsp script.py [args]``: a profile command line."""
    try:
        from . import forklaunch

        forklaunch.early(sys.argv[1:])
        from .cli import dropin_main as cli_dropin_main
    except KeyboardInterrupt:
        print(f"\n{STOPPED_EARLY}", file=sys.stderr)
        return 130
    return cli_dropin_main(sys.argv[1:])
