"""torchrun's options that a job may pass on, as the command line, the server's settings and
the result document (``launch.options``) spell them: their grammar and what they say
(node rank and count). Standard library only."""

from __future__ import annotations

# torchrun's options a job may pass on (``--name value``), beside --nproc-per-node. Options
# that change what is launched (-m, --no-python, --run-path) or where its output goes are
# the job's own.
LAUNCHER_OPTIONS = (
    "--nnodes",
    "--node-rank",
    "--master-addr",
    "--master-port",
    "--rdzv-backend",
    "--rdzv-endpoint",
    "--rdzv-id",
    "--rdzv-conf",
    "--max-restarts",
    "--monitor-interval",
    "--local-addr",
)
# Without any of these, the job is one node on loopback: torchrun --standalone (a free port).
RENDEZVOUS_OPTIONS = ("--nnodes", "--master-addr", "--master-port", "--rdzv-backend", "--rdzv-endpoint")


class LaunchError(ValueError):
    """Launcher options that cannot be used: a message for the user."""


def check_options(options: tuple[str, ...]) -> tuple[str, ...]:
    """``options``: ``("--nnodes", "2", ...)``; names may use ``_`` or ``-``, values may be
    joined with ``=``. Returns them as ``--name value`` pairs, or raises LaunchError."""
    out: list[str] = []
    items = list(options)
    while items:
        name = items.pop(0)
        value: str | None = None
        if "=" in name:
            name, value = name.split("=", 1)
        name = "--" + name.lstrip("-").replace("_", "-")
        if name not in LAUNCHER_OPTIONS:
            raise LaunchError(
                f"torchrun option {name} is not supported here; use one of {', '.join(LAUNCHER_OPTIONS)}"
            )
        if value is None:
            if not items:
                raise LaunchError(f"torchrun option {name} needs a value")
            value = items.pop(0)
        out += [name, value]
    return tuple(out)


def values(options: tuple[str, ...]) -> dict[str, str]:
    """Checked options (``check_options``) as ``{"--name": value}``."""
    return dict(zip(options[::2], options[1::2], strict=False))


def nodes(options: tuple[str, ...]) -> tuple[int, int]:
    """(node rank, node count) as the options give them: (0, 1) by default; an elastic range
    (``--nnodes 1:4``) counts its lower bound."""
    pairs = values(options)
    try:
        count = int(pairs.get("--nnodes", "1").split(":")[0])
        node = int(pairs.get("--node-rank", "0"))
    except ValueError as exc:
        raise LaunchError(f"--nnodes and --node-rank take whole numbers ({exc})") from None
    if count < 1 or not 0 <= node < count:
        raise LaunchError(f"--node-rank {node} is not among {count} node(s)")
    return node, count
