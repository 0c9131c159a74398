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

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))

import harness  # noqa: E402  (tests/clients/harness.py)
import llama  # noqa: E402

# A turn of a 270M model on 2 cores takes a second or two; a whole test a
# few turns (the Codex and Agents runs more).
TEST_TIMEOUT = 180

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


def _server(name: str, template: str, log_dir: Path, context: int = 4096, greedy: bool = False):
    try:
        server = llama.LlamaServer(name, template, log_dir, context, greedy=greedy)
    except FileNotFoundError as missing:
        pytest.fail(str(missing), pytrace=False)
    return server


@pytest.fixture(scope="session")
def text_server(log_dir):
    server = _server("text", TEXT_TEMPLATE, log_dir, context=16384)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tool_server(log_dir):
    server = _server("tools", TOOL_TEMPLATE, log_dir)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def copy_server(log_dir):
    # The template writes no tools into the prompt: Codex's request comes to
    # about 5,400 tokens.
    server = _server("copy", COPY_TEMPLATE, log_dir, context=8192, greedy=True)
    yield server
    server.stop()


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
        api = "chat" if exchange.path.endswith("/chat/completions") else "responses"
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


def timings(exchange: llama.Exchange) -> dict:
    """llama-server's `timings` object of an answer (the last chunk's, for
    a stream)."""
    if exchange.streamed:
        found = re.findall(rb'"timings":(\{[^{}]*\})', exchange.response)
        assert found, exchange.response[-500:]
        return json.loads(found[-1])
    return exchange.answer_json()["timings"]
