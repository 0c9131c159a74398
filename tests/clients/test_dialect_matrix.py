"""Every client dialect on every backend dialect, with the same scenarios in
each cell, so that a capability missing from one cell fails here instead of
drifting unseen.

The clients are the official SDKs: `openai` for Responses
(`client.responses`) and for Chat Completions (`client.chat.completions`),
`anthropic` for Messages. The backends are the demo upstream speaking Chat
Completions, speaking Responses (a backend that keeps no state) and speaking
Anthropic Messages, each behind its own `wirebridge serve` with a seal key,
so compaction runs.

The scenarios, in every cell where the client's API has the capability:
- a text turn, answered whole;
- the same turn streamed, which must tell the client the same text;
- a tool loop: the backend calls get_weather, the client answers with the
  tool's output, the backend answers from it;
- a conversation of two turns: Responses clients chain with
  `previous_response_id` and with a Conversations API `conversation`, Chat
  and Messages clients send their own history (their APIs keep none); the
  backend must receive the first turn with the second;
- compaction (Responses clients only: the other APIs have none the bridge
  serves): a turn past its `context_management` threshold is answered with a
  `compaction` item, then the reply.

The demo upstream repeats the last user message (`You said: "…"`), calls a
tool when asked by name, and answers a tool result with `The tool returned:
…`: what each cell must show is read from that script, never from the
bridge's own output."""

from __future__ import annotations

import base64
import json
import os

import anthropic
import pytest

import harness

BACKENDS = ["chat", "responses", "messages"]
CLIENTS = ["responses", "chat", "messages"]
WEATHER_OUTPUT = "Paris: sunny, 18 C"
PROMPT = "call get_weather with city=Paris"
LONG = "and the tide returns " * 400


@pytest.fixture(scope="module")
def chains(wirebridge, log_dir):
    key = base64.b64encode(os.urandom(32)).decode()
    started = {}
    try:
        for api in BACKENDS:
            started[api] = harness.start_chain(log_dir, f"matrix-{api}", api, env={"WIREBRIDGE_SEAL_KEY": key})
        yield started
    finally:
        for chain in started.values():
            harness.stop_checked(chain)


def said(text: str) -> str:
    """The demo upstream's answer to a user message."""
    return f'You said: "{text}". This is the wirebridge demo upstream.'


def sent_since(chain, mark: int) -> list[dict]:
    """The bodies the backend received since `mark` (translation requests
    only: not the token counts a compaction threshold is measured with)."""
    counts = ("/tokenize", "/count_tokens")
    return [c.json() for c in chain.tap.since(mark) if c.method == "POST" and not c.path.endswith(counts)]


def texts_sent(body: dict) -> str:
    """Everything a backend request says, as one text, to look for a turn in."""
    return json.dumps(body.get("messages", body.get("input")))


