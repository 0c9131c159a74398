"""Message threads (`thread`, beta `message-threads-2026-08-12`) through the
real binary, with the official anthropic SDK: a thread created with its
system prompt and tools, then continued with only the new user turn, on the
demo upstream speaking Chat Completions, Responses (a backend that keeps no
state) and Anthropic Messages. What each backend was sent is read at the
tap: the whole conversation, with the thread's system prompt and tools,
although the client sent neither again."""

from __future__ import annotations

import anthropic
import pytest

import harness

BETA = "message-threads-2026-08-12"
SYSTEM = "Answer briefly."
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
TURNS = ["My name is Ada.", "What is my name?", "And what did I ask first?"]


@pytest.fixture(scope="module")
def messages_upstream(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "threads-messages", "messages")
    yield chain
    harness.stop_checked(chain)


@pytest.fixture(params=["chat", "responses", "messages"])
def chain(request, chat_upstream, responses_upstream, messages_upstream):
    return {"chat": chat_upstream, "responses": responses_upstream, "messages": messages_upstream}[request.param]


def sdk(chain, key: str = "sk-ant-threads") -> anthropic.Anthropic:
    return harness.anthropic_client(chain, key)


def send(client, stream: bool, messages: list, thread: dict, **fields):
    """One turn of a thread, the thread and its beta passed as a client on
    an SDK without the thread helper would."""
    ask = dict(model="demo", max_tokens=256, messages=messages,
               extra_body={"thread": thread}, extra_headers={"anthropic-beta": BETA}, **fields)
    if not stream:
        return client.messages.create(**ask)
    with client.messages.stream(**ask) as events:
        return events.get_final_message()


def posts(chain, mark: int) -> list[harness.Captured]:
    return [c for c in chain.tap.since(mark) if c.method == "POST"]


def text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def conversation_sent(captured: harness.Captured) -> tuple[str, list[tuple[str, str]], list[str]]:
    """What the backend was sent, whatever its API: the system prompt, each
    message as (role, text), and the names of the tools."""
    body = captured.json()
    if captured.path.endswith("/chat/completions"):
        system = [text_of(m["content"]) for m in body["messages"] if m["role"] in ("system", "developer")]
        turns = [(m["role"], text_of(m["content"])) for m in body["messages"]
                 if m["role"] not in ("system", "developer")]
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        return "".join(system), turns, tools
    if captured.path.endswith("/responses"):
        turns = [(i["role"], text_of(i["content"])) for i in body["input"]
                 if i.get("type", "message") == "message"]
        return body.get("instructions") or "", turns, [t["name"] for t in body.get("tools") or []]
    assert captured.path.endswith("/messages"), captured.path
    turns = [(m["role"], text_of(m["content"])) for m in body["messages"]]
    return text_of(body.get("system") or ""), turns, [t["name"] for t in body.get("tools") or []]


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_thread_is_continued_with_only_the_new_turn(chain, stream):
    client = sdk(chain)
    mark = chain.tap.mark()
    first = send(client, stream, [{"role": "user", "content": TURNS[0]}], {"type": "create"},
                 system=SYSTEM, tools=[WEATHER])
    replies = [first]
    for turn in TURNS[1:]:
        # Only the new user turn: no system prompt, no tools.
        replies.append(send(client, stream, [{"role": "user", "content": turn}],
                            {"type": "continue", "previous_message_id": replies[-1].id}))
    assert len({reply.id for reply in replies}) == 3

    sent = posts(chain, mark)
    assert len(sent) == 3, [c.path for c in sent]
    expected: list[tuple[str, str]] = []
    for turn, reply, captured in zip(TURNS, replies, sent):
        expected.append(("user", turn))
        system, turns, tools = conversation_sent(captured)
        assert system == SYSTEM, captured.body
        assert tools == ["get_weather"], captured.body
        assert turns == expected, captured.body
        expected.append(("assistant", reply.content[0].text))


def test_a_continue_of_a_thread_not_kept_is_a_404_naming_the_field(chain):
    client = sdk(chain)
    mark = chain.tap.mark()
    with pytest.raises(anthropic.NotFoundError) as missing:
        send(client, False, [{"role": "user", "content": "Hi"}],
             {"type": "continue", "previous_message_id": "msg_00000000000000000000000000000000"})
    error = missing.value.body["error"]
    assert error["type"] == "not_found_error"
    assert "thread.previous_message_id" in error["message"], error
    # One sentence, as a person reads it: no run of spaces from the source.
    assert "  " not in error["message"], error
    assert error["details"]["error_code"] == "thread_not_found"
    assert posts(chain, mark) == []


