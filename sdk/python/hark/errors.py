"""The one error type of the client."""

from __future__ import annotations

from typing import Optional


class HarkError(Exception):
    """A failure of a call: an HTTP error answer, a network failure or a timeout.

    ``status`` is the HTTP status (0 when no answer came), ``field`` the request field the
    server names (``body.blocks[0].options``), ``kind`` one of ``http``, ``network``,
    ``timeout``.
    """

    def __init__(
        self,
        message: str,
        status: int = 0,
        field: Optional[str] = None,
        kind: str = "http",
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.field = field
        self.kind = kind
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"HarkError({self.message!r}, status={self.status}, field={self.field!r})"
