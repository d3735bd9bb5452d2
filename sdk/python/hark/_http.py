"""The transport: URLs, the token, JSON, errors as HarkError, a bound on every request, and
retries of what is safe to repeat. The same rules as the TypeScript client's transport
(sdk/typescript/src/http.ts: ``withRetries``, ``boundFor``), with the standard library."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional, Union

from .errors import HarkError, cannot_reach, error_of, failure_code, retry_after

WRITES = {"POST", "PUT", "PATCH"}
IDEMPOTENT = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS"}
#: Failures before any byte reached the server: retrying cannot apply a write twice.
NOT_CONNECTED = {"ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"}
GATEWAY = {502, 503, 504}
MAX_DELAY = 4.0
#: The slowest upload that still counts as moving.
UPLOAD_BYTES_PER_SECOND = 64 * 1024

Query = Mapping[str, Union[str, int, float, bool, None]]
#: Told before each pause: why, how long (seconds) and which attempt failed.
OnRetry = Callable[[str, float, int], None]


class Answer(NamedTuple):
    """An answer whatever its status (``Transport.raw``)."""

    status: int
    headers: Mapping[str, str]
    body: bytes


def new_key() -> str:
    """A fresh ``Idempotency-Key``: one per logical write, the same on each of its retries."""
    return str(uuid.uuid4())


def bound_for(timeout: float, hold: float, body: Optional[bytes]) -> float:
    """A request's bound in seconds: ``timeout``, plus the seconds a long-poll may be held, plus
    a second per 64 KiB of its body (a large upload on a slow link is not cut)."""
    size = len(body) if body else 0
    return timeout + max(0.0, hold) + (size * 1000 // UPLOAD_BYTES_PER_SECOND) / 1000


def _key_name(headers: Mapping[str, str]) -> Optional[str]:
    """The name a caller gave an ``Idempotency-Key`` header under, in any case."""
    return next((h for h in headers if h.lower() == "idempotency-key"), None)


class Transport:
    """Sends requests. Every write carries an ``Idempotency-Key``, the same on its retries, so
    every request is safe to repeat: after a network failure or a 502/503/504 it is, a bounded
    number of times, and after a 429 once its ``Retry-After`` (at most ``max_retry_after``
    seconds) has passed. ``idempotency_keys=False`` is for routes that do not honour keys: a
    write then carries none and is repeated only when its connection was never made (or on a
    429), never after it may have been applied. Without a ``token`` no ``Authorization`` is
    sent (only ``/health`` and ``/v1/info`` answer)."""

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        timeout: float = 30.0,
        attempts: int = 4,
        base_delay: float = 0.25,
        max_retry_after: float = 60.0,
        on_retry: Optional[OnRetry] = None,
        headers: Optional[Mapping[str, str]] = None,
        idempotency_keys: bool = True,
    ) -> None:
        if not url:
            raise HarkError("a server URL is required", kind="network")
        self.base = url.rstrip("/")
        self.token = token or None
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.base_delay = base_delay
        self.max_retry_after = max_retry_after
        self.on_retry = on_retry
        self.headers: Dict[str, str] = dict(headers or {})
        self.idempotency_keys = idempotency_keys

    def url(self, path: str, query: Optional[Query] = None) -> str:
        """``base`` + ``path`` with the query's values that are not None (a bool as 1 or 0)."""
        params = []
        for k, v in (query or {}).items():
            if v is None:
                continue
            if isinstance(v, bool):
                v = "1" if v else "0"
            params.append((k, str(v)))
        return self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON answer of a request (None for an empty one), or a HarkError."""
        body = self.request(method, path, **kwargs)
        return json.loads(body) if body else None

    def request(self, method: str, path: str, **kwargs: Any) -> bytes:
        """The body of a 2xx answer, after the retries; anything else raises HarkError."""
        answer = self.raw(method, path, **kwargs)
        if 200 <= answer.status < 300:
            return answer.body
        reason = http.client.responses.get(answer.status, "")
        raise error_of(answer.status, reason, answer.body, answer.headers)

    def raw(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        json_body: Any = None,
        data: Optional[bytes] = None,
        headers: Optional[Mapping[str, str]] = None,
        hold: float = 0.0,
        idempotency_key: Optional[str] = None,
        deadline: Optional[float] = None,
    ) -> Answer:
        """The answer of a request whatever its status, after the retries ``request`` makes.
        ``hold`` is how long the server may hold it (a long-poll's wait), added to the bound;
        ``deadline`` (``time.monotonic()``) cuts it and its retries short (a wait's)."""
        sent: Dict[str, str] = {**self.headers, **(headers or {})}
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        if not any(h.lower() == "user-agent" for h in sent):
            sent["User-Agent"] = "hark-python/0.1"
        named = _key_name(sent)
        if idempotency_key is not None:
            if named:
                del sent[named]
            sent["Idempotency-Key"] = idempotency_key
        elif not named and self.idempotency_keys and method in WRITES:
            sent["Idempotency-Key"] = new_key()
        if json_body is not None:
            sent["Content-Type"] = "application/json"
            data = json.dumps(json_body).encode("utf-8")
        url = self.url(path, query)
        bound = bound_for(self.timeout, hold, data)
        # With a key the server answers a repeat with the first result and writes nothing; a
        # write without one cut off mid-flight may have been applied, so only a refused
        # connection is repeated.
        idempotent = method in IDEMPOTENT or _key_name(sent) is not None
        attempt = 0
        while True:
            attempt += 1
            last = attempt >= self.attempts
            backoff = min(MAX_DELAY, self.base_delay * 2 ** (attempt - 1))
            limit = bound if deadline is None else min(bound, deadline - time.monotonic())
            if limit <= 0:
                raise self._timed_out(method, path, bound)
            req = urllib.request.Request(url, data=data, headers=sent, method=method)
            try:
                answer = self._once(req, limit, method, path)
            except HarkError as e:
                if e.kind != "network" or last:
                    raise
                if not idempotent and failure_code(e.__cause__ or e) not in NOT_CONNECTED:
                    raise
                if not self._pause(e.message, backoff, attempt, deadline):
                    raise
                continue
            delay: Optional[float] = None
            if answer.status == 429:
                asked = retry_after(answer.headers.get("retry-after"))
                asked = backoff if asked is None else asked
                if asked <= self.max_retry_after:
                    delay = asked
            elif idempotent and answer.status in GATEWAY:
                delay = backoff
            if last or delay is None:
                return answer
            if not self._pause(f"the server answered {answer.status}", delay, attempt, deadline):
                return answer

    def _pause(self, why: str, delay: float, attempt: int, deadline: Optional[float]) -> bool:
        """Sleeps before a retry and says so; a pause that would outlast the deadline is not
        taken (the failure is the caller's at once: a wait pauses on its own terms)."""
        if deadline is not None and time.monotonic() + delay > deadline:
            return False
        if self.on_retry is not None:
            self.on_retry(why, delay, attempt)
        time.sleep(delay)
        return True

    def _timed_out(self, method: str, path: str, bound: float) -> HarkError:
        return HarkError(
            f"the server did not answer {method} {path} within {round(bound, 1):g} s",
            kind="timeout",
        )

    def _once(self, req: urllib.request.Request, limit: float, method: str,
              path: str) -> Answer:
        """One attempt: its head within ``limit`` s, and no silence longer than that in its
        body (the socket's timeout is per read); its failures as HarkErrors."""
        try:
            try:
                with urllib.request.urlopen(req, timeout=limit) as r:
                    return Answer(r.status, r.headers, r.read())
            except urllib.error.HTTPError as e:
                try:
                    return Answer(e.code, e.headers, e.read())
                finally:
                    e.close()
        except (socket.timeout, TimeoutError):
            raise self._timed_out(method, path, limit) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
            if isinstance(getattr(e, "reason", None), (socket.timeout, TimeoutError)):
                raise self._timed_out(method, path, limit) from e
            raise HarkError(cannot_reach(e, req.full_url), kind="network") from e
