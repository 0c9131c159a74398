"""A stream whose client gives up is cancelled all the way down: the bridge
drops its connection to the upstream, the relay drops its own, and
llama-server, which checks the connection at each token of a stream,
cancels the generation. A generation left running would slow every test
after it.

The server here lets an answer run to `LONG` tokens, many times what it
writes before the cancel lands; the client leaves at the first text, and
the server must say it cancelled the task.

A body is left out: the bridge and the relay hang up on it just as fast,
but llama-server (0.3.36's sources) did not always cancel a body whose
connection the relay closed; `no_generation_left_behind` waits for such
an answer, which the server caps at `llama.PREDICT` tokens."""

from __future__ import annotations

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
    [slot] = chain.server.get_json("/slots")
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
