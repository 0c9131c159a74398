"""Responses clients (the official Python SDK) through the bridge to
llama-server's `/v1/chat/completions`, with `--profile llama-cpp`.

What is asserted is what the bridge owns, never the model's words: the
server accepted every translated request (no 4xx), each request is valid
Chat, every event and body the client got is valid against the spec and
typed by the SDK, and the client got exactly what the server answered
(text, calls, usage, outcome), computed from the server's own bytes as the
relay recorded them."""

from __future__ import annotations

import json

import pytest

import checks
import drive
import harness
import recorded
import schema
from conftest import LiveChain, timings

MODEL = "gemma-3-270m"

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                   "additionalProperties": False},
    "strict": True,
}
TIME = {
    "type": "function",
    "name": "get_time",
    "description": "The time in a time zone.",
    # An enum, so that the server's grammar ends the forced call's
    # arguments: a free string lets this small model write on to the
    # token cap, and a call cut there has arguments no server reads back.
    "parameters": {"type": "object", "properties": {"tz": {"type": "string", "enum": ["UTC", "Europe/Paris"]}},
                   "required": ["tz"],
                   "additionalProperties": False},
    "strict": True,
}


def server_answer(exchange) -> recorded.Expected:
    """What llama-server answered, read from its own bytes."""
    if exchange.streamed:
        return recorded.from_chat_chunks(harness.sse_payloads(exchange.response.decode("utf-8")))
    return recorded.from_chat_body(exchange.answer_json())


def one_chat_request(chain: LiveChain, mark: int, spec):
    """The one Chat request a turn sent: accepted by the server, valid Chat."""
    sent = chain.accepted(mark, "/chat/completions")
    assert len(sent) == 1, [e.path for e in sent]
    body = sent[0].json()
    errors = spec.errors(body, "CreateChatCompletionRequest")
    assert not errors, f"the Chat request is not valid: {errors[:5]}\n{json.dumps(body)[:2000]}"
    return sent[0], body


@pytest.mark.parametrize("style", drive.RESPONSES_STYLES)
def test_a_text_turn_reaches_the_client_as_the_server_wrote_it(chat_text, spec, style):
    request = {"model": MODEL, "instructions": "Answer briefly.", "input": "Say hello to Ada.",
               "max_output_tokens": 24}
    schema.assert_valid_client_request(spec, request, "responses")
    mark = chat_text.mark()
    observed = drive.responses_client(chat_text, style, request)
    exchange, body = one_chat_request(chat_text, mark, spec)
    assert body["max_tokens"] == 24
    assert body["messages"][0] == {"role": "system", "content": "Answer briefly."}
    assert body["messages"][1] == {"role": "user", "content": "Say hello to Ada."}
    assert body.get("stream", False) == (style != "create")
    expected = server_answer(exchange)
    checks.assert_content(observed, expected, reasoning=True, separate_messages=True)
    # The output tokens the client was told are the ones the server timed.
    assert timings(exchange)["predicted_n"] == observed.usage.output_tokens


def test_a_named_tool_choice_forces_the_call_on_llama_server(chat_tools, spec):
    """llama-server reads only the string forms of `tool_choice` (an object
    is taken as `auto`): the profile sends `required` with only the named
    tool offered, and the server's grammar makes the call."""
    request = {"model": MODEL, "instructions": "Call get_weather.", "input": "What is the weather in Paris?",
               "tools": [TIME, WEATHER],
               "tool_choice": {"type": "function", "name": "get_weather"}, "max_output_tokens": 64}
    schema.assert_valid_client_request(spec, request, "responses")
    mark = chat_tools.mark()
    observed = drive.responses_client(chat_tools, "stream-helper", request)
    exchange, body = one_chat_request(chat_tools, mark, spec)
    assert body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather"]
    expected = server_answer(exchange)
    assert [c.name for c in expected.calls] == ["get_weather"], "the server made no call"
    checks.assert_content(observed, expected, reasoning=True, separate_messages=True)
    assert set(observed.calls[0].parsed) == {"city"}


