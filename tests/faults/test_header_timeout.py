"""Slowloris: connections that send part of a request head and then
nothing are closed after the header-read timeout, while real clients are
served; on a kept-alive connection the next request's head is timed from
its first bytes, not from the end of the last response."""

from __future__ import annotations

import time

import harness
import probe

# Wide enough that opening 300 sockets and serving a client fit well inside
# it on a slow, shared machine.
HEADER_TIMEOUT = 3.0


def test_300_half_sent_heads_are_closed_while_real_clients_are_served(chain):
    bridge = chain("--header-read-timeout", f"{HEADER_TIMEOUT}s")
    pid, port = bridge.bridge.proc.pid, probe.address(bridge)[1]
    opened = time.monotonic()
    sockets = [probe.half_head(bridge) for _ in range(300)]
    try:
        # All held at once, looked at before the first is due to close.
        before_due = opened + HEADER_TIMEOUT * 0.8 - time.monotonic()
        assert before_due > 0, "opening the sockets took most of the timeout"
        assert probe.eventually(lambda: probe.accepted_connections(pid, port) >= 300, before_due), \
            "the half-sent heads were not all accepted"
        # A real client, served at once beside them.
        started = time.monotonic()
        with harness.client(bridge, timeout=5) as client:
            response = client.responses.create(model="demo", input="hello")
        assert response.status == "completed" and "hello" in response.output_text
        assert time.monotonic() - started < HEADER_TIMEOUT / 2, "the real client waited"

        closed = probe.wait_closed(sockets, HEADER_TIMEOUT + 3)
        assert len(closed) == 300, f"{300 - len(closed)} connections still open"
        first, last = min(closed.values()) - opened, max(closed.values()) - opened
        assert first >= HEADER_TIMEOUT * 0.9, f"closed after {first:.2f}s, before the timeout"
        assert last <= HEADER_TIMEOUT + 2, f"the last closed after {last:.2f}s"
        assert probe.eventually(lambda: probe.accepted_connections(pid, port) == 0)
    finally:
        probe.close_all(sockets)


def test_the_next_head_on_a_kept_alive_connection_is_timed_from_its_first_bytes(chain):
    bridge = chain("--header-read-timeout", "500ms", "--idle-timeout", "5s")
    s = probe.connect(bridge)
    try:
        probe.request(s, "GET", "/healthz")
        assert probe.read_response(s).status == 200
        # Idle for longer than the header timeout: still open, and serving.
        time.sleep(1.0)
        assert not probe.closed(s)
        probe.request(s, "GET", "/healthz")
        assert probe.read_response(s).status == 200
        # A third head, started and never finished.
        s.sendall(b"GET /healthz HTTP/1.1\r\nHo")
        started = time.monotonic()
        assert probe.wait_closed([s], 4.0), "the half-sent head was never cut"
        took = time.monotonic() - started
        assert 0.4 <= took <= 2.0, f"closed after {took:.2f}s (header timeout 0.5s, idle 5s)"
    finally:
        s.close()
