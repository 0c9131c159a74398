"""Responses clients through the real binary in front of a Responses API
that keeps no state: the demo upstream with `--upstream-api responses`,
which refuses `previous_response_id` by name as vLLM, llama.cpp and DeepSeek
do. The bridge keeps the conversations; what the upstream gets is checked
through the tap (always the whole conversation, never a stateful field),
what the client gets through the official SDK and both specs' schemas."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import openai
import pytest

import harness

STATEFUL = ("previous_response_id", "store", "conversation")


def sent_since(chain, mark: int) -> list[dict]:
    captured = [c for c in chain.tap.since(mark) if c.path.endswith("/responses")]
    bodies = [c.json() for c in captured]
    for body in bodies:
        for field in STATEFUL:
            assert field not in body, f"{field} reached the upstream: {json.dumps(body)[:600]}"
    return bodies


def said(body: dict) -> list[tuple[str | None, str]]:
    """Who said what in a Responses request's input."""
    out = []
    for item in body["input"]:
        content = item.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        if content is None:
            content = item.get("output", item.get("type"))
        out.append((item.get("role"), content))
    return out


def valid_events(spec, events) -> None:
    for event in events:
        raw = event.model_dump(mode="json", exclude_unset=True)
        errors = spec.event_errors(raw)
        assert not errors, f"{json.dumps(raw)[:800]}: {errors[:3]}"
    assert [e.sequence_number for e in events] == list(range(len(events)))


@pytest.mark.parametrize("stream", [False, True])
def test_a_conversation_continues_and_is_read_back(responses_upstream, spec, stream):
    client = harness.client(responses_upstream)
    mark = responses_upstream.tap.mark()
    first = client.responses.create(model="demo", input="say alpha", instructions="Be brief.")
    assert first.store is True and "alpha" in first.output_text
    follow_up = {"model": "demo", "input": "say bravo", "previous_response_id": first.id}
    if stream:
        events = list(client.responses.create(**follow_up, stream=True))
        valid_events(spec, events)
        second = events[-1].response
    else:
        second = client.responses.create(**follow_up)
    assert second.previous_response_id == first.id
    third = client.responses.create(model="demo", input="say charlie", previous_response_id=second.id)
    sent = sent_since(responses_upstream, mark)
    assert len(sent) == 3
    assert sent[0]["instructions"] == "Be brief."
    assert "instructions" not in sent[1], "instructions are not inherited"
    assert [who for who, _ in said(sent[2])] == ["user", "assistant", "user", "assistant", "user"]
    assert said(sent[2])[3] == ("assistant", second.output_text)
    assert "charlie" in third.output_text

    # The bridge answers for what it keeps, for this credential only.
    assert client.responses.retrieve(second.id).output_text == second.output_text
    items = client.responses.input_items.list(third.id)
    assert [i.content[0].text for i in items.data] == ["say charlie"]
    stranger = harness.client(responses_upstream)
    stranger.api_key = "sk-someone-else"
    with pytest.raises(Exception) as refused:
        stranger.responses.retrieve(second.id)
    assert getattr(refused.value, "status_code", None) == 404
    client.responses.delete(first.id)
    mark = responses_upstream.tap.mark()
    with pytest.raises(Exception) as gone:
        client.responses.create(model="demo", input="?", previous_response_id=third.id)
    assert getattr(gone.value, "status_code", None) == 404
    assert getattr(gone.value, "code", None) == "previous_response_not_found", gone.value
    assert sent_since(responses_upstream, mark) == [], "a refused turn reaches no upstream"


