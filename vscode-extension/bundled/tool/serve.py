"""Start the bottleneck-lsp language server over stdio for the VS Code extension.

``serve.py --bundled``: the extension's own copy of the server and its pure-Python
dependencies (``../libs``) go first on ``sys.path``. They are put on this process's path,
not in PYTHONPATH, so the scripts the server profiles (in child processes) never see them.
Without ``--bundled`` the server comes from the interpreter's own environment.
``--check`` only says whether this interpreter can run the server, and exits.
"""

import os
import sys

MINIMUM = (3, 10)


def main() -> int:
    if sys.version_info < MINIMUM:
        sys.stderr.write(
            "bottleneck-lsp needs Python %d.%d or newer; %s is %s\n"
            % (MINIMUM + (sys.executable, sys.version.split()[0]))
        )
        return 3
    argv = [a for a in sys.argv[1:] if a != "--stdio"]  # stdio is the server's default
    if "--bundled" in argv:
        argv.remove("--bundled")
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs"))
    try:
        from bottleneck_lsp.cli import main as cli_main
    except ImportError as exc:
        sys.stderr.write(
            "bottleneck-lsp is not importable from %s (%s). Install it in that environment "
            '(pip install bottleneck-lsp) or set bottleneck.serverSource to "bundled".\n'
            % (sys.executable, exc)
        )
        return 4
    if "--check" in argv:
        # The extension's start-up probe: this interpreter can run the server.
        import bottleneck_lsp

        print(
            "bottleneck-lsp %s on Python %s at %s"
            % (bottleneck_lsp.__version__, sys.version.split()[0], sys.executable)
        )
        return 0
    return cli_main(["serve", *argv])


if __name__ == "__main__":
    sys.exit(main())