def test_a_tool_loop_pairs_each_call_with_its_output(chat_tools, chat_text, spec):
    """Turn 1 forces a call; turn 2 chains on it with the call's output and
    forces another; turn 3 sends the whole history to the text server for
    an answer. Each server accepted the Chat history the bridge built."""
    client = harness.client(chat_tools)
    first = client.responses.create(model=MODEL, instructions="Call get_weather.",
                                    input="Weather and time in Paris?", tools=[WEATHER, TIME],
                                    tool_choice={"type": "function", "name": "get_weather"},
                                    max_output_tokens=64)
    call = next(item for item in first.output if item.type == "function_call")
    assert call.name == "get_weather"
    output = json.dumps({"city": json.loads(call.arguments)["city"], "sky": "clear", "celsius": 21})

    mark = chat_tools.mark()
    second = client.responses.create(model=MODEL, previous_response_id=first.id, tools=[WEATHER, TIME],
                                     instructions="Call get_time.",
                                     input=[{"type": "function_call_output", "call_id": call.call_id,
                                             "output": output}],
                                     tool_choice={"type": "function", "name": "get_time"}, max_output_tokens=64)
    _, body = one_chat_request(chat_tools, mark, spec)
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"] == [{"id": call.call_id, "type": "function",
                                          "function": {"name": "get_weather", "arguments": call.arguments}}]
    assert messages[3] == {"role": "tool", "tool_call_id": call.call_id, "content": output}
    time_call = next(item for item in second.output if item.type == "function_call")
    assert time_call.name == "get_time" and time_call.call_id != call.call_id

    # The whole history, as a client that keeps no server state sends it.
    history = [{"role": "user", "content": "Weather and time in Paris?"},
               call.model_dump(exclude_none=True), {"type": "function_call_output", "call_id": call.call_id,
                                                    "output": output},
               time_call.model_dump(exclude_none=True), {"type": "function_call_output",
                                                         "call_id": time_call.call_id, "output": "12:00"}]
    mark = chat_text.mark()
    text_client = harness.client(chat_text)
    # The answer in text: offered the tools with the choice its own, the
    # model may start a call the server cannot parse (a 500 from it, passed
    # on), which is the model's doing, not what this checks.
    final = text_client.responses.create(model=MODEL, input=history, tools=[WEATHER, TIME], store=False,
                                         tool_choice="none", max_output_tokens=24)
    exchange, body = one_chat_request(chat_text, mark, spec)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool"]
    assert [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"] == [call.call_id,
                                                                                   time_call.call_id]
    expected = server_answer(exchange)
    checks.assert_content(checks.from_response(final), expected, reasoning=True, separate_messages=True)


def test_nothing_is_reported_lost_for_what_llama_server_takes(chat_tools, chat_text, spec):
    """Text, instructions, a token limit, function tools and a forced choice
    all have a place in what llama-server reads: no loss is reported."""
    for chain, extra in ((chat_text, {}),
                         (chat_tools, {"instructions": "Call get_weather.", "tools": [WEATHER],
                                       "tool_choice": {"type": "function", "name": "get_weather"}})):
        client = harness.client(chain)
        raw = client.responses.with_raw_response.create(model=MODEL, input="Weather in Paris?",
                                                        max_output_tokens=32, **extra)
        assert "x-wirebridge-dropped" not in raw.headers, raw.headers.get("x-wirebridge-dropped")
        assert raw.parse().status in ("completed", "incomplete")


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_chain_sends_the_stored_turns_back(chat_text, spec, stream):
    client = harness.client(chat_text)
    first = client.responses.create(model=MODEL, input="My name is Ada.", max_output_tokens=16)
    said = "".join(part.text for item in first.output if item.type == "message" for part in item.content)
    mark = chat_text.mark()
    request = {"model": MODEL, "previous_response_id": first.id, "input": "What is my name?",
               "max_output_tokens": 16}
    drive.responses_client(chat_text, "stream-helper" if stream else "create", request)
    _, body = one_chat_request(chat_text, mark, spec)
    assert body["messages"] == [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": said},
        {"role": "user", "content": "What is my name?"},
    ]
