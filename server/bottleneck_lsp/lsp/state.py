"""The language server's state: its settings, the jobs running, the results and what they
annotate. Plain data, on the server object (no global state)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ..job.job import Job
from ..schema.model import Document
from ..settings import Settings
from .annotations import Annotation


@dataclass
class Running:
    job: Job
    task: asyncio.Task[Any] | None = None
    token: str | None = None
    bases: dict[str, list[str] | None] = field(default_factory=dict)  # the script's text at start


@dataclass
class State:
    settings: Settings = field(default_factory=Settings)
    running: dict[str, Running] = field(default_factory=dict)  # script path -> job
    results: dict[str, Document] = field(default_factory=dict)  # script path -> its result
    previous: dict[str, Document] = field(default_factory=dict)  # ... the run before it
    baselines: dict[str, Document] = field(default_factory=dict)  # ... pinned by the user
    last_script: str | None = None
    annotations: dict[str, list[Annotation]] = field(default_factory=dict)  # uri -> list
    # script path -> uri -> the lines of the text its result was profiled on (tracking.place)
    bases: dict[str, dict[str, list[str] | None]] = field(default_factory=dict)
    cleared: set[str] = field(default_factory=set)  # scripts whose annotations the user cleared
    report_dir: str | None = None
