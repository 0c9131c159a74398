"""Shutdown ends every open stream in its own dialect: when the grace period
is over, a Responses stream ends with `response.failed` saying why, a Chat
stream with its error chunk (the frame a Chat stream fails with, so a
client tells it from one that ended well) and then `[DONE]` (so a client
reading lines until `[DONE]` stops), a WebSocket connection with close
code 1001, each keeping what was already said, and the log tells shutdown
from a client that went away. A second signal ends the process at once."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading

import httpx
import pytest

import harness
import probe

GRACE = 1
# About 60 words, one chunk each, 200 ms apart: far longer than the grace.
SLOW = "demo:slow 200 " + " ".join(f"word{i}" for i in range(60))
STREAMS = 6


def read_stream(url: str, body: dict, into: dict, key: int) -> None:
    """Reads one SSE stream to its end: its data payloads, in order, in
    `into[key]` as they arrive."""
    payloads = into[key] = []
    try:
        with httpx.stream("POST", url, json=body, timeout=30,
                          headers={"authorization": "Bearer sk-shutdown"}) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    payloads.append(line[6:])
    except httpx.HTTPError as e:
        payloads.append(f"transport error: {e}")


def start_streams(url: str, body: dict) -> tuple[list[threading.Thread], dict]:
    results: dict = {}
    threads = [threading.Thread(target=read_stream, args=(url, body, results, n)) for n in range(STREAMS)]
    for thread in threads:
        thread.start()
    return threads, results


def said_something(payload: str) -> bool:
    """Whether a data payload carries text: a Responses text delta, or a
    Chat chunk with content."""
    try:
        event = json.loads(payload)
    except ValueError:
        return False
    if event.get("type") == "response.output_text.delta":
        return bool(event.get("delta"))
    return any((choice.get("delta") or {}).get("content") for choice in event.get("choices") or [])


def terminate_when_streaming(chain: harness.Chain, results: dict) -> None:
    """SIGTERM once every stream has said something: there is something to
    keep."""
    def streaming() -> bool:
        streams = list(results.values())
        return len(streams) == STREAMS and all(any(map(said_something, list(s))) for s in streams)

    assert probe.eventually(streaming), "the streams never all said something"
    chain.bridge.proc.send_signal(signal.SIGTERM)


def plain_log(chain: harness.Chain) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", chain.bridge.log())


def finish(chain: harness.Chain, threads: list[threading.Thread]) -> tuple[int, str]:
    for thread in threads:
        thread.join(20)
    code = chain.bridge.proc.wait(15)
    chain.stop()
    return code, plain_log(chain)


def test_responses_streams_end_with_response_failed(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "shutdown-responses", "chat",
                                extra=["--shutdown-grace-secs", str(GRACE)])
    threads, results = start_streams(chain.base_url + "/responses",
                                     {"model": "demo", "input": SLOW, "stream": True})
    terminate_when_streaming(chain, results)
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


def test_chat_streams_end_with_an_error_chunk_and_done(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "shutdown-chat", "responses",
                                extra=["--shutdown-grace-secs", str(GRACE)])
    threads, results = start_streams(chain.base_url + "/chat/completions",
                                     {"model": "demo", "stream": True,
                                      "messages": [{"role": "user", "content": SLOW}]})
    terminate_when_streaming(chain, results)
    code, log = finish(chain, threads)
    assert code == 0, log[-3000:]
    for payloads in results.values():
        assert payloads[-1] == "[DONE]", payloads[-3:]
        assert payloads.count("[DONE]") == 1, payloads[-3:]
        error = json.loads(payloads[-2])
        assert error["error"]["message"] == "the server is shutting down", payloads[-2]
        said = "".join(c["choices"][0]["delta"].get("content") or ""
                       for c in map(json.loads, payloads[:-2]) if c.get("choices"))
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
    threads, results = start_streams(chain.base_url + "/responses",
                                     {"model": "demo", "input": SLOW, "stream": True})
    terminate_when_streaming(chain, results)
    # The first signal taken, the second: the process ends, long before the
    # 60 s of grace are over.
    assert probe.eventually(lambda: "shutting down" in plain_log(chain)), "the first signal was not taken"
    chain.bridge.proc.send_signal(signal.SIGTERM)
    try:
        code = chain.bridge.proc.wait(probe.DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {probe.DEADLINE:.0f}s after a second signal")
    assert code == 1
    for thread in threads:
        thread.join(20)
    chain.stop()
    assert "a second signal: exiting at once" in "".join(
        line.decode() for line in chain.bridge.output) + chain.bridge.log()
