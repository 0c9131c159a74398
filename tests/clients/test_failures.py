"""Failure paths, both directions: the upstream answers with an HTTP error,
fails in the middle of a stream, or drops the connection mid-stream. The
SDK must raise its typed error (the `APIStatusError` subclass of the
status, or `APIError` for a stream that failed), never a parse error, a hang
(every wait is bounded) or a silently truncated success. Every error object
the bridge sends must be valid against the spec."""

from __future__ import annotations

import json
import time

import openai
import pytest

import checks
import harness
import schema

STATUS_ERRORS = {
    401: openai.AuthenticationError,
    429: openai.RateLimitError,
    500: openai.InternalServerError,
}


def responses_request(prompt: str) -> dict:
    return {"model": "demo", "input": prompt}


def chat_request(prompt: str) -> dict:
    return {"model": "demo", "messages": [{"role": "user", "content": prompt}]}


def assert_status_error(raised: BaseException, status: int, cls: type, chain: harness.Chain, mark: int, spec) -> None:
    """The SDK's typed error for the status, carrying the upstream's error;
    the bridge's error body is valid; the upstream was asked once."""
    assert type(raised) is cls, f"{type(raised).__name__}: {raised}"
    assert raised.status_code == status
    body = raised.response.json()
    assert not spec.errors(body, "ErrorResponse"), spec.errors(body, "ErrorResponse")
    sent = chain.tap.since(mark)
    assert len(sent) == 1, f"{len(sent)} upstream requests"
    upstream_status, _, upstream_text = harness.post_direct(chain.upstream_url + sent[0].path, sent[0].body)
    assert upstream_status == status
    upstream_error = json.loads(upstream_text)["error"]
    assert body["error"] == upstream_error
    assert upstream_error["message"] in raised.message
    assert raised.code == upstream_error["code"]
    assert raised.type == upstream_error["type"]


# --------------------------------------------------------------------------
# HTTP errors from the upstream
# --------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
@pytest.mark.parametrize("status", STATUS_ERRORS)
def test_responses_client_upstream_http_error(chat_upstream, spec, status, stream):
    client = harness.client(chat_upstream)
    mark = chat_upstream.tap.mark()
    with pytest.raises(openai.APIStatusError) as raised:
        result = client.responses.create(**responses_request(f"Hello demo:error {status}"), stream=stream)
        list(result) if stream else None
    assert_status_error(raised.value, status, STATUS_ERRORS[status], chat_upstream, mark, spec)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
@pytest.mark.parametrize("status", STATUS_ERRORS)
def test_chat_client_upstream_http_error(responses_upstream, spec, status, stream):
    client = harness.client(responses_upstream)
    mark = responses_upstream.tap.mark()
    with pytest.raises(openai.APIStatusError) as raised:
        result = client.chat.completions.create(**chat_request(f"Hello demo:error {status}"), stream=stream)
        list(result) if stream else None
    assert_status_error(raised.value, status, STATUS_ERRORS[status], responses_upstream, mark, spec)


def test_responses_client_recorded_http_error_body(wirebridge, log_dir, spec):
    """`vercel-ai/chat/reasoning-model-legacy-parameter-error.json`, a Chat
    HTTP error body, served with the status OpenAI sends it with (400; the
    recording holds the body only)."""
    path = harness.FIXTURES / "vercel-ai" / "chat" / "reasoning-model-legacy-parameter-error.json"
    recorded_error = json.loads(path.read_text(encoding="utf-8"))["error"]
    static = harness.StaticUpstream(400, path.read_bytes())
    chain = harness.start_chain(log_dir, path.name, "chat", static=static)
    try:
        with pytest.raises(openai.BadRequestError) as raised:
            harness.client(chain).responses.create(**responses_request("Hello"), max_output_tokens=100)
        assert raised.value.status_code == 400
        assert raised.value.response.json()["error"] == recorded_error
        assert recorded_error["message"] in raised.value.message
        assert raised.value.code == recorded_error["code"]
        assert raised.value.param == recorded_error["param"]
        assert not spec.errors(raised.value.response.json(), "ErrorResponse")
        assert len(static.requests) == 1
        schema.assert_valid_request(spec, static.requests[0], "chat")
    finally:
        harness.stop_checked(chain)


