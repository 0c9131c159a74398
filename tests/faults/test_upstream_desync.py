"""An upstream that desynchronises its kept-alive connections: after some of
its answers it writes a second one nobody asked for, carrying the same text.
HTTP/1.1 ties an answer to its request by order alone, so a bridge that took
such a connection for its next request would hand that request the stray
answer: one client's reply in another client's hands. The bridge closes any
connection holding bytes nobody asked for, and never reuses it.

The stray answer goes out in the same write as the real one, so it is on the
connection before the bridge can have finished reading the real one: a
bridge that looks before each reuse catches every one, however loaded the
machine, and the test needs no timing. (A stray answer written later, once
the bridge may have sent the next request down the connection, cannot be
told from that request's answer by any HTTP/1.1 client: order is all that
ties them. Upstream connections are therefore never shared between two
clients' credentials: such a late stray can reach only the client whose
connection it was, which the second test shows, over plain HTTP and over
TLS.)"""

from __future__ import annotations

import http.client
import itertools
import json
import re
import secrets
import threading
from urllib.parse import urlsplit

import pytest

import upstreams
from redis_servers import Certificates
from tls_front import TlsFront

TENANTS = 16
REQUESTS = 1000
# Every third answer is followed by a stray one.
STRAY_EVERY = 3
MARKER = re.compile(r"marker-\d\d-\d{4}-[0-9a-f]{8}")


