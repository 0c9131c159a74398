"""Slowloris: connections that send part of a request head and then
nothing are closed after the header-read timeout, while real clients are
served; on a kept-alive connection the next request's head is timed from
its first bytes, not from the end of the last response."""

from __future__ import annotations

import time

import harness
import probe

# Long enough that opening 300 sockets and serving a client fit well inside
# it on a loaded machine: they take a fraction of a second on an idle one.
HEADER_TIMEOUT = 5.0


def test_300_half_sent_heads_are_closed_while_real_clients_are_served(chain):
    bridge = chain("--header-read-timeout", f"{HEADER_TIMEOUT}s")
    pid, port = bridge.bridge.proc.pid, probe.address(bridge)[1]
    # The real client is made first: loading the SDK alone takes seconds on
    # a loaded machine.
    client = harness.client(bridge, timeout=probe.DEADLINE)
    opened: dict = {}
    sockets = []
    for _ in range(300):
        started = time.monotonic()
        s = probe.half_head(bridge)
        opened[s] = started
        sockets.append(s)
    try:
        # All held at once...
        assert probe.eventually(lambda: probe.accepted_connections(pid, port) >= 300), \
            "the half-sent heads were not all accepted"
        assert not any(probe.closed(s) for s in sockets), "a half-sent head was closed before all were held"
        # ...and a real client served beside them, while they are held.
        with client:
            response = client.responses.create(model="demo", input="hello")
        assert response.status == "completed" and "hello" in response.output_text
        assert not any(probe.closed(s) for s in sockets), "the heads were closed before the real client was served"

        # Each is closed, and none before the timeout from its opening.
        closed = probe.wait_closed(sockets, HEADER_TIMEOUT + probe.DEADLINE)
        assert len(closed) == 300, f"{300 - len(closed)} connections still open"
        early = min(closed[s] - opened[s] for s in sockets)
        assert early >= HEADER_TIMEOUT * 0.9, f"one closed {early:.2f}s after it opened, before the timeout"
        assert probe.eventually(lambda: probe.accepted_connections(pid, port) == 0)
    finally:
        probe.close_all(sockets)


# The header timeout, and an idle timeout far beyond any wait below, so that
# a close seen within the deadline is the header timeout's.
KEPT_HEADER_TIMEOUT = 0.5
KEPT_IDLE_TIMEOUT = 60.0


def test_the_next_head_on_a_kept_alive_connection_is_timed_from_its_first_bytes(chain):
    bridge = chain("--header-read-timeout", f"{KEPT_HEADER_TIMEOUT}s", "--idle-timeout", f"{KEPT_IDLE_TIMEOUT}s")
    s = probe.connect(bridge)
    try:
        probe.request(s, "GET", "/healthz")
        assert probe.read_response(s).status == 200
        # Idle for longer than the header timeout: still open, and serving.
        time.sleep(KEPT_HEADER_TIMEOUT * 2)
        assert not probe.closed(s), "closed while idle, at the header timeout"
        probe.request(s, "GET", "/healthz")
        assert probe.read_response(s).status == 200
        # A third head, started and never finished: cut, at the header
        # timeout and not before (timed from before its first bytes left).
        started = time.monotonic()
        s.sendall(b"GET /healthz HTTP/1.1\r\nHo")
        assert probe.wait_closed([s]), "the half-sent head was never cut"
        took = time.monotonic() - started
        assert took >= KEPT_HEADER_TIMEOUT * 0.9, f"closed after {took:.2f}s, before the header timeout"
    finally:
        s.close()
