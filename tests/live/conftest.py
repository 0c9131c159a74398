"""Fixtures of the live suite: a real model server (llama.cpp's
`llama-server`, Gemma 3 270M) behind the real `wirebridge serve`.

Three servers run, one per chat template, because no template makes this
small base model both write free text and call a tool on demand:

* the *text* server uses Llama 3.1's template: free text, streams, chains,
  tool results in the history;
* the *tool* server uses Functionary v3.2's template, under which a forced
  `tool_choice` makes the server's grammar produce a call at once (with
  arguments valid against the tool's schema); free text fails there
  (llama-server answers 500), so only forced turns are sent to it;
* the *copy* server uses Firefunction v2's template and samples greedily.
  The model copies what its prompt shows, so a prompt that shows it earlier
  turns in the template's own markup makes it call a tool unforced
  (`tool_choice: "auto"`) and answer the call's output. Under this template
  the calls of a turn are one JSON list after `functools`: the server's
  grammar, set off by that word, ends the turn at the list's `]`.

The suite runs unless `WIREBRIDGE_LIVE=0` turns it off, and then every test
says so; a missing build is a failure, never a silent skip.
`WIREBRIDGE_LIVE_RECORD=DIR` writes each exchange the model server answered
to DIR (see tests/recorded/README.md)."""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))

import harness  # noqa: E402  (tests/clients/harness.py)
import llama  # noqa: E402

# Only a backstop against a hang: the bounds that matter are each request's,
# derived from the pace the text server is measured at when it starts (see
# `Pace`). The first test also waits for the servers to start.
TEST_TIMEOUT = 900

TEXT_TEMPLATE = "meta-llama-Llama-3.1-8B-Instruct.jinja"
TOOL_TEMPLATE = "meetkai-functionary-medium-v3.2.jinja"
COPY_TEMPLATE = "fireworks-ai-llama-3-firefunction-v2.jinja"


def pytest_collection_modifyitems(config, items):
    if os.environ.get("WIREBRIDGE_LIVE", "1") == "0":
        skip = pytest.mark.skip(reason="the live suite is turned off (WIREBRIDGE_LIVE=0)")
        for item in items:
            item.add_marker(skip)
        return
    if config.pluginmanager.hasplugin("timeout"):
        for item in items:
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


@pytest.fixture(scope="session")
def wirebridge():
    path = harness.binary()
    if not path.is_file():
        pytest.fail(f"{path} not found: run `cargo build -p wirebridge-cli` first, or set WIREBRIDGE_BIN",
                    pytrace=False)
    return path


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("live-logs")


@pytest.fixture(scope="session")
def spec():
    return harness.validate.Spec(harness.validate.spec_dir())


# The model servers started so far, which `no_generation_left_behind`
# checks after each test.
STARTED: list[llama.LlamaServer] = []


def _server(name: str, template: str, log_dir: Path, context: int = 4096, greedy: bool = False,
            predict: int = llama.PREDICT):
    try:
        server = llama.LlamaServer(name, template, log_dir, context, predict=predict, greedy=greedy)
    except FileNotFoundError as missing:
        pytest.fail(str(missing), pytrace=False)
    STARTED.append(server)
    return server


def _stop_server(server: llama.LlamaServer) -> None:
    STARTED.remove(server)
    server.stop()


@pytest.fixture(scope="session")
def text_server(log_dir):
    server = _server("text", TEXT_TEMPLATE, log_dir, context=16384)
    yield server
    _stop_server(server)


@pytest.fixture(scope="session")
def tool_server(log_dir):
    server = _server("tools", TOOL_TEMPLATE, log_dir)
    yield server
    _stop_server(server)


@pytest.fixture(scope="session")
def copy_server(log_dir):
    # The template writes no tools into the prompt: Codex's request comes to
    # about 5,400 tokens.
    server = _server("copy", COPY_TEMPLATE, log_dir, context=8192, greedy=True)
    yield server
    _stop_server(server)


