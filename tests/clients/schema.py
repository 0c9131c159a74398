"""Every JSON object the bridge emits, against the official OpenAPI spec
(tests/schema/validate.py's loading, rewrites and per-frame dispatch)."""

from __future__ import annotations

import json

import harness

validate = harness.validate

REQUEST_SCHEMA = {"chat": "CreateChatCompletionRequest", "responses": "CreateResponse"}
BODY_SCHEMA = {"chat": "CreateChatCompletionResponse", "responses": "Response"}


def _report(errors: list[str], what: str) -> str:
    more = f"\n  (+{len(errors) - 5} more)" if len(errors) > 5 else ""
    return f"{what} is not valid against the spec:\n  " + "\n  ".join(errors[:5]) + more


def assert_valid_client_request(spec, request: dict, api: str) -> None:
    """What the test sends is itself valid: a failure then points at the bridge."""
    errors = spec.errors(request, REQUEST_SCHEMA[api])
    assert not errors, _report(errors, f"the client request {json.dumps(request)[:2000]}")


def assert_valid_request(spec, captured: harness.Captured, api: str) -> dict:
    """The request the bridge sent upstream (`api`: the upstream's API)."""
    assert captured.headers.get("content-type", "").startswith("application/json"), captured.headers
    body = captured.json()
    errors = spec.errors(body, REQUEST_SCHEMA[api])
    assert not errors, _report(errors, f"the upstream request {json.dumps(body)[:2000]}")
    return body


def assert_valid_body(spec, status: int, text: str, api: str) -> dict:
    """A JSON body the bridge sent the client: a success against the API's
    response schema, an error against ErrorResponse."""
    body = json.loads(text)
    name = BODY_SCHEMA[api] if status == 200 else "ErrorResponse"
    errors = spec.errors(body, name)
    assert not errors, _report(errors, f"the {status} body {text[:2000]}")
    return body


def assert_valid_stream(spec, text: str, api: str) -> list[dict]:
    """An SSE stream the bridge sent the client: each event against
    ResponseStreamEvent (a nested `error` event against the Open Responses
    spec's ErrorStreamingEvent), each Chat chunk against
    CreateChatCompletionStreamResponse (an error chunk against ErrorResponse).
    Responses frames are named after their `type` and there is no `[DONE]`;
    a Chat stream ends with `[DONE]`, after its error chunk if it failed."""
    frames = harness.sse_frames(text)
    assert frames, "an empty stream"
    kind = "chat-stream" if api == "chat" else "responses-stream"
    errors = list(validate.frame_errors(spec, kind, frames))
    assert not errors, _report(errors, "the stream")
    payloads = [json.loads(data) for _, data in frames if data.strip() != "[DONE]"]
    if api == "responses":
        for n, (event, data) in enumerate(frames):
            assert event == json.loads(data)["type"], f"frame {n}: `event: {event}` for a {json.loads(data)['type']} payload"
    else:
        assert all(event is None for event, _ in frames), "Chat frames carry no event names"
        dones = [n for n, (_, data) in enumerate(frames) if data.strip() == "[DONE]"]
        assert dones == [len(frames) - 1], f"[DONE] at frames {dones} of {len(frames)}"
        errors = [n for n, payload in enumerate(payloads) if "error" in payload]
        assert errors in ([], [len(payloads) - 1]), f"error chunks at {errors} of {len(payloads)}"
    return payloads
