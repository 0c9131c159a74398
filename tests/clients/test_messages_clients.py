"""The official anthropic SDK against the real binary: `POST /v1/messages`
through the bridge's Responses hub to the demo upstream speaking Chat
Completions, and to the demo upstream speaking Responses (a backend that
keeps no state). The SDK's typed events, its stream accumulator and its
`Message` model raise on anything malformed; what the upstream was sent is
read from the tap; what the upstream would answer is asked of it directly,
so no expected answer is written down here."""

from __future__ import annotations

import json

import anthropic
import pytest

import harness

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}

# Backends with interleaved thinking (DeepSeek, Qwen3 on vLLM): reasoning
# efforts forwarded, the reasoning of a tool loop sent back; reasoning that
# cannot be sent back refuses the request rather than vanish.
INTERLEAVED = """\
profile = "interleaved"

[profiles.interleaved]
max_tokens_field = "max_completion_tokens"
text_parts_as_string = false
reasoning_effort = true
replay_reasoning = true

[loss_policy]
reasoning_history = "reject"
"""


@pytest.fixture(scope="module")
def interleaved(wirebridge, log_dir, tmp_path_factory):
    config = tmp_path_factory.mktemp("messages") / "bridge.toml"
    config.write_text(INTERLEAVED)
    chain = harness.start_chain(log_dir, "messages-interleaved", "chat", extra=["--config", str(config)])
    yield chain
    harness.stop_checked(chain)


@pytest.fixture(params=["chat", "responses"])
def chain(request, chat_upstream, responses_upstream):
    return chat_upstream if request.param == "chat" else responses_upstream


def sdk(chain, key: str = "sk-ant-wirebridge") -> anthropic.Anthropic:
    """The SDK pointed at the bridge (its base URL has no `/v1`: the SDK
    adds it), no retries, bounded waits, no proxy from the environment."""
    return harness.anthropic_client(chain, key)


def upstream_requests(chain, mark: int) -> list[harness.Captured]:
    return [c for c in chain.tap.since(mark) if c.method == "POST"]


def api_of(chain) -> str:
    return "chat" if chain.name == "demo-chat" or "interleaved" in chain.name else "responses"


def direct_answer(chain, captured: harness.Captured) -> dict:
    """What the upstream answers the request the bridge sent it, asked of
    it directly and whole (not streamed): the text and usage the client
    must be told."""
    body = captured.json()
    body["stream"] = False
    body.pop("stream_options", None)
    endpoint = "/chat/completions" if api_of(chain) == "chat" else "/responses"
    status, _, answer = harness.post_direct(chain.upstream_url + "/v1" + endpoint, json.dumps(body).encode())
    assert status == 200, answer
    answer = json.loads(answer)
    if api_of(chain) == "chat":
        usage = answer["usage"]
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        return {"text": answer["choices"][0]["message"].get("content") or "",
                "input": usage["prompt_tokens"] - cached, "cached": cached,
                "output": usage["completion_tokens"]}
    text = "".join(part["text"] for item in answer["output"] if item["type"] == "message"
                   for part in item["content"] if part["type"] == "output_text")
    usage = answer["usage"]
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens", 0)
    return {"text": text, "input": usage["input_tokens"] - cached, "cached": cached,
            "output": usage["output_tokens"]}


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_message_is_what_the_upstream_answered(chain, stream):
    client = sdk(chain)
    mark = chain.tap.mark()
    ask = {"model": "demo", "max_tokens": 256, "system": "Answer briefly.",
           "messages": [{"role": "user", "content": "Hello from the Anthropic SDK"}]}
    if stream:
        with client.messages.stream(**ask) as events:
            kinds = [event.type for event in events]
            message = events.get_final_message()
        assert kinds[0] == "message_start" and kinds[-1] == "message_stop", kinds
    else:
        message = client.messages.create(**ask)
    [sent] = upstream_requests(chain, mark)
    assert sent.path == ("/v1/chat/completions" if api_of(chain) == "chat" else "/v1/responses")
    assert sent.headers["authorization"] == "Bearer sk-ant-wirebridge"
    assert not any(name.startswith("anthropic-") or name == "x-api-key" for name in sent.headers)
    expected = direct_answer(chain, sent)
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == expected["text"]
    assert message.stop_reason == "end_turn" and message.model == "demo"
    assert message.usage.input_tokens == expected["input"]
    assert (message.usage.cache_read_input_tokens or 0) == expected["cached"]
    assert message.usage.output_tokens == expected["output"]


