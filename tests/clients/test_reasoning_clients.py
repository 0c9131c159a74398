"""Clients that show a model's reasoning, against a Chat backend that sends
it (the demo upstream reasons when asked for an effort): the Vercel AI
SDK's OpenAI provider (npm `ai` + `@ai-sdk/openai`, pinned in
tests/clients/node), which reads only reasoning summaries, and the OpenAI
Agents SDK (PyPI `openai-agents`). Both ask for a summary, so the bridge
shows the backend's reasoning as summary parts.

The AI SDK asks for a summary only for a model it knows reasons (OpenAI's
o-series and GPT-5 names) or with `forceReasoning`. For a local name such as
`qwen3` it sends no `reasoning` at all, so under the default
`reasoning_output = "auto"` the bridge shows the reasoning as
`reasoning_text`, which the SDK does not read: the last tests show that, and
the two settings docs/recipes.md gives for that case, against a backend that
thinks without being asked, as local reasoning models do. The last test
has a stateless Responses backend that reasons in `reasoning_text` (vLLM,
DeepSeek), read by the Agents SDK as the summary it asked for."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

import harness

PROMPT = "Hello there, bridge"


def demo_reasoning(chain: harness.Chain, mark: int) -> str:
    """The reasoning the demo upstream sent for the request since `mark`,
    read straight from it (its streamed `reasoning_content`)."""
    sent = chain.tap.since(mark)[0]
    body = json.loads(sent.body)
    body["stream"] = True
    _, _, text = harness.post_direct(chain.upstream_url + sent.path, json.dumps(body).encode())
    reasoning = ""
    for payload in harness.sse_payloads(text):
        for choice in payload.get("choices") or []:
            reasoning += (choice.get("delta") or {}).get("reasoning_content") or ""
    assert reasoning, "the demo upstream sent no reasoning"
    return reasoning


def test_vercel_ai_sdk_shows_the_backends_reasoning(node_clients, chat_upstream):
    mark = chat_upstream.tap.mark()
    done = subprocess.run(
        ["node", "reasoning.mjs", chat_upstream.base_url, "qwen3", PROMPT],
        cwd=node_clients, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    requests = [c.json() for c in chat_upstream.tap.since(mark)]
    assert len(requests) == 2 and all(r["reasoning_effort"] == "low" for r in requests), requests
    expected = demo_reasoning(chat_upstream, mark)
    for way in ("stream", "generate"):
        assert result[way]["reasoning"] == expected, (way, result)
        assert result[way]["text"].startswith(f'You said: "{PROMPT}"'), (way, result)
        assert result[way]["finishReason"] == "stop", (way, result)
    assert result["stream"]["reasoningDeltas"] > 1, "the reasoning streamed in pieces"


def test_openai_agents_sdk_shows_the_backends_reasoning(chat_upstream):
    from agents import Agent, ModelSettings, OpenAIResponsesModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI
    from openai.types.shared import Reasoning

    set_tracing_disabled(True)

    async def run():
        client = AsyncOpenAI(base_url=chat_upstream.base_url, api_key="sk-agents-test", max_retries=0, timeout=20)
        agent = Agent(
            name="assistant",
            instructions="Answer briefly.",
            model=OpenAIResponsesModel(model="qwen3", openai_client=client),
            model_settings=ModelSettings(reasoning=Reasoning(effort="low", summary="auto")),
        )
        streamed = Runner.run_streamed(agent, PROMPT)
        events = [e async for e in streamed.stream_events() if e.type == "run_item_stream_event"]
        blocking = await Runner.run(agent, PROMPT)
        return streamed, events, blocking

    mark = chat_upstream.tap.mark()
    streamed, events, blocking = asyncio.run(asyncio.wait_for(run(), 40))
    expected = demo_reasoning(chat_upstream, mark)
    assert [e.name for e in events] == ["reasoning_item_created", "message_output_created"], events
    for result in (streamed, blocking):
        reasoning = [i for i in result.new_items if i.type == "reasoning_item"]
        assert len(reasoning) == 1, result.new_items
        assert [s.text for s in reasoning[0].raw_item.summary] == [expected]
        assert result.final_output.startswith(f'You said: "{PROMPT}"')


# A local reasoning model's streamed answer (Chat Completions chunks, one a
# line): it thinks first, in `reasoning_content`, though nobody asked it to.
LOCAL_THOUGHTS = ["The user", " greets the", " bridge; answer", " in kind."]
LOCAL_ANSWER = ["Hello", " to you", " too."]


def local_model_replay(directory: Path) -> Path:
    chunk = {"id": "chatcmpl-local", "object": "chat.completion.chunk", "created": 1781043300, "model": "qwen3"}
    deltas = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning_content": piece} for piece in LOCAL_THOUGHTS]
    deltas += [{"content": piece} for piece in LOCAL_ANSWER]
    lines = [{**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    lines.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    path = directory / "local-qwen3-thinking.chunks.txt"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture(scope="module")
def local_model_replay_file(tmp_path_factory):
    return local_model_replay(tmp_path_factory.mktemp("local-model"))


def run_local_reasoning(node_clients, chain: harness.Chain, provider_options: dict) -> dict:
    done = subprocess.run(
        ["node", "local_reasoning.mjs", chain.base_url, "qwen3", PROMPT, json.dumps(provider_options)],
        cwd=node_clients, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["text"] == "".join(LOCAL_ANSWER), result
    assert result["finishReason"] == "stop", result
    return result


@pytest.mark.parametrize("provider_options", [{}, {"reasoningSummary": "auto"}], ids=["plain", "summary-only"])
def test_vercel_ai_sdk_misses_a_local_models_reasoning_under_the_default(
        node_clients, log_dir, local_model_replay_file, provider_options):
    """Pins the finding the advice of docs/recipes.md rests on: for a name
    it does not know as a reasoning model, the SDK sends no `reasoning` (it
    drops `reasoningSummary` with a warning), the bridge therefore shows the
    reasoning as `reasoning_text`, and the SDK reads only summaries. Should a
    later SDK read `reasoning_text`, this fails and the advice can go."""
    name = "vercel-local-auto-" + ("summary" if provider_options else "plain")
    chain = harness.start_chain(log_dir, name, "chat", replay=local_model_replay_file)
    try:
        result = run_local_reasoning(node_clients, chain, provider_options)
    finally:
        harness.stop_checked(chain)
    assert result["requestReasoning"] == [None], result
    if provider_options:
        assert result["warnings"] == ["reasoningSummary"], result
    assert result["reasoning"] in ("", None) and result["reasoningDeltas"] == 0, result


def test_vercel_ai_sdk_shows_a_local_models_reasoning_with_reasoning_output_summary(
        node_clients, log_dir, local_model_replay_file):
    """The bridge-side setting: no provider options in the client at all."""
    chain = harness.start_chain(log_dir, "vercel-local-summary", "chat", replay=local_model_replay_file,
                                extra=["--reasoning-output", "summary"])
    try:
        result = run_local_reasoning(node_clients, chain, {})
    finally:
        harness.stop_checked(chain)
    assert result["requestReasoning"] == [None], result
    assert result["reasoning"] == "".join(LOCAL_THOUGHTS), result
    assert result["reasoningDeltas"] > 1, "the reasoning streamed in pieces"


def test_vercel_ai_sdk_shows_a_local_models_reasoning_with_force_reasoning(
        node_clients, log_dir, local_model_replay_file):
    """The client-side setting, under the bridge's default: `forceReasoning`
    makes the SDK send the `reasoningSummary` it otherwise drops."""
    chain = harness.start_chain(log_dir, "vercel-local-force", "chat", replay=local_model_replay_file)
    try:
        result = run_local_reasoning(node_clients, chain, {"forceReasoning": True, "reasoningSummary": "auto"})
    finally:
        harness.stop_checked(chain)
    assert result["requestReasoning"] == [{"summary": "auto"}], result
    assert result["warnings"] == [], result
    assert result["reasoning"] == "".join(LOCAL_THOUGHTS), result
    assert result["reasoningDeltas"] > 1, "the reasoning streamed in pieces"


# A stateless Responses backend's reasoning (vLLM, DeepSeek and SGLang
# stream it so): `reasoning_text` parts, never a summary.
NATIVE_THOUGHTS = ["The user", " greets the", " bridge;", " answer in kind."]
NATIVE_ANSWER = ["Hello", " to you", " too."]


def native_reasoning_replay(directory: Path) -> Path:
    """A Responses stream whose reasoning is `reasoning_text` only, with
    the event names and shapes vLLM's `/v1/responses` sends, one a line."""
    thought = "".join(NATIVE_THOUGHTS)
    answer = "".join(NATIVE_ANSWER)
    reasoning_part = {"type": "reasoning_text", "text": ""}
    text_part = {"type": "output_text", "text": "", "annotations": []}
    events = [
        {"type": "response.created", "response": {"id": "resp_vllm", "object": "response", "created_at": 1781043300,
                                                  "status": "in_progress", "model": "qwen3", "output": []}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "reasoning", "id": "rs_vllm", "summary": [], "content": []}},
        {"type": "response.content_part.added", "item_id": "rs_vllm", "output_index": 0, "content_index": 0,
         "part": reasoning_part},
    ]
    events += [{"type": "response.reasoning_text.delta", "item_id": "rs_vllm", "output_index": 0,
                "content_index": 0, "delta": piece} for piece in NATIVE_THOUGHTS]
    events += [
        {"type": "response.reasoning_text.done", "item_id": "rs_vllm", "output_index": 0, "content_index": 0,
         "text": thought},
        {"type": "response.content_part.done", "item_id": "rs_vllm", "output_index": 0, "content_index": 0,
         "part": {**reasoning_part, "text": thought}},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {"type": "reasoning", "id": "rs_vllm", "summary": [],
                  "content": [{"type": "reasoning_text", "text": thought}]}},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {"type": "message", "id": "msg_vllm", "role": "assistant", "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", "item_id": "msg_vllm", "output_index": 1, "content_index": 0,
         "part": text_part},
    ]
    events += [{"type": "response.output_text.delta", "item_id": "msg_vllm", "output_index": 1,
                "content_index": 0, "delta": piece, "logprobs": []} for piece in NATIVE_ANSWER]
    message = {"type": "message", "id": "msg_vllm", "role": "assistant", "status": "completed",
               "content": [{**text_part, "text": answer}]}
    events += [
        {"type": "response.output_text.done", "item_id": "msg_vllm", "output_index": 1, "content_index": 0,
         "text": answer, "logprobs": []},
        {"type": "response.content_part.done", "item_id": "msg_vllm", "output_index": 1, "content_index": 0,
         "part": {**text_part, "text": answer}},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.completed",
         "response": {"id": "resp_vllm", "object": "response", "created_at": 1781043300, "status": "completed",
                      "model": "qwen3",
                      "output": [{"type": "reasoning", "id": "rs_vllm", "summary": [],
                                  "content": [{"type": "reasoning_text", "text": thought}]}, message],
                      "usage": {"input_tokens": 12, "output_tokens": 9, "total_tokens": 21,
                                "input_tokens_details": {"cached_tokens": 0},
                                "output_tokens_details": {"reasoning_tokens": 5}}}},
    ]
    path = directory / "vllm-reasoning-text.chunks.txt"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path