def test_a_tool_loop_chained_by_the_agents_sdk(responses_upstream, spec, monkeypatch):
    """The Agents SDK runs a tool loop, then continues it with
    `previous_response_id`: each time the upstream gets the call and its
    result in a whole conversation."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    import agents

    agents.set_tracing_disabled(True)
    ran = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        ran.append(city)
        return f"{city}: sunny, 18 C"

    model = agents.OpenAIResponsesModel(model="demo", openai_client=harness.async_client(responses_upstream))
    assistant = agents.Agent(name="assistant", instructions="Answer briefly.", model=model, tools=[get_weather])

    async def run():
        first = await agents.Runner.run(assistant, "call get_weather with city=Paris")
        second = await agents.Runner.run(assistant, "call get_weather with city=Oslo",
                                         previous_response_id=first.last_response_id)
        return first, second

    mark = responses_upstream.tap.mark()
    first, second = asyncio.run(asyncio.wait_for(run(), 40))
    assert ran == ["Paris", "Oslo"]
    assert first.final_output == "The tool returned: Paris: sunny, 18 C"
    assert second.final_output == "The tool returned: Oslo: sunny, 18 C"
    sent = sent_since(responses_upstream, mark)
    assert len(sent) == 4
    last = [item["type"] if "type" in item else "message" for item in sent[3]["input"]]
    # Both runs' calls, results and answers, in order.
    assert last == ["message", "function_call", "function_call_output", "message",
                    "message", "function_call", "function_call_output"], last
    calls = [i for i in sent[3]["input"] if i.get("type") == "function_call"]
    outputs = [i for i in sent[3]["input"] if i.get("type") == "function_call_output"]
    assert [c["call_id"] for c in calls] == [o["call_id"] for o in outputs]


def test_an_upstream_error_keeps_its_status_and_message(responses_upstream):
    client = harness.client(responses_upstream)
    with pytest.raises(Exception) as failed:
        client.responses.create(model="demo", input="demo:error 429")
    assert getattr(failed.value, "status_code", None) == 429


def test_a_backend_that_keeps_its_own_responses_is_passed_through(wirebridge, log_dir):
    """Under a profile that says the backend keeps its responses (`openai`),
    the bridge keeps none: a Responses request reaches the backend byte for
    byte, stateful fields and all, and the backend's answer (here the
    demo's refusal of `previous_response_id`, as a stateless server would
    give it) reaches the client as it was sent. Chat clients are still
    translated."""
    chain = harness.start_chain(log_dir, "keeps-responses", "responses", profile="openai")
    try:
        mark = chain.tap.mark()
        body = b'{"model":"demo","input":"Hi again","previous_response_id":"resp_kept_upstream","store":true}'
        status, _, text = harness.post_direct(chain.base_url + "/responses", body)
        direct_status, _, direct_text = harness.post_direct(chain.upstream_url + "/v1/responses", body)
        sent = chain.tap.since(mark)
        assert [c.path for c in sent] == ["/v1/responses"], sent
        assert sent[0].body == body
        assert (status, text) == (direct_status, direct_text)
        assert status == 400 and "previous_response_id" in text, text

        client = harness.client(chain)
        mark = chain.tap.mark()
        answer = client.chat.completions.create(model="demo", messages=[{"role": "user", "content": "Hello"}])
        assert answer.choices[0].message.content.startswith('You said: "Hello"')
        assert [c.path for c in chain.tap.since(mark)] == ["/v1/responses"]
    finally:
        harness.stop_checked(chain)


# What some servers answer with status 200 instead of a `Response`.
ERROR_BODY = {"error": {"message": "model is loading", "type": "server_error", "code": "model_loading"}}
NOT_A_RESPONSE = {"hello": "world"}
# A backend's whole `Response`, answered to a request that asked for a stream.
WHOLE_RESPONSE = {
    "id": "backend-1", "object": "response", "created_at": 1700000000, "status": "completed", "model": "demo",
    "output": [{"type": "message", "id": "msg_backend", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "Alpha, whole.", "annotations": [], "logprobs": []}]}],
    "usage": {"input_tokens": 4, "output_tokens": 3, "total_tokens": 7},
}


@pytest.fixture
def replaying(wirebridge, log_dir, tmp_path):
    """Starts a bridge (`--upstream-api responses`) in front of the demo
    upstream answering every request with one JSON body, whatever it asked."""
    chains = []

    def start(name: str, body: dict):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(body))
        chain = harness.start_chain(log_dir, name, "responses", replay=path)
        chains.append(chain)
        return chain

    yield start
    for chain in chains:
        harness.stop_checked(chain)


def post(chain, body: dict) -> httpx.Response:
    """POST /v1/responses with a credential (the bridge keeps state per
    credential), read whole."""
    with httpx.Client(trust_env=False, timeout=20) as http:
        return http.post(chain.base_url + "/responses", json=body,
                         headers={"authorization": "Bearer sk-wirebridge-test"})


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("name, answer, message", [
    ("error-body", ERROR_BODY, "model is loading"),
    ("not-a-response", NOT_A_RESPONSE, "not a Response"),
])
def test_a_200_answer_that_is_no_response_is_a_502_and_nothing_is_kept(replaying, name, answer, message, stream):
    """A stateless backend answers 200 with an error body, or with a JSON
    object that is not a `Response`: the client gets a 502 in its own
    dialect with the backend's message (streamed or not: no JSON body in
    place of the stream it asked for), and nothing is stored to continue."""
    chain = replaying(f"{name}-{'stream' if stream else 'body'}", answer)
    mark = chain.tap.mark()
    reply = post(chain, {"model": "demo", "input": "say alpha", "stream": stream})
    assert len(sent_since(chain, mark)) == 1
    # Whatever the bridge named in its answer must not be continuable: it
    # kept nothing, and a refused continuation reaches no upstream.
    for named in sorted(set(re.findall(r'"(resp_[A-Za-z0-9_]+)"', reply.text))):
        mark = chain.tap.mark()
        again = post(chain, {"model": "demo", "input": "go on", "previous_response_id": named})
        assert again.status_code == 404, f"{named} was kept from {reply.text[:300]}: {again.text[:300]}"
        assert sent_since(chain, mark) == []
    assert reply.status_code == 502, reply.text[:600]
    assert reply.headers["content-type"].startswith("application/json")
    error = reply.json()["error"]
    assert message in error["message"], error
    assert error["type"] and "code" in error

    # The official SDK raises on it, streamed or not.
    client = harness.client(chain)
    with pytest.raises(openai.APIStatusError) as raised:
        answered = client.responses.create(model="demo", input="say alpha", stream=stream)
        if stream:
            list(answered)
    assert raised.value.status_code == 502
    assert message in str(raised.value)


def test_a_body_answered_to_a_streaming_request_is_streamed(replaying, spec):
    """A backend that ignores `stream` and answers with a whole `Response`:
    the client that asked for a stream gets one (valid events, the text
    whole), and the response is kept to continue."""
    chain = replaying("whole-body-for-a-stream", WHOLE_RESPONSE)
    client = harness.client(chain)
    mark = chain.tap.mark()
    events = list(client.responses.create(model="demo", input="say alpha", stream=True))
    valid_events(spec, events)
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == "Alpha, whole."
    first = events[-1].response
    assert first.output_text == "Alpha, whole." and first.id.startswith("resp_")
    assert first.usage.output_tokens == 3
    sent = sent_since(chain, mark)
    assert len(sent) == 1 and sent[0]["stream"] is True

    second = client.responses.create(model="demo", input="say bravo", previous_response_id=first.id)
    assert second.previous_response_id == first.id
    sent = sent_since(chain, mark)
    assert said(sent[1]) == [("user", "say alpha"), ("assistant", "Alpha, whole."), ("user", "say bravo")]