def test_responses_client_recorded_server_failure_mid_stream(wirebridge, log_dir, spec):
    """`recorded/llama-server/chat-error-midstream.sse`: llama-server's own
    failure after its first chunk, a `data: {"error": …}` chunk with its
    code as a number, on a 200 stream. The client gets an `error` event and
    `response.failed` with the server's message, and the SDK raises it."""
    path = harness.RECORDED / "llama-server" / "chat-error-midstream.sse"
    message = json.loads(path.read_text(encoding="utf-8").split("data: ")[-1])["error"]["message"]
    chain = harness.start_chain(log_dir, path.name, "chat", replay=path)
    try:
        request = {**responses_request("Hello"), "stream": True}
        status, _, text = harness.post_direct(chain.base_url + "/responses", json.dumps(request).encode())
        assert status == 200
        events = schema.assert_valid_stream(spec, text, "responses")
        assert [e["type"] for e in events][-2:] == ["error", "response.failed"]
        assert events[-2]["error"]["message"] == message
        with pytest.raises(openai.APIError) as raised:
            list(harness.client(chain).responses.create(**responses_request("Hello"), stream=True))
        checks.assert_stream_error(raised.value, message)
    finally:
        harness.stop_checked(chain)


def test_chat_client_recorded_http_error_body(wirebridge, log_dir, spec):
    """`vercel-ai/responses/openai-error.1.json` (insufficient_quota), served
    with the status OpenAI sends it with (429; the recording holds the body
    only)."""
    path = harness.FIXTURES / "vercel-ai" / "responses" / "openai-error.1.json"
    recorded_error = json.loads(path.read_text(encoding="utf-8"))["error"]
    static = harness.StaticUpstream(429, path.read_bytes())
    chain = harness.start_chain(log_dir, path.name, "responses", static=static)
    try:
        with pytest.raises(openai.RateLimitError) as raised:
            list(harness.client(chain).chat.completions.create(**chat_request("Hello"), stream=True))
        assert raised.value.status_code == 429
        assert raised.value.response.json()["error"] == recorded_error
        assert recorded_error["message"] in raised.value.message
        assert raised.value.code == recorded_error["code"]
        assert not spec.errors(raised.value.response.json(), "ErrorResponse")
        assert len(static.requests) == 1
        schema.assert_valid_request(spec, static.requests[0], "responses")
    finally:
        harness.stop_checked(chain)


# --------------------------------------------------------------------------
# Streams that fail: an in-band upstream error, a dropped connection
# --------------------------------------------------------------------------

MIDSTREAM = {
    "error-midstream": "Hello there, this stream fails demo:fail-midstream",
    "cut-midstream": "Hello there, this stream is cut demo:cut",
}


def upstream_error_message(chain: harness.Chain, mark: int) -> str | None:
    """The message of the error the upstream sent in its stream, if any."""
    (sent,) = chain.tap.since(mark)
    _, _, text = harness.post_direct(chain.upstream_url + sent.path, sent.body)
    for payload in harness.sse_payloads(text):
        error = payload.get("error")
        if isinstance(error, dict) and error.get("message"):
            return error["message"]
    return None


@pytest.mark.parametrize("style", ["create-stream", "stream-helper"])
@pytest.mark.parametrize("failure", MIDSTREAM)
def test_responses_client_stream_fails(chat_upstream, failure, style):
    client = harness.client(chat_upstream)
    mark = chat_upstream.tap.mark()
    received = []
    with pytest.raises(openai.APIError) as raised:
        if style == "create-stream":
            for event in client.responses.create(**responses_request(MIDSTREAM[failure]), stream=True):
                received.append(event)
        else:
            with client.responses.stream(**responses_request(MIDSTREAM[failure])) as stream:
                for event in stream:
                    received.append(event)
                stream.get_final_response()
    checks.assert_stream_error(raised.value)
    if failure == "error-midstream":
        message = upstream_error_message(chat_upstream, mark)
        assert message and message in str(raised.value)
    # The stream was under way: what came before the failure was delivered.
    assert any(e.type == "response.output_text.delta" for e in received), [e.type for e in received]
    assert not any(e.type in ("response.completed", "response.incomplete") for e in received)


