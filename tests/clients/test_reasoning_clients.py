"""Clients that show a model's reasoning, against a Chat backend that sends
it (the demo upstream reasons when asked for an effort): the Vercel AI
SDK's OpenAI provider (npm `ai` + `@ai-sdk/openai`, pinned in
tests/clients/node), which reads only reasoning summaries, and the OpenAI
Agents SDK (PyPI `openai-agents`). Both ask for a summary, so the bridge
shows the backend's reasoning as summary parts."""

from __future__ import annotations

import asyncio
import json
import subprocess

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