def test_agents_sdk_reads_a_native_backends_reasoning_text_as_a_summary(log_dir, tmp_path):
    """A stateless Responses backend that reasons in `reasoning_text` (as
    vLLM and DeepSeek do), behind `--upstream-api responses`: the Agents SDK
    asks for a summary, and reads the reasoning as one, streamed and not,
    where the backend's own parts would show it nothing."""
    from agents import Agent, ModelSettings, OpenAIResponsesModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI
    from openai.types.shared import Reasoning

    set_tracing_disabled(True)
    chain = harness.start_chain(log_dir, "native-reasoning-text", "responses",
                                replay=native_reasoning_replay(tmp_path))

    async def run():
        client = AsyncOpenAI(base_url=chain.base_url, api_key="sk-agents-native", max_retries=0, timeout=20)
        agent = Agent(
            name="assistant",
            instructions="Answer briefly.",
            model=OpenAIResponsesModel(model="qwen3", openai_client=client),
            model_settings=ModelSettings(reasoning=Reasoning(effort="low", summary="auto")),
        )
        streamed = Runner.run_streamed(agent, PROMPT)
        events = [e async for e in streamed.stream_events() if e.type == "run_item_stream_event"]
        blocking = await Runner.run(agent, PROMPT)
        return streamed, events, blocking

    mark = chain.tap.mark()
    try:
        streamed, events, blocking = asyncio.run(asyncio.wait_for(run(), 40))
    finally:
        harness.stop_checked(chain)
    sent = [c.json() for c in chain.tap.since(mark)]
    assert [s["reasoning"]["summary"] for s in sent] == ["auto", "auto"], sent
    assert [e.name for e in events] == ["reasoning_item_created", "message_output_created"], events
    for result in (streamed, blocking):
        reasoning = [i for i in result.new_items if i.type == "reasoning_item"]
        assert len(reasoning) == 1, result.new_items
        assert [s.text for s in reasoning[0].raw_item.summary] == ["".join(NATIVE_THOUGHTS)]
        # Shown once, as the summary the client asked for.
        assert not reasoning[0].raw_item.content, reasoning[0].raw_item
        assert result.final_output == "".join(NATIVE_ANSWER)
