"""What the Python client shares with the TypeScript one (sdk/typescript): its options, its
error's fields and wording, and its wait (pauses, ``on_outage``, 429 and ``Retry-After``, the
deadline).

Against the real server (HARK_URL, HARK_TOKEN, HARK_PERSON_TOKEN; test/sdk/python.test.ts
starts dist/hark and sets them), directly or through ``Proxy``: a loopback proxy in front of
it that answers the requests a test scripts (a 503, a 429 with ``Retry-After``, silence) and
passes every other request on to the server.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import unittest
import uuid
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple
from unittest import mock

from hark import Hark, HarkError, Transport, confirm, poll_until

URL = os.environ.get("HARK_URL") or ""
TOKEN = os.environ.get("HARK_TOKEN") or ""
PERSON = os.environ.get("HARK_PERSON_TOKEN") or ""
NEEDS = "HARK_URL, HARK_TOKEN, HARK_PERSON_TOKEN"


def person(method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        f"{URL}{path}", data=data, method=method,
        headers={"Authorization": f"Bearer {PERSON}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


#: A scripted answer: (status, headers), or STALL (the head never comes).
Reply = Optional[Tuple[int, Dict[str, str]]]
STALL: Reply = None


class Seen:
    def __init__(self, method: str, path: str, headers: Any, at: float) -> None:
        self.method, self.path, self.at = method, path, at
        self.key = headers.get("idempotency-key")
        self.auth = headers.get("authorization")


class Proxy:
    """The real server behind a loopback proxy. ``script(path_prefix, replies)``: the next
    requests whose path starts with ``path_prefix`` get ``replies`` in order; the rest pass on."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.seen: List[Seen] = []
        self.scripts: List[Tuple[str, List[Reply]]] = []
        self.released = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n) if n else b""
                proxy.seen.append(Seen(self.command, self.path, self.headers, time.monotonic()))
                scripted = proxy._next(self.path)
                if scripted is not None:
                    reply = scripted[0]
                    if reply is STALL:
                        proxy.released.wait(60)
                        return
                    status, headers = reply
                    return self._reply(status, headers, json.dumps({"error": "scripted"}).encode())
                self._forward(body)

            def _forward(self, body: bytes) -> None:
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() in ("authorization", "content-type", "idempotency-key")}
                req = urllib.request.Request(proxy.upstream + self.path, data=body or None,
                                             headers=headers, method=self.command)
                try:
                    with urllib.request.urlopen(req, timeout=90) as r:
                        self._reply(r.status, dict(r.headers), r.read())
                except urllib.error.HTTPError as e:
                    self._reply(e.code, dict(e.headers), e.read())

            def _reply(self, status: int, headers: Dict[str, str], raw: bytes) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    if k.lower() not in ("content-length", "connection", "date", "server",
                                         "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def script(self, prefix: str, replies: List[Reply]) -> None:
        self.scripts.append((prefix, list(replies)))

    def _next(self, path: str) -> Optional[List[Reply]]:
        for prefix, replies in self.scripts:
            if path.startswith(prefix) and replies:
                return [replies.pop(0)]
        return None

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


def unavailable() -> Reply:
    return (503, {})


@unittest.skipUnless(URL and TOKEN and PERSON, NEEDS)
class ParityAgainstServer(unittest.TestCase):
    def setUp(self) -> None:
        self.hark = Hark(URL, TOKEN)
        self.proxy = Proxy(URL)

    def tearDown(self) -> None:
        self.proxy.close()

    def test_health_and_info_need_no_token(self) -> None:
        with mock.patch.dict(os.environ, {"HARK_TOKEN": ""}):
            anonymous = Hark(self.proxy.url)
        self.assertEqual(anonymous.health(), {"ok": True})
        self.assertEqual(anonymous.info()["name"], "Hark")
        self.assertEqual([(s.path, s.auth) for s in self.proxy.seen],
                         [("/health", None), ("/v1/info", None)])
        with self.assertRaises(HarkError) as e:
            anonymous.send("x")
        self.assertEqual(e.exception.status, 401)

    def test_send_with_proof_asks_for_a_signed_answer(self) -> None:
        signed = self.hark.send(title="Signed?", blocks=[confirm("go", "Go")], proof=True)
        self.assertRegex(signed["ask"].get("request_hash") or "", r"^[0-9a-f]{64}$")
        plain = self.hark.send(title="Signed?", blocks=[confirm("go", "Go")])
        self.assertNotIn("request_hash", plain["ask"])
        # Other tests look for their questions by title among the open ones.
        for m in (signed, plain):
            self.hark.cancel(m["id"])

    def test_an_error_answer_carries_the_servers_words_and_headers(self) -> None:
        with self.assertRaises(HarkError) as e:
            self.hark.send(blocks=[{"type": "confirm", "label": "x"}])
        err = e.exception
        self.assertEqual((err.status, err.kind, err.field), (400, "http", "body.blocks[0].id"))
        self.assertTrue(err.error.startswith("body.blocks[0].id"), err.error)
        self.assertEqual(str(err), f"400: {err.error}")
        self.assertTrue(err.headers["content-type"].startswith("application/json"))

    def test_an_empty_id_fails_at_once(self) -> None:
        for call in (lambda: self.hark.wait("", timeout=30), lambda: self.hark.get_ask(""),
                     lambda: self.hark.cancel(""), lambda: self.hark.edit("", text="x"),
                     lambda: self.hark.delete(""), lambda: self.hark.ack("", "done"),
                     lambda: self.hark.pin("", "x"), lambda: self.hark.download("")):
            with self.assertRaises(ValueError) as e:
                call()
            self.assertRegex(str(e.exception), r"^(message_id|key|file_id): is required$")

    def test_every_write_takes_an_idempotency_key(self) -> None:
        m = self.hark.send("draft")
        run = uuid.uuid4().hex
        first = self.hark.edit(m["id"], text="one", idempotency_key=f"edit-{run}")
        again = self.hark.edit(m["id"], text="one", idempotency_key=f"edit-{run}")
        self.assertEqual(again, first)
        with self.assertRaises(HarkError) as e:
            self.hark.edit(m["id"], text="two", idempotency_key=f"edit-{run}")
        self.assertEqual(e.exception.status, 409)
        self.hark.replace(m["id"], "replaced", idempotency_key=f"replace-{run}")
        pinned = self.hark.pin("parity", "p", idempotency_key=f"pin-{run}")
        self.assertEqual(self.hark.pin("parity", "p", idempotency_key=f"pin-{run}"), pinned)
        self.hark.unpin("parity")

    def test_on_retry_is_told_each_retry(self) -> None:
        self.proxy.script("/v1/pins", [unavailable(), unavailable()])
        told: List[Tuple[str, float, int]] = []
        h = Hark(self.proxy.url, TOKEN, attempts=5, base_delay=0.005,
                 on_retry=lambda *a: told.append(a))
        self.assertIsInstance(h.pins(), list)
        self.assertEqual(told, [("the server answered 503", 0.005, 1),
                                ("the server answered 503", 0.01, 2)])
        self.assertEqual(len(self.proxy.seen), 3)

    def test_headers_of_ones_own_go_with_every_request(self) -> None:
        h = Hark(self.proxy.url, TOKEN, headers={"Idempotency-Key": "mine"})
        h.send("with my key")
        self.assertEqual(self.proxy.seen[-1].key, "mine")

    def test_a_wait_polls_through_503s_and_tells_on_outage(self) -> None:
        q = self.hark.send(blocks=[confirm("go", "Go")])
        self.proxy.script("/v1/asks/", [unavailable(), unavailable(), unavailable()])
        person("POST", f"/v1/app/messages/{q['id']}/answer", {"answer": True})
        lines: List[str] = []
        h = Hark(self.proxy.url, TOKEN, attempts=1)
        r = h.wait(q["id"], timeout=60, on_outage=lines.append)
        self.assertEqual((r.status, r.answer), ("answered", True))
        self.assertEqual(lines, [
            "the server answered 503; still waiting, polling again until the timeout",
            "connected to the server again",
        ])
        polls = [s.at for s in self.proxy.seen if s.path.startswith("/v1/asks/")]
        self.assertEqual(len(polls), 4)
        gaps = [b - a for a, b in zip(polls, polls[1:])]
        # The pauses between polls: 0.5, 1, 2 s (then 5 s), as the TypeScript client's.
        for gap, least in zip(gaps, (0.5, 1.0, 2.0)):
            self.assertGreaterEqual(gap, least - 0.05)

    def test_a_429_does_not_end_a_wait_and_its_retry_after_is_honoured(self) -> None:
        q = self.hark.send(blocks=[confirm("go", "Go")])
        self.proxy.script("/v1/asks/", [(429, {"Retry-After": "2"})])
        person("POST", f"/v1/app/messages/{q['id']}/answer", {"answer": True})
        lines: List[str] = []
        h = Hark(self.proxy.url, TOKEN, attempts=1)
        r = h.wait(q["id"], timeout=60, on_outage=lines.append)
        self.assertEqual((r.status, r.answer), ("answered", True))
        self.assertEqual(lines[0],
                         "the server answered 429; still waiting, polling again until the timeout")
        polls = [s.at for s in self.proxy.seen if s.path.startswith("/v1/asks/")]
        self.assertEqual(len(polls), 2)
        self.assertGreaterEqual(polls[1] - polls[0], 1.95)

    def test_a_429_past_max_retry_after_still_does_not_end_a_wait(self) -> None:
        q = self.hark.send(blocks=[confirm("go", "Go")])
        self.proxy.script("/v1/asks/", [(429, {"Retry-After": "1"})])
        person("POST", f"/v1/app/messages/{q['id']}/answer", {"answer": True})
        h = Hark(self.proxy.url, TOKEN, max_retry_after=0.5)
        self.assertEqual(h.wait(q["id"], timeout=60).status, "answered")

    def test_a_silent_poll_is_cut_at_the_waits_deadline(self) -> None:
        q = self.hark.send(blocks=[confirm("go", "Go")])
        self.proxy.script("/v1/asks/", [STALL])
        lines: List[str] = []
        r = Hark(self.proxy.url, TOKEN).wait(q["id"], timeout=1.5, on_outage=lines.append)
        # The poll is abandoned a second past the deadline (not 30 s + the wait later); the
        # question is read once more, without a wait, for the result.
        self.assertEqual(r.status, "timeout")
        self.assertEqual(r.message["id"], q["id"])
        self.assertEqual(lines, [])
        self.hark.cancel(q["id"])

    def test_messages_yields_the_persons_messages_as_they_come(self) -> None:
        h = Hark(URL, TOKEN)
        h.inbox()
        channel_id = h.channel()["channel"]["id"]
        person("POST", f"/v1/app/channels/{channel_id}/messages", {"body": {"text": "first"}})
        person("POST", f"/v1/app/channels/{channel_id}/messages", {"body": {"text": "second"}})
        got: List[str] = []

        def read() -> None:
            for m in h.messages():
                got.append(m["body"]["text"])
                if len(got) == 2:
                    break

        # In a thread, so that a generator that never yields fails the test instead of hanging.
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(60)
        self.assertEqual(got, ["first", "second"])


class PollUntil(unittest.TestCase):
    """``poll_until``, the loop under ``wait`` and ``messages``, for waits of one's own."""

    def test_ends_with_none_at_its_deadline_and_at_once_on_a_failure_that_is_no_outage(
        self,
    ) -> None:
        polls: List[float] = []
        self.assertIsNone(poll_until(lambda wait, limit: polls.append(wait), time.monotonic()))
        self.assertEqual(polls, [0.0])
        refused = HarkError("403: no", status=403)
        for failure in (refused, ValueError("message_id: is required")):
            def fail(wait: float, limit: float) -> None:
                raise failure
            with self.assertRaises(type(failure)) as e:
                poll_until(fail)
            self.assertIs(e.exception, failure)


class Silent:
    """A loopback listener that accepts connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        for c in self.accepted:
            c.close()
        self.sock.close()


class Wording(unittest.TestCase):
    """The same words as the TypeScript client and the ``hark`` CLI."""

    def test_a_network_failure_names_the_url_tried_and_the_code(self) -> None:
        with self.assertRaises(HarkError) as e:
            Hark("http://127.0.0.1:9", "t", attempts=1).send("x")
        self.assertEqual((e.exception.kind, e.exception.status), ("network", 0))
        self.assertEqual(str(e.exception),
                         "cannot reach the server at http://127.0.0.1:9/v1/messages (ECONNREFUSED)")

    def test_a_timeout_names_the_request_and_its_bound_and_is_not_repeated(self) -> None:
        silent = Silent()
        try:
            with self.assertRaises(HarkError) as e:
                Hark(silent.url, "t", timeout=0.3).channel()
            self.assertEqual((e.exception.kind, e.exception.status), ("timeout", 0))
            self.assertEqual(str(e.exception), "the server did not answer GET /v1/channel within 0.3 s")
            self.assertEqual(len(silent.accepted), 1)
            # An upload's bound grows by a second per 64 KiB.
            with self.assertRaises(HarkError) as e:
                Hark(silent.url, "t", timeout=0.3).upload(b"x" * 32768, name="half.bin")
            self.assertEqual(str(e.exception), "the server did not answer POST /v1/files within 0.8 s")
        finally:
            silent.close()

    def test_a_refused_connection_is_retried_even_without_a_key(self) -> None:
        # No byte reached the server, so a write without a key cannot be applied twice.
        told: List[Tuple[str, float, int]] = []
        keyless = Transport("http://127.0.0.1:9", idempotency_keys=False, attempts=3,
                            base_delay=0.001, on_retry=lambda *a: told.append(a))
        with self.assertRaises(HarkError) as e:
            keyless.raw("POST", "/v1/pair/start", json_body={})
        refused = "cannot reach the server at http://127.0.0.1:9/v1/pair/start (ECONNREFUSED)"
        self.assertEqual(str(e.exception), refused)
        self.assertEqual(told, [(refused, 0.001, 1), (refused, 0.002, 2)])

    def test_without_a_url_the_client_says_so(self) -> None:
        with mock.patch.dict(os.environ, {"HARK_URL": ""}):
            with self.assertRaises(HarkError) as e:
                Hark()
        self.assertEqual((str(e.exception), e.exception.kind),
                         ("a server URL is required", "network"))


@unittest.skipUnless(URL and TOKEN and PERSON, NEEDS)
class KeylessTransport(unittest.TestCase):
    """``Transport(idempotency_keys=False)``: for routes that do not honour keys."""

    def setUp(self) -> None:
        self.proxy = Proxy(URL)

    def tearDown(self) -> None:
        self.proxy.close()

    def test_writes_carry_no_key_and_are_not_repeated_after_a_503(self) -> None:
        self.proxy.script("/v1/pair/start", [unavailable()])
        keyless = Transport(self.proxy.url, idempotency_keys=False, base_delay=0.001)
        status, _, _ = keyless.raw("POST", "/v1/pair/start", json_body={})
        self.assertEqual(status, 503)
        self.assertEqual([(s.method, s.key, s.auth) for s in self.proxy.seen],
                         [("POST", None, None)])
        # A GET is safe to repeat: it is, and then the server's answer comes.
        self.proxy.seen.clear()
        self.proxy.script("/health", [unavailable(), unavailable()])
        self.assertEqual(keyless.json("GET", "/health"), {"ok": True})
        self.assertEqual(len(self.proxy.seen), 3)


if __name__ == "__main__":
    unittest.main()
