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
thinks without being asked, as local reasoning models do."""

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
