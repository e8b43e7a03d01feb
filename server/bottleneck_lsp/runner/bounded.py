"""Reading a JSON file that may come from someone else: size-bounded before it is parsed.

Standard library only (the runner's package): used by raw recordings and result documents.
"""

from __future__ import annotations

import gzip
import json
from typing import Any


def load_json(path: str, limit: int, error: type[Exception], what: str, gunzip: bool = False) -> Any:
    """The JSON in ``path`` (gzip-compressed when ``gunzip`` and it starts so), at most
    ``limit`` bytes once decompressed; otherwise ``error`` with a one-line message."""
    try:
        with open(path, "rb") as handle:
            stream: Any = handle
            if gunzip and handle.read(2) == b"\x1f\x8b":
                handle.seek(0)
                stream = gzip.GzipFile(fileobj=handle)
            else:
                handle.seek(0)
            data = stream.read(limit + 1)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise error(f"cannot read {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if len(data) > limit:
        raise error(f"{path} is larger than {limit // 1024**2} MiB{' uncompressed' if gunzip else ''}")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise error(f"{path} is not JSON: {str(exc).splitlines()[0][:200]}") from None
