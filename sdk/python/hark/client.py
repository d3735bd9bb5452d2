"""The agent's client: one token, one channel."""

from __future__ import annotations

import mimetypes
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union
from urllib.parse import quote

from ._http import OnRetry, Transport
from .errors import HarkError
from .wait import MAX_WAIT, poll_until

Block = Dict[str, Any]
Message = Dict[str, Any]
Body = Union[str, Dict[str, Any]]


@dataclass
class AskResult:
    """How a question ended: ``answered``, ``expired``, ``cancelled``, or ``timeout`` (still
    open when the wait ran out). ``answer`` is the answer (on expiry the inputs' defaults, or
    None for an approval), None otherwise."""

    status: str
    answer: Any
    message: Message

    @property
    def id(self) -> str:
        return str(self.message["id"])


def _body(body: Body, title: Optional[str], blocks: Optional[Sequence[Block]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {"text": body} if isinstance(body, str) else dict(body)
    if title is not None:
        out["title"] = title
    if blocks is not None:
        out["blocks"] = list(blocks)
    return out


def _q(value: str, name: str) -> str:
    """A path segment. An empty one would name another route (``GET /v1/asks/`` is the list of
    questions), so it is refused at once, naming the argument."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name}: is required")
    return quote(value, safe="")


def _clamp(wait: Optional[float]) -> Optional[float]:
    return None if wait is None else round(min(MAX_WAIT, max(0.0, wait)), 3)


class Hark:
    """A Hark agent client.

    >>> hark = Hark("https://hark.example.com", "hark_agent_...")
    >>> hark.send("build is green")
    >>> hark.ask("Deploy?", blocks=[confirm("go", "Deploy")], timeout=3600)
    True
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        attempts: int = 4,
        base_delay: float = 0.25,
        max_retry_after: float = 60.0,
        on_retry: Optional[OnRetry] = None,
        headers: Optional[Mapping[str, str]] = None,
        cursor: int = 0,
    ) -> None:
        """``url`` and ``token`` default to ``HARK_URL`` and ``HARK_TOKEN``; without a token
        only ``health()`` and ``info()`` answer. ``timeout`` bounds each plain request (a
        long-poll gets its wait on top, an upload a second per 64 KiB). ``attempts`` counts the
        first try too; retries pause ``base_delay`` s, doubling up to 4 s, and after a 429 its
        ``Retry-After`` when it is at most ``max_retry_after`` s. ``on_retry(reason, delay,
        attempt)`` is told before each pause; ``headers`` go with every request. ``cursor`` is
        where ``inbox()`` starts (keep ``hark.cursor`` to resume there)."""
        self.http = Transport(
            url or os.environ.get("HARK_URL", ""),
            token or os.environ.get("HARK_TOKEN") or None,
            timeout=timeout,
            attempts=attempts,
            base_delay=base_delay,
            max_retry_after=max_retry_after,
            on_retry=on_retry,
            headers=headers,
        )
        self.cursor = cursor

    # Messages.
    def send(
        self,
        text: Body = "",
        *,
        title: Optional[str] = None,
        blocks: Optional[Sequence[Block]] = None,
        silent: bool = False,
        expires_in: Optional[float] = None,
        proof: bool = False,
        idempotency_key: Optional[str] = None,
    ) -> Message:
        """Sends a message (``text`` may be a whole body dict). With an input block it is a
        question: ``wait(message["id"])`` reads its answer. ``proof=True``: the person signs
        the answer with a passkey (over the question's ``ask.request_hash``), which the agent
        can check against the keys ``channel()`` reports."""
        req: Dict[str, Any] = {"body": _body(text, title, blocks)}
        if silent:
            req["silent"] = True
        if expires_in is not None:
            req["expires_in"] = expires_in
        if proof:
            req["proof"] = True
        r = self.http.json(
            "POST", "/v1/messages", json_body=req, idempotency_key=idempotency_key
        )
        return r["message"]

    def edit(self, message_id: str, *, idempotency_key: Optional[str] = None,
             **patch: Any) -> Message:
        """Edits a message: ``title=``, ``text=``, ``blocks=`` or ``block_patches=``."""
        path = f"/v1/messages/{_q(message_id, 'message_id')}"
        return self.http.json("PATCH", path, json_body=patch,
                              idempotency_key=idempotency_key)["message"]

    def replace(
        self, message_id: str, text: Body = "", *, title: Optional[str] = None,
        blocks: Optional[Sequence[Block]] = None, idempotency_key: Optional[str] = None,
    ) -> Message:
        """Replaces a message's whole body."""
        req = {"body": _body(text, title, blocks)}
        path = f"/v1/messages/{_q(message_id, 'message_id')}"
        return self.http.json("PUT", path, json_body=req,
                              idempotency_key=idempotency_key)["message"]

    def delete(self, message_id: str) -> None:
        self.http.json("DELETE", f"/v1/messages/{_q(message_id, 'message_id')}")

    def ack(self, message_id: str, state: str = "seen", *,
            idempotency_key: Optional[str] = None) -> Message:
        """Acknowledges a message from the person: ``seen``, ``working`` or ``done``."""
        path = f"/v1/messages/{_q(message_id, 'message_id')}/state"
        return self.http.json("POST", path, json_body={"state": state},
                              idempotency_key=idempotency_key)["message"]

    # Questions.
    def ask(
        self,
        text: Body = "",
        *,
        title: Optional[str] = None,
        blocks: Optional[Sequence[Block]] = None,
        timeout: Optional[float] = None,
        expires_in: Optional[float] = None,
        silent: bool = False,
        proof: bool = False,
        on_outage: Optional[Callable[[str], None]] = None,
    ) -> Any:
        """Asks a question and returns its answer once the person gives it.

        Without ``blocks`` it is a free-text question (one ``text_input``). The answer of one
        input is its value; of several, a dict keyed by block id. Raises ``TimeoutError`` when
        ``timeout`` seconds pass first (the question is then cancelled), ``HarkError`` when the
        question is cancelled; an expired question answers its inputs' defaults. ``proof`` and
        ``on_outage`` are ``send``'s and ``wait``'s.
        """
        if not blocks:
            blocks = [{"type": "text_input", "id": "reply", "label": "Reply"}]
        message = self.send(
            text, title=title, blocks=blocks, expires_in=expires_in, silent=silent, proof=proof
        )
        result = self.wait(message["id"], timeout=timeout, on_outage=on_outage)
        if result.status == "timeout":
            try:
                self.cancel(message["id"], "no answer in time")
            except HarkError:
                pass
            raise TimeoutError(f"no answer to {message['id']} within {timeout} s")
        if result.status == "cancelled":
            raise HarkError(f"question {message['id']} was cancelled", status=409)
        return result.answer

    def get_ask(self, message_id: str, wait: Optional[float] = None) -> Dict[str, Any]:
        """One read of a question, ``{message, answer}``, held up to ``wait`` s while open."""
        return self._read_ask(message_id, _clamp(wait), None)

    def _read_ask(self, message_id: str, wait: Optional[float],
                  deadline: Optional[float]) -> Dict[str, Any]:
        path = f"/v1/asks/{_q(message_id, 'message_id')}"
        return self.http.json("GET", path, query={"wait": wait}, hold=wait or 0.0,
                              deadline=deadline)

    def wait(
        self,
        message_id: str,
        timeout: Optional[float] = None,
        *,
        on_outage: Optional[Callable[[str], None]] = None,
    ) -> AskResult:
        """Waits until the question is settled, or ``timeout`` seconds (None: no limit) pass
        (status ``timeout``; the question stays open). Polls the server's 55 s long-poll again
        and again; an outage (a restart, a dropped connection, a 5xx, a 429, a server that
        stops answering) is polled through until the timeout, and ``on_outage`` is told one
        line when the server is lost and one when it is back (see ``poll_until``)."""
        _q(message_id, "message_id")
        deadline = None if timeout is None else time.monotonic() + timeout
        last: List[Message] = []

        def poll(wait: float, limit: float) -> Optional[AskResult]:
            r = self._read_ask(message_id, wait, limit)
            message = r["message"]
            last[:] = [message]
            status = (message.get("ask") or {}).get("status")
            if status is None:
                raise HarkError(f"{message_id} is not a question", status=400)
            return None if status == "open" else AskResult(status, r.get("answer"), message)

        settled = poll_until(poll, deadline, on_outage)
        if settled is not None:
            return settled
        message = last[0] if last else self.get_ask(message_id)["message"]
        return AskResult("timeout", None, message)

    def asks(self) -> List[Message]:
        """The channel's open questions."""
        return self.http.json("GET", "/v1/asks")["asks"]

    def cancel(self, message_id: str, reason: Optional[str] = None, *,
               idempotency_key: Optional[str] = None) -> Message:
        """Withdraws an open question (409 once it is settled)."""
        req = {} if reason is None else {"reason": reason}
        path = f"/v1/messages/{_q(message_id, 'message_id')}/cancel"
        return self.http.json("POST", path, json_body=req,
                              idempotency_key=idempotency_key)["message"]

    # The feed.
    def feed(
        self,
        since: int = 0,
        wait: Optional[float] = None,
        sender: Optional[str] = None,
        peek: bool = False,
        limit: Optional[int] = None,
    ) -> Dict[str, Any]:
        """One read of the change feed: ``{messages, cursor, has_more}``."""
        return self._feed(since, _clamp(wait), sender, peek, limit, None)

    def _feed(self, since: int, wait: Optional[float], sender: Optional[str], peek: bool,
              limit: Optional[int], deadline: Optional[float]) -> Dict[str, Any]:
        query = {"since": since, "wait": wait, "sender": sender, "peek": peek or None,
                 "limit": limit}
        return self.http.json("GET", "/v1/messages", query=query, hold=wait or 0.0,
                              deadline=deadline)

    def inbox(self, wait: float = 0.0, peek: bool = False) -> List[Message]:
        """The person's new messages since ``self.cursor`` (which moves on), waiting up to
        ``wait`` seconds for a first one. Messages already acknowledged ``working`` or
        ``done`` are left out (an acknowledgment is a change and would bring them back)."""
        return self._inbox(_clamp(wait) or 0.0, peek, None)

    def _inbox(self, wait: float, peek: bool, deadline: Optional[float]) -> List[Message]:
        latest: Dict[str, Message] = {}
        while True:
            page = self._feed(self.cursor, wait, "human", peek, None, deadline)
            for m in page["messages"]:
                latest.pop(m["id"], None)
                latest[m["id"]] = m
            self.cursor = page["cursor"]
            if not page.get("has_more"):
                break
            wait = 0.0
        return [
            m for m in latest.values()
            if not m.get("deleted") and m.get("state") not in ("working", "done")
        ]

    def messages(
        self, *, peek: bool = False, on_outage: Optional[Callable[[str], None]] = None
    ) -> Iterator[Message]:
        """The person's messages as they come (``inbox()`` again and again, moving
        ``self.cursor``), for ever: leave the loop to stop. Outages are polled through, and
        ``on_outage`` is told as in ``wait``."""
        while True:
            batch = poll_until(
                lambda wait, limit: self._inbox(wait, peek, limit) or None, None, on_outage
            )
            if batch:
                yield from batch

    # Pins.
    def pin(
        self, key: str, text: Body = "", *, title: Optional[str] = None,
        blocks: Optional[Sequence[Block]] = None, silent: bool = True,
        idempotency_key: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Creates or replaces the pinned message under ``key``; returns ``{key, message}``."""
        req = {"body": _body(text, title, blocks), "silent": silent}
        return self.http.json("PUT", f"/v1/pins/{_q(key, 'key')}", json_body=req,
                              idempotency_key=idempotency_key)["pin"]

    def edit_pin(self, key: str, *, idempotency_key: Optional[str] = None,
                 **patch: Any) -> Dict[str, Any]:
        """Edits a pin as ``edit`` edits a message (e.g. ``block_patches`` on a progress bar)."""
        return self.http.json("PATCH", f"/v1/pins/{_q(key, 'key')}", json_body=patch,
                              idempotency_key=idempotency_key)["pin"]

    def unpin(self, key: str) -> None:
        self.http.json("DELETE", f"/v1/pins/{_q(key, 'key')}")

    def pins(self) -> List[Dict[str, Any]]:
        return self.http.json("GET", "/v1/pins")["pins"]

    # Files.
    def upload(
        self, data: Union[bytes, str, "os.PathLike[str]"], name: Optional[str] = None,
        mime: Optional[str] = None, *, idempotency_key: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Uploads bytes, or the file at a path; returns ``{file_id, name, mime, size}``."""
        if isinstance(data, bytes):
            raw, name = data, name or "file"
        else:
            with open(data, "rb") as f:
                raw = f.read()
            name = name or os.path.basename(os.fspath(data))
        mime = mime or mimetypes.guess_type(name)[0] or "application/octet-stream"
        return self.http.json(
            "POST", "/v1/files", query={"name": name}, data=raw, headers={"Content-Type": mime},
            idempotency_key=idempotency_key,
        )

    def download(self, file_id: str) -> bytes:
        return self.http.request("GET", f"/v1/files/{_q(file_id, 'file_id')}")

    # The channel and the server.
    def channel(self) -> Dict[str, Any]:
        """The channel (its label as the person sees it, counts) and the keys that sign
        answers (``approvers``)."""
        return self.http.json("GET", "/v1/channel")

    def rename(self, label: str, *, idempotency_key: Optional[str] = None) -> Dict[str, Any]:
        """Renames the agent: its channel's name as the person sees it."""
        return self.http.json("PATCH", "/v1/agent", json_body={"label": label},
                              idempotency_key=idempotency_key)

    def health(self) -> Dict[str, Any]:
        """Whether the server is up (``{"ok": True}``); needs no token."""
        return self.http.json("GET", "/health")

    def info(self) -> Dict[str, Any]:
        """The server's name, version, public URL and features; needs no token."""
        return self.http.json("GET", "/v1/info")
