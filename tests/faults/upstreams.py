"""Upstreams that misbehave on purpose: silent, stalling, dripping, chatty
with comments, redirecting, oversized, desynchronising. Each is a loopback
HTTP/1.1 server whose every POST runs one script; `url` and `close()` as the
harness's static upstreams have them.

A script that must stay quiet, or keep talking, until the client has seen
something waits for that (`Reply.wait`) rather than for a fixed time, which
a loaded machine may stretch past a timeout or cut short of an event (see
"How a test waits" in conftest.py)."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Callable

# A Chat stream's frames.
ROLE = {"role": "assistant", "content": ""}


def chunk(delta: dict, finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-fault",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def text_stream(text: str) -> list[bytes]:
    return [chunk({**ROLE}), chunk({"content": text}), chunk({}, "stop"), b"data: [DONE]\n\n"]


def completion(text: str) -> bytes:
    return json.dumps({
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }).encode()


class Reply:
    """What a script writes: the head, then body pieces with pauses."""

    def __init__(self, conn: socket.socket, stop: threading.Event) -> None:
        self.conn = conn
        self.stop = stop

    def head(self, status: str = "200 OK", content_type: str = "text/event-stream",
             extra: dict[str, str] | None = None, length: int | None = None) -> None:
        lines = [f"HTTP/1.1 {status}", f"content-type: {content_type}"]
        # Without a length the body ends when the connection closes. With
        # one it is closed all the same (one request a connection), and
        # says so: a client that took it for kept alive could send its next
        # request into a connection already closing, and see it reset.
        if length is not None:
            lines.append(f"content-length: {length}")
        lines.append("connection: close")
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        self.conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())

    def send(self, data: bytes) -> None:
        self.conn.sendall(data)

    def pause(self, seconds: float) -> bool:
        """Waits; False once the server is closing (the script should end)."""
        return not self.stop.wait(seconds)

    def wait(self, event: threading.Event, timeout: float) -> bool:
        """Waits until `event` is set (by the test, on what its client
        saw): False if the server closes first or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while not event.wait(0.02):
            if self.stop.is_set() or time.monotonic() > deadline:
                return False
        return True

    def hang(self) -> None:
        """Sends nothing more until the server closes or the bridge hangs up."""
        while not self.stop.is_set():
            try:
                self.conn.settimeout(0.1)
                if self.conn.recv(1) == b"":
                    return
            except socket.timeout:
                continue
            except OSError:
                return


class Upstream:
    """Runs `script(reply, request_body)` for each POST."""

    def __init__(self, script: Callable[[Reply, bytes], None]) -> None:
        self.script = script
        self.requests: list[bytes] = []
        self.stop = threading.Event()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                head, body = _read_request(conn)
            except OSError:
                return
            if head is None:
                return
            self.requests.append(body)
            try:
                self.script(Reply(conn, self.stop), body)
            except OSError:
                pass  # the bridge hung up: part of the fault

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


def _send_quietly(conn: socket.socket, lock: threading.Lock, data: bytes) -> None:
    try:
        with lock:
            conn.sendall(data)
    except OSError:
        pass


class KeptAlive:
    """Answers each request on connections it keeps open: `script(headers,
    body)` returns the raw bytes to write back, sent in one write (a whole
    answer, and whatever the script adds after it), or `(now, later,
    delay)`: `later` written `delay` seconds after `now`. Counts the
    connections it accepts."""

    def __init__(self, script: Callable[[dict[str, str], bytes], bytes]) -> None:
        self.script = script
        self.connections = 0
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                self._sockets.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        pending = b""
        writing = threading.Lock()
        try:
            while True:
                head, body, pending = _read_kept_alive(conn, pending)
                if head is None:
                    return
                headers = {}
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    headers[name.strip().lower().decode()] = value.strip().decode()
                out = self.script(headers, body)
                if isinstance(out, tuple):
                    # An answer now, and more bytes a moment later, in a
                    # write of their own (whole: writes never interleave).
                    now, later, delay = out
                    with writing:
                        conn.sendall(now)
                    threading.Timer(delay, _send_quietly, args=(conn, writing, later)).start()
                else:
                    with writing:
                        conn.sendall(out)
        except OSError:
            pass  # the bridge closed it
        finally:
            with self._lock:
                self._sockets.discard(conn)
            conn.close()

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        except OSError:
            pass
        self.listener.close()
        with self._lock:
            sockets = list(self._sockets)
        for conn in sockets:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _read_kept_alive(conn: socket.socket, pending: bytes) -> tuple[bytes | None, bytes, bytes]:
    """One request (head, body) from `pending` and the connection, and what
    was read past it; (None, ...) once the connection has closed."""
    data = pending
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return None, b"", b""
        data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        piece = conn.recv(65536)
        if not piece:
            return None, b"", b""
        rest += piece
    return head, rest[:length], rest[length:]


def _read_request(conn: socket.socket) -> tuple[bytes | None, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return None, b""
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        body += piece
    return head, body
