"""A Responses client over a Chat upstream that replays a recorded Chat
Completions stream or body (`wirebridge demo --api chat --replay FILE`,
served as recorded): every event parses into the SDK's typed classes, the
SDK's accumulator builds the final response, the content equals the
recording's, and every object the bridge emits (and the request it sends
upstream) is valid against the official spec.

Recordings with known quirks:

* `chat-stream-n3-choices.sse`, `chat-json-n3-choices.json`: three choices;
  a Responses answer has one, so only choice 0 is carried (the others are
  dropped and reported as `extra_choices`).
* `chat-stream-finish-length.sse`, `chat-json-finish-length.json`: cut by
  `max_tokens`: an `incomplete` response (`max_output_tokens`).
* `azure-model-router.1.chunks.txt`: a leading chunk with `id: ""`,
  `object: ""`, `model: ""`, no choices and `prompt_filter_results`. The
  response is named when the first chunk arrives (`response.created`), so
  with no model named there it carries the requested model.
* `azure__azure-deepseek-reasoning.1.chunks.txt`: not an OpenAI model;
  `reasoning_content` deltas become a reasoning item, and its usage has a
  non-standard top-level `reasoning_tokens`, which is not compared.
"""

from __future__ import annotations

import json

import pydantic
import pytest

import checks
import drive
import harness
import recorded
import schema

SHARED_STREAMS = sorted((harness.FIXTURES / "openai-python").glob("chat-stream-*.sse")) + sorted(
    (harness.FIXTURES / "vercel-ai" / "chat").glob("*.chunks.txt")
)
SHARED_BODIES = sorted((harness.FIXTURES / "openai-python").glob("chat-json-*.json")) + [
    harness.FIXTURES / "vercel-ai" / "chat" / "openai-text.json"
]
# The project's own recordings of real servers (tests/recorded/SERVER/).
STREAMS = SHARED_STREAMS + harness.recorded_answers("chat-stream-*.sse")
BODIES = SHARED_BODIES + harness.recorded_answers("chat-json-*.json")


def fixture_id(path) -> str:
    if path.is_relative_to(harness.RECORDED):
        return "recorded/" + str(path.relative_to(harness.RECORDED))
    return str(path.relative_to(harness.FIXTURES))


def test_every_recorded_chat_answer_is_covered():
    """Every Chat stream and body in the fixtures is replayed here, or (HTTP
    error bodies) in test_failures.py."""
    chat_files = {
        p for p in harness.FIXTURES.rglob("*") if p.is_file() and (p.suffix == ".sse" or "/chat/" in str(p))
    } | set((harness.FIXTURES / "openai-python").glob("chat-json-*.json"))
    error_bodies = {harness.FIXTURES / "vercel-ai" / "chat" / "reasoning-model-legacy-parameter-error.json"}
    assert chat_files == set(SHARED_STREAMS) | set(SHARED_BODIES) | error_bodies
    assert len(SHARED_STREAMS) == 15 and len(SHARED_BODIES) == 7
    assert len(STREAMS) > len(SHARED_STREAMS) and len(BODIES) > len(SHARED_BODIES), "no recordings of our own"


def client_request(expected: recorded.Expected, path) -> dict:
    """What the recorded answer was an answer to, as a Responses request:
    the tools it calls, log probabilities when it carries them."""
    request = {"model": "gpt-4o", "input": "Replay the recording"}
    names = list(dict.fromkeys(call.name for call in expected.calls))
    if names:
        request["tools"] = [
            {"type": "function", "name": n, "parameters": {"type": "object"}, "strict": False} for n in names
        ]
    if "logprobs" in path.name:
        request["include"] = ["message.output_text.logprobs"]
        request["top_logprobs"] = 2
    if "finish-length" in path.name:
        request["max_output_tokens"] = 16
    return request


@pytest.fixture(scope="module", params=STREAMS, ids=fixture_id)
def stream_replay(request, wirebridge, log_dir):
    path = request.param
    chain = harness.start_chain(log_dir, path.name, "chat", replay=path)
    expected = recorded.from_chat_chunks(recorded.payloads(path))
    yield chain, path, expected
    harness.stop_checked(chain)


