"""Idle keep-alive connections are closed after the idle timeout; a request
in flight never counts as idle, however long its stream lasts or its first
byte takes."""

from __future__ import annotations

import threading
import time

import harness
import probe

IDLE_TIMEOUT = 1.0

# About 15 words, one chunk each, 200 ms apart: a stream of ~3 s, three
# times the idle timeout.
SLOW_STREAM = "demo:slow 200 " + " ".join(f"word{i}" for i in range(10))


def test_an_idle_connection_is_closed_and_a_slow_stream_is_not(chain):
    bridge = chain("--idle-timeout", f"{IDLE_TIMEOUT}s", "--header-read-timeout", "500ms")
    streamed: dict = {}

    def stream():
        started = time.monotonic()
        with harness.client(bridge, timeout=probe.DEADLINE) as client:
            chunks = list(client.chat.completions.create(
                model="demo", stream=True, messages=[{"role": "user", "content": SLOW_STREAM}]))
        streamed["seconds"] = time.monotonic() - started
        streamed["text"] = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        streamed["finish"] = [c.choices[0].finish_reason for c in chunks if c.choices][-1]

    streaming = threading.Thread(target=stream)
    streaming.start()
    idle = probe.connect(bridge)
    try:
        # Timed from before the request: the bridge's idle time starts
        # later, once it has answered.
        sent = time.monotonic()
        probe.request(idle, "GET", "/healthz")
        assert probe.read_response(idle).status == 200
        assert probe.wait_closed([idle]), "the idle connection was never closed"
        took = time.monotonic() - sent
        assert took >= IDLE_TIMEOUT * 0.9, f"closed {took:.2f}s after the request, before the idle timeout"
    finally:
        idle.close()
    streaming.join(probe.DEADLINE * 2)
    assert streamed.get("finish") == "stop", streamed
    assert "word9" in streamed["text"]
    assert streamed["seconds"] > 2 * IDLE_TIMEOUT, streamed


def test_a_slow_first_byte_is_not_idle(chain):
    upstream = probe.SlowUpstream(delay=2.5)
    bridge = chain("--idle-timeout", f"{IDLE_TIMEOUT}s", "--header-read-timeout", "500ms", static=upstream)
    started = time.monotonic()
    with harness.client(bridge, timeout=probe.DEADLINE) as client:
        completion = client.chat.completions.create(model="slow", messages=[{"role": "user", "content": "hi"}])
    assert completion.choices[0].message.content == "worth the wait"
    assert time.monotonic() - started >= 2.5
