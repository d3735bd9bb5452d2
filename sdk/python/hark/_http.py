"""The transport: URLs, the token, JSON, errors as HarkError, bounds and safe retries."""

from __future__ import annotations

import email.utils
import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, Mapping, Optional, Union

from .errors import HarkError

WRITES = {"POST", "PUT", "PATCH"}
GATEWAY = {502, 503, 504}
MAX_DELAY = 4.0

Query = Mapping[str, Union[str, int, float, bool, None]]


def _retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` in seconds or as an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_of(status: int, body: bytes, headers: Mapping[str, str]) -> HarkError:
    text = body.decode("utf-8", "replace")
    message, field = text or f"HTTP {status}", None
    try:
        data = json.loads(text)
        if isinstance(data, dict):
            if isinstance(data.get("error"), str):
                message = data["error"]
            if isinstance(data.get("field"), str):
                field = data["field"]
    except ValueError:
        pass
    # The server's message already names the field ("body.blocks[0].id: is required").
    shown = f"{status}: {message}"
    retry = _retry_after(headers.get("retry-after")) if status == 429 else None
    return HarkError(shown, status=status, field=field, kind="http", retry_after=retry)


class Transport:
    """Sends requests; every write carries an ``Idempotency-Key``, the same on its retries, so
    every request is safe to repeat: after a network failure or a 502/503/504 it is, a bounded
    number of times, and after a 429 once its ``Retry-After`` has passed."""

    def __init__(
        self,
        url: str,
        token: str,
        timeout: float = 30.0,
        attempts: int = 4,
        base_delay: float = 0.25,
        max_retry_after: float = 60.0,
    ) -> None:
        if not url:
            raise HarkError("a server URL is required", kind="network")
        if not token:
            raise HarkError("an agent token is required", status=401)
        self.base = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.base_delay = base_delay
        self.max_retry_after = max_retry_after

    def url(self, path: str, query: Optional[Query] = None) -> str:
        params = []
        for k, v in (query or {}).items():
            if v is None:
                continue
            if isinstance(v, bool):
                v = "1" if v else "0"
            params.append((k, str(v)))
        return self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        json_body: Any = None,
        data: Optional[bytes] = None,
        headers: Optional[Dict[str, str]] = None,
        hold: float = 0.0,
        idempotency_key: Optional[str] = None,
    ) -> bytes:
        """The body of a 2xx answer; anything else raises HarkError. ``hold`` is how long the
        server may hold the request (a long-poll's wait), added to the bound."""
        sent: Dict[str, str] = dict(headers or {})
        sent["Authorization"] = f"Bearer {self.token}"
        sent["User-Agent"] = "hark-python/0.1"
        if method in WRITES:
            sent["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        if json_body is not None:
            sent["Content-Type"] = "application/json"
            data = json.dumps(json_body).encode("utf-8")
        url = self.url(path, query)
        bound = self.timeout + hold
        attempt = 0
        while True:
            attempt += 1
            last = attempt >= self.attempts
            backoff = min(MAX_DELAY, self.base_delay * 2 ** (attempt - 1))
            req = urllib.request.Request(url, data=data, headers=sent, method=method)
            try:
                with urllib.request.urlopen(req, timeout=bound) as response:
                    return response.read()
            except urllib.error.HTTPError as e:
                body = e.read()
                status = e.code
                delay: Optional[float] = None
                if status == 429:
                    asked = _retry_after(e.headers.get("retry-after"))
                    asked = backoff if asked is None else asked
                    if asked <= self.max_retry_after:
                        delay = asked
                elif status in GATEWAY:
                    delay = backoff
                if last or delay is None:
                    raise _error_of(status, body, e.headers) from None
                time.sleep(delay)
            except (socket.timeout, TimeoutError) as e:
                raise HarkError(
                    f"no answer from {self.base} within {bound:.0f} s", kind="timeout"
                ) from e
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                reason = getattr(e, "reason", e)
                if isinstance(reason, (socket.timeout, TimeoutError)):
                    raise HarkError(
                        f"no answer from {self.base} within {bound:.0f} s", kind="timeout"
                    ) from e
                if last:
                    raise HarkError(f"cannot reach {self.base} ({reason})", kind="network") from e
                time.sleep(backoff)

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        body = self.request(method, path, **kwargs)
        return json.loads(body) if body else None
