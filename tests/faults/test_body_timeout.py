"""A client that sends a request head and then drips its body gets a 408 in
the OpenAI error shape at the body-read timeout, and its connection is
closed; a body that arrives in time is served."""

from __future__ import annotations

import json
import time

import pytest

import probe

BODY_TIMEOUT = 1.0
# A byte of body every this long: the whole body takes some 8 s, so a 408
# can only come from the timeout.
DRIP_PAUSE = 0.1

PATHS = [
    "/v1/responses",  # translated: the layer reads the body whole
    "/v1/chat/completions",  # passed through: streamed to the upstream
]


def drip(s, chunks: list[bytes], pause: float, until: float) -> probe.Response | None:
    """Sends `chunks` `pause` apart, reading meanwhile: the response, if
    one arrives before `until` (monotonic)."""
    s.setblocking(False)
    received = b""
    for chunk in chunks:
        if time.monotonic() > until:
            break
        try:
            s.sendall(chunk)
        except (BlockingIOError, OSError):
            break
        time.sleep(pause)
        try:
            received += s.recv(65536)
        except BlockingIOError:
            pass
        except OSError:
            break
        if b"\r\n\r\n" in received:
            break
    s.setblocking(True)
    return received


@pytest.mark.parametrize("path", PATHS, ids=["translated", "passed-through"])
def test_a_dripped_body_gets_a_408_and_is_cut_off(chain, path):
    bridge = chain("--body-read-timeout", f"{BODY_TIMEOUT}s")
    body = json.dumps({"model": "demo", "input": "x", "messages": [{"role": "user", "content": "x"}]})
    s = probe.connect(bridge)
    try:
        head = (f"POST {path} HTTP/1.1\r\nHost: bridge\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        # Timed from before the head: the bridge's time starts later, once
        # it has read it.
        sent = time.monotonic()
        s.sendall(head)
        received = drip(s, [bytes([b]) for b in body.encode()], DRIP_PAUSE, sent + probe.DEADLINE)
        took = time.monotonic() - sent
        # A 408 before the body is whole, and not before the timeout.
        assert b"\r\n\r\n" in received, f"no response after {took:.2f}s: {received!r}"
        assert took >= BODY_TIMEOUT * 0.9, f"answered after {took:.2f}s, before the timeout"
        head, _, rest = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), head
        assert b"connection: close" in head.lower(), head
        s.settimeout(probe.DEADLINE)
        while len(rest) < int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0]):
            rest += s.recv(65536)
        error = json.loads(rest)
        assert set(error) == {"error"} and set(error["error"]) == {"message", "type", "param", "code"}, error
        assert error["error"]["code"] == "request_timeout"
        assert error["error"]["type"] == "invalid_request_error"
        assert "1s" in error["error"]["message"]
        assert probe.wait_closed([s]), "the connection stayed open"
    finally:
        s.close()


# Far beyond the pauses below, however late a loaded machine wakes from them.
IN_TIME_TIMEOUT = 10.0


@pytest.mark.parametrize("path", PATHS, ids=["translated", "passed-through"])
def test_a_slow_body_that_arrives_in_time_is_served(chain, path):
    bridge = chain("--body-read-timeout", f"{IN_TIME_TIMEOUT}s")
    body = json.dumps({"model": "demo", "input": "in time", "messages": [{"role": "user", "content": "in time"}]})
    s = probe.connect(bridge)
    try:
        s.sendall((f"POST {path} HTTP/1.1\r\nHost: bridge\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode())
        data = body.encode()
        for i in range(0, len(data), len(data) // 4 + 1):
            time.sleep(0.15)
            s.sendall(data[i:i + len(data) // 4 + 1])
        response = probe.read_response(s)
        assert response.status == 200, response.body
        assert "in time" in response.body.decode()
    finally:
        s.close()