def tool_calls_sent(chain, captured: harness.Captured) -> tuple[list[str], list[tuple[str, str]]]:
    """The call ids of the history the upstream was sent, and each tool
    result's (call id, output)."""
    body = captured.json()
    if api_of(chain) == "chat":
        calls = [c["id"] for m in body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        results = [(m["tool_call_id"], m["content"] if isinstance(m["content"], str)
                    else "".join(p.get("text", "") for p in m["content"]))
                   for m in body["messages"] if m["role"] == "tool"]
        return calls, results
    calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    results = []
    for item in body["input"]:
        if item.get("type") == "function_call_output":
            output = item["output"]
            if not isinstance(output, str):
                output = "".join(p.get("text", "") for p in output)
            results.append((item["call_id"], output))
    return calls, results


def test_a_tool_loop(chain):
    client = sdk(chain)
    history = [{"role": "user", "content": "call get_weather with city=Paris"}]
    with client.messages.stream(model="demo", max_tokens=256, tools=[WEATHER], messages=history) as events:
        first = events.get_final_message()
    assert first.stop_reason == "tool_use"
    [call] = [block for block in first.content if block.type == "tool_use"]
    assert (call.name, call.input) == ("get_weather", {"city": "Paris"})

    history += [{"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                              "content": "Sunny, 24 degrees"}]}]
    mark = chain.tap.mark()
    second = client.messages.create(model="demo", max_tokens=256, tools=[WEATHER], messages=history)
    [sent] = upstream_requests(chain, mark)
    calls, results = tool_calls_sent(chain, sent)
    # The call id the client saw is the backend's, both ways, verbatim.
    assert calls == [call.id]
    assert results == [(call.id, "Sunny, 24 degrees")]
    assert second.stop_reason == "end_turn"
    assert second.content[0].text == direct_answer(chain, sent)["text"]


def test_thinking_is_sent_back_as_the_reasoning_it_was(interleaved):
    client = sdk(interleaved)
    history = [{"role": "user", "content": "call get_weather with city=Oslo"}]
    thinking = {"type": "enabled", "budget_tokens": 2048}
    with client.messages.stream(model="demo", max_tokens=4096, thinking=thinking, tools=[WEATHER],
                                messages=history) as events:
        first = events.get_final_message()
    kinds = [block.type for block in first.content]
    assert kinds == ["thinking", "tool_use"], kinds
    said, call = first.content
    assert said.thinking and said.signature, "a thinking block without its text or its signature"

    def follow_up(signature: str):
        block = {"type": "thinking", "thinking": said.thinking, "signature": signature}
        return history + [
            {"role": "assistant", "content": [block, call.model_dump(exclude_none=True)]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Snow"}]},
        ]

    mark = interleaved.tap.mark()
    client.messages.create(model="demo", max_tokens=4096, thinking=thinking, tools=[WEATHER],
                           messages=follow_up(said.signature))
    [sent] = upstream_requests(interleaved, mark)
    [assistant] = [m for m in sent.json()["messages"] if m["role"] == "assistant"]
    # The backend gets its own reasoning back, beside its call.
    assert assistant["reasoning_content"] == said.thinking
    assert [c["id"] for c in assistant["tool_calls"]] == [call.id]

    # A signature the bridge did not write opens nothing: refused, by name,
    # before the backend is asked.
    forged = said.signature[:-8] + ("A" * 8 if not said.signature.endswith("A" * 8) else "B" * 8)
    mark = interleaved.tap.mark()
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model="demo", max_tokens=4096, thinking=thinking, tools=[WEATHER],
                               messages=follow_up(forged))
    assert refused.value.body["type"] == "error"
    assert refused.value.body["error"]["type"] == "invalid_request_error"
    assert "input[1]" in refused.value.body["error"]["message"], refused.value.body
    assert upstream_requests(interleaved, mark) == []


def test_count_tokens(chain):
    client = sdk(chain)
    short = client.messages.count_tokens(model="demo", messages=[{"role": "user", "content": "Hi"}])
    longer = client.messages.count_tokens(model="demo", system="Answer briefly.", tools=[WEATHER],
                                          messages=[{"role": "user", "content": "Hi " * 200}])
    assert 0 < short.input_tokens < longer.input_tokens
    raw = client.messages.with_raw_response.count_tokens(model="demo",
                                                         messages=[{"role": "user", "content": "Hi"}])
    # Neither demo upstream has a tokenizer: the bridge says it estimated.
    assert raw.headers["x-wirebridge-input-tokens"] == "estimated"
    assert json.loads(raw.http_response.text) == {"input_tokens": short.input_tokens}


def test_errors_are_anthropics(chain):
    client = sdk(chain)
    with pytest.raises(anthropic.RateLimitError) as limited:
        client.messages.create(model="demo", max_tokens=64,
                               messages=[{"role": "user", "content": "demo:error 429"}])
    assert limited.value.body["error"]["type"] == "rate_limit_error"
    assert "demo:error 429" in limited.value.body["error"]["message"]

    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model="demo", max_tokens=64, messages=[{"role": "user", "content": "Hi"}],
                               extra_body={"max_tokens": None})
    assert "max_tokens" in refused.value.body["error"]["message"]

    # A failure mid-stream is the stream's `error` event, after what was said.
    with pytest.raises(anthropic.APIStatusError) as failed:
        with client.messages.stream(model="demo", max_tokens=64,
                                    messages=[{"role": "user", "content": "demo:fail-midstream"}]) as events:
            for _ in events:
                pass
    assert failed.value.body["type"] == "error", failed.value.body


def test_the_log_names_the_direction(chain):
    client = sdk(chain)
    client.messages.create(model="demo", max_tokens=64, messages=[{"role": "user", "content": "log me"}])
    log = chain.bridge.log()
    outer = [line for line in log.splitlines() if 'direction="messages_to_responses"' in line]
    inner = [line for line in log.splitlines() if 'via="messages_to_responses"' in line]
    assert outer and inner, log[-3000:]


def test_the_model_list_in_anthropics_shape(chain):
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(chain.upstream_url + "/v1/models", timeout=10) as answer:
        upstream_ids = [m["id"] for m in json.load(answer)["data"]]
    assert upstream_ids
    client = sdk(chain)
    listed = list(client.models.list())
    assert [m.id for m in listed] == upstream_ids
    assert all(m.type == "model" and m.display_name == m.id for m in listed)
    assert client.models.retrieve(upstream_ids[0]).id == upstream_ids[0]
    with pytest.raises(anthropic.NotFoundError) as missing:
        client.models.retrieve("no-such-model")
    assert missing.value.body["error"]["type"] == "not_found_error"
    # The OpenAI SDK, on the same bridge, still reads OpenAI's list.
    assert [m.id for m in harness.client(chain).models.list().data] == upstream_ids
