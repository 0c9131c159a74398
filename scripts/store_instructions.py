#!/usr/bin/env python3
"""What keeping a turn in the default memory store costs the proxy, in
instructions: `wirebridge serve` under callgrind in front of the demo
upstream's Chat API, once with the default store and once with
`--store none`, each sent the same Responses requests on one kept-alive
connection with a credential. Instruction counts do not depend on what else
the machine is doing, so the two runs compare on a busy machine too.

    WIREBRIDGE_BIN=target/release/wirebridge python3 scripts/store_instructions.py

Requests: `small` (a one-line question) and `codex_3k` (the ~3 KB Codex
turn of the proxy bench's `request_3k` cases, built the same way from the
recorded Codex request in ../shared/fixtures). Needs valgrind.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODEX_REQUEST = "codex-peer/codex-exec-0.169.0-request-2-with-function_call_output.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(port: int, deadline: float = 120.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"nothing answered on port {port} within {deadline:.0f} s")


def first_text(item: dict) -> str:
    try:
        return item["content"][0]["text"]
    except (KeyError, IndexError, TypeError):
        return ""


def truncate(text: str, limit: int) -> str:
    """The bench's cut, in bytes at a line end (the texts here are ASCII)."""
    if len(text.encode()) <= limit:
        return text
    cut = text.encode()[:limit].decode(errors="ignore")
    return cut[: cut.rfind("\n")] if "\n" in cut else cut


def codex_3k(shared: Path) -> dict:
    """The bench's `small_request` of the recorded Codex request."""
    recorded = json.loads((shared / "fixtures" / CODEX_REQUEST).read_text())
    body = recorded.get("body", recorded)
    kept = []
    for n, item in enumerate(body.get("input", [])):
        item = json.loads(json.dumps(item))
        if n == 0:
            item["content"][0]["text"] = truncate(first_text(item), 900)
        elif first_text(item).startswith("<skills_instructions>"):
            continue
        kept.append(item)
    request = dict(body)
    request["input"] = kept
    request["tools"] = [
        t for t in body.get("tools", [])
        if t.get("name") in ("write_stdin", "view_image") or t.get("type") == "web_search"
    ]
    request.pop("client_metadata", None)
    request["stream"] = False
    request.pop("store", None)
    return request


def send(port: int, body: bytes, count: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-instructions"}
    for _ in range(count):
        conn.request("POST", "/v1/responses", body, headers)
        response = conn.getresponse()
        text = response.read()
        if response.status != 200:
            raise SystemExit(f"the proxy answered {response.status}: {text[:300]!r}")
    conn.close()


def instructions(binary: str, upstream: str, extra: list[str], body: bytes, count: int) -> float:
    """Instructions a request, over `count` requests after a warm-up."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        proxy = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             binary, "serve", "--listen", f"127.0.0.1:{port}", "--upstream", upstream,
             "--workers", "1", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": "warn"},
        )
        try:
            wait_healthy(port)
            send(port, body, 50)
            subprocess.run(["callgrind_control", "-z", str(proxy.pid)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            send(port, body, count)
            subprocess.run(["callgrind_control", "-d", str(proxy.pid)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            proxy.terminate()
            proxy.wait(timeout=60)
        dumps = sorted(Path(tmp).glob("callgrind.out.*"))
        text = dumps[0].read_text()
    totals = re.search(r"^summary:\s*(\d+)", text, re.MULTILINE) or re.search(
        r"^totals:\s*(\d+)", text, re.MULTILINE)
    return int(totals.group(1)) / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    binary = os.environ.get("WIREBRIDGE_BIN", str(ROOT / "target/release/wirebridge"))
    demo_port = free_port()
    demo = subprocess.Popen([binary, "demo", "--listen", f"127.0.0.1:{demo_port}", "--api", "chat"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(demo_port)
        upstream = f"http://127.0.0.1:{demo_port}/v1"
        bodies = {
            "small": {"model": "m", "input": "Say hello in one short sentence.", "stream": False},
            "codex_3k": codex_3k(args.shared),
        }
        print(f"{'request':<10} {'bytes':>6} {'--store none':>14} {'memory store':>14} {'ratio':>7}")
        for name, body in bodies.items():
            raw = json.dumps(body).encode()
            none = instructions(binary, upstream, ["--store", "none"], raw, args.requests)
            kept = instructions(binary, upstream, [], raw, args.requests)
            print(f"{name:<10} {len(raw):>6} {none / 1000:>12.1f} K {kept / 1000:>12.1f} K "
                  f"{kept / none:>6.3f}x")
    finally:
        demo.terminate()
        demo.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
