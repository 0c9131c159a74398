"""A real server's own failures, in the client's dialect.

Under Functionary's template an unforced turn must start with `all\\n`; this
base model does not write it, and llama-server fails the answer: in a
stream after its first chunk (`data: {"error": …}` on a 200 stream), or as
an HTTP 500 for a body. The bridge must pass each on as the client's API
shapes failures, with the server's message."""

from __future__ import annotations

import json

import openai
import pytest

import checks
import drive
import harness
import schema

MESSAGE = "does not match the expected"
TOOL = {"type": "function", "name": "get_weather", "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
REQUEST = {"model": "gemma-3-270m", "input": "Say hello.", "tools": [TOOL], "max_output_tokens": 40}


def the_server_failed(chain, mark: int, streamed: bool) -> bytes:
    """The one exchange since `mark`: the server's failure, as the premise."""
    exchanges = [e.wait() for e in chain.relay.since(mark)]
    assert len(exchanges) == 1
    exchange = exchanges[0]
    if streamed:
        assert exchange.status == 200 and b'"error"' in exchange.response, \
            f"the server did not fail the stream: the test's premise changed\n{exchange.response[-600:]!r}"
    else:
        assert exchange.status == 500, f"the server answered {exchange.status}: the test's premise changed"
    return exchange.response


def test_a_failure_mid_stream_is_an_error_event_and_response_failed(chat_tools, spec):
    mark = chat_tools.mark()
    client = harness.client(chat_tools)
    # The raw stream, as any client reads it, against the spec.
    with client.responses.with_streaming_response.create(**REQUEST, stream=True) as raw:
        text = raw.read().decode("utf-8")
    server = the_server_failed(chat_tools, mark, streamed=True)
    payloads = schema.assert_valid_stream(spec, text, "responses")
    kinds = [p["type"] for p in payloads]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-2:] == ["error", "response.failed"], kinds
    server_error = json.loads(server.split(b"data: ")[-1])["error"]
    assert payloads[-2]["error"]["message"] == server_error["message"]
    assert payloads[-1]["response"]["status"] == "failed"
    # The SDK raises the server's message, not a parse or connection error.
    with pytest.raises(openai.APIError) as raised:
        drive.responses_client(chat_tools, "create-stream", REQUEST)
    checks.assert_stream_error(raised.value, MESSAGE)


def test_a_failed_body_is_a_5xx_in_the_responses_error_shape(chat_tools, spec):
    mark = chat_tools.mark()
    status, _, text = harness.post_direct(chat_tools.base_url + "/responses", json.dumps(REQUEST).encode())
    server = the_server_failed(chat_tools, mark, streamed=False)
    assert status == 500
    body = schema.assert_valid_body(spec, status, text, "responses")
    assert body["error"]["message"] == json.loads(server)["error"]["message"]
