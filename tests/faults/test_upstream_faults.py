"""Upstreams that do not answer as they should: silent before the head,
stalling or dripping after it, redirecting, answering too much. Each ends in
the client's own failure shape: 504/502 before the first byte, the stream's
failure event after (a pass-through stream is cut, as it cannot be told
apart from its own events)."""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest

import harness
import probe
import upstreams

TIMEOUT = 1.0


@dataclass
class Reply:
    status_code: int
    headers: dict[str, str]
    text: str

    def json(self) -> dict:
        return json.loads(self.text)


def connection(bridge) -> http.client.HTTPConnection:
    url = urlsplit(bridge.base_url)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=10)


def post(bridge, path: str, body: dict | str) -> Reply:
    conn = connection(bridge)
    data = body if isinstance(body, str) else json.dumps(body)
    conn.request("POST", "/v1" + path, body=data.encode(),
                 headers={"content-type": "application/json", "authorization": "Bearer k"})
    response = conn.getresponse()
    reply = Reply(response.status, {k.lower(): v for k, v in response.getheaders()},
                  response.read().decode())
    conn.close()
    return reply


def stream(bridge, path: str, body: dict, seen=None) -> tuple[str, Exception | None]:
    """The text of a streamed reply, and the error that cut it, if any;
    `seen(text)` is called with the text so far as each piece arrives."""
    conn = connection(bridge)
    conn.request("POST", "/v1" + path, body=json.dumps(body).encode(),
                 headers={"content-type": "application/json", "authorization": "Bearer k"})
    response = conn.getresponse()
    assert response.status == 200, response.read()
    text, error = b"", None
    try:
        while piece := response.read1(65536):
            text += piece
            if seen is not None:
                seen(text.decode(errors="replace"))
    except (http.client.HTTPException, OSError) as e:
        error = e
    conn.close()
    return text.decode(errors="replace"), error


def keepalives(text: str) -> int:
    return text.count(": keepalive\n\n")


def events(text: str) -> list[dict]:
    return harness.sse_payloads(text)


