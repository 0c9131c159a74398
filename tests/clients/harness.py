"""What the real-client conformance suite runs: the `wirebridge` binary as a
process, loopback taps that record what the bridge sends its upstream, a
static upstream for recorded HTTP error bodies, and SSE parsing shared with
the schema validator."""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
# The Node clients: their scripts, the package.json pinning them and their
# node_modules. `$WIREBRIDGE_NODE_DIR` names another such folder (one with
# other versions installed: scripts/clients_newest.sh).
NODE_DIR = Path(os.environ.get("WIREBRIDGE_NODE_DIR", REPO / "tests" / "clients" / "node"))


def node_pin(package: str) -> str:
    """The version of a Node client that NODE_DIR's package.json pins."""
    return json.loads((NODE_DIR / "package.json").read_text())["dependencies"][package]
sys.path.insert(0, str(REPO / "tests" / "schema"))

import validate  # noqa: E402  (tests/schema/validate.py)

STARTUP_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


def shared_dir() -> Path:
    """`$WIREBRIDGE_SHARED_DIR`, else the `shared` directory beside the repository."""
    env = os.environ.get("WIREBRIDGE_SHARED_DIR")
    return Path(env) if env else REPO.parent / "shared"


FIXTURES = shared_dir() / "fixtures"
# The project's own recordings of real servers (see tests/recorded/README.md).
RECORDED = REPO / "tests" / "recorded"


def recorded_answers(pattern: str) -> list[Path]:
    """The recorded answers of every server in RECORDED matching `pattern`
    (`chat-stream-*.sse`, say), without the requests recorded beside them."""
    return sorted(p for p in RECORDED.glob("*/" + pattern) if not p.name.endswith(".request.json"))


def binary() -> Path:
    """`$WIREBRIDGE_BIN`, else the debug build of `wirebridge-cli`."""
    env = os.environ.get("WIREBRIDGE_BIN")
    if env:
        return Path(env).absolute()
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    if not target.is_absolute():
        target = REPO / target
    return target / "debug" / "wirebridge"


# --------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------

_LIVE: set["Process"] = set()
_LIVE_LOCK = threading.Lock()


def _parent_death_signal():
    """On Linux, a child that gets SIGTERM when the test run dies, however it
    dies (the normal path stops every process in the fixtures' teardown)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    pr_set_pdeathsig = 1

    def set_signal():
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)

    return set_signal


_PREEXEC = _parent_death_signal()


class Process:
    """`wirebridge ARGS...`, started on loopback port 0; ready once it has
    printed `listening on http://ADDR`. Its stderr (the log) goes to a file,
    its stdout lines to `output`. `env` adds variables; `preexec` runs in the
    child before the binary (to lower its resource limits, say)."""

    def __init__(self, args: list[str], log_path: Path, env: dict[str, str] | None = None,
                 preexec=None) -> None:
        self.args = args
        self.log_path = log_path
        self.output: list[bytes] = []
        # A caller's `WIREBRIDGE_*` variables would set what the flags leave: keep them out.
        environment = {k: v for k, v in os.environ.items() if not k.startswith("WIREBRIDGE_")}
        environment.update(env or {})
        self._log = open(log_path, "wb")

        def before_exec():
            if _PREEXEC is not None:
                _PREEXEC()
            if preexec is not None:
                preexec()

        self.proc = subprocess.Popen(
            [str(binary()), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=environment,
            preexec_fn=before_exec if _PREEXEC is not None or preexec is not None else None,
        )
        with _LIVE_LOCK:
            _LIVE.add(self)
        lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read_stdout, args=(lines,), daemon=True)
        self._reader.start()
        try:
            first = lines.get(timeout=STARTUP_TIMEOUT).decode("utf-8", "replace")
        except queue.Empty:
            first = ""
        match = re.match(r"listening on (http://\S+)", first)
        if not match:
            self.stop()
            raise RuntimeError(
                f"`wirebridge {' '.join(args)}` did not start: first line {first!r}, "
                f"exit code {self.proc.returncode}, log:\n{self.log()}"
            )
        self.url = match.group(1)

    def _read_stdout(self, lines: queue.Queue) -> None:
        # The first line is the address; anything later is drained so that
        # the process can never block on a full pipe.
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            lines.put(line)
        lines.put(b"")

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL if it has not exited within STOP_TIMEOUT."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(STOP_TIMEOUT)  # it ends at EOF on stdout
        if self.proc.stdout is not None and not self._reader.is_alive():
            self.proc.stdout.close()
        self._log.close()
        with _LIVE_LOCK:
            _LIVE.discard(self)
        return self.proc.returncode


@atexit.register
def _kill_leftovers() -> None:
    with _LIVE_LOCK:
        leftovers = list(_LIVE)
    for process in leftovers:
        if process.proc.poll() is None:
            process.proc.kill()
            process.proc.wait()


def start_demo(log_dir: Path, name: str, api: str, replay: Path | None = None) -> Process:
    args = ["demo", "--listen", "127.0.0.1:0", "--api", api]
    if replay is not None:
        args += ["--replay", str(replay)]
    return Process(args, log_dir / f"{name}.demo.log")


def start_bridge(log_dir: Path, name: str, upstream: str, upstream_api: str, profile: str | None = None,
                 extra: list[str] | None = None, env: dict[str, str] | None = None,
                 preexec=None) -> Process:
    args = ["serve", "--listen", "127.0.0.1:0", "--upstream", upstream, "--upstream-api", upstream_api]
    if profile is not None:
        args += ["--profile", profile]
    return Process(args + (extra or []), log_dir / f"{name}.bridge.log", env, preexec)


# --------------------------------------------------------------------------
# Recording what the bridge sends upstream
# --------------------------------------------------------------------------


@dataclass
class Captured:
    """One HTTP request as the upstream received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


