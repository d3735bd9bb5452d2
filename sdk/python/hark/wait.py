"""Long waits, built from the server's long-polls (each held at most 55 s): poll again and again
until something happens or the caller's deadline passes. An outage (the server restarting, a
dropped connection, a proxy's 5xx, a rate limit, a server that stops answering) does not end a
wait; it keeps polling until the deadline. The same loop as the TypeScript client's
``pollUntil`` (sdk/typescript/src/wait.ts), which the ``hark`` CLI runs too."""

from __future__ import annotations

import time
from typing import Callable, Optional, TypeVar

from .errors import HarkError, failure_code

#: The longest a server holds a long-poll; a longer wait is several of them.
MAX_WAIT = 55.0
#: Room over the requested wait before a silent connection counts as dead.
STALL = 20.0
DEADLINE_GRACE = 1.0
OUTAGE_PAUSES = (0.5, 1.0, 2.0, 5.0)

T = TypeVar("T")


def _is_outage(e: HarkError) -> bool:
    return e.kind == "network" or e.status >= 500 or e.status == 429


def _describe(e: HarkError) -> str:
    if e.kind == "timeout":
        return "the server stopped answering"
    if e.kind == "http":
        return f"the server answered {e.status}"
    return f"lost the server ({failure_code(e.__cause__ or e)})"


def poll_until(
    poll: Callable[[float, float], Optional[T]],
    deadline: Optional[float] = None,
    on_outage: Optional[Callable[[str], None]] = None,
) -> Optional[T]:
    """Calls ``poll(wait_seconds, limit)`` until it returns a value (the result) or ``deadline``
    (``time.monotonic()``; None waits for ever) passes (None). ``limit`` is the
    ``time.monotonic()`` past which the poll is abandoned as a stall: its wait + 20 s, and never
    more than a second past the deadline (hand it to the client's calls as ``deadline``).

    ``on_outage`` is told one line when the server is lost (``the server answered 503; still
    waiting, polling again until the timeout``) and one when it is back (``connected to the
    server again``). Pauses between polls in an outage: 0.5, 1, 2, then 5 s; after a 429, at
    least its ``Retry-After``. Any other failure ends the wait at once.
    """
    outages = 0
    while True:
        now = time.monotonic()
        remaining = float("inf") if deadline is None else deadline - now
        wait = max(0.0, min(MAX_WAIT, remaining))
        limit = now + min(wait + STALL, remaining + DEADLINE_GRACE)
        try:
            value = poll(round(wait, 3), limit)
        except HarkError as e:
            if e.kind != "timeout" and not _is_outage(e):
                raise
            if deadline is not None and time.monotonic() >= deadline:
                return None
            if outages == 0 and on_outage is not None:
                on_outage(f"{_describe(e)}; still waiting, polling again until the timeout")
            pause = OUTAGE_PAUSES[min(outages, len(OUTAGE_PAUSES) - 1)]
            # A rate limit says when to come back: sooner only adds to it.
            if e.status == 429 and e.retry_after is not None:
                pause = max(pause, e.retry_after)
            outages += 1
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                pause = min(pause, left)
            time.sleep(pause)
            continue
        if outages > 0 and on_outage is not None:
            on_outage("connected to the server again")
        outages = 0
        if value is not None:
            return value
        if deadline is not None and time.monotonic() >= deadline:
            return None
