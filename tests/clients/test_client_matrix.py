"""Third-party clients, at the versions pinned in tests/clients, each running
a tool loop through the bridge the way its users do: the official Node SDK
(npm `openai`), the Vercel AI SDK (npm `ai` + `@ai-sdk/openai`), the OpenAI
Agents SDK, pydantic-ai and langchain-openai (PyPI). The demo upstream
scripts one get_weather call; the client must run its tool with the scripted
arguments, the bridge must carry the call and the tool's result to the
upstream in the next request, and the client must end with the upstream's
answer to that result, without raising."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

import drive
import harness
import schema

PROMPT = "call get_weather with city=Paris"
ARGS = {"city": "Paris"}
# What every client's get_weather returns for ARGS, and the demo upstream's
# answer to that result.
OUTPUT = "Paris: sunny, 18 C"
ANSWER = f"The tool returned: {OUTPUT}"
NODE_TIMEOUT = 50


def weather(city: str) -> str:
    return f"{city}: sunny, 18 C"


def text_of(content) -> str:
    """A message content (or tool output) as text: a string, or the texts of its parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def conversation(body: dict, api: str) -> list[tuple]:
    """An upstream request's conversation, API-neutral: `(role, text)` for a
    message, `("call", id, name, arguments)` for a tool call, `("output", id,
    text)` for a tool result."""
    out: list[tuple] = []
    if api == "chat":
        for m in body["messages"]:
            if m["role"] == "tool":
                out.append(("output", m["tool_call_id"], text_of(m["content"])))
                continue
            if m["role"] != "assistant" or text_of(m.get("content")) or not m.get("tool_calls"):
                out.append((m["role"], text_of(m.get("content"))))
            for call in m.get("tool_calls") or []:
                f = call["function"]
                out.append(("call", call["id"], f["name"], json.loads(f["arguments"])))
        return out
    for item in body["input"]:
        kind = item.get("type", "message")
        if kind == "message":
            out.append((item["role"], text_of(item["content"])))
        elif kind == "function_call":
            out.append(("call", item["call_id"], item["name"], json.loads(item["arguments"])))
        elif kind == "function_call_output":
            out.append(("output", item["call_id"], text_of(item["output"])))
        else:
            out.append((kind,))
    return out


def offered(body: dict, api: str) -> list[str]:
    if api == "chat":
        return [t["function"]["name"] for t in body.get("tools", [])]
    return [t["name"] for t in body.get("tools", [])]


def assert_round_trip(chain: harness.Chain, spec, mark: int, client_call_ids: list[str], *,
                      prompt: str = PROMPT, args: dict = ARGS, output: str = OUTPUT, name: str = "get_weather") -> list[tuple]:
    """Since `mark`, the bridge sent the upstream two requests, both valid
    against the spec: the conversation ending with `prompt`, `name` offered;
    then the same conversation followed by the call the upstream scripted
    (with the id the client got) and the tool's `output`. The upstream
    answers the second with the tool's output. Returns the second
    conversation."""
    sent = chain.tap.since(mark)
    assert len(sent) == 2, [r.path for r in sent]
    api = "chat" if sent[0].path.endswith("/chat/completions") else "responses"
    first, second = (schema.assert_valid_request(spec, s, api) for s in sent)
    assert name in offered(first, api), first
    scripted = drive.upstream_answer(chain, sent[0]).calls
    assert [(c.name, c.parsed) for c in scripted] == [(name, args)], scripted
    assert client_call_ids == [c.call_id for c in scripted], "the client got other call ids than the upstream sent"
    history, after = conversation(first, api), conversation(second, api)
    assert history[-1] == ("user", prompt), history
    assert after[: len(history)] == history, after
    call_id = scripted[0].call_id
    assert after[len(history) :] == [("call", call_id, name, args), ("output", call_id, output)], after
    assert drive.upstream_answer(chain, sent[1]).text == f"The tool returned: {output}"
    return after


