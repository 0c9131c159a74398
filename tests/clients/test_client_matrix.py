"""Third-party clients, at the versions pinned in tests/clients, each running
a tool loop through the bridge the way its users do: the official Node SDK
(npm `openai`) and the Vercel AI SDK (npm `ai` + `@ai-sdk/openai`). The demo
upstream scripts one get_weather call; the client must run its tool with the
scripted arguments, the bridge must carry the call and the tool's result to
the upstream in the next request, and the client must end with the
upstream's answer to that result, without raising."""

from __future__ import annotations

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