# How many times slower than at its measure the machine may get, and the
# least any request is given.
PACE_FACTOR = 10
FLOOR_SECONDS = 30.0
# A bound on the prompt of the suite's own requests (a few hundred tokens
# at most, the tool definitions included).
PROMPT_TOKENS = 1024
# What the pace is measured on: a prompt of about 260 tokens, evaluated
# afresh, then exactly 32 tokens.
PACE_PROMPT = "The quick brown fox jumps over the lazy dog. " * 26
PACE_TOKENS = 32


@dataclass(frozen=True)
class Pace:
    """How fast the text server evaluates a prompt and writes tokens, as its
    own `timings` said of one short generation at the start of the session
    (the slower of two, the first one warming up), and the time a request
    is given from there: `FLOOR_SECONDS` plus `PACE_FACTOR` times what the
    request's tokens take at that pace. A busy machine is slower at the
    measure already, and the factor leaves room for it to get much busier."""

    prompt_per_second: float
    predicted_per_second: float

    def seconds(self, max_tokens: int = llama.PREDICT, prompt_tokens: int = PROMPT_TOKENS,
                requests: int = 1) -> float:
        """The time `requests` requests of `prompt_tokens` and at most
        `max_tokens` each are given."""
        one = prompt_tokens / self.prompt_per_second + max_tokens / self.predicted_per_second
        return FLOOR_SECONDS + PACE_FACTOR * requests * one

    def __str__(self) -> str:
        return (f"prompt {self.prompt_per_second:.0f} tokens/s, generation {self.predicted_per_second:.1f} tokens/s;"
                f" a request of {llama.PREDICT} tokens is given {self.seconds():.0f} s")


@pytest.fixture(scope="session")
def pace(text_server) -> Pace:
    measures = [text_server.pace(PACE_PROMPT, PACE_TOKENS, timeout=TEST_TIMEOUT) for _ in range(2)]
    measured = Pace(min(m["prompt_per_second"] for m in measures),
                    min(m["predicted_per_second"] for m in measures))
    MEASURED.append(measured)
    return measured


# The pace of this session, for the summary.
MEASURED: list[Pace] = []


def pytest_terminal_summary(terminalreporter):
    for measured in MEASURED:
        terminalreporter.write_line(f"live suite pace: {measured}")


@pytest.fixture(autouse=True)
def request_bounds(pace, monkeypatch):
    """Every client a live test makes waits as long as the pace gives a
    request the server caps at `llama.PREDICT` tokens, unless told
    otherwise."""
    seconds = pace.seconds()
    for name in ("client", "async_client", "post_direct"):
        made = getattr(harness, name)

        @functools.wraps(made)
        def bounded(*args, _made=made, timeout: float = seconds, **kwargs):
            return _made(*args, timeout=timeout, **kwargs)

        monkeypatch.setattr(harness, name, bounded)


@pytest.fixture(autouse=True)
def no_generation_left_behind(request_bounds, pace):
    """After each test, no model server is still generating: a request the
    client gave up on must have been cancelled all the way down (the bridge
    and the relay hang up, llama-server cancels), or it would slow the next
    test. The wait is bounded by one capped generation at the pace."""
    yield
    deadline = time.monotonic() + pace.seconds()
    busy = list(STARTED)
    while busy and time.monotonic() < deadline:
        busy = [server for server in busy if server.generating()]
        if busy:
            time.sleep(0.2)
    assert not busy, f"still generating after the test: {[server.name for server in busy]}"


@dataclass
class LiveChain:
    """client → bridge → recording relay → llama-server."""

    name: str
    bridge: harness.Process
    relay: llama.Relay
    server: llama.LlamaServer

    @property
    def base_url(self) -> str:
        return self.bridge.url + "/v1"

    def mark(self) -> int:
        return self.relay.mark()

    def accepted(self, mark: int, path_suffix: str | None = None) -> list[llama.Exchange]:
        """The exchanges since `mark` (those whose path ends with
        `path_suffix`, if given); the model server must have accepted each."""
        exchanges = [e.wait() for e in self.relay.since(mark)]
        if path_suffix is not None:
            exchanges = [e for e in exchanges if e.path.endswith(path_suffix)]
        for e in exchanges:
            assert not e.abandoned, f"the bridge hung up on {e.method} {e.path} before the answer was whole"
            assert e.status == 200, f"llama-server answered {e.status} to {e.method} {e.path}: " \
                                    f"{e.response[:500]!r}\nrequest: {e.body[:2000]!r}"
        return exchanges


