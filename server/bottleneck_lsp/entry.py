"""The command line's entry points, light on purpose: a ``profile`` command starts its fork
server (``forklaunch.early``) before the rest of the package is imported, so that torch's
import there runs beside those imports. Everything else is ``cli.py``'s."""

from __future__ import annotations

import sys

from . import forklaunch


def main() -> int:
    """``bottleneck-lsp ...``"""
    argv = sys.argv[1:]
    if argv[:1] == ["profile"]:
        forklaunch.early(argv[1:])
    from .cli import main as cli_main

    return cli_main(argv)


def dropin_main() -> int:
    """``python -m bottleneck_lsp script.py [args]``: a profile command line."""
    forklaunch.early(sys.argv[1:])
    from .cli import dropin_main as cli_dropin_main

    return cli_dropin_main(sys.argv[1:])
