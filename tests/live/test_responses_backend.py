"""The bridge in front of llama-server's own `/v1/responses`
(`--upstream-api responses`): Chat clients are translated to Responses and
back against a real Responses server; Responses clients get the server's
answers re-sent in the API's grammar, and conversations the server cannot
continue itself (it refuses `previous_response_id`: "llama.cpp does not
support 'previous_response_id'") are continued by the bridge, which sends
the whole conversation every turn."""

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


@pytest.mark.parametrize("style", drive.RESPONSES_STYLES)
def test_a_responses_client_gets_what_the_server_wrote(responses_text, spec, style):
    mark = responses_text.mark()
    observed = drive.responses_client(responses_text, style,
                                      {"model": MODEL, "input": "Say hello.", "max_output_tokens": 16})
    exchange, body = one_responses_request(responses_text, mark, spec)
    # Sent as the client wrote it, the string input as the message it is.
    assert body["model"] == MODEL and body["max_output_tokens"] == 16
    assert [(i["role"], i["content"][0]["text"]) for i in body["input"]] == [("user", "Say hello.")]
    assert "store" not in body and "previous_response_id" not in body
    checks.assert_content(observed, server_answer(exchange), reasoning=True, separate_messages=True)


@pytest.mark.parametrize("stream", [False, True])
def test_a_conversation_continues_over_a_server_that_keeps_nothing(responses_text, spec, stream):
    client = harness.client(responses_text)
    first = client.responses.create(model=MODEL, input="My name is Ada.", max_output_tokens=16,
                                    instructions="Answer briefly.")
    assert first.store is True
    mark = responses_text.mark()
    follow_up = {"model": MODEL, "previous_response_id": first.id, "input": "What is my name?",
                 "max_output_tokens": 16}
    if stream:
        events = list(client.responses.create(**follow_up, stream=True))
        checks.assert_typed_events(events)
        checks.assert_sequence(events)
        second = events[-1].response
    else:
        second = client.responses.create(**follow_up)
    assert second.previous_response_id == first.id
    exchange, body = one_responses_request(responses_text, mark, spec)
    assert exchange.status == 200
    assert "previous_response_id" not in body
    # The whole conversation, oldest first; instructions are not inherited.
    said = [(item.get("role"), item["content"][0]["text"]) for item in body["input"]]
    assert said == [("user", "My name is Ada."), ("assistant", first.output_text),
                    ("user", "What is my name?")]
    assert "instructions" not in body
    checks.assert_content(checks.from_response(second), server_answer(exchange),
                          reasoning=True, separate_messages=True)
    # The bridge answers for what it keeps.
    again = client.responses.retrieve(second.id)
    assert again.output_text == second.output_text
    items = client.responses.input_items.list(second.id)
    assert [i.content[0].text for i in items.data] == ["What is my name?"]


TIME = {
    "type": "function",
    "name": "get_time",
    "description": "The time in a time zone.",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"],
                   "additionalProperties": False},
    "strict": True,
}
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                   "additionalProperties": False},
    "strict": True,
}


@pytest.mark.parametrize("stream, choice", [
    (False, "required"),
    (True, "required"),
    (True, {"type": "function", "name": "get_weather"}),
])
def test_a_forced_call_through_the_servers_own_responses_api(responses_tools, spec, stream, choice):
    client = harness.client(responses_tools)
    request = {"model": MODEL, "instructions": "Call get_weather.", "input": "What is the weather in Paris?",
               "tools": [WEATHER, TIME], "tool_choice": choice, "max_output_tokens": 64}
    mark = responses_tools.mark()
    if stream:
        events = list(client.responses.create(**request, stream=True))
        checks.assert_typed_events(events)
        checks.assert_sequence(events)
        response = events[-1].response
    else:
        response = client.responses.create(**request)
    exchange, body = one_responses_request(responses_tools, mark, spec)
    assert exchange.status == 200
    [call] = [item for item in response.output if item.type == "function_call"]
    assert call.name == "get_weather"
    assert isinstance(json.loads(call.arguments), dict)
    checks.assert_content(checks.from_response(response), server_answer(exchange),
                          reasoning=True, separate_messages=True)


def test_a_conversation_compacts_over_the_servers_own_responses_api(responses_text, spec):
    """`client.responses.compact(...)`: the server writes the summary in a
    Responses request of the bridge's (it has no compaction of its own),
    and a later turn that carries the compaction item is sent the summary in
    its place, which the server accepts."""
    client = harness.client(responses_text)
    first = client.responses.create(model=MODEL, input="My name is Ada and I like green tea.",
                                    max_output_tokens=16)
    mark = responses_text.mark()
    raw = client.responses.with_raw_response.compact(model=MODEL, previous_response_id=first.id)
    assert raw.http_response.status_code == 200, raw.http_response.text
    compacted = raw.parse()
    assert [item.type for item in compacted.output] == ["message", "compaction"]
    exchange, body = one_responses_request(responses_text, mark, spec)
    assert not body.get("stream") and "store" not in body and "previous_response_id" not in body
    said = [(item.get("role"), item["content"][0]["text"] if isinstance(item["content"], list)
             else item["content"]) for item in body["input"]]
    assert said[0] == ("user", "My name is Ada and I like green tea.")
    assert said[1] == ("assistant", first.output_text)
    assert said[-1][0] == "user" and "summary" in said[-1][1].lower()
    assert exchange.answer_json()["output"], "the server wrote a summary"

    follow_up = [entry.model_dump(exclude_none=True, warnings=False) for entry in compacted.output]
    follow_up.append({"role": "user", "content": "What is my name?"})
    mark = responses_text.mark()
    second = client.responses.create(model=MODEL, input=follow_up, max_output_tokens=16)
    assert second.status in ("completed", "incomplete")
    _, body = one_responses_request(responses_text, mark, spec)
    texts = [item["content"][0]["text"] if isinstance(item["content"], list) else item["content"]
             for item in body["input"]]
    assert texts[0] == "My name is Ada and I like green tea."
    assert texts[1].startswith("[Summary of the earlier conversation]"), texts
    assert texts[2] == "What is my name?"
    assert "encrypted_content" not in json.dumps(body)
