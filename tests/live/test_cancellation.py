"""A request whose client gives up is cancelled all the way down: the
bridge drops its connection to the upstream, the relay drops its own, and
llama-server cancels the generation (it checks whether the connection is
still open at each token of a stream, and about once a second while it
writes a body). A generation left running would slow every test after it.

The server here lets an answer run to `LONG` tokens, many times what it
writes before the cancel lands; the client leaves once the server is
generating, and the server must say it cancelled the task."""

from __future__ import annotations

import http.client
import json
import re
import time

import pytest

import harness
from conftest import TEXT_TEMPLATE, _chain, _server, _stop, _stop_server

MODEL = "gemma-3-270m"
LONG = 2048


@pytest.fixture(scope="module")
def long_server(log_dir):
    server = _server("long", TEXT_TEMPLATE, log_dir, context=4096, predict=LONG)
    yield server
    _stop_server(server)


@pytest.fixture(scope="module", params=["chat", "responses"])
def long_chain(request, wirebridge, log_dir, long_server):
    """The bridge in front of the long server's Chat endpoint, or of its own
    Responses endpoint (which a Responses request passes through to)."""
    chain = _chain(log_dir, f"long-{request.param}", long_server, request.param)
    yield chain
    _stop(chain)


def _wait_generating(chain, pace) -> None:
    """Until the server has written a token of the answer."""
    deadline = time.monotonic() + pace.seconds(1)
    while time.monotonic() < deadline:
        [slot] = chain.server._get_json("/slots")
        if slot["is_processing"] and slot["next_token"][0]["n_decoded"] > 0:
            return
        time.sleep(0.05)
    pytest.fail("the server never started the answer")


def _assert_cancelled(chain, mark: int, pace) -> None:
    """The one exchange since `mark` was given up by the bridge, and the
    server cancelled its task before writing the whole answer."""
    [exchange] = chain.relay.since(mark)
    # Without a cancel, the relay passes on the whole answer: LONG tokens.
    exchange.wait(pace.seconds(LONG))
    assert exchange.abandoned, \
        f"the bridge read the server's whole answer after its client left: {exchange.response[-300:]!r}"
    deadline = time.monotonic() + pace.seconds(1)
    while chain.server.generating() and time.monotonic() < deadline:
        time.sleep(0.1)
    [slot] = chain.server._get_json("/slots")
    assert not slot["is_processing"], "the server still generates the abandoned answer"
    task = slot["id_task"]
    cancelled = re.findall(r"cancel task, id_task = (\d+)", chain.server.log())
    assert str(task) in cancelled, \
        f"the server did not cancel task {task} ({slot['next_token'][0]['n_decoded']} tokens written)"
    assert slot["next_token"][0]["n_decoded"] < LONG


def test_a_stream_the_client_leaves_is_cancelled_upstream(long_chain, pace):
    client = harness.client(long_chain)
    mark = long_chain.mark()
    with client.responses.create(model=MODEL, input="Tell a long story about a fox.", max_output_tokens=LONG,
                                 stream=True) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                break
    client.close()
    _assert_cancelled(long_chain, mark, pace)


def test_a_body_the_client_leaves_is_cancelled_upstream(long_chain, pace):
    body = json.dumps({"model": MODEL, "input": "Tell a long story about a fox.", "max_output_tokens": LONG})
    address = long_chain.bridge.url.removeprefix("http://")
    connection = http.client.HTTPConnection(address, timeout=pace.seconds())
    mark = long_chain.mark()
    connection.request("POST", "/v1/responses", body=body, headers={"content-type": "application/json"})
    _wait_generating(long_chain, pace)
    connection.close()
    _assert_cancelled(long_chain, mark, pace)