def test_another_credentials_thread_is_not_found(chain):
    first = send(sdk(chain, "sk-ant-owner"), False, [{"role": "user", "content": TURNS[0]}],
                 {"type": "create"}, system=SYSTEM)
    mark = chain.tap.mark()
    with pytest.raises(anthropic.NotFoundError) as missing:
        send(sdk(chain, "sk-ant-someone-else"), False, [{"role": "user", "content": TURNS[1]}],
             {"type": "continue", "previous_message_id": first.id})
    assert missing.value.body["error"]["details"]["error_code"] == "thread_not_found"
    assert posts(chain, mark) == []
    # Its owner continues it.
    send(sdk(chain, "sk-ant-owner"), False, [{"role": "user", "content": TURNS[1]}],
         {"type": "continue", "previous_message_id": first.id})


def test_a_continue_that_sends_the_system_prompt_again_is_refused_naming_it(chain):
    client = sdk(chain)
    first = send(client, False, [{"role": "user", "content": TURNS[0]}], {"type": "create"}, system=SYSTEM)
    with pytest.raises(anthropic.BadRequestError) as refused:
        send(client, False, [{"role": "user", "content": TURNS[1]}],
             {"type": "continue", "previous_message_id": first.id}, system="Answer at length.")
    assert "system" in refused.value.body["error"]["message"], refused.value.body


def test_without_a_store_a_thread_is_refused(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "threads-no-store", "chat", extra=["--store", "none"])
    try:
        client = sdk(chain)
        mark = chain.tap.mark()
        with pytest.raises(anthropic.BadRequestError) as refused:
            send(client, False, [{"role": "user", "content": TURNS[0]}], {"type": "create"}, system=SYSTEM)
        error = refused.value.body["error"]
        assert error["type"] == "invalid_request_error"
        assert error["message"].startswith("thread: "), error
        assert error["details"]["error_code"] == "thread_unsupported_request"
        assert posts(chain, mark) == []
        # The same conversation without `thread` is answered.
        client.messages.create(model="demo", max_tokens=64, system=SYSTEM,
                               messages=[{"role": "user", "content": TURNS[0]}])
    finally:
        harness.stop_checked(chain)


def test_pydantic_ai_keeps_its_thread_whole(chain):
    """pydantic-ai's thread mode (`anthropic_previous_message_id="auto"`)
    sends each turn after the first as a continue with only the new
    messages and no system prompt: the backend must still be sent the
    whole conversation, with it."""
    import json

    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    asked: list[dict] = []

    async def keep(request) -> None:
        if request.url.path.endswith("/messages"):
            asked.append(json.loads(request.content))

    client = anthropic.AsyncAnthropic(
        base_url=chain.bridge.url,
        api_key="sk-ant-pydantic-threads",
        max_retries=0,
        timeout=20.0,
        http_client=anthropic.DefaultAsyncHttpxClient(trust_env=False, event_hooks={"request": [keep]}),
    )
    model = AnthropicModel("demo", provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(model, system_prompt=SYSTEM, model_settings={"anthropic_previous_message_id": "auto"})
    mark = chain.tap.mark()
    history = None
    replies = []
    for turn in TURNS:
        result = agent.run_sync(turn, message_history=history)
        replies.append(result.output)
        history = result.all_messages()

    # What pydantic-ai sent: a create, then continues of only the new turn.
    assert [a.get("thread", {}).get("type") for a in asked] == ["create", "continue", "continue"], asked
    for continued in asked[1:]:
        assert "system" not in continued, continued
        assert [m["role"] for m in continued["messages"]] == ["user"], continued
    # What the backend was sent: everything, every time.
    sent = posts(chain, mark)
    assert len(sent) == 3, [c.path for c in sent]
    expected: list[tuple[str, str]] = []
    for turn, reply, captured in zip(TURNS, replies, sent):
        expected.append(("user", turn))
        system, turns, _ = conversation_sent(captured)
        assert system == SYSTEM, captured.body
        assert turns == expected, captured.body
        expected.append(("assistant", reply))