class Responses:
    """A Responses client (the openai SDK's `client.responses`)."""

    tools = [{"type": "function", "name": "get_weather", "description": "The weather in a city.",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]

    def __init__(self, chain) -> None:
        self.client = harness.client(chain)

    def text(self, prompt: str) -> str:
        return self.client.responses.create(model="demo", input=prompt).output_text

    def streamed(self, prompt: str) -> str:
        with self.client.responses.stream(model="demo", input=prompt) as stream:
            return stream.get_final_response().output_text

    def tool_loop(self) -> tuple[dict, str]:
        first = self.client.responses.create(model="demo", input=PROMPT, tools=self.tools)
        [call] = [item for item in first.output if item.type == "function_call"]
        answer = self.client.responses.create(
            model="demo", previous_response_id=first.id, tools=self.tools,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": WEATHER_OUTPUT}],
        )
        return json.loads(call.arguments), answer.output_text

    def two_turns(self, first: str, second: str) -> str:
        response = self.client.responses.create(model="demo", input=first)
        return self.client.responses.create(model="demo", input=second, previous_response_id=response.id).output_text


class Chat:
    """A Chat Completions client (the openai SDK's `client.chat.completions`)."""

    tools = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]

    def __init__(self, chain) -> None:
        self.client = harness.client(chain)

    def text(self, prompt: str) -> str:
        reply = self.client.chat.completions.create(model="demo", messages=[{"role": "user", "content": prompt}])
        return reply.choices[0].message.content

    def streamed(self, prompt: str) -> str:
        stream = self.client.chat.completions.create(
            model="demo", messages=[{"role": "user", "content": prompt}], stream=True)
        return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)

    def tool_loop(self) -> tuple[dict, str]:
        messages = [{"role": "user", "content": PROMPT}]
        first = self.client.chat.completions.create(model="demo", messages=messages, tools=self.tools)
        message = first.choices[0].message
        assert first.choices[0].finish_reason == "tool_calls", first
        [call] = message.tool_calls
        messages += [message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": call.id, "content": WEATHER_OUTPUT}]
        answer = self.client.chat.completions.create(model="demo", messages=messages, tools=self.tools)
        return json.loads(call.function.arguments), answer.choices[0].message.content

    def two_turns(self, first: str, second: str) -> str:
        messages = [{"role": "user", "content": first}]
        reply = self.client.chat.completions.create(model="demo", messages=messages)
        messages += [{"role": "assistant", "content": reply.choices[0].message.content},
                     {"role": "user", "content": second}]
        return self.client.chat.completions.create(model="demo", messages=messages).choices[0].message.content


class Messages:
    """An Anthropic Messages client (the anthropic SDK)."""

    tools = [{"name": "get_weather", "description": "The weather in a city.",
              "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]

    def __init__(self, chain) -> None:
        self.client = anthropic.Anthropic(base_url=chain.bridge.url, api_key="sk-ant-matrix", max_retries=0,
                                          timeout=20.0, http_client=anthropic.DefaultHttpxClient(trust_env=False))

    @staticmethod
    def text_of(message) -> str:
        return "".join(block.text for block in message.content if block.type == "text")

    def text(self, prompt: str) -> str:
        return self.text_of(self.client.messages.create(
            model="demo", max_tokens=256, messages=[{"role": "user", "content": prompt}]))

    def streamed(self, prompt: str) -> str:
        with self.client.messages.stream(model="demo", max_tokens=256,
                                         messages=[{"role": "user", "content": prompt}]) as stream:
            return self.text_of(stream.get_final_message())

    def tool_loop(self) -> tuple[dict, str]:
        messages = [{"role": "user", "content": PROMPT}]
        first = self.client.messages.create(model="demo", max_tokens=256, messages=messages, tools=self.tools)
        assert first.stop_reason == "tool_use", first
        [call] = [block for block in first.content if block.type == "tool_use"]
        messages += [{"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                                   "content": WEATHER_OUTPUT}]}]
        answer = self.client.messages.create(model="demo", max_tokens=256, messages=messages, tools=self.tools)
        return call.input, self.text_of(answer)

    def two_turns(self, first: str, second: str) -> str:
        messages = [{"role": "user", "content": first}]
        reply = self.client.messages.create(model="demo", max_tokens=256, messages=messages)
        messages += [{"role": "assistant", "content": self.text_of(reply)}, {"role": "user", "content": second}]
        return self.text_of(self.client.messages.create(model="demo", max_tokens=256, messages=messages))


DIALECTS = {"responses": Responses, "chat": Chat, "messages": Messages}


@pytest.fixture(params=[(client, backend) for backend in BACKENDS for client in CLIENTS],
                ids=lambda cell: f"{cell[0]}-over-{cell[1]}")
def cell(request, chains):
    client, backend = request.param
    chain = chains[backend]
    return DIALECTS[client](chain), chain


def test_a_text_turn(cell):
    client, _ = cell
    assert client.text("Hello matrix") == said("Hello matrix")


def test_a_streamed_turn_tells_the_same_text(cell):
    client, _ = cell
    assert client.streamed("Hello stream") == said("Hello stream")


def test_a_tool_loop(cell):
    client, chain = cell
    mark = chain.tap.mark()
    arguments, answer = client.tool_loop()
    assert arguments == {"city": "Paris"}
    assert answer == f"The tool returned: {WEATHER_OUTPUT}"
    first, second = sent_since(chain, mark)
    assert "get_weather" in json.dumps(first.get("tools")), first.get("tools")
    assert WEATHER_OUTPUT in texts_sent(second) and "get_weather" in texts_sent(second)


def test_a_second_turn_carries_the_first(cell):
    client, chain = cell
    mark = chain.tap.mark()
    answer = client.two_turns("My name is Ada.", "What is my name?")
    assert answer == said("What is my name?")
    first, second = sent_since(chain, mark)
    assert "My name is Ada." in texts_sent(second), texts_sent(second)
    assert said("My name is Ada.").replace('"', '\\"') in texts_sent(second), "the first answer too"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_conversation_carries_its_turns(chains, backend):
    chain = chains[backend]
    client = harness.client(chain)
    conversation = client.conversations.create()
    client.responses.create(model="demo", input="My name is Ada.", conversation=conversation.id)
    mark = chain.tap.mark()
    answer = client.responses.create(model="demo", input="What is my name?", conversation=conversation.id)
    assert answer.output_text == said("What is my name?")
    (second,) = sent_since(chain, mark)
    assert "My name is Ada." in texts_sent(second)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("continued", ["input", "conversation"])
def test_a_turn_past_its_threshold_compacts(chains, backend, continued):
    chain = chains[backend]
    client = harness.client(chain)
    extra = {}
    if continued == "conversation":
        extra["conversation"] = client.conversations.create(
            items=[{"type": "message", "role": "user", "content": "Write a haiku about the sea."}]).id
    managed = [{"type": "compaction", "compact_threshold": 1000}]
    mark = chain.tap.mark()
    raw = client.responses.with_raw_response.create(model="demo", input=LONG, context_management=managed, **extra)
    assert raw.headers.get("x-wirebridge-dropped") is None, raw.headers.get("x-wirebridge-dropped")
    response = raw.parse()
    assert [item.type for item in response.output] == ["compaction", "message"]
    summary_request, reply_request = sent_since(chain, mark)
    assert "encrypted_content" not in json.dumps(reply_request), "the backend reads the summary, not the carrier"
