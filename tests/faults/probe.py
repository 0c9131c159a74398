"""Raw HTTP/1.1 over sockets, as a misbehaving client speaks it, and what
the bridge process holds, read from /proc.

Waits here are for a state, up to a deadline that is only reached when the
state never comes (see "How a test waits" in conftest.py): they return as
soon as it holds, so a generous deadline costs nothing when all is well."""

from __future__ import annotations

import http.client
import json
import os
import re
import selectors
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import harness

# How long a wait for an observable state lasts before it counts as never
# coming: far beyond what any of them takes on an idle machine, so that a
# loaded one reaches it only when something is wrong.
DEADLINE = 10.0


def plain_log(process: harness.Process) -> str:
    """The process's log without the terminal colours of the pretty format."""
    return re.sub(r"\x1b\[[0-9;]*m", "", process.log())


def address(chain: harness.Chain) -> tuple[str, int]:
    url = urlsplit(chain.bridge.url)
    return url.hostname, url.port


def connect(chain: harness.Chain) -> socket.socket:
    return socket.create_connection(address(chain), timeout=DEADLINE)


def half_head(chain: harness.Chain) -> socket.socket:
    """A connection that sends the start of a request head, and no more."""
    s = connect(chain)
    s.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: bridge\r\nContent-Type: appl")
    return s


def closed(s: socket.socket) -> bool:
    """Whether the peer has closed `s` (EOF or reset), without waiting.
    Only for connections the bridge sends nothing more on."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def wait_closed(sockets: list[socket.socket], timeout: float = DEADLINE) -> dict[socket.socket, float]:
    """Waits until the bridge closes each of `sockets` (which it sends no
    more bytes on), at most `timeout`: when each was closed (monotonic), as
    seen here, which is never before the bridge closed it."""
    when: dict[socket.socket, float] = {}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for s in sockets:
            selector.register(s, selectors.EVENT_READ)
        while len(when) < len(sockets):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for key, _ in selector.select(left):
                s = key.fileobj
                if closed(s):
                    when[s] = time.monotonic()
                    selector.unregister(s)
    return when


def close_all(sockets: list[socket.socket]) -> None:
    for s in sockets:
        s.close()


def request(s: socket.socket, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> None:
    """Sends one request, kept alive."""
    lines = [f"{method} {path} HTTP/1.1", "Host: bridge"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))


class Response:
    """One HTTP/1.1 response with a Content-Length body."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


def read_response(s: socket.socket, timeout: float = DEADLINE) -> Response:
    s.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response head: {data!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside a response body")
        rest += chunk
    return Response(status, headers, rest[:length])


def eventually(condition, timeout: float = DEADLINE) -> bool:
    """Whether `condition()` holds within `timeout`, checked every 20 ms."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(f"{fd_dir}/{fd}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def accepted_connections(pid: int, port: int) -> int:
    """Connections the process `pid` holds on its listening `port`: sockets
    of its own whose local port is `port`, the listener left out."""
    inodes = socket_inodes(pid)
    # Counted by inode: while connections churn, the kernel's walk of its
    # socket tables can list one socket twice in a single read.
    held: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            local, state, inode = fields[1], fields[3], fields[9]
            listening = state == "0A"
            if inode in inodes and int(local.rsplit(":", 1)[1], 16) == port and not listening:
                held.add(inode)
    return len(held)


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_seconds(pid: int) -> float:
    """User and system CPU time the process has used."""
    stat = open(f"/proc/{pid}/stat").read()
    fields = stat[stat.rindex(")") + 2:].split()
    # utime and stime: fields 14 and 15 of stat(5), 12 and 13 after the name.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Sampler:
    """Calls `measure` every `every` seconds on a thread, keeping the largest
    value, until stopped."""

    def __init__(self, measure, every: float = 0.02) -> None:
        self.measure, self.every = measure, every
        self.largest = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.largest = max(self.largest, self.measure())
            except OSError:
                pass
            self._stop.wait(self.every)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.largest


def chat_completion(text: str) -> dict:
    return {
        "id": "chatcmpl-slow",
        "object": "chat.completion",
        "created": 1,
        "model": "slow",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class SlowUpstream:
    """A Chat upstream that thinks for `delay` seconds before its first byte,
    recording the headers of each request."""

    def __init__(self, delay: float) -> None:
        self.headers: list[dict[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                self.rfile.read(int(self.headers.get("content-length", 0)))
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                time.sleep(delay)
                body = json.dumps(chat_completion("worth the wait")).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_kb(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM), in KB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM for process {pid}")


def metric(bridge, name: str) -> str:
    """The first line of the bridge's `/metrics` that starts with `name`
    (empty if none does)."""
    url = urlsplit(bridge.bridge.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    return next((line for line in text.splitlines() if line.startswith(name)), "")
