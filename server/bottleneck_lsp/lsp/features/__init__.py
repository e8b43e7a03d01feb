"""The server's requests and commands, one module per family (as ruff's server has one file
per request): ``register`` puts each on a server."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import (
    baselines,
    documents,
    flame,
    hotspots,
    hovers,
    lenses,
    lifecycle,
    notebook_sync,
    profiling,
    results,
)

if TYPE_CHECKING:
    from ..server import BottleneckServer

FAMILIES = (
    lifecycle,
    documents,
    notebook_sync,
    lenses,
    hovers,
    profiling,
    baselines,
    results,
    hotspots,
    flame,
)


def register(server: BottleneckServer) -> None:
    for family in FAMILIES:
        family.register(server)
