"""Who may talk to a server listening on a socket: the holder of its token.

Over stdio the client that started the server owns it. A TCP port, even on loopback, is
open to every user of the machine, and the profile command runs any script as the user
who started the server: so a TCP server requires a secret token, generated per start
and written to a file only its user can read (``token_file``), and refuses everything
but an ``initialize`` request carrying it in ``initializationOptions.token``
(``Gate``). A Unix socket is created readable and writable by its user alone; a token
may be required on it too.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

TOKEN_BYTES = 32
# JSON-RPC / LSP error codes
SERVER_NOT_INITIALIZED = -32002
REQUEST_FAILED = -32803


class TokenError(Exception):
    """A token file that cannot be used safely (its message is for the user)."""


def default_dir() -> Path:
    """Where generated token files go: the user's runtime folder, else their cache."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime and os.path.isdir(runtime) else Path.home() / ".cache"
    return base / "bottleneck-lsp"


def _private_dir(folder: Path) -> None:
    """Create ``folder`` 0700, or make sure an existing one is ours and private."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid():
        raise TokenError(f"{folder} belongs to another user: choose another place with --token-file")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, 0o700)


def read_token(path: Path) -> str:
    """A token the user keeps in a file: refused when others may read it (as ssh does)."""
    try:
        info = path.stat()
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise TokenError(f"cannot read the token file {path}: {exc.strerror}") from exc
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise TokenError(
            f"{path} is readable by other users: chmod 600 it, or let the server write a new one"
        )
    if len(text) < 16:
        raise TokenError(f"the token in {path} is too short: use at least 16 characters")
    return text


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def write_token(path: Path, token: str) -> None:
    """Write ``token`` to ``path`` (0600, its folder 0700), atomically."""
    _private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (token + "\n").encode("ascii"))
    finally:
        os.close(fd)
    os.replace(temporary, path)


class Gate:
    """Until a valid ``initialize`` arrives, every message is refused and nothing runs.

    ``check`` returns None to let a message through, else the JSON text to answer it with
    ("" for a notification or response, which get no answer)."""

    def __init__(self, token: str | None) -> None:
        self._token = token.encode("utf-8") if token is not None else None
        self.authorised = token is None
        self.failed = False  # a wrong or missing token was offered: the connection ends

    def _valid(self, offered: Any) -> bool:
        if self._token is None:
            return True
        if not isinstance(offered, str):
            return False
        return hmac.compare_digest(offered.encode("utf-8", "replace"), self._token)

    def check(self, message: dict[str, Any]) -> str | None:
        """``message`` as decoded, not yet structured: before authentication nothing else
        reads what the client sent."""
        if self.authorised:
            return None
        method = message.get("method")
        msg_id = message.get("id")
        if method is None or msg_id is None:
            return ""  # a notification or a response: dropped
        if method == "initialize" and not self.failed:
            params = message.get("params")
            options = params.get("initializationOptions") if isinstance(params, dict) else None
            offered = options.get("token") if isinstance(options, dict) else None
            if self._valid(offered):
                self.authorised = True
                return None
            self.failed = True
            why = "no token was given" if offered is None else "the token is wrong"
            return _error(
                msg_id,
                REQUEST_FAILED,
                f"bottleneck-lsp: authentication failed ({why}): pass the token from the file the "
                "server named when it started as initializationOptions.token",
                {"retry": False},
            )
        return _error(
            msg_id,
            SERVER_NOT_INITIALIZED,
            f"bottleneck-lsp: {method} refused: this server requires authentication; send "
            "initialize with initializationOptions.token first",
        )


def _error(msg_id: Any, code: int, message: str, data: Any = None) -> str:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error})