def _chain(log_dir: Path, name: str, server: llama.LlamaServer, upstream_api: str) -> LiveChain:
    relay = llama.Relay(server.url)
    try:
        bridge = harness.start_bridge(log_dir, name, relay.url + "/v1", upstream_api, "llama-cpp")
    except BaseException:
        relay.close()
        raise
    return LiveChain(name, bridge, relay, server)


def _stop(chain: LiveChain) -> None:
    alive = chain.bridge.alive()
    code = chain.bridge.stop()
    chain.relay.close()
    log = chain.bridge.log()
    assert alive, f"the bridge exited during the tests (code {code}):\n{log[-4000:]}"
    assert "panicked" not in log, f"the bridge panicked:\n{log[-4000:]}"
    assert code == 0, f"the bridge exited with {code} on SIGTERM:\n{log[-4000:]}"
    _record(chain)


def _record(chain: LiveChain) -> None:
    """With WIREBRIDGE_LIVE_RECORD=DIR, every exchange the server answered:
    NAME-N.request.json, and NAME-N.sse or NAME-N.json."""
    directory = os.environ.get("WIREBRIDGE_LIVE_RECORD")
    if not directory:
        return
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for n, exchange in enumerate(chain.relay.exchanges, 1):
        exchange.wait()
        if exchange.method != "POST" or exchange.status != 200:
            continue
        api = next((name for name in ("chat", "messages") if exchange.path.endswith(f"/{name}") or
                    exchange.path.endswith("/chat/completions") and name == "chat"), "responses")
        stem = out / f"{chain.name}-{api}-{n}"
        stem.with_suffix(".request.json").write_bytes(exchange.body)
        suffix = ".sse" if exchange.streamed else ".json"
        stem.with_suffix(suffix).write_bytes(exchange.response)


@pytest.fixture(scope="session")
def chat_text(wirebridge, log_dir, text_server):
    """The bridge translating Responses to Chat, on the text server."""
    chain = _chain(log_dir, "text", text_server, "chat")
    yield chain
    _stop(chain)


@pytest.fixture(scope="session")
def chat_tools(wirebridge, log_dir, tool_server):
    """The bridge translating Responses to Chat, on the tool server."""
    chain = _chain(log_dir, "tools", tool_server, "chat")
    yield chain
    _stop(chain)


@pytest.fixture(scope="session")
def chat_copy(wirebridge, log_dir, copy_server):
    """The bridge translating Responses to Chat, on the copy server."""
    chain = _chain(log_dir, "copy", copy_server, "chat")
    yield chain
    _stop(chain)


@pytest.fixture(scope="session")
def responses_text(wirebridge, log_dir, text_server):
    """The bridge in front of llama-server's own `/v1/responses`: Responses
    requests pass through, Chat requests are translated to Responses."""
    chain = _chain(log_dir, "native", text_server, "responses")
    yield chain
    _stop(chain)


@pytest.fixture(scope="session")
def responses_tools(wirebridge, log_dir, tool_server):
    """The bridge in front of the tool server's own `/v1/responses`."""
    chain = _chain(log_dir, "native-tools", tool_server, "responses")
    yield chain
    _stop(chain)


@pytest.fixture(scope="session")
def messages_text(wirebridge, log_dir, text_server):
    """The bridge in front of llama-server's own `/v1/messages`: Responses
    and Chat requests written as Messages, Messages requests passed
    through."""
    chain = _chain(log_dir, "messages", text_server, "messages")
    yield chain
    _stop(chain)


def timings(exchange: llama.Exchange) -> dict:
    """llama-server's `timings` object of an answer (the last chunk's, for
    a stream)."""
    if exchange.streamed:
        found = re.findall(rb'"timings":(\{[^{}]*\})', exchange.response)
        assert found, exchange.response[-500:]
        return json.loads(found[-1])
    return exchange.answer_json()["timings"]