@pytest.mark.parametrize("path, body", [
    ("/responses", {"model": "m", "input": "hi"}),
    ("/responses", {"model": "m", "input": "hi", "stream": True}),
    ("/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
])
def test_an_upstream_that_never_answers_is_a_504(chain, path, body):
    silent = upstreams.Upstream(lambda reply, _: reply.hang())
    bridge = chain("--upstream-first-byte-timeout", f"{TIMEOUT}s", static=silent)
    started = time.monotonic()
    response = post(bridge, path, body)
    took = time.monotonic() - started
    # Answered (within the client's own timeout), by the first-byte
    # timeout, and not before it.
    assert response.status_code == 504, response.text
    error = response.json()["error"]
    assert error["code"] == "upstream_timeout"
    assert error["type"] == "server_error"
    assert took >= TIMEOUT * 0.9, f"answered after {took:.2f}s, before the timeout"


def test_a_stream_that_stalls_ends_in_its_failure_event_keeping_what_was_said(chain):
    def stall(reply, _):
        reply.head()
        reply.send(upstreams.chunk({**upstreams.ROLE}) + upstreams.chunk({"content": "Half an"}))
        reply.hang()

    bridge = chain("--upstream-idle-timeout", f"{TIMEOUT}s", static=upstreams.Upstream(stall))
    started = time.monotonic()
    text, error = stream(bridge, "/responses", {"model": "m", "input": "hi", "stream": True})
    took = time.monotonic() - started
    # Ended by the bridge (the client's own timeout would be an error).
    assert error is None, error
    assert took >= TIMEOUT * 0.9, f"ended after {took:.2f}s, before the timeout"
    payloads = events(text)
    assert payloads[-1]["type"] == "response.failed", payloads[-1]
    # The bridge times the stream by events, and the upstream connection by
    # bytes: either may fire first, and says so.
    message = payloads[-1]["response"]["error"]["message"]
    assert "the upstream sent no" in message, message  # "no event" or "nothing"
    done = [p for p in payloads if p["type"] == "response.output_text.done"]
    assert done and done[0]["text"] == "Half an", payloads


# An event that never completes, sent a byte at a time: some 17 s of bytes.
DRIP = b'data: {"id":"chatcmpl-fault","choices":[{"index":0,"delta":{"content":"xxxxxxxxxxxxxxxxx'
DRIP_PAUSE = 0.2


def test_bytes_that_never_complete_an_event_do_not_keep_a_stream_alive(chain):
    def drip(reply, _):
        reply.head()
        reply.send(upstreams.chunk({**upstreams.ROLE}))
        for byte in DRIP:
            if not reply.pause(DRIP_PAUSE):
                return
            reply.send(bytes([byte]))

    bridge = chain("--upstream-idle-timeout", f"{TIMEOUT}s", static=upstreams.Upstream(drip))
    started = time.monotonic()
    text, error = stream(bridge, "/responses", {"model": "m", "input": "hi", "stream": True})
    took = time.monotonic() - started
    # Failed by the idle timeout while the bytes kept coming: before the
    # drip could have ended, however slowly the machine ran it.
    assert error is None, error
    payloads = events(text)
    assert payloads[-1]["type"] == "response.failed"
    message = payloads[-1]["response"]["error"]["message"]
    assert "the upstream sent no event" in message, message
    assert took < len(DRIP) * DRIP_PAUSE, f"the drip kept the stream for {took:.1f}s"


def test_a_pass_through_stream_that_stalls_is_cut(chain):
    def stall(reply, _):
        reply.head()
        reply.send(upstreams.chunk({**upstreams.ROLE}))
        reply.hang()

    bridge = chain("--upstream-idle-timeout", f"{TIMEOUT}s", static=upstreams.Upstream(stall))
    started = time.monotonic()
    text, error = stream(bridge, "/chat/completions",
                         {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    took = time.monotonic() - started
    # Cut by the bridge: not ended cleanly, and not the client's own timeout.
    assert error is not None, f"a stalled pass-through stream ended cleanly: {text!r}"
    assert not isinstance(error, TimeoutError), f"the bridge never cut the stream: {error!r}"
    assert took >= TIMEOUT * 0.9, f"cut after {took:.2f}s, before the timeout"


def test_backend_comments_keep_a_long_prefill_alive_and_reach_the_client(chain):
    # Comments far more often than the idle timeout, so that a slow
    # machine's late wake-ups leave no gap as long as it; they go on until
    # they have lasted twice the timeout and the client has seen three.
    seen, prefilled = threading.Event(), {}

    def prefill(reply, _):
        reply.head()
        started = time.monotonic()
        while time.monotonic() - started < 2 * TIMEOUT or not seen.is_set():
            reply.send(b": PROCESSING\n\n")
            if not reply.pause(0.1) or time.monotonic() - started > probe.DEADLINE:
                return
        prefilled["seconds"] = time.monotonic() - started
        for frame in upstreams.text_stream("Done thinking"):
            reply.send(frame)

    bridge = chain("--upstream-idle-timeout", f"{TIMEOUT}s", "--keepalive-interval", "30s",
                   static=upstreams.Upstream(prefill))
    text, error = stream(bridge, "/responses", {"model": "m", "input": "hi", "stream": True},
                         seen=lambda text: keepalives(text) >= 3 and seen.set())
    assert error is None, error
    # Comments for longer than the idle timeout: they count, and each read
    # of them reaches the client as a keep-alive, before any event.
    assert prefilled.get("seconds", 0) >= 2 * TIMEOUT, (prefilled, text[:300])
    assert keepalives(text) >= 3, text[:300]
    assert text.index(": keepalive") < text.index("event: response.created")
    payloads = events(text)
    assert payloads[-1]["type"] == "response.completed"


KEEPALIVE = 0.5


def test_a_quiet_stream_gets_the_bridges_own_keepalive(chain):
    # The upstream stays quiet until the client has seen two keep-alives.
    seen, waited = threading.Event(), {}

    def quiet(reply, _):
        reply.head()
        waited["seen"] = reply.wait(seen, probe.DEADLINE)
        for frame in upstreams.text_stream("Finally"):
            reply.send(frame)

    bridge = chain("--keepalive-interval", f"{KEEPALIVE * 1000:.0f}ms", static=upstreams.Upstream(quiet))
    started = time.monotonic()
    text, error = stream(bridge, "/responses", {"model": "m", "input": "hi", "stream": True},
                         seen=lambda text: keepalives(text) >= 2 and seen.set())
    took = time.monotonic() - started
    assert error is None, error
    assert waited.get("seen"), f"no two keep-alives in {probe.DEADLINE}s of silence: {text[:300]!r}"
    # Never more often than the interval: no more than the whole exchange,
    # as timed here, holds.
    assert keepalives(text) <= took / KEEPALIVE, f"{keepalives(text)} keep-alives in {took:.2f}s"
    assert events(text)[-1]["type"] == "response.completed"


@pytest.mark.parametrize("path, body", [
    ("/responses", {"model": "m", "input": "hi"}),
    ("/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
])
def test_an_upstream_redirect_is_never_followed_or_passed_on(chain, path, body):
    def redirect(reply, _):
        reply.head("307 Temporary Redirect", "text/plain", {"location": "http://203.0.113.9/steal"}, length=0)

    upstream = upstreams.Upstream(redirect)
    bridge = chain(static=upstream)
    response = post(bridge, path, body)
    assert response.status_code == 502, response.text
    assert response.json()["error"]["code"] == "upstream_redirect"
    assert "location" not in response.headers
    assert "203.0.113.9" not in response.text
    assert len(upstream.requests) == 1


def test_a_reply_over_the_size_limit_is_a_502(chain):
    big = upstreams.completion("x" * 200_000)
    bridge = chain("--max-reply-size", "100000", static=upstreams.Upstream(
        lambda reply, _: (reply.head(content_type="application/json", length=len(big)), reply.send(big))))
    response = post(bridge, "/responses", {"model": "m", "input": "hi"})
    assert response.status_code == 502, response.text
    assert response.json()["error"]["code"] == "upstream_reply_too_large"


def test_pass_through_json_nested_too_deep_never_reaches_the_upstream(chain):
    upstream = upstreams.Upstream(lambda reply, _: reply.head(length=0))
    bridge = chain(static=upstream)
    schema = "[" * 100_000 + "]" * 100_000
    body = ('{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":'
            + schema + "}]}")
    response = post(bridge, "/responses", body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"].startswith("tools[0].parameters[0][0]"), error
    assert "128 levels" in error["message"]
    assert upstream.requests == []
