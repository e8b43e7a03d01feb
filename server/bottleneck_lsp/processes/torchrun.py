"""Distributed jobs: each pass is one launch of torch's own launcher (``torchrun``, the
module ``torch.distributed.run``), with the runner as every worker's entry point.

The launcher gives each worker its environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT) as it always does; the runner passes it on to the script unchanged and writes
its part under its rank (``contract.rank_part``).
"""

from __future__ import annotations

from ..schema.contract import LAUNCHER_WRAPPER, RUNNER_MODULE
from ..schema.torchrun_options import RENDEZVOUS_OPTIONS


def argv(
    python: str, nproc_per_node: int, options: tuple[str, ...], runner_options: list[str], log_dir: str
) -> list[str]:
    """The command line of one pass's launch. ``log_dir``: where torch's launcher keeps its
    logs (by default a new ``torchelastic_*`` folder in the temporary folder, never removed):
    in the job's private folder, they go with it."""
    single = not any(name in RENDEZVOUS_OPTIONS for name in options[::2])
    return [
        python,
        "-m",
        LAUNCHER_WRAPPER,
        *(["--standalone"] if single else []),
        "--nproc-per-node",
        str(nproc_per_node),
        "--log-dir",
        log_dir,
        *options,
        "-m",
        RUNNER_MODULE,
        *runner_options,
    ]
