"""The agent's client: one token, one channel."""

from __future__ import annotations

import mimetypes
import os
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Union

from ._http import Transport
from .errors import HarkError

#: The longest a server holds a long-poll; a longer wait is several of them.
MAX_WAIT = 55.0

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


def _outage(e: HarkError) -> bool:
    return e.kind != "http" or e.status >= 500 or e.status == 429


def _q(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


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
        cursor: int = 0,
    ) -> None:
        """``url`` and ``token`` default to ``HARK_URL`` and ``HARK_TOKEN``. ``timeout`` bounds
        each plain request (a long-poll gets its wait on top); ``attempts`` counts retries too.
        ``cursor`` is where ``inbox()`` starts (keep ``hark.cursor`` to resume there)."""
        self.http = Transport(
            url or os.environ.get("HARK_URL", ""),
            token or os.environ.get("HARK_TOKEN", ""),
            timeout=timeout,
            attempts=attempts,
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
        idempotency_key: Optional[str] = None,
    ) -> Message:
        """Sends a message (``text`` may be a whole body dict). With an input block it is a
        question: ``wait(message["id"])`` reads its answer."""
        req: Dict[str, Any] = {"body": _body(text, title, blocks)}
        if silent:
            req["silent"] = True
        if expires_in is not None:
            req["expires_in"] = expires_in
        r = self.http.json(
            "POST", "/v1/messages", json_body=req, idempotency_key=idempotency_key
        )
        return r["message"]

    def edit(self, message_id: str, **patch: Any) -> Message:
        """Edits a message: ``title=``, ``text=``, ``blocks=`` or ``block_patches=``."""
        return self.http.json("PATCH", f"/v1/messages/{_q(message_id)}", json_body=patch)[
            "message"
        ]

    def replace(
        self, message_id: str, text: Body = "", *, title: Optional[str] = None,
        blocks: Optional[Sequence[Block]] = None,
    ) -> Message:
        """Replaces a message's whole body."""
        req = {"body": _body(text, title, blocks)}
        return self.http.json("PUT", f"/v1/messages/{_q(message_id)}", json_body=req)["message"]

    def delete(self, message_id: str) -> None:
        self.http.json("DELETE", f"/v1/messages/{_q(message_id)}")

    def ack(self, message_id: str, state: str = "seen") -> Message:
        """Acknowledges a message from the person: ``seen``, ``working`` or ``done``."""
        path = f"/v1/messages/{_q(message_id)}/state"
        return self.http.json("POST", path, json_body={"state": state})["message"]

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
    ) -> Any:
        """Asks a question and returns its answer once the person gives it.

        Without ``blocks`` it is a free-text question (one ``text_input``). The answer of one
        input is its value; of several, a dict keyed by block id. Raises ``TimeoutError`` when
        ``timeout`` seconds pass first (the question is then cancelled), ``HarkError`` when the
        question is cancelled; an expired question answers its inputs' defaults.
        """
        if not blocks:
            blocks = [{"type": "text_input", "id": "reply", "label": "Reply"}]
        message = self.send(
            text, title=title, blocks=blocks, expires_in=expires_in, silent=silent
        )
        result = self.wait(message["id"], timeout=timeout)
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
        if wait is not None:
            wait = round(min(MAX_WAIT, max(0.0, wait)), 3)
        return self.http.json(
            "GET", f"/v1/asks/{_q(message_id)}", query={"wait": wait}, hold=wait or 0.0
        )

    def wait(self, message_id: str, timeout: Optional[float] = None) -> AskResult:
        """Waits until the question is settled, or ``timeout`` seconds (None: no limit) pass
        (status ``timeout``; the question stays open). Polls the server's 55 s long-poll again
        and again; an outage (restart, dropped connection) is polled through."""
        deadline = None if timeout is None else time.monotonic() + timeout
        message: Optional[Message] = None
        outages = 0
        while True:
            left = MAX_WAIT if deadline is None else deadline - time.monotonic()
            try:
                r = self.get_ask(message_id, wait=max(0.0, min(MAX_WAIT, left)))
                outages = 0
                message = r["message"]
                status = (message.get("ask") or {}).get("status")
                if status is None:
                    raise HarkError(f"{message_id} is not a question", status=400)
                if status != "open":
                    return AskResult(status, r.get("answer"), message)
            except HarkError as e:
                if not _outage(e) or (deadline is not None and time.monotonic() >= deadline):
                    raise
                outages += 1
                pause = min(5.0, 0.5 * outages)
                if deadline is not None:
                    pause = min(pause, max(0.0, deadline - time.monotonic()))
                time.sleep(pause)
            if deadline is not None and time.monotonic() >= deadline:
                if message is None:
                    message = self.get_ask(message_id)["message"]
                return AskResult("timeout", None, message)

    def asks(self) -> List[Message]:
        """The channel's open questions."""
        return self.http.json("GET", "/v1/asks")["asks"]

    def cancel(self, message_id: str, reason: Optional[str] = None) -> Message:
        """Withdraws an open question (409 once it is settled)."""
        req = {} if reason is None else {"reason": reason}
        path = f"/v1/messages/{_q(message_id)}/cancel"
        return self.http.json("POST", path, json_body=req)["message"]

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
        if wait is not None:
            wait = round(min(MAX_WAIT, max(0.0, wait)), 3)
        query = {"since": since, "wait": wait, "sender": sender, "peek": peek or None,
                 "limit": limit}
        return self.http.json("GET", "/v1/messages", query=query, hold=wait or 0.0)

    def inbox(self, wait: float = 0.0, peek: bool = False) -> List[Message]:
        """The person's new messages since ``self.cursor`` (which moves on), waiting up to
        ``wait`` seconds for a first one. Messages already acknowledged ``working`` or
        ``done`` are left out (an acknowledgment is a change and would bring them back)."""
        latest: Dict[str, Message] = {}
        while True:
            page = self.feed(since=self.cursor, wait=wait, sender="human", peek=peek)
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

    # Pins.
    def pin(
        self, key: str, text: Body = "", *, title: Optional[str] = None,
        blocks: Optional[Sequence[Block]] = None, silent: bool = True,
    ) -> Dict[str, Any]:
        """Creates or replaces the pinned message under ``key``; returns ``{key, message}``."""
        req = {"body": _body(text, title, blocks), "silent": silent}
        return self.http.json("PUT", f"/v1/pins/{_q(key)}", json_body=req)["pin"]

    def edit_pin(self, key: str, **patch: Any) -> Dict[str, Any]:
        return self.http.json("PATCH", f"/v1/pins/{_q(key)}", json_body=patch)["pin"]

    def unpin(self, key: str) -> None:
        self.http.json("DELETE", f"/v1/pins/{_q(key)}")

    def pins(self) -> List[Dict[str, Any]]:
        return self.http.json("GET", "/v1/pins")["pins"]

    # Files.
    def upload(
        self, data: Union[bytes, str, "os.PathLike[str]"], name: Optional[str] = None,
        mime: Optional[str] = None,
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
            "POST", "/v1/files", query={"name": name}, data=raw, headers={"Content-Type": mime}
        )

    def download(self, file_id: str) -> bytes:
        return self.http.request("GET", f"/v1/files/{_q(file_id)}")

    # The channel.
    def channel(self) -> Dict[str, Any]:
        return self.http.json("GET", "/v1/channel")

    def rename(self, label: str) -> Dict[str, Any]:
        return self.http.json("PATCH", "/v1/agent", json_body={"label": label})
