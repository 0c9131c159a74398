"""Shutdown ends every open stream in its own dialect: when the grace period
is over, a Responses stream ends with `response.failed` saying why, a Chat
stream with its error chunk (the frame a Chat stream fails with, so a
client tells it from one that ended well: no `[DONE]` after it), a WebSocket connection with close
code 1001, each keeping what was already said, and the log tells shutdown
from a client that went away. A second signal ends the process at once."""

from __future__ import annotations

import json
import re
import signal
import threading
import time

import httpx

import harness

GRACE = 1
# About 60 words, one chunk each, 200 ms apart: far longer than the grace.
SLOW = "demo:slow 200 " + " ".join(f"word{i}" for i in range(60))
STREAMS = 6


def read_stream(url: str, body: dict, into: dict, key: int) -> None:
    """Reads one SSE stream to its end: its data payloads, in order."""
    payloads = []
    try:
        with httpx.stream("POST", url, json=body, timeout=30,
                          headers={"authorization": "Bearer sk-shutdown"}) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    payloads.append(line[6:])
    except httpx.HTTPError as e:
        payloads.append(f"transport error: {e}")
    into[key] = payloads


def start_streams(url: str, body: dict) -> tuple[list[threading.Thread], dict]:
    results: dict = {}
    threads = [threading.Thread(target=read_stream, args=(url, body, results, n)) for n in range(STREAMS)]
    for thread in threads:
        thread.start()
    return threads, results


def terminate_when_streaming(chain: harness.Chain, marker: str) -> None:
    """SIGTERM once every stream has sent text (the log shows each exchange
    only at its end, so the upstream tap's count tells they started)."""
    deadline = time.monotonic() + 15
    while len(chain.tap.since(0)) < STREAMS and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # some chunks through: there is something to keep
    chain.bridge.proc.send_signal(signal.SIGTERM)


def finish(chain: harness.Chain, threads: list[threading.Thread]) -> tuple[int, str]:
    for thread in threads:
        thread.join(20)
    code = chain.bridge.proc.wait(15)
    chain.stop()
    return code, re.sub(r"\x1b\[[0-9;]*m", "", chain.bridge.log())


def test_responses_streams_end_with_response_failed(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "shutdown-responses", "chat",
                                extra=["--shutdown-grace-secs", str(GRACE)])
    threads, results = start_streams(chain.base_url + "/responses",
                                     {"model": "demo", "input": SLOW, "stream": True})
    terminate_when_streaming(chain, "responses")
    code, log = finish(chain, threads)
    assert code == 0, log[-3000:]
    assert len(results) == STREAMS
    for payloads in results.values():
        events = [json.loads(p) for p in payloads]
        assert events[-1]["type"] == "response.failed", payloads[-3:]
        assert events[-1]["response"]["error"]["message"] == "the server is shutting down"
        said = "".join(e.get("delta", "") for e in events if e["type"] == "response.output_text.delta")
        assert said, "the stream had said something"
        # What was said is kept, in the failed response.
        kept = events[-1]["response"]["output"][0]["content"][0]["text"]
        assert kept == said
        assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert log.count('outcome="shutdown"') == STREAMS, log[-3000:]
    assert 'outcome="client_closed"' not in log


def test_chat_streams_end_with_an_error_chunk(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "shutdown-chat", "responses",
                                extra=["--shutdown-grace-secs", str(GRACE)])
    threads, results = start_streams(chain.base_url + "/chat/completions",
                                     {"model": "demo", "stream": True,
                                      "messages": [{"role": "user", "content": SLOW}]})
    terminate_when_streaming(chain, "chat")
    code, log = finish(chain, threads)
    assert code == 0, log[-3000:]
    for payloads in results.values():
        assert "[DONE]" not in payloads
        error = json.loads(payloads[-1])
        assert error["error"]["message"] == "the server is shutting down", payloads[-1]
        said = "".join(c["choices"][0]["delta"].get("content") or ""
                       for c in map(json.loads, payloads[:-1]) if c.get("choices"))
        assert said.startswith("You said")
    assert log.count('outcome="shutdown"') == STREAMS, log[-3000:]


def test_a_websocket_is_closed_with_1001(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "shutdown-ws", "chat",
                                extra=["--shutdown-grace-secs", str(GRACE)])
    client = harness.client(chain)
    with client.responses.connect() as connection:
        connection.response.create(model="demo", input=SLOW)
        while json.loads(connection.recv_bytes())["type"] != "response.output_text.delta":
            pass
        chain.bridge.proc.send_signal(signal.SIGTERM)
        events = []
        closed = None
        while closed is None:
            try:
                events.append(json.loads(connection.recv_bytes()))
            except Exception as e:  # the SDK raises on the close frame
                closed = e
        assert events[-1]["type"] == "response.failed", events[-2:]
        assert events[-1]["response"]["error"]["message"] == "the server is shutting down"
    assert "1001" in str(closed) or "going away" in str(closed).lower(), repr(closed)
    code = chain.bridge.proc.wait(15)
    chain.stop()
    assert code == 0


def test_a_second_signal_exits_at_once(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "shutdown-twice", "chat",
                                extra=["--shutdown-grace-secs", "60"])
    threads, _ = start_streams(chain.base_url + "/responses",
                               {"model": "demo", "input": SLOW, "stream": True})
    terminate_when_streaming(chain, "responses")
    time.sleep(0.5)
    started = time.monotonic()
    chain.bridge.proc.send_signal(signal.SIGTERM)
    code = chain.bridge.proc.wait(10)
    assert time.monotonic() - started < 5, "the second signal did not end the process at once"
    assert code == 1
    for thread in threads:
        thread.join(20)
    chain.stop()
    assert "a second signal: exiting at once" in "".join(
        line.decode() for line in chain.bridge.output) + chain.bridge.log()
