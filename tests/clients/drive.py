"""The SDK calls every scenario makes, and the upstream's own answer to the
request the bridge sent it."""

from __future__ import annotations

import json

import openai

import checks
import harness
import recorded
from recorded import Expected

RESPONSES_STYLES = ["create-stream", "stream-helper", "create"]
CHAT_STYLES = ["create-stream", "stream-helper", "create"]


def responses_client(chain: harness.Chain, style: str, request: dict) -> Expected:
    """A Responses client's view of one answer, through the SDK call `style`:
    `responses.create(stream=True)` (every event typed), `responses.stream()`
    (the SDK's accumulator; `get_final_response()` when the response
    completes) or `responses.create()`."""
    client = harness.client(chain)
    if style == "create-stream":
        events = list(client.responses.create(**request, stream=True))
        checks.assert_typed_events(events)
        checks.assert_sequence(events)
        assert events[0].type == "response.created"
        return checks.from_events(events)
    if style == "stream-helper":
        with client.responses.stream(**request) as stream:
            events = list(stream)
            terminal = events[-1]
            if terminal.type == "response.completed":
                final = stream.get_final_response()
                assert final.id == terminal.response.id
            else:
                # The SDK keeps a final response only for `response.completed`;
                # an incomplete one is read from its terminal event, after
                # every event went through the SDK's accumulator.
                assert terminal.type == "response.incomplete", terminal.type
                final = terminal.response
        return checks.from_response(final)
    assert style == "create"
    response = client.responses.create(**request)
    assert response.object == "response"
    return checks.from_response(response)


def chat_client(chain: harness.Chain, style: str, request: dict) -> Expected:
    """A Chat client's view of one answer, through the SDK call `style`:
    `chat.completions.create(stream=True)` (every chunk typed),
    `chat.completions.stream()` + `get_final_completion()`, or
    `chat.completions.create()`."""
    client = harness.client(chain)
    if style == "create-stream":
        chunks = list(client.chat.completions.create(**request, stream=True, stream_options={"include_usage": True}))
        return checks.from_chunks(chunks)
    if style == "stream-helper":
        with client.chat.completions.stream(**request, stream_options={"include_usage": True}) as stream:
            try:
                completion = stream.get_final_completion()
            except openai.LengthFinishReasonError as e:
                # The SDK's helper reports a cut answer this way, with the
                # accumulated completion attached.
                completion = e.completion
                assert completion.choices[0].finish_reason == "length"
        return checks.from_completion(completion)
    assert style == "create"
    completion = client.chat.completions.create(**request)
    assert completion.object == "chat.completion"
    return checks.from_completion(completion)


def upstream_answer(chain: harness.Chain, captured: harness.Captured) -> Expected:
    """What the upstream answers to the request the bridge sent it, asked
    again directly (the demo upstream is deterministic)."""
    status, content_type, text = harness.post_direct(chain.upstream_url + captured.path, captured.body)
    assert status == 200, (status, text)
    api = "chat" if captured.path.endswith("/chat/completions") else "responses"
    if content_type.startswith("text/event-stream"):
        payloads = harness.sse_payloads(text)
        if api == "chat":
            return recorded.from_chat_chunks(payloads)
        return recorded.from_responses_events(payloads)
    body = json.loads(text)
    return recorded.from_chat_body(body) if api == "chat" else recorded.from_responses_body(body)


def one_upstream_request(chain: harness.Chain, mark: int, path_end: str) -> harness.Captured:
    sent = chain.tap.since(mark)
    assert len(sent) == 1, f"{len(sent)} upstream requests: {[r.path for r in sent]}"
    assert sent[0].method == "POST" and sent[0].path.endswith(path_end), sent[0].path
    return sent[0]