@pytest.fixture(scope="module", params=BODIES, ids=fixture_id)
def body_replay(request, wirebridge, log_dir):
    path = request.param
    chain = harness.start_chain(log_dir, path.name, "chat", replay=path)
    expected = recorded.from_chat_body(json.loads(path.read_text(encoding="utf-8")))
    yield chain, path, expected
    harness.stop_checked(chain)


def check(observed, expected, path, request):
    if not expected.model:
        expected.model = request["model"]
    checks.assert_content(
        observed,
        expected,
        reasoning=True,
        separate_messages=True,
        usage=expected.usage is not None,
        logprobs="logprobs" in path.name,
    )


@pytest.mark.parametrize("style", ["create-stream", "stream-helper"])
def test_chat_stream_to_responses_client(stream_replay, style):
    chain, path, expected = stream_replay
    request = client_request(expected, path)
    observed = drive.responses_client(chain, style, request)
    check(observed, expected, path, request)


def test_chat_stream_to_responses_client_schema(stream_replay, spec):
    chain, path, expected = stream_replay
    mark = chain.tap.mark()
    request = {**client_request(expected, path), "stream": True}
    schema.assert_valid_client_request(spec, request, "responses")
    status, content_type, text = harness.post_direct(chain.base_url + "/responses", json.dumps(request).encode())
    assert status == 200, text
    assert content_type.startswith("text/event-stream"), content_type
    events = schema.assert_valid_stream(spec, text, "responses")
    assert events[-1]["type"] in ("response.completed", "response.incomplete")
    sent = drive.one_upstream_request(chain, mark, "/chat/completions")
    body = schema.assert_valid_request(spec, sent, "chat")
    assert body["stream"] is True


def test_chat_body_to_responses_client(body_replay):
    chain, path, expected = body_replay
    request = client_request(expected, path)
    observed = drive.responses_client(chain, "create", request)
    check(observed, expected, path, request)


def test_chat_body_to_responses_client_schema(body_replay, spec):
    chain, path, expected = body_replay
    mark = chain.tap.mark()
    request = client_request(expected, path)
    schema.assert_valid_client_request(spec, request, "responses")
    status, content_type, text = harness.post_direct(chain.base_url + "/responses", json.dumps(request).encode())
    assert status == 200, text
    assert content_type.startswith("application/json"), content_type
    schema.assert_valid_body(spec, status, text, "responses")
    sent = drive.one_upstream_request(chain, mark, "/chat/completions")
    body = schema.assert_valid_request(spec, sent, "chat")
    assert not body.get("stream")


class Location(pydantic.BaseModel):
    """The structured output the openai-python recordings asked for."""

    city: str
    temperature: float
    units: str


STRUCTURED = [
    harness.FIXTURES / "openai-python" / "chat-stream-json-schema.sse",
    harness.FIXTURES / "openai-python" / "chat-json-n3-choices.json",
]


@pytest.mark.parametrize("path", STRUCTURED, ids=fixture_id)
def test_structured_output_to_responses_client(wirebridge, log_dir, spec, path):
    """`text_format=` with a pydantic model: the SDK sends a strict JSON
    schema, the bridge sends it as `response_format`, and the SDK parses the
    recorded answer (choice 0) into the model."""
    if path.suffix == ".sse":
        expected = recorded.from_chat_chunks(recorded.payloads(path))
    else:
        expected = recorded.from_chat_body(json.loads(path.read_text(encoding="utf-8")))
    chain = harness.start_chain(log_dir, "structured-" + path.name, "chat", replay=path)
    try:
        client = harness.client(chain)
        mark = chain.tap.mark()
        if path.suffix == ".sse":
            with client.responses.stream(model="gpt-4o", input="Weather in SF?", text_format=Location) as stream:
                response = stream.get_final_response()
        else:
            response = client.responses.parse(model="gpt-4o", input="Weather in SF?", text_format=Location)
        assert response.output_parsed == Location.model_validate_json(expected.text)
        sent = drive.one_upstream_request(chain, mark, "/chat/completions")
        body = schema.assert_valid_request(spec, sent, "chat")
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["name"] == "Location"
        assert body["response_format"]["json_schema"]["strict"] is True
        sent_schema = body["response_format"]["json_schema"]["schema"]
        assert sent_schema["properties"] == Location.model_json_schema()["properties"]
        assert sent_schema["required"] == ["city", "temperature", "units"]
    finally:
        harness.stop_checked(chain)
