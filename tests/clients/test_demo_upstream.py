"""Both directions against the demo upstream, through each way the SDK
reads an answer: a Responses client over a Chat upstream and a Chat client
over a Responses upstream, each streaming event by event, with the SDK's
stream helper, and without streaming. The client must end up with the text,
tool calls, reasoning (where its API has a place for it), usage and outcome
the upstream sent."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest

import checks
import drive
import harness
import schema

WEATHER = {
    "name": "get_weather",
    "description": "Current weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
TIME = {
    "name": "get_time",
    "description": "Current time in a time zone",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
}
RESPONSES_TOOLS = [{"type": "function", "strict": False, **WEATHER}, {"type": "function", "strict": False, **TIME}]
CHAT_TOOLS = [{"type": "function", "function": WEATHER}, {"type": "function", "function": TIME}]


@dataclass
class Case:
    prompt: str
    tools: bool = False
    reasoning: bool = False
    limit: int | None = None

    def responses_request(self) -> dict:
        request = {"model": "demo", "input": self.prompt}
        if self.tools:
            request["tools"] = RESPONSES_TOOLS
        if self.reasoning:
            request["reasoning"] = {"effort": "low"}
        if self.limit:
            request["max_output_tokens"] = self.limit
        return request

    def chat_request(self) -> dict:
        request = {"model": "demo", "messages": [{"role": "user", "content": self.prompt}]}
        if self.tools:
            request["tools"] = CHAT_TOOLS
        if self.reasoning:
            request["reasoning_effort"] = "low"
        if self.limit:
            request["max_completion_tokens"] = self.limit
        return request


CASES = {
    "text": Case("Hello, bridge"),
    "tool-call": Case("call get_weather with city=Paris", tools=True),
    "parallel-tool-calls": Case("call get_weather with city=Paris and get_time with tz=UTC", tools=True),
    "reasoning": Case("Why is the sky blue", reasoning=True),
    "max-tokens": Case("one two three four five six seven eight nine ten eleven twelve thirteen", limit=16),
}


@pytest.mark.parametrize("style", drive.RESPONSES_STYLES)
@pytest.mark.parametrize("case", CASES)
def test_responses_client_over_chat_upstream(chat_upstream, case, style):
    case = CASES[case]
    mark = chat_upstream.tap.mark()
    observed = drive.responses_client(chat_upstream, style, case.responses_request())
    sent = drive.one_upstream_request(chat_upstream, mark, "/chat/completions")
    expected = drive.upstream_answer(chat_upstream, sent)
    checks.assert_content(observed, expected, reasoning=True, separate_messages=True)
    if case.tools:
        assert expected.calls, "the demo upstream was expected to call a tool"
    if case.reasoning:
        assert expected.reasoning, "the demo upstream was expected to reason"


@pytest.mark.parametrize("style", drive.CHAT_STYLES)
@pytest.mark.parametrize("case", CASES)
def test_chat_client_over_responses_upstream(responses_upstream, case, style):
    case = CASES[case]
    mark = responses_upstream.tap.mark()
    observed = drive.chat_client(responses_upstream, style, case.chat_request())
    sent = drive.one_upstream_request(responses_upstream, mark, "/responses")
    expected = drive.upstream_answer(responses_upstream, sent)
    # Reasoning is left out: the bridge serves the strict Chat shape by default.
    checks.assert_content(observed, expected, reasoning=False, separate_messages=False)
    if case.tools:
        assert expected.calls, "the demo upstream was expected to call a tool"
    if case.reasoning:
        assert expected.reasoning, "the demo upstream was expected to reason"


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
@pytest.mark.parametrize("case", CASES)
def test_responses_client_over_chat_upstream_schema(chat_upstream, spec, case, stream):
    """The request sent upstream, and each event or the body sent back, are
    valid against the spec."""
    request = {**CASES[case].responses_request(), "stream": stream}
    schema.assert_valid_client_request(spec, request, "responses")
    mark = chat_upstream.tap.mark()
    status, content_type, text = harness.post_direct(chat_upstream.base_url + "/responses", json.dumps(request).encode())
    assert status == 200, text
    if stream:
        assert content_type.startswith("text/event-stream"), content_type
        events = schema.assert_valid_stream(spec, text, "responses")
        assert events[-1]["type"] in ("response.completed", "response.incomplete")
    else:
        assert content_type.startswith("application/json"), content_type
        schema.assert_valid_body(spec, status, text, "responses")
    sent = drive.one_upstream_request(chat_upstream, mark, "/chat/completions")
    body = schema.assert_valid_request(spec, sent, "chat")
    assert bool(body.get("stream")) is stream


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
@pytest.mark.parametrize("case", CASES)
def test_chat_client_over_responses_upstream_schema(responses_upstream, spec, case, stream):
    request = {**CASES[case].chat_request(), "stream": stream}
    if stream:
        request["stream_options"] = {"include_usage": True}
    schema.assert_valid_client_request(spec, request, "chat")
    mark = responses_upstream.tap.mark()
    status, content_type, text = harness.post_direct(
        responses_upstream.base_url + "/chat/completions", json.dumps(request).encode()
    )
    assert status == 200, text
    if stream:
        assert content_type.startswith("text/event-stream"), content_type
        chunks = schema.assert_valid_stream(spec, text, "chat")
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"], "no usage chunk last"
    else:
        assert content_type.startswith("application/json"), content_type
        schema.assert_valid_body(spec, status, text, "chat")
    sent = drive.one_upstream_request(responses_upstream, mark, "/responses")
    body = schema.assert_valid_request(spec, sent, "responses")
    assert bool(body.get("stream")) is stream


def test_chat_client_stream_without_usage_asked(responses_upstream):
    """Without `stream_options.include_usage`, a Chat stream has no usage
    chunk (the Responses upstream always reports usage)."""
    client = harness.client(responses_upstream)
    chunks = list(client.chat.completions.create(**CASES["text"].chat_request(), stream=True))
    assert all(chunk.choices for chunk in chunks), "a chunk without choices (a usage chunk) was sent"
    assert all(chunk.usage is None for chunk in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == 'You said: "Hello, bridge". This is the wirebridge demo upstream.'


@pytest.mark.parametrize("case", ["text", "parallel-tool-calls"])
def test_async_responses_client_over_chat_upstream(chat_upstream, case):
    """`AsyncOpenAI`: its own stream reader and accumulator."""
    request = CASES[case].responses_request()

    async def run():
        async with harness.async_client(chat_upstream) as client:
            async with client.responses.stream(**request) as stream:
                events = [event async for event in stream]
                return events, await stream.get_final_response()

    mark = chat_upstream.tap.mark()
    events, final = asyncio.run(run())
    checks.assert_sequence(events)
    sent = drive.one_upstream_request(chat_upstream, mark, "/chat/completions")
    expected = drive.upstream_answer(chat_upstream, sent)
    checks.assert_content(checks.from_response(final), expected, reasoning=True, separate_messages=True)


@pytest.mark.parametrize("case", ["text", "parallel-tool-calls"])
def test_async_chat_client_over_responses_upstream(responses_upstream, case):
    request = CASES[case].chat_request()

    async def run():
        async with harness.async_client(responses_upstream) as client:
            stream = await client.chat.completions.create(
                **request, stream=True, stream_options={"include_usage": True}
            )
            return [chunk async for chunk in stream]

    mark = responses_upstream.tap.mark()
    chunks = asyncio.run(run())
    sent = drive.one_upstream_request(responses_upstream, mark, "/responses")
    expected = drive.upstream_answer(responses_upstream, sent)
    checks.assert_content(checks.from_chunks(chunks), expected, reasoning=False, separate_messages=False)


# --------------------------------------------------------------------------
# The demo upstream speaking Anthropic Messages, read by the `anthropic` SDK
# --------------------------------------------------------------------------

MESSAGES_TOOLS = [
    {"name": "get_weather", "description": "Current weather in a city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
]


@pytest.fixture(scope="module")
def messages_demo(wirebridge, log_dir):
    """`wirebridge demo --api messages`, on its own (no bridge in front)."""
    demo = harness.start_demo(log_dir, "demo-messages", "messages")
    yield demo
    code = demo.stop()
    assert code == 0, f"the demo upstream exited with {code}:\n{demo.log()[-4000:]}"


def test_anthropic_sdk_on_the_messages_demo(messages_demo):
    """The official `anthropic` SDK, which raises on a malformed stream,
    against the demo upstream's Messages dialect: a text turn, a stream read
    by the SDK's accumulator, a tool loop, and a thinking turn whose blocks
    go back in the next request (and are refused once altered)."""
    import anthropic

    client = anthropic.Anthropic(base_url=messages_demo.url, api_key="unused", max_retries=0, timeout=20.0,
                                 http_client=anthropic.DefaultHttpxClient(trust_env=False))
    hello = 'You said: "Hello, demo". This is the wirebridge demo upstream.'

    # A text turn.
    message = client.messages.create(model="demo", max_tokens=256,
                                     messages=[{"role": "user", "content": "Hello, demo"}])
    assert message.id.startswith("msg_")
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == hello
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (2, 10)
    assert message._request_id.startswith("req_")

    # The same turn streamed: the SDK's accumulator ends with the same message.
    with client.messages.stream(model="demo", max_tokens=256,
                                messages=[{"role": "user", "content": "Hello, demo"}]) as stream:
        streamed_text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed_text == hello
    assert final.content[0].text == hello and final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 10

    # A tool loop: the call, then its result.
    ask = [{"role": "user", "content": "call get_weather with city=Paris"}]
    with client.messages.stream(model="demo", max_tokens=256, tools=MESSAGES_TOOLS, messages=ask) as stream:
        called = stream.get_final_message()
    assert called.stop_reason == "tool_use"
    [call] = called.content
    assert (call.type, call.name, call.input) == ("tool_use", "get_weather", {"city": "Paris"})
    assert call.id.startswith("toolu_")
    result = [{"type": "tool_result", "tool_use_id": call.id, "content": "sunny, 21 C"}]
    answered = client.messages.create(
        model="demo", max_tokens=256, tools=MESSAGES_TOOLS,
        messages=ask + [{"role": "assistant", "content": called.content}, {"role": "user", "content": result}],
    )
    assert answered.content[0].text == "The tool returned: sunny, 21 C"

    # A thinking turn, its signed blocks sent back with the next request.
    thinking = {"type": "enabled", "budget_tokens": 1024}
    first = [{"role": "user", "content": "Hello there demo:redacted"}]
    with client.messages.stream(model="demo", max_tokens=2048, thinking=thinking, messages=first) as stream:
        thought = stream.get_final_message()
    assert [block.type for block in thought.content] == ["thinking", "redacted_thinking", "text"]
    assert thought.content[0].thinking == "The user wrote 3 words. I will repeat them back."
    assert thought.content[0].signature
    history = first + [{"role": "assistant", "content": thought.content}]
    again = client.messages.create(model="demo", max_tokens=2048, thinking=thinking,
                                   messages=history + [{"role": "user", "content": "And again"}])
    assert again.content[-1].text == 'You said: "And again". This is the wirebridge demo upstream.'

    altered = thought.content[0].model_copy(update={"thinking": "Something else entirely."})
    tampered = first + [{"role": "assistant", "content": [altered, *thought.content[1:]]}]
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model="demo", max_tokens=2048, thinking=thinking,
                               messages=tampered + [{"role": "user", "content": "And again"}])
    assert refused.value.body["error"]["type"] == "invalid_request_error"
    assert refused.value.body["error"]["message"].startswith("messages.1.content.0.signature:")

    assert client.messages.count_tokens(model="demo", messages=ask).input_tokens == 4