@pytest.mark.parametrize("style", ["create-stream", "stream-helper"])
@pytest.mark.parametrize("failure", MIDSTREAM)
def test_chat_client_stream_fails(responses_upstream, failure, style):
    client = harness.client(responses_upstream)
    mark = responses_upstream.tap.mark()
    received = []
    with pytest.raises(openai.APIError) as raised:
        if style == "create-stream":
            for chunk in client.chat.completions.create(**chat_request(MIDSTREAM[failure]), stream=True):
                received.append(chunk)
        else:
            with client.chat.completions.stream(**chat_request(MIDSTREAM[failure])) as stream:
                for event in stream:
                    received.append(event)
                stream.get_final_completion()
    checks.assert_stream_error(raised.value)
    if failure == "error-midstream":
        message = upstream_error_message(responses_upstream, mark)
        assert message and message in str(raised.value)
    assert received, "nothing arrived before the failure"


@pytest.mark.parametrize("failure", MIDSTREAM)
def test_responses_client_stream_fails_schema(chat_upstream, spec, failure):
    """The failed stream, as sent: content, then an `error` event (nested
    error object, valid against the Open Responses spec) and
    `response.failed`, each valid against the spec."""
    request = {**responses_request(MIDSTREAM[failure]), "stream": True}
    status, _, text = harness.post_direct(chat_upstream.base_url + "/responses", json.dumps(request).encode())
    assert status == 200
    events = schema.assert_valid_stream(spec, text, "responses")
    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"], [e["type"] for e in events]
    assert events[-1]["response"]["status"] == "failed"
    assert events[-1]["response"]["error"]["message"]


@pytest.mark.parametrize("failure", MIDSTREAM)
def test_chat_client_stream_fails_schema(responses_upstream, spec, failure):
    """The failed stream, as sent: chunks, then an error chunk (valid against
    ErrorResponse) and `[DONE]`, and no finish_reason."""
    request = {**chat_request(MIDSTREAM[failure]), "stream": True}
    status, _, text = harness.post_direct(responses_upstream.base_url + "/chat/completions", json.dumps(request).encode())
    assert status == 200
    chunks = schema.assert_valid_stream(spec, text, "chat")
    assert "error" in chunks[-1] and chunks[-1]["error"]["message"]
    assert not any(choice.get("finish_reason") for c in chunks[:-1] for choice in c["choices"])
    assert text.count("[DONE]") == 1 and text.rstrip().endswith("data: [DONE]"), text[-300:]


@pytest.mark.parametrize("failure", MIDSTREAM)
def test_responses_client_failed_stream_keeps_the_text(chat_upstream, spec, failure):
    """What was said before the failure is kept: the open message is closed
    with the text that arrived (`output_item.done`, status incomplete), and
    `response.failed` lists it. The SDK sees the closed item before it
    raises on the `error` event."""
    client = harness.client(chat_upstream)
    received = []
    with pytest.raises(openai.APIError):
        for event in client.responses.create(**responses_request(MIDSTREAM[failure]), stream=True):
            received.append(event)
    said = "".join(e.delta for e in received if e.type == "response.output_text.delta")
    assert said, [e.type for e in received]
    done = [e.item for e in received if e.type == "response.output_item.done"]
    assert [(item.type, item.status) for item in done] == [("message", "incomplete")]
    assert done[0].content[0].text == said

    request = {**responses_request(MIDSTREAM[failure]), "stream": True}
    status, _, text = harness.post_direct(chat_upstream.base_url + "/responses", json.dumps(request).encode())
    assert status == 200
    events = schema.assert_valid_stream(spec, text, "responses")
    failed = events[-1]["response"]
    assert failed["status"] == "failed"
    assert [item["status"] for item in failed["output"]] == ["incomplete"]
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert failed["output"][0]["content"][0]["text"] == deltas == said


