#!/usr/bin/env python3
"""The bridge's overhead beside a real model's own time, on one machine.

Starts llama-server (scripts/llama_server.sh's build, Gemma 3 270M) and
`wirebridge serve --profile llama-cpp` in front of it, then alternates, for
ROUNDS rounds, three ways of asking for the same streamed answer:

* direct:      the Chat request the bridge would send, straight to the server;
* passthrough: that Chat request through the bridge (same API, no translation);
* translated:  a Responses request through the bridge, translated to that
               same Chat request and its stream translated back.

Each way gets the same prompt and the same tokens (fixed seed, `max_tokens`,
the server's prompt cache warm), so what differs is the bridge. It prints
the median time to the first text token and to the end of the stream, the
median gap between tokens, and each way's difference from direct.

    .venv/bin/python scripts/live_overhead.py [--rounds 30] [--tokens 64]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "clients"))
sys.path.insert(0, str(REPO / "tests" / "live"))

import harness  # noqa: E402
import llama  # noqa: E402

TEMPLATE = "meta-llama-Llama-3.1-8B-Instruct.jinja"
PROMPT = "Tell me about the sea."


def stream(url: str, path: str, body: dict, text_events: tuple[str, ...]) -> tuple[float, float, int]:
    """POSTs a streaming request; returns (seconds to the first text event,
    seconds to the end, text events seen)."""
    target = urlsplit(url)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
    payload = json.dumps(body).encode()
    start = time.perf_counter()
    connection.request("POST", target.path + path, body=payload,
                       headers={"content-type": "application/json", "authorization": "Bearer sk-bench"})
    answer = connection.getresponse()
    assert answer.status == 200, answer.read()[:500]
    first = None
    count = 0
    buffer = b""
    while True:
        piece = answer.read1(65536)
        if not piece:
            break
        buffer += piece
        while b"\n\n" in buffer:
            frame, buffer = buffer.split(b"\n\n", 1)
            if any(marker.encode() in frame for marker in text_events):
                count += 1
                if first is None:
                    first = time.perf_counter() - start
    end = time.perf_counter() - start
    connection.close()
    assert first is not None, "no text came"
    return first, end, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args()

    logs = Path(tempfile.mkdtemp(prefix="wirebridge-overhead-"))
    server = llama.LlamaServer("overhead", TEMPLATE, logs, predict=args.tokens)
    bridge = harness.start_bridge(logs, "overhead", server.url + "/v1", "chat", "llama-cpp",
                                  env={"RUST_LOG": "warn"})
    try:
        # The Chat request the bridge sends for the Responses one, captured
        # once through a relay, so that "direct" asks exactly the same.
        relay = llama.Relay(server.url)
        capture = harness.start_bridge(logs, "capture", relay.url + "/v1", "chat", "llama-cpp")
        responses_body = {"model": "gemma-3-270m", "input": PROMPT, "max_output_tokens": args.tokens,
                          "stream": True}
        stream(capture.url + "/v1", "/responses", responses_body, ("output_text.delta",))
        chat_body = relay.exchanges[0].wait().json()
        capture.stop()
        relay.close()

        ways = {
            "direct": lambda: stream(server.url + "/v1", "/chat/completions", chat_body, ('"content":"',)),
            "passthrough": lambda: stream(bridge.url + "/v1", "/chat/completions", chat_body,
                                          ('"content":"',)),
            "translated": lambda: stream(bridge.url + "/v1", "/responses", responses_body,
                                         ("output_text.delta",)),
        }
        for way in ways.values():  # warm the prompt cache and the connections
            way()
        results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in ways}
        for _ in range(args.rounds):
            for name, way in ways.items():
                results[name].append(way())

        print(f"{args.rounds} rounds, {args.tokens} tokens each; medians in ms, and the median of each "
              "round's difference from direct")
        print(f"{'':12} {'first token':>12} {'end':>10} {'per token':>10} {'+first':>8} {'+end':>8} "
              f"{'+per token':>11}")

        def gap(sample):
            return (sample[1] - sample[0]) / max(sample[2] - 1, 1)

        direct = results["direct"]
        for name, samples in results.items():
            def median(f, of=samples):
                return statistics.median(f(s) for s in of) * 1000

            def added(f):
                return statistics.median(f(s) - f(d) for s, d in zip(samples, direct)) * 1000

            print(f"{name:12} {median(lambda s: s[0]):12.2f} {median(lambda s: s[1]):10.2f} "
                  f"{median(gap):10.3f} {added(lambda s: s[0]):+8.2f} {added(lambda s: s[1]):+8.2f} "
                  f"{added(gap):+11.3f}")
    finally:
        bridge.stop()
        server.stop()


if __name__ == "__main__":
    main()
