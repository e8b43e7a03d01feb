"""Requests the server makes of its client, each with a bound: a client that never answers
(one that advertised a capability it does not serve) must not hold a profile, its result or
the commands waiting behind it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
ANSWER_TIMEOUT_S = 10.0
log = logging.getLogger(__name__)


async def answer(
    request: Awaitable[T],
    what: str,
    say: Callable[[str], None] | None = None,
    timeout: float = ANSWER_TIMEOUT_S,
) -> T | None:
    """The client's answer to ``request``, or None when it has not answered within
    ``timeout`` seconds or refused. A request left unanswered is said in the server's log
    and, with ``say``, in the client's (naming ``what`` was asked, and that it goes on)."""
    try:
        return await asyncio.wait_for(request, timeout)
    except asyncio.TimeoutError:
        text = f"the client did not answer {what} within {timeout:.0f} s; going on without it"
        log.warning("%s", text)
        if say is not None:
            say(text)
    except Exception as exc:  # noqa: BLE001 - a client's refusal is not our failure
        log.debug("the client refused %s: %s", what, exc)
    return None