def answer(text: str, extra: dict[str, str] | None = None) -> bytes:
    body = upstreams.completion(text)
    lines = ["HTTP/1.1 200 OK", "content-type: application/json", f"content-length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def prompt(body: bytes) -> str:
    """The text of the last message of the Chat request the bridge sent."""
    return json.loads(body)["messages"][-1]["content"]


class Desync:
    """Echoes each request's prompt; every STRAY_EVERY-th answer is followed,
    in the same write (or, `late`, 2 ms after it), by a second answer nobody
    asked for. Notes which tenant (bearer key) sent which marker."""

    def __init__(self, late: bool = False) -> None:
        self.late = late
        self.count = itertools.count(1)
        self.strays = 0
        self.seen: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.upstream = upstreams.KeptAlive(self.script)
        self.url = self.upstream.url

    def script(self, headers: dict[str, str], body: bytes) -> bytes:
        text = prompt(body)
        with self.lock:
            n = next(self.count)
            self.seen.append((headers.get("authorization", ""), text))
        reply = answer(text)
        if n % STRAY_EVERY == 0:
            with self.lock:
                self.strays += 1
            if self.late:
                return reply, answer(text), 0.002
            reply += answer(text)
        return reply

    def close(self) -> None:
        self.upstream.close()


def tenant_key(tenant: int) -> str:
    return f"sk-tenant-{tenant:02d}"


def run_tenant(bridge, tenant: int, count: int, replies: list, errors: list) -> None:
    """Sends `count` requests on one kept-alive connection, opening a new
    one after a connection error (noted in `errors`)."""
    url = urlsplit(bridge.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        for n in range(count):
            marker = f"marker-{tenant:02d}-{n:04d}-{secrets.token_hex(4)}"
            if n % 2:
                path, body = "/responses", {"model": "m", "input": marker}
            else:
                path, body = "/chat/completions", {"model": "m", "messages": [{"role": "user", "content": marker}]}
            try:
                conn.request("POST", "/v1" + path, body=json.dumps(body).encode(),
                             headers={"content-type": "application/json",
                                      "authorization": f"Bearer {tenant_key(tenant)}"})
                response = conn.getresponse()
                replies.append((marker, response.status, response.read().decode(errors="replace")))
            except (OSError, http.client.HTTPException) as e:
                errors.append(f"tenant {tenant}: {e!r}")
                conn.close()
                conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    finally:
        conn.close()


def run_tenants(bridge, requests: int = REQUESTS) -> tuple[list[tuple[str, int, str]], list[str]]:
    replies: list[tuple[str, int, str]] = []
    errors: list[str] = []
    counts = [requests // TENANTS + (1 if t < requests % TENANTS else 0) for t in range(TENANTS)]
    threads = [threading.Thread(target=run_tenant, args=(bridge, t, counts[t], replies, errors))
               for t in range(TENANTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return replies, errors


@pytest.mark.timeout(180)
def test_stray_answers_never_reach_another_request(chain):
    upstream = Desync()
    bridge = chain(static=upstream)
    replies, errors = run_tenants(bridge)

    assert not errors, errors
    assert len(replies) == REQUESTS
    crossed = [(marker, found) for marker, _, text in replies
               for found in MARKER.findall(text) if found != marker]
    assert not crossed, f"{len(crossed)} replies carried another request's marker: {crossed[:5]}"
    failed = [(marker, status, text[:200]) for marker, status, text in replies
              if status != 200 or marker not in text]
    assert not failed, f"{len(failed)} requests failed: {failed[:5]}"
    # Each request reached the upstream once, with its own tenant's key.
    assert len(upstream.seen) == REQUESTS
    for authorization, marker in upstream.seen:
        assert authorization == f"Bearer {tenant_key(int(marker[7:9]))}", (authorization, marker)
    # Every stray answer cost its connection: none carried another request.
    assert upstream.strays >= REQUESTS // STRAY_EVERY - 1
    assert upstream.upstream.connections > upstream.strays, (upstream.upstream.connections, upstream.strays)


@pytest.mark.timeout(180)
def test_a_late_stray_answer_never_reaches_another_tenant(chain):
    """Written once the connection may carry the next request, a stray
    answer is that request's as far as HTTP/1.1 can tell; but the next
    request down that connection is always the same tenant's. (Such an
    upstream can also cut the client's connection after an answer: hyper
    fails the exchange whose connection read the unasked bytes.)"""
    upstream = Desync(late=True)
    bridge = chain(static=upstream)
    replies, errors = run_tenants(bridge)
    # A client connection may be cut when its upstream answer is followed
    # by bytes nobody asked for: an error, never another tenant's text.
    assert len(replies) + len(errors) == REQUESTS
    assert len(replies) > REQUESTS // 2, errors[:5]
    tenant = lambda marker: marker[7:9]  # noqa: E731
    across = [(marker, found) for marker, _, text in replies
              for found in MARKER.findall(text) if tenant(found) != tenant(marker)]
    assert not across, f"{len(across)} replies carried another tenant's marker: {across[:5]}"
    assert upstream.strays >= len(upstream.seen) // STRAY_EVERY - 1 > 100


class TlsDesync:
    """The desynchronising upstream behind a TLS front: each TLS connection
    the bridge opens is relayed to a connection of its own to the upstream,
    stray answers included."""

    def __init__(self) -> None:
        self.certs = Certificates()
        self.upstream = Desync(late=True)
        self.front = TlsFront(self.certs, self.upstream.url)
        self.url = f"https://127.0.0.1:{self.front.port}"

    def close(self) -> None:
        self.front.close()
        self.upstream.close()
        self.certs.remove()


# Fewer than over plain HTTP: the front relays every byte through Python.
TLS_REQUESTS = 240


@pytest.mark.timeout(180)
def test_a_late_stray_answer_never_reaches_another_tenant_over_tls(chain):
    """The same over an `https://` upstream: its connections are kept apart
    by credential just as plain ones are."""
    upstream = TlsDesync()
    bridge = chain("--upstream-ca-file", upstream.certs.path("ca.crt"), static=upstream)
    replies, errors = run_tenants(bridge, TLS_REQUESTS)
    assert len(replies) + len(errors) == TLS_REQUESTS
    assert len(replies) > TLS_REQUESTS // 2, errors[:5]
    tenant = lambda marker: marker[7:9]  # noqa: E731
    across = [(marker, found) for marker, _, text in replies
              for found in MARKER.findall(text) if tenant(found) != tenant(marker)]
    assert not across, f"{len(across)} of {len(replies)} replies carried another tenant's marker: {across[:5]}"
    seen = upstream.upstream.seen
    assert upstream.upstream.strays >= len(seen) // STRAY_EVERY - 1 > 40
    assert upstream.front.connections > 0


@pytest.mark.parametrize("path, body", [
    ("/responses", {"model": "m", "input": "hi"}),
    ("/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
])
def test_an_answer_framed_both_by_length_and_chunks_is_a_502_and_its_connection_is_closed(chain, path, body):
    # The first answer's chunks end early; what its length covers beyond
    # them reads as another answer.
    smuggled = answer("smuggled")
    first = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n"
             + f"content-length: {5 + len(smuggled)}\r\n\r\n".encode() + b"0\r\n\r\n" + smuggled)
    answers = iter([first])

    def script(headers, request):
        return next(answers, None) or answer(prompt(request))

    upstream = upstreams.KeptAlive(script)
    bridge = chain(static=upstream)
    url = urlsplit(bridge.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request("POST", "/v1" + path, body=json.dumps(body).encode(),
                     headers={"content-type": "application/json", "authorization": "Bearer k"})
        response = conn.getresponse()
        text = response.read().decode()
        assert response.status == 502, text
        error = json.loads(text)["error"]
        assert error["code"] == "bad_upstream_response", error
        assert error["type"] == "server_error"
        assert "smuggled" not in text
        # The next request goes on a new connection and gets its own answer.
        next_body = {"model": "m", "messages": [{"role": "user", "content": "the next one"}]}
        conn.request("POST", "/v1/chat/completions", body=json.dumps(next_body).encode(),
                     headers={"content-type": "application/json", "authorization": "Bearer k"})
        response = conn.getresponse()
        text = response.read().decode()
        assert response.status == 200, text
        assert json.loads(text)["choices"][0]["message"]["content"] == "the next one"
        assert "smuggled" not in text
    finally:
        conn.close()
    assert upstream.connections == 2