def run_node(node_clients, *args: str) -> dict:
    done = subprocess.run(["node", *args], cwd=node_clients, capture_output=True, text=True, timeout=NODE_TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def recording_client(chain: harness.Chain, sent: list[dict]):
    """The SDK's asyncio client, set up as `harness.async_client`, recording
    the body of every request it sends the bridge."""
    import openai

    async def record(request):
        if request.method == "POST":
            sent.append(json.loads(request.content))

    return openai.AsyncOpenAI(
        base_url=chain.base_url,
        api_key="sk-wirebridge-test",
        max_retries=0,
        timeout=openai.Timeout(20.0, connect=5.0),
        http_client=openai.DefaultAsyncHttpxClient(trust_env=False, event_hooks={"request": [record]}),
    )


# --------------------------------------------------------------------------
# The official Node SDK
# --------------------------------------------------------------------------


def test_openai_node_responses_stream_tool_loop(node_clients, chat_upstream, spec):
    mark = chat_upstream.tap.mark()
    result = run_node(node_clients, "openai_tools.mjs", "responses", chat_upstream.base_url, "demo", PROMPT)
    assert result["ran"] == [{"name": "get_weather", "args": ARGS, "output": OUTPUT}], result
    assert result["text"] == ANSWER, result
    first, second = result["turns"]
    assert first["status"] == second["status"] == "completed", result
    assert first["events"][0] == "response.created" and first["events"][-1] == "response.completed", first
    assert "response.function_call_arguments.delta" in first["events"], first
    assert "response.output_text.delta" in second["events"] and second["events"][-1] == "response.completed", second
    assert second["callIds"] == [], second
    assert_round_trip(chat_upstream, spec, mark, first["callIds"])


def test_openai_node_chat_stream_tool_loop(node_clients, responses_upstream, spec):
    mark = responses_upstream.tap.mark()
    result = run_node(node_clients, "openai_tools.mjs", "chat", responses_upstream.base_url, "demo", PROMPT)
    assert result["ran"] == [{"name": "get_weather", "args": ARGS, "output": OUTPUT}], result
    assert result["text"] == ANSWER, result
    first, second = result["turns"]
    assert (first["finishReason"], second["finishReason"]) == ("tool_calls", "stop"), result
    assert second["callIds"] == [], second
    for turn in (first, second):
        usage = turn["usage"]
        assert usage and usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0, turn
    assert_round_trip(responses_upstream, spec, mark, first["callIds"])


# --------------------------------------------------------------------------
# The Vercel AI SDK
# --------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_vercel_ai_sdk_stream_text_tool_loop(node_clients, chat_upstream, responses_upstream, spec, api):
    # `openai.responses(model)` over a Chat upstream, `openai.chat(model)`
    # over a Responses upstream.
    chain = chat_upstream if api == "responses" else responses_upstream
    mark = chain.tap.mark()
    result = run_node(node_clients, "vercel_tools.mjs", api, chain.base_url, "demo", PROMPT)
    assert result["ran"] == [{"name": "get_weather", "args": ARGS, "output": OUTPUT}], result
    assert result["text"] == ANSWER, result
    assert result["finishReason"] == "stop", result
    first, second = result["steps"]
    assert first["finishReason"] == "tool-calls" and second == {"finishReason": "stop", "toolCalls": []}, result
    assert [(c["name"], c["input"]) for c in first["toolCalls"]] == [("get_weather", ARGS)], first
    parts = result["parts"]
    assert parts.index("tool-call") < parts.index("tool-result") < parts.index("text-delta"), parts
    assert parts[-1] == "finish", parts
    assert_round_trip(chain, spec, mark, [c["id"] for c in first["toolCalls"]])


# --------------------------------------------------------------------------
# The OpenAI Agents SDK
# --------------------------------------------------------------------------


@pytest.fixture
def agents_sdk(monkeypatch):
    """The Agents SDK with tracing off (it would export traces to OpenAI),
    and what its tools ran."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    import agents

    agents.set_tracing_disabled(True)
    ran: list[tuple[str, dict]] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        ran.append(("get_weather", {"city": city}))
        return weather(city)

    @agents.function_tool
    def get_time(tz: str) -> str:
        """Current time in a time zone."""
        ran.append(("get_time", {"tz": tz}))
        return f"12:00 {tz}"

    def agent(client):
        return agents.Agent(
            name="assistant",
            instructions="Answer briefly.",
            model=agents.OpenAIResponsesModel(model="demo", openai_client=client),
            tools=[get_weather, get_time],
        )

    return agents, agent, ran


def agents_call_ids(result) -> list[str]:
    return [i.raw_item.call_id for i in result.new_items if i.type == "tool_call_item"]


def assert_agents_tool_loop(result, ran, name="get_weather", args=ARGS, output=OUTPUT) -> None:
    assert ran == [(name, args)], ran
    kinds = [i.type for i in result.new_items]
    assert kinds == ["tool_call_item", "tool_call_output_item", "message_output_item"], kinds
    assert result.new_items[1].output == output
    assert result.final_output == f"The tool returned: {output}"


def test_openai_agents_sdk_run_tool_loop(agents_sdk, chat_upstream, spec):
    agents, agent, ran = agents_sdk
    mark = chat_upstream.tap.mark()
    result = asyncio.run(
        asyncio.wait_for(agents.Runner.run(agent(harness.async_client(chat_upstream)), PROMPT), 40)
    )
    assert_agents_tool_loop(result, ran)
    assert result.last_response_id.startswith("resp_"), result.last_response_id
    history = assert_round_trip(chat_upstream, spec, mark, agents_call_ids(result))
    assert history[0] == ("system", "Answer briefly."), history


def test_openai_agents_sdk_run_streamed_tool_loop(agents_sdk, chat_upstream, spec):
    agents, agent, ran = agents_sdk

    async def run():
        streamed = agents.Runner.run_streamed(agent(harness.async_client(chat_upstream)), PROMPT)
        events = [e.name async for e in streamed.stream_events() if e.type == "run_item_stream_event"]
        return streamed, events

    mark = chat_upstream.tap.mark()
    streamed, events = asyncio.run(asyncio.wait_for(run(), 40))
    assert events == ["tool_called", "tool_output", "message_output_created"], events
    assert_agents_tool_loop(streamed, ran)
    assert_round_trip(chat_upstream, spec, mark, agents_call_ids(streamed))


def test_openai_agents_sdk_chains_previous_response_id(agents_sdk, chat_upstream, spec):
    """A second run continues the first with `previous_response_id`: the
    client sends only what is new, the bridge rebuilds the conversation from
    its store for the Chat upstream, turn after turn."""
    agents, agent, ran = agents_sdk
    sent: list[dict] = []
    follow_up = "call get_time with tz=UTC"

    async def run():
        assistant = agent(recording_client(chat_upstream, sent))
        first = await agents.Runner.run(assistant, PROMPT)
        mark = chat_upstream.tap.mark()
        second = agents.Runner.run_streamed(assistant, follow_up, previous_response_id=first.last_response_id)
        async for _ in second.stream_events():
            pass
        return first, mark, second

    first, mark, second = asyncio.run(asyncio.wait_for(run(), 40))
    assert_agents_tool_loop(first, ran[:1])
    assert_agents_tool_loop(second, ran[1:], "get_time", {"tz": "UTC"}, "12:00 UTC")

    # What the client sent the bridge in the second run: the new user
    # message after the first run's last response, then the tool's result
    # after the response that called it.
    assert len(sent) == 4, sent
    call_id = agents_call_ids(second)[0]
    assert sent[2]["previous_response_id"] == first.last_response_id, sent[2]
    assert [(i.get("role"), text_of(i.get("content"))) for i in sent[2]["input"]] == [("user", follow_up)], sent[2]
    assert sent[3]["previous_response_id"] == second.raw_responses[0].response_id != first.last_response_id, sent[3]
    assert [(i["type"], i["call_id"], i["output"]) for i in sent[3]["input"]] == [
        ("function_call_output", call_id, "12:00 UTC")
    ], sent[3]

    # What the bridge sent the Chat upstream: the whole conversation, each time.
    after = assert_round_trip(chat_upstream, spec, mark, [call_id], prompt=follow_up, args={"tz": "UTC"},
                              output="12:00 UTC", name="get_time")
    first_call = agents_call_ids(first)[0]
    assert after[:5] == [
        ("system", "Answer briefly."),
        ("user", PROMPT),
        ("call", first_call, "get_weather", ARGS),
        ("output", first_call, OUTPUT),
        ("assistant", ANSWER),
    ], after


# --------------------------------------------------------------------------
# pydantic-ai and langchain-openai
# --------------------------------------------------------------------------


def test_pydantic_ai_responses_model_tool_loop(chat_upstream, spec):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIResponsesModel("demo", provider=OpenAIProvider(openai_client=harness.async_client(chat_upstream)))
    agent = Agent(model, instructions="Answer briefly.")
    ran: list[tuple[str, dict]] = []

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        ran.append(("get_weather", {"city": city}))
        return weather(city)

    mark = chat_upstream.tap.mark()
    result = asyncio.run(asyncio.wait_for(agent.run(PROMPT), 40))
    assert ran == [("get_weather", ARGS)], ran
    assert result.output == ANSWER
    parts = [p for m in result.all_messages() for p in m.parts]
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    returns = [p for p in parts if isinstance(p, ToolReturnPart)]
    assert [(c.tool_name, c.args_as_dict()) for c in calls] == [("get_weather", ARGS)], calls
    assert [(r.tool_call_id, r.content) for r in returns] == [(calls[0].tool_call_id, OUTPUT)], returns
    history = assert_round_trip(chat_upstream, spec, mark, [c.tool_call_id for c in calls])
    assert history[0] == ("system", "Answer briefly."), history


def test_langchain_openai_responses_api_tool_loop(chat_upstream, spec, monkeypatch):
    # LangSmith tracing off: it would export runs.
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.setenv("LANGCHAIN_TRACING_V2", "false")
    import openai
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    ran: list[tuple[str, dict]] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        ran.append(("get_weather", {"city": city}))
        return weather(city)

    llm = ChatOpenAI(
        model="demo",
        base_url=chat_upstream.base_url,
        api_key="sk-langchain-test",
        use_responses_api=True,
        streaming=True,
        max_retries=0,
        timeout=20,
        http_client=openai.DefaultHttpxClient(trust_env=False),
    ).bind_tools([get_weather])

    mark = chat_upstream.tap.mark()
    messages = [HumanMessage(PROMPT)]
    for _ in range(4):
        reply = llm.invoke(messages)
        assert isinstance(reply, AIMessage)
        messages.append(reply)
        if not reply.tool_calls:
            break
        messages += [get_weather.invoke(call) for call in reply.tool_calls]
    assert ran == [("get_weather", ARGS)], ran
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"], kinds
    calls = messages[1].tool_calls
    assert [(c["name"], c["args"]) for c in calls] == [("get_weather", ARGS)], calls
    assert isinstance(messages[2], ToolMessage) and messages[2].content == OUTPUT
    assert messages[3].text == ANSWER, messages[3]
    assert_round_trip(chat_upstream, spec, mark, [c["id"] for c in calls])
