"""The one error type of the client, and how an answer or a failure becomes one: the server's
``{error, field}``, a network failure naming the URL tried, ``Retry-After``. The same fields
and words as the TypeScript client's ``HarkError`` (sdk/typescript/src/errors.ts)."""

from __future__ import annotations

import email.utils
import errno
import json
import socket
import time
import urllib.parse
from typing import Mapping, Optional


class HarkError(Exception):
    """A failure of a call: an HTTP error answer, a network failure or a timeout.

    ``status`` is the HTTP status (0 when no answer came), ``field`` the request field the
    server names (``body.blocks[0].options``), ``kind`` one of ``http``, ``network``,
    ``timeout``. An ``http`` failure also has ``error`` (the server's own words, the message
    without its status), ``headers`` (the answer's) and, for a 429, ``retry_after`` (seconds).
    """

    def __init__(
        self,
        message: str,
        status: int = 0,
        field: Optional[str] = None,
        kind: str = "http",
        retry_after: Optional[float] = None,
        error: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.field = field
        self.kind = kind
        self.retry_after = retry_after
        self.error = message if error is None else error
        self.headers = headers

    def __repr__(self) -> str:
        return f"HarkError({self.message!r}, status={self.status}, field={self.field!r})"


def retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` in seconds: whole seconds (what Hark sends) or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_of(status: int, reason: str, body: bytes, headers: Mapping[str, str]) -> HarkError:
    """The HarkError of an error answer: the server's ``{error, field}``, else its text (or the
    status's reason). The server's message already names the field ("body.blocks[0].id: is
    required")."""
    text = body.decode("utf-8", "replace")
    error, field = text or reason, None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        if isinstance(data.get("error"), str):
            error = data["error"]
        if isinstance(data.get("field"), str):
            field = data["field"]
    wait = retry_after(headers.get("retry-after")) if status == 429 else None
    return HarkError(f"{status}: {error}", status=status, field=field, kind="http",
                     retry_after=wait, error=error, headers=headers)


# Node's names for a failed name lookup, so both clients say the same.
_GAI = {
    getattr(socket, "EAI_NONAME", None): "ENOTFOUND",
    getattr(socket, "EAI_NODATA", None): "ENOTFOUND",
    getattr(socket, "EAI_AGAIN", None): "EAI_AGAIN",
}


def failure_code(error: BaseException) -> str:
    """What a failure to talk to the server says of itself: its errno's name
    (``ECONNREFUSED``), else its text."""
    reason = getattr(error, "reason", None)
    if isinstance(reason, BaseException):
        error = reason
    number = getattr(error, "errno", None)
    if isinstance(error, socket.gaierror) and number in _GAI:
        return _GAI[number]
    if isinstance(number, int) and number in errno.errorcode:
        return errno.errorcode[number]
    return str(reason if isinstance(reason, str) else error) or type(error).__name__


def cannot_reach(error: BaseException, url: str) -> str:
    """Why a request got no answer, naming where it went (the query left out: cursors, search
    words): ``cannot reach the server at http://127.0.0.1:8080/v1/messages (ECONNREFUSED)``."""
    u = urllib.parse.urlsplit(url)
    return f"cannot reach the server at {u.scheme}://{u.netloc}{u.path} ({failure_code(error)})"
