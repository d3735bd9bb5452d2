"""Tests of the Python client.

Against a real server when HARK_URL, HARK_TOKEN and HARK_PERSON_TOKEN are set (test/sdk/
python.test.ts starts dist/hark and sets them); the retry and idempotency-key tests run against
a small recording server in this process either way.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
import unittest
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, List, Optional, Tuple

from hark import Hark, HarkError, approval, choice, confirm, number_input, progress, text_input

URL = os.environ.get("HARK_URL")
TOKEN = os.environ.get("HARK_TOKEN")
PERSON = os.environ.get("HARK_PERSON_TOKEN")


def person(method: str, path: str, body: Any = None) -> Any:
    """A call of the person's side (the person token), as the web app would make it."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        f"{URL}{path}", data=data, method=method,
        headers={"Authorization": f"Bearer {PERSON}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def later(seconds: float, fn: Any, *args: Any) -> threading.Thread:
    def run() -> None:
        time.sleep(seconds)
        fn(*args)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def answer_when_asked(hark: Hark, title: str, value: Any) -> threading.Thread:
    """Answers the open question titled ``title`` once it appears."""
    def run() -> None:
        for _ in range(200):
            for m in hark.asks():
                if m["body"].get("title") == title:
                    person("POST", f"/v1/app/messages/{m['id']}/answer", {"answer": value})
                    return
            time.sleep(0.05)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@unittest.skipUnless(URL and TOKEN and PERSON, "HARK_URL, HARK_TOKEN, HARK_PERSON_TOKEN")
class AgainstServer(unittest.TestCase):
    hark: Hark
    channel_id: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.hark = Hark(URL, TOKEN)
        cls.channel_id = cls.hark.channel()["channel"]["id"]

    def test_send_edit_delete(self) -> None:
        m = self.hark.send("hello", title="From Python", blocks=[progress(1, 4, id="bar")])
        self.assertEqual(m["sender"], "agent")
        self.assertEqual(m["body"]["title"], "From Python")
        m = self.hark.edit(m["id"], block_patches=[{"id": "bar", "value": 3}])
        self.assertEqual(m["body"]["blocks"][0]["value"], 3)
        m = self.hark.replace(m["id"], "replaced")
        self.assertEqual(m["body"], {"text": "replaced"})
        self.hark.delete(m["id"])
        feed = self.hark.feed(peek=True)
        self.assertIn({"id": m["id"], "deleted": True}, feed["messages"])

    def test_ask_returns_the_answer(self) -> None:
        answer_when_asked(self.hark, "Deploy?", True)
        self.assertIs(self.hark.ask("Ship it?", title="Deploy?", blocks=[confirm("go", "Deploy")],
                                    timeout=20), True)
        answer_when_asked(self.hark, "Form", {"env": ["prod"], "n": 2})
        got = self.hark.ask(title="Form", blocks=[
            choice("env", ["staging", "prod"], multi=True), number_input("n", "How many"),
        ], timeout=20)
        self.assertEqual(got, {"env": ["prod"], "n": 2})
        answer_when_asked(self.hark, "Free", "sure")
        self.assertEqual(self.hark.ask("Anything to add?", title="Free", timeout=20), "sure")

    def test_ask_times_out_and_cancels(self) -> None:
        t0 = time.monotonic()
        with self.assertRaises(TimeoutError):
            self.hark.ask("nobody answers", blocks=[text_input("t")], timeout=1.2)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertFalse([m for m in self.hark.asks() if m["body"].get("text") == "nobody answers"])

    def test_wait_answered_and_cancelled(self) -> None:
        q = self.hark.send(blocks=[approval("ok", "Bash", {"command": "ls"}, summary="list")])
        self.assertEqual(len(q["ask"]["request_hash"]), 64)
        later(0.3, person, "POST", f"/v1/app/messages/{q['id']}/answer",
              {"answer": {"decision": "allow", "scope": "once"}})
        r = self.hark.wait(q["id"], timeout=20)
        self.assertEqual((r.status, r.answer), ("answered", {"decision": "allow", "scope": "once"}))
        q = self.hark.send(blocks=[confirm("c", "Go")])
        self.assertEqual(self.hark.wait(q["id"], timeout=1).status, "timeout")
        later(0.3, self.hark.cancel, q["id"], "changed my mind")
        self.assertEqual(self.hark.wait(q["id"], timeout=20).status, "cancelled")
        with self.assertRaises(HarkError) as e:
            self.hark.cancel(q["id"])
        self.assertEqual(e.exception.status, 409)

    def test_inbox(self) -> None:
        h = Hark(URL, TOKEN)
        h.inbox()
        self.assertEqual(h.inbox(), [])
        later(0.3, person, "POST", f"/v1/app/channels/{self.channel_id}/messages",
              {"body": {"text": "run the linter too"}})
        got = h.inbox(wait=20)
        self.assertEqual([m["body"]["text"] for m in got], ["run the linter too"])
        self.assertEqual(h.ack(got[0]["id"], "done")["state"], "done")
        self.assertEqual(h.inbox(), [])
        resumed = Hark(URL, TOKEN, cursor=h.cursor)
        self.assertEqual(resumed.inbox(), [])

    def test_pins(self) -> None:
        p = self.hark.pin("status", "migrating", blocks=[progress(1, 3, id="p")])
        self.assertEqual(p["key"], "status")
        p = self.hark.edit_pin("status", block_patches={"p": {"value": 2}})
        self.assertEqual(p["message"]["body"]["blocks"][0]["value"], 2)
        self.assertIn("status", [p["key"] for p in self.hark.pins()])
        self.hark.unpin("status")
        self.assertNotIn("status", [p["key"] for p in self.hark.pins()])

    def test_upload_download(self) -> None:
        data = bytes(range(256)) * 300
        info = self.hark.upload(data, name="blob.bin")
        self.assertEqual((info["name"], info["size"]), ("blob.bin", len(data)))
        self.assertEqual(self.hark.download(info["file_id"]), data)
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("report")
        try:
            info = self.hark.upload(f.name)
            self.assertTrue(info["mime"].startswith("text/plain"))
            self.assertEqual(self.hark.download(info["file_id"]), b"report")
        finally:
            os.unlink(f.name)

    def test_errors(self) -> None:
        with self.assertRaises(HarkError) as e:
            self.hark.send(blocks=[{"type": "choice", "id": "c", "options": []}])
        self.assertEqual(e.exception.status, 400)
        self.assertTrue((e.exception.field or "").startswith("body.blocks[0]"))
        with self.assertRaises(HarkError) as e:
            self.hark.edit("msg_nope", text="x")
        self.assertEqual(e.exception.status, 404)
        with self.assertRaises(HarkError) as e:
            Hark(URL, "hark_agent_wrong", attempts=1).send("x")
        self.assertEqual(e.exception.status, 401)


class Recorder(BaseHTTPRequestHandler):
    seen: List[Tuple[str, Optional[str], bytes]] = []
    fail_next = 0
    limit_next = 0

    def _any(self) -> None:
        n = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(n) if n else b""
        Recorder.seen.append((self.command, self.headers.get("idempotency-key"), body))
        if Recorder.fail_next > 0:
            Recorder.fail_next -= 1
            self._reply(503, {"error": "down"})
        elif Recorder.limit_next > 0:
            Recorder.limit_next -= 1
            self._reply(429, {"error": "slow down"}, {"Retry-After": "1"})
        else:
            self._reply(200, {"message": {"id": "msg_1"}, "pins": []})

    def _reply(self, status: int, data: Any, headers: Optional[dict] = None) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

    def log_message(self, *args: Any) -> None:
        pass


class RetriesAndKeys(unittest.TestCase):
    def setUp(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        Recorder.seen = []
        url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.hark = Hark(url, "t")
        self.hark.http.base_delay = 0.02

    def tearDown(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def test_one_key_per_write_kept_across_retries(self) -> None:
        Recorder.fail_next = 2
        self.hark.send("one")
        keys = [k for _, k, _ in Recorder.seen]
        self.assertEqual(len(keys), 3)
        self.assertRegex(keys[0] or "", r"^[0-9a-f-]{36}$")
        self.assertEqual(len(set(keys)), 1)
        self.assertEqual(len({b for _, _, b in Recorder.seen}), 1)
        Recorder.seen = []
        self.hark.send("two")
        self.hark.pins()
        self.assertNotEqual(Recorder.seen[0][1], keys[0])
        self.assertEqual(Recorder.seen[1][:2], ("GET", None))

    def test_429_waits_for_retry_after(self) -> None:
        Recorder.limit_next = 1
        t0 = time.monotonic()
        self.hark.send("x")
        self.assertGreaterEqual(time.monotonic() - t0, 0.9)
        self.assertEqual(len(Recorder.seen), 2)
        self.assertEqual(Recorder.seen[0][1], Recorder.seen[1][1])

    def test_gives_up_after_its_attempts(self) -> None:
        Recorder.fail_next = 10
        with self.assertRaises(HarkError) as e:
            self.hark.send("x")
        self.assertEqual(e.exception.status, 503)
        self.assertEqual(len(Recorder.seen), 4)

    def test_network_error(self) -> None:
        h = Hark("http://127.0.0.1:9", "t", attempts=2)
        h.http.base_delay = 0.01
        with self.assertRaises(HarkError) as e:
            h.send("x")
        self.assertEqual((e.exception.kind, e.exception.status), ("network", 0))


if __name__ == "__main__":
    unittest.main()