@pytest.mark.parametrize("failure", MIDSTREAM)
def test_chat_client_failed_stream_keeps_the_text(responses_upstream, failure):
    """A Chat client keeps every fragment the upstream sent before failing:
    the chunks it received add up to the upstream's text so far."""
    client = harness.client(responses_upstream)
    mark = responses_upstream.tap.mark()
    content = []
    with pytest.raises(openai.APIError):
        with client.chat.completions.stream(**chat_request(MIDSTREAM[failure])) as stream:
            for event in stream:
                if event.type == "content.delta":
                    content.append(event.delta)
    (sent,) = responses_upstream.tap.since(mark)
    _, _, upstream_text = harness.post_direct(responses_upstream.upstream_url + sent.path, sent.body)
    upstream_said = "".join(
        p["delta"] for p in harness.sse_payloads(upstream_text) if p.get("type") == "response.output_text.delta"
    )
    assert upstream_said
    assert "".join(content) == upstream_said


@pytest.mark.parametrize("failure", MIDSTREAM)
def test_responses_client_non_streaming_failure(chat_upstream, spec, failure):
    """Without streaming, the upstream answers 500 (`demo:fail-midstream`)
    or sends half a body (`demo:cut`): a 5xx error for the SDK."""
    client = harness.client(chat_upstream)
    with pytest.raises(openai.InternalServerError) as raised:
        client.responses.create(**responses_request(MIDSTREAM[failure]))
    assert raised.value.status_code == (500 if failure == "error-midstream" else 502)
    assert not spec.errors(raised.value.response.json(), "ErrorResponse")


@pytest.mark.parametrize("failure", MIDSTREAM)
def test_chat_client_non_streaming_failure(responses_upstream, spec, failure):
    client = harness.client(responses_upstream)
    with pytest.raises(openai.InternalServerError) as raised:
        client.chat.completions.create(**chat_request(MIDSTREAM[failure]))
    assert raised.value.status_code == (500 if failure == "error-midstream" else 502)
    assert not spec.errors(raised.value.response.json(), "ErrorResponse")


# --------------------------------------------------------------------------
# A slow upstream: streamed through as it comes, not buffered
# --------------------------------------------------------------------------

SLOW = "one two three four five six seven eight demo:slow 100"


def test_responses_client_slow_upstream_streams_as_it_comes(chat_upstream):
    client = harness.client(chat_upstream)
    start = time.monotonic()
    first_delta = None
    with client.responses.stream(**responses_request(SLOW)) as stream:
        for event in stream:
            if event.type == "response.output_text.delta" and first_delta is None:
                first_delta = time.monotonic() - start
        final = stream.get_final_response()
    total = time.monotonic() - start
    assert final.output_text.startswith('You said: "one two three')
    # About 20 chunks 100 ms apart: the first text arrives long before the end.
    assert total > 1.0
    assert first_delta is not None and first_delta < total / 2, (first_delta, total)


def test_chat_client_slow_upstream_streams_as_it_comes(responses_upstream):
    client = harness.client(responses_upstream)
    start = time.monotonic()
    first_content = None
    with client.chat.completions.stream(**chat_request(SLOW)) as stream:
        for event in stream:
            if event.type == "content.delta" and first_content is None:
                first_content = time.monotonic() - start
        completion = stream.get_final_completion()
    total = time.monotonic() - start
    assert completion.choices[0].message.content.startswith('You said: "one two three')
    assert total > 1.0
    assert first_content is not None and first_content < total / 2, (first_content, total)


# --------------------------------------------------------------------------
# Requests the bridge refuses itself
# --------------------------------------------------------------------------


def test_chat_client_asking_for_several_choices_is_refused(responses_upstream, spec):
    """`n > 1` cannot be answered by a Responses upstream: refused with a 400
    naming `n` (the default policy), before anything is sent upstream."""
    client = harness.client(responses_upstream)
    mark = responses_upstream.tap.mark()
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(**chat_request("Hello"), n=2)
    assert raised.value.status_code == 400
    assert raised.value.param == "n", raised.value.body
    assert not spec.errors(raised.value.response.json(), "ErrorResponse")
    assert responses_upstream.tap.since(mark) == []
