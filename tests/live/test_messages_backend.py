"""The bridge in front of llama-server's own `/v1/messages`
(`--upstream-api messages`): Responses and Chat clients are written as
Messages requests against a real Messages server, which keeps nothing: the
bridge keeps the conversation and sends it whole every turn. Messages
clients pass through."""

from __future__ import annotations

import json

import anthropic
import pytest

import harness

MODEL = "gemma-3-270m"


def one_messages_request(chain, mark: int):
    sent = chain.accepted(mark, "/messages")
    assert len(sent) == 1, [e.path for e in sent]
    return sent[0], sent[0].json()


def server_text(exchange) -> str:
    """The text the server wrote, from its body or its stream."""
    if not exchange.streamed:
        return "".join(b["text"] for b in exchange.answer_json()["content"] if b["type"] == "text")
    payloads = harness.sse_payloads(exchange.response.decode("utf-8"))
    return "".join(p["delta"]["text"] for p in payloads
                   if p.get("type") == "content_block_delta" and p["delta"].get("type") == "text_delta")


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_responses_client_gets_what_the_messages_server_wrote(messages_text, stream):
    client = harness.client(messages_text)
    mark = messages_text.mark()
    request = {"model": MODEL, "input": "Say hello.", "max_output_tokens": 16, "instructions": "Answer briefly."}
    if stream:
        raw = client.responses.with_raw_response.create(**request, stream=True)
        dropped = raw.headers.get("x-wirebridge-dropped")
        events = list(raw.parse())
        response = events[-1].response
    else:
        raw = client.responses.with_raw_response.create(**request)
        dropped = raw.headers.get("x-wirebridge-dropped")
        response = raw.parse()
    # Nothing the server takes is reported lost.
    assert dropped is None, dropped
    exchange, body = one_messages_request(messages_text, mark)
    assert body["model"] == MODEL and body["max_tokens"] == 16
    assert body["system"] == [{"type": "text", "text": "Answer briefly."}]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Say hello."}]}]
    assert response.status in ("completed", "incomplete")
    assert response.output_text == server_text(exchange)
    assert response.usage.output_tokens > 0


def test_a_chain_kept_by_the_bridge(messages_text):
    client = harness.client(messages_text)
    first = client.responses.create(model=MODEL, input="My name is Ada.", max_output_tokens=16)
    mark = messages_text.mark()
    second = client.responses.create(model=MODEL, previous_response_id=first.id, input="What is my name?",
                                     max_output_tokens=16)
    exchange, body = one_messages_request(messages_text, mark)
    said = [(m["role"], "".join(b.get("text", "") for b in m["content"])) for m in body["messages"]]
    assert said == [("user", "My name is Ada."), ("assistant", first.output_text), ("user", "What is my name?")]
    assert second.output_text == server_text(exchange)
    assert second.previous_response_id == first.id


def test_a_chat_client_through_the_responses_side(messages_text):
    client = harness.client(messages_text)
    mark = messages_text.mark()
    reply = client.chat.completions.create(model=MODEL, max_completion_tokens=16,
                                           messages=[{"role": "user", "content": "Say hello to Ada."}])
    exchange, body = one_messages_request(messages_text, mark)
    assert body["messages"][0]["content"] == [{"type": "text", "text": "Say hello to Ada."}]
    assert reply.choices[0].message.content == server_text(exchange)


def test_a_messages_client_passes_through(messages_text):
    client = anthropic.Anthropic(base_url=messages_text.bridge.url, api_key="sk-ant-live", max_retries=0,
                                 http_client=anthropic.DefaultHttpxClient(trust_env=False))
    mark = messages_text.mark()
    message = client.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Hi."}])
    exchange, body = one_messages_request(messages_text, mark)
    assert body == {"model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "Hi."}]}
    assert "".join(b.text for b in message.content if b.type == "text") == server_text(exchange)
    assert json.loads(exchange.response)["type"] == "message"