class _RequestParser:
    """Incremental HTTP/1.1 request parser (content-length or chunked bodies)."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, data: bytes) -> list[Captured]:
        self.buffer += data
        out = []
        while True:
            request = self._next()
            if request is None:
                return out
            out.append(request)

    def _next(self) -> Captured | None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = self.buffer[:end].decode("latin-1").split("\r\n")
        method, path, _ = head[0].split(" ", 2)
        headers = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        rest = self.buffer[end + 4 :]
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body, consumed = b"", 0
            while True:
                line_end = rest.find(b"\r\n", consumed)
                if line_end < 0:
                    return None
                size = int(rest[consumed:line_end].split(b";")[0], 16)
                start = line_end + 2
                if size == 0:
                    if len(rest) < start + 2:
                        return None
                    if rest[start : start + 2] == b"\r\n":
                        consumed = start + 2
                    else:  # trailer fields, then a blank line
                        trailer_end = rest.find(b"\r\n\r\n", start)
                        if trailer_end < 0:
                            return None
                        consumed = trailer_end + 4
                    break
                if len(rest) < start + size + 2:
                    return None
                body += rest[start : start + size]
                consumed = start + size + 2
        else:
            length = int(headers.get("content-length", "0"))
            if len(rest) < length:
                return None
            body, consumed = rest[:length], length
        self.buffer = rest[consumed:]
        return Captured(method, path, headers, body)


class Tap:
    """A TCP relay on loopback in front of one upstream. Bytes pass through
    unchanged both ways; when either side closes its connection, the other
    side's is closed too (so an upstream that drops a stream mid-way drops it
    for the bridge as well). Every request is recorded, before it is passed on."""

    def __init__(self, upstream_url: str) -> None:
        target = urlsplit(upstream_url)
        self.target = (target.hostname, target.port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.requests: list[Captured] = []
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _track(self, *sockets: socket.socket) -> None:
        with self._lock:
            self._sockets.update(sockets)

    def _close(self, *sockets: socket.socket) -> None:
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
            with self._lock:
                self._sockets.discard(s)

    def _relay(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.target, timeout=10)
        except OSError:
            self._close(client)
            return
        upstream.settimeout(None)
        self._track(client, upstream)
        threading.Thread(target=self._pump_back, args=(upstream, client), daemon=True).start()
        parser = _RequestParser()
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    break
                for request in parser.feed(data):
                    with self._lock:
                        self.requests.append(request)
                upstream.sendall(data)
        except OSError:
            pass
        finally:
            self._close(client, upstream)

    def _pump_back(self, upstream: socket.socket, client: socket.socket) -> None:
        try:
            while True:
                data = upstream.recv(65536)
                if not data:
                    break
                client.sendall(data)
        except OSError:
            pass
        finally:
            self._close(client, upstream)

    def mark(self) -> int:
        with self._lock:
            return len(self.requests)

    def since(self, mark: int) -> list[Captured]:
        with self._lock:
            return self.requests[mark:]

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        except OSError:
            pass
        self.listener.close()
        with self._lock:
            sockets = list(self._sockets)
        self._close(*sockets)


class StaticUpstream:
    """Answers every POST and GET with one recorded HTTP error body and its
    status, recording the request. (`wirebridge demo --replay` serves files
    with 200.) A GET carrying the `accepts` authorization is answered 200
    with an empty model list instead: a backend that accepts that credential
    alone."""

    def __init__(self, status: int, body: bytes, content_type: str = "application/json",
                 accepts: str | None = None) -> None:
        self.requests: list[Captured] = []
        owner = self
        accepted = json.dumps({"object": "list", "data": []}).encode()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                data = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.requests.append(Captured(self.command, self.path, headers, data))
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):  # noqa: N802 (http.server's naming)
                if accepts is None or self.headers.get("authorization") != accepts:
                    return self.do_POST()
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.requests.append(Captured("GET", self.path, headers, b""))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(accepted)))
                self.end_headers()
                self.wfile.write(accepted)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def mark(self) -> int:
        return len(self.requests)

    def since(self, mark: int) -> list[Captured]:
        return self.requests[mark:]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Chain:
    """bridge → tap → upstream, as one unit a test talks to."""

    name: str
    bridge: Process
    tap: Tap | StaticUpstream
    upstream: Process | None = None
    upstream_url: str = ""

    @property
    def base_url(self) -> str:
        return self.bridge.url + "/v1"

    def stop(self) -> None:
        self.bridge.stop()
        self.tap.close()
        if self.upstream is not None:
            self.upstream.stop()


def stop_checked(chain: Chain) -> None:
    """Stop a chain. The bridge must have stayed up, must not have panicked,
    and must exit 0 on SIGTERM (within STOP_TIMEOUT, open connections
    included)."""
    alive = chain.bridge.alive()
    code = chain.bridge.stop()
    chain.stop()
    log = chain.bridge.log()
    assert alive, f"the bridge exited during the tests (code {code}):\n{log[-4000:]}"
    assert "panicked" not in log, f"the bridge panicked:\n{log[-4000:]}"
    assert code == 0, f"the bridge exited with {code} on SIGTERM:\n{log[-4000:]}"


def start_chain(log_dir: Path, name: str, upstream_api: str, *, replay: Path | None = None,
                static: StaticUpstream | None = None, profile: str | None = None,
                extra: list[str] | None = None, env: dict[str, str] | None = None,
                preexec=None) -> Chain:
    """`wirebridge serve` in front of an upstream that records what it is
    sent: the demo upstream (scripted, or replaying `replay`) behind a tap,
    or a static upstream."""
    upstream = None
    tap: Tap | StaticUpstream
    if static is not None:
        tap, upstream_url = static, static.url
    else:
        upstream = start_demo(log_dir, name, upstream_api, replay)
        upstream_url = upstream.url
        tap = Tap(upstream.url)
    try:
        bridge = start_bridge(log_dir, name, tap.url + "/v1", upstream_api, profile, extra, env, preexec)
    except BaseException:
        if upstream is not None:
            upstream.stop()
        tap.close()
        raise
    return Chain(name, bridge, tap, upstream, upstream_url)


# --------------------------------------------------------------------------
# SSE
# --------------------------------------------------------------------------


def sse_frames(text: str) -> list[tuple[str | None, str]]:
    """(event, data) frames of SSE text (the validator's parser)."""
    return validate.parse_sse(text)


def sse_payloads(text: str) -> list[dict]:
    """The JSON payloads of SSE text, `[DONE]` left out."""
    return [json.loads(data) for _, data in sse_frames(text) if data.strip() != "[DONE]"]


# --------------------------------------------------------------------------
# Clients
# --------------------------------------------------------------------------


def client(chain: Chain, timeout: float = 20.0):
    """The official SDK, pointed at the bridge: no retries (a failure must
    show as it is), bounded waits."""
    import openai

    return openai.OpenAI(
        base_url=chain.base_url,
        api_key="sk-wirebridge-test",
        max_retries=0,
        timeout=openai.Timeout(timeout, connect=5.0),
        # Loopback only: no proxy from the environment.
        http_client=openai.DefaultHttpxClient(trust_env=False),
    )


def async_client(chain: Chain, timeout: float = 20.0):
    """The SDK's asyncio client, set up as `client`."""
    import openai

    return openai.AsyncOpenAI(
        base_url=chain.base_url,
        api_key="sk-wirebridge-test",
        max_retries=0,
        timeout=openai.Timeout(timeout, connect=5.0),
        http_client=openai.DefaultAsyncHttpxClient(trust_env=False),
    )


def anthropic_client(chain: Chain, key: str = "sk-ant-wirebridge", timeout: float = 20.0):
    """The Anthropic SDK pointed at the bridge (its base URL has no `/v1`:
    the SDK adds it), as `key`: no retries, bounded waits, no proxy from the
    environment."""
    import anthropic

    return anthropic.Anthropic(
        base_url=chain.bridge.url,
        api_key=key,
        max_retries=0,
        timeout=timeout,
        http_client=anthropic.DefaultHttpxClient(trust_env=False),
    )


def post_direct(url: str, body: bytes, timeout: float = 20.0) -> tuple[int, str, str]:
    """POST to an upstream directly, bypassing the bridge: (status, content
    type, body). A body cut short (a scripted `demo:cut`) is returned as far
    as it arrived."""
    import http.client
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=body, method="POST", headers={"content-type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only: no proxy
    try:
        with opener.open(request, timeout=timeout) as response:
            try:
                data = response.read()
            except http.client.IncompleteRead as cut:
                data = cut.partial
            return response.status, response.headers.get("content-type", ""), data.decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("content-type", ""), e.read().decode("utf-8")
