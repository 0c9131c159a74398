"""The bridge in front of llama-server's own `/v1/responses`
(`--upstream-api responses`): Chat clients are translated to Responses and
back against a real Responses server; Responses clients pass through.

Chained turns (`previous_response_id`) against this server are refused by
it ("llama.cpp does not support 'previous_response_id'"): the bridge passes
them through today, and completing them is the stateful engine's work."""

from __future__ import annotations

import json

import pytest

import checks
import drive
import harness
import recorded
import schema

MODEL = "gemma-3-270m"


def one_responses_request(chain, mark: int, spec):
    sent = chain.accepted(mark, "/responses")
    assert len(sent) == 1, [e.path for e in sent]
    body = sent[0].json()
    errors = spec.errors(body, "CreateResponse")
    assert not errors, f"the Responses request is not valid: {errors[:5]}\n{json.dumps(body)[:2000]}"
    return sent[0], body


def server_answer(exchange) -> recorded.Expected:
    if exchange.streamed:
        payloads = harness.sse_payloads(exchange.response.decode("utf-8"))
        return recorded.from_responses_events(payloads)
    return recorded.from_responses_body(exchange.answer_json())


@pytest.mark.parametrize("style", drive.CHAT_STYLES)
def test_a_chat_client_gets_what_the_responses_server_wrote(responses_text, spec, style):
    request = {"model": MODEL, "messages": [{"role": "system", "content": "Answer briefly."},
                                            {"role": "user", "content": "Say hello to Ada."}],
               "max_completion_tokens": 24}
    schema.assert_valid_client_request(spec, request, "chat")
    mark = responses_text.mark()
    observed = drive.chat_client(responses_text, style, request)
    exchange, body = one_responses_request(responses_text, mark, spec)
    assert body["max_output_tokens"] == 24
    assert body["input"] == [{"type": "message", "role": "system", "content": "Answer briefly."},
                             {"type": "message", "role": "user", "content": "Say hello to Ada."}]
    assert body["store"] is False
    expected = server_answer(exchange)
    checks.assert_content(observed, expected, reasoning=False, separate_messages=False)


@pytest.mark.xfail(strict=True, reason="llama-server's own Responses stream has no sequence_number, "
                   "output_index or content_index, and a bare response in response.created, so the SDK's "
                   "typed events reject it; passed through, it reaches the client as it is. The stateful "
                   "engine over native Responses backends re-emits it in the spec's grammar.")
def test_a_responses_client_passes_through(responses_text, spec):
    mark = responses_text.mark()
    observed = drive.responses_client(responses_text, "create-stream",
                                      {"model": MODEL, "input": "Say hello.", "max_output_tokens": 16})
    exchange, body = one_responses_request(responses_text, mark, spec)
    assert body == {"model": MODEL, "input": "Say hello.", "max_output_tokens": 16, "stream": True}
    checks.assert_content(observed, server_answer(exchange), reasoning=True, separate_messages=True)
