"""A multi-turn tool loop in both directions, against the demo upstream:
the model calls one tool (or two in parallel), the client runs them and
sends the results back the way its API does, and the model answers from
them. The second request the bridge sends upstream must carry the calls and
their results, paired by call id, and be valid against the spec."""

from __future__ import annotations

import json

import pytest

import checks
import drive
import harness
import schema
from test_demo_upstream import TIME, WEATHER

# Strict tools: the SDK's stream helpers then parse the arguments themselves.
STRICT = [
    {**tool, "parameters": {**tool["parameters"], "additionalProperties": False}, "strict": True}
    for tool in (WEATHER, TIME)
]
RESPONSES_TOOLS = [{"type": "function", **tool} for tool in STRICT]
CHAT_TOOLS = [{"type": "function", "function": tool} for tool in STRICT]

PROMPTS = {
    "one-call": "call get_weather with city=Paris",
    "two-parallel-calls": "call get_weather with city=Paris and get_time with tz=UTC",
}
RESULTS = {"get_weather": {"city": "Paris", "sky": "clear", "temp_c": 18}, "get_time": "12:00 UTC"}


def run_tool(name: str, arguments: str) -> str:
    args = json.loads(arguments)
    assert args == ({"city": "Paris"} if name == "get_weather" else {"tz": "UTC"}), (name, args)
    result = RESULTS[name]
    return result if isinstance(result, str) else json.dumps(result)


def expected_answer(outputs: list[str]) -> str:
    """The demo upstream's documented answer to tool results."""
    if len(outputs) == 1:
        return f"The tool returned: {outputs[0]}"
    return "The tools returned: " + "; ".join(outputs)


@pytest.mark.parametrize("mode", ["stream", "create"])
@pytest.mark.parametrize("prompt", PROMPTS)
def test_responses_client_tool_loop(chat_upstream, spec, prompt, mode):
    client = harness.client(chat_upstream)
    items: list = [{"role": "user", "content": PROMPTS[prompt]}]

    def turn():
        request = {"model": "demo", "input": items, "tools": RESPONSES_TOOLS}
        if mode == "stream":
            with client.responses.stream(**request) as stream:
                return stream.get_final_response()
        return client.responses.create(**request)

    mark = chat_upstream.tap.mark()
    first = turn()
    calls = [item for item in first.output if item.type == "function_call"]
    assert len(calls) == (2 if prompt == "two-parallel-calls" else 1), first.output
    if mode == "stream":
        assert [c.parsed_arguments for c in calls] == [json.loads(c.arguments) for c in calls]
    assert len({c.call_id for c in calls}) == len(calls), "call ids are not unique"
    items += first.output  # as the SDK documents: the output items go back as they are
    outputs = []
    for call in calls:
        outputs.append(run_tool(call.name, call.arguments))
        items.append({"type": "function_call_output", "call_id": call.call_id, "output": outputs[-1]})
    second = turn()
    assert second.status == "completed"
    assert [i.type for i in second.output] == ["message"]
    assert second.output_text == expected_answer(outputs)

    sent = chat_upstream.tap.since(mark)
    assert len(sent) == 2, [r.path for r in sent]
    body = schema.assert_valid_request(spec, sent[1], "chat")
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] + ["tool"] * len(calls)
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in messages[1]["tool_calls"]] == [
        (c.call_id, c.name, json.loads(c.arguments)) for c in calls
    ]
    assert [(m["tool_call_id"], m["content"]) for m in messages[2:]] == [
        (c.call_id, o) for c, o in zip(calls, outputs)
    ]
    expected = drive.upstream_answer(chat_upstream, sent[1])
    checks.assert_content(checks.from_response(second), expected, reasoning=True, separate_messages=True)


@pytest.mark.parametrize("mode", ["stream", "create"])
@pytest.mark.parametrize("prompt", PROMPTS)
def test_chat_client_tool_loop(responses_upstream, spec, prompt, mode):
    client = harness.client(responses_upstream)
    messages: list = [{"role": "user", "content": PROMPTS[prompt]}]

    def turn():
        request = {"model": "demo", "messages": messages, "tools": CHAT_TOOLS}
        if mode == "stream":
            with client.chat.completions.stream(**request, stream_options={"include_usage": True}) as stream:
                return stream.get_final_completion()
        return client.chat.completions.create(**request)

    mark = responses_upstream.tap.mark()
    first = turn()
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls
    assert len(calls) == (2 if prompt == "two-parallel-calls" else 1), choice.message
    if mode == "stream":
        assert [c.function.parsed_arguments for c in calls] == [json.loads(c.function.arguments) for c in calls]
    assert len({c.id for c in calls}) == len(calls), "call ids are not unique"
    # The assistant message goes back as the client got it, then one tool
    # message per call.
    messages.append(
        {
            "role": "assistant",
            "content": choice.message.content,
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in calls
            ],
        }
    )
    outputs = []
    for call in calls:
        outputs.append(run_tool(call.function.name, call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": outputs[-1]})
    second = turn()
    assert second.choices[0].finish_reason == "stop"
    assert second.choices[0].message.tool_calls in (None, [])
    assert second.choices[0].message.content == expected_answer(outputs)

    sent = responses_upstream.tap.since(mark)
    assert len(sent) == 2, [r.path for r in sent]
    body = schema.assert_valid_request(spec, sent[1], "responses")
    items = body["input"]
    kinds = [i.get("type", "message") for i in items]
    assert kinds == ["message"] + ["function_call"] * len(calls) + ["function_call_output"] * len(calls), kinds
    assert [(i["call_id"], i["name"], json.loads(i["arguments"])) for i in items[1 : 1 + len(calls)]] == [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in calls
    ]
    assert [(i["call_id"], i["output"]) for i in items[1 + len(calls) :]] == [(c.id, o) for c, o in zip(calls, outputs)]
    expected = drive.upstream_answer(responses_upstream, sent[1])
    checks.assert_content(checks.from_completion(second), expected, reasoning=False, separate_messages=False)
