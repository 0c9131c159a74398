"""What an open translated stream costs the bridge in memory: many streams
held open at once by an upstream that stalls after its first chunk, the
bridge's resident memory read from /proc before and after they opened.
A deployment sizes its memory by this figure times the streams it keeps
open, so it has a bound."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import upstreams

# Streams held open at once, and the most each may add to the bridge's
# resident memory: the translator's state, the connections' buffers on both
# sides, the exchange's future and body. The aim is 40 KB; an open stream
# measures 40.0-40.2 KB with the binary's allocator (mimalloc; 42 KB with
# glibc's), 32 KB of it the read and write buffers hyper starts each of its
# two connections with (8 KB each). The bound catches a return to the
# 44-45 KB the bridge held before.
STREAMS = 400
LIMIT_KB = 44


def resident_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


def open_stream(address: tuple[str, int]) -> socket.socket:
    """A translated stream, read until its first text delta arrived."""
    body = json.dumps({"model": "m", "input": "hi", "stream": True}).encode()
    sock = socket.create_connection(address, timeout=10)
    sock.sendall(
        b"POST /v1/responses HTTP/1.1\r\nhost: bridge\r\ncontent-type: application/json\r\n"
        + f"content-length: {len(body)}\r\n\r\n".encode() + body)
    seen = b""
    while b"response.output_text.delta" not in seen:
        piece = sock.recv(65536)
        assert piece, f"the stream ended early: {seen!r}"
        seen += piece
    return sock


def test_an_open_translated_stream_holds_under_44_kb(chain):
    def stall(reply, _):
        reply.head()
        reply.send(upstreams.chunk({**upstreams.ROLE}) + upstreams.chunk({"content": "Half an"}))
        reply.hang()

    upstream = upstreams.Upstream(stall)
    bridge = chain("--upstream-idle-timeout", "60s", static=upstream)
    url = urlsplit(bridge.base_url)
    address = (url.hostname, url.port)
    pid = bridge.bridge.proc.pid
    # Warm up: the runtime's threads, the allocator's arenas, the pools.
    for sock in [open_stream(address) for _ in range(40)]:
        sock.close()
    time.sleep(0.5)
    before = resident_kb(pid)
    held = [open_stream(address) for _ in range(STREAMS)]
    after = resident_kb(pid)
    per_stream = (after - before) / STREAMS
    print(f"{STREAMS} open streams: {before} KB -> {after} KB, {per_stream:.1f} KB each")
    for sock in held:
        sock.close()
    upstream.close()
    assert per_stream <= LIMIT_KB, f"{per_stream:.1f} KB per open stream"
