"""Lines from the line marker alone: each torch call runs inside a profiler range named
after the line of the user's code that made it.

The cpu pass records without torch's Python tracer (``with_stack=False``): the tracer
records every Python call, torch's and the DataLoader's included, and the profiler's stop
and the walk pay for each node (docs/performance.md). Instead the line marker
(``linemarker.make_line_marker``) sees every torch call made from Python (functions, methods,
operators, ``module(x)``, ``.backward()``, the optimizer's foreach calls), finds the
innermost frame in the user's files and wraps the call in a ``_RecordFunctionFast`` range
named ``§N``. The event tree then holds each call's ops under its line's range; the table
here says which line each name stands for (``Attributor(ranges=...)``, and raw recordings
carry it for replay).
"""

from __future__ import annotations

from types import CodeType, FrameType
from typing import NamedTuple

from .paths import FileClassifier

PREFIX = "\u00a7"  # no op torch records starts with it


class Site(NamedTuple):
    """What a range name stands for. ``file_name`` as the code object names it (a raw
    recording's ``files`` maps it to the user's file)."""

    file_name: str
    line: int
    function: str
    backward: bool  # the range of a ``.backward()`` call (its engine's ops run inside)


class LineRanges:
    """The range names given so far, and the caches the marker's fast path reads."""

    def __init__(self, files: FileClassifier) -> None:
        self.files = files
        # id(code) -> (the code, kept alive so that its id is not reused; is it the user's)
        self.user: dict[int, tuple[CodeType, bool]] = {}
        # (id(code), instruction offset) -> range name, for calls other than backward
        self.sites: dict[tuple[int, int], str] = {}
        self.table: dict[str, Site] = {}
        self._names: dict[Site, str] = {}

    def is_user(self, code: CodeType) -> bool:
        """Whether a code object is in the user's files (cached by identity)."""
        known = self.user.get(id(code))
        if known is None:
            known = self.user[id(code)] = (code, self.files.is_user(code.co_filename))
        return known[1]

    def innermost(self, frame: FrameType | None) -> FrameType | None:
        """The first frame of the user's from ``frame`` outwards (the line marker inlines
        this loop on its hot path)."""
        while frame is not None and not self.is_user(frame.f_code):
            frame = frame.f_back
        return frame

    def name(self, frame: FrameType, backward: bool) -> str:
        """The range name for a call made by ``frame`` (a user frame) at its current line."""
        code = frame.f_code
        site = Site(code.co_filename, frame.f_lineno or code.co_firstlineno, code.co_name, backward)
        name = self._names.get(site)
        if name is None:
            name = self._names[site] = f"{PREFIX}{len(self._names)}"
            self.table[name] = site
        if not backward:
            self.sites[(id(code), frame.f_lasti)] = name
        return name

    def header(self) -> dict[str, list[object]]:
        """The table as a raw recording keeps it: name -> [file name, line, function, backward]."""
        return {name: list(site) for name, site in self.table.items()}


def _fits(value: object, shape: tuple[type, ...]) -> bool:
    """A JSON list of exactly these types (a bool is not an int here)."""
    return (
        isinstance(value, list)
        and len(value) == len(shape)
        and all(type(v) is t for v, t in zip(value, shape, strict=True))
    )


def read_header(data: object) -> dict[str, Site]:
    """A recording's table (see ``header``); entries of the wrong shape are left out."""
    if not isinstance(data, dict):
        return {}
    return {
        name: Site(*value)
        for name, value in data.items()
        if isinstance(name, str) and _fits(value, (str, int, str, bool))
    }


def read_entries(data: object) -> list[tuple[str, int, str, int]] | None:
    """A recording's ``function_entries`` ([file name, first line, function, entries]);
    None when it has none; entries of the wrong shape are left out."""
    if not isinstance(data, list):
        return None
    return [(e[0], e[1], e[2], e[3]) for e in data if _fits(e, (str, int, str, int))]
