"""The OpenAI Agents SDK with a function tool, through the bridge to
llama-server. The agent forces its tool (`ModelSettings(tool_choice=…)`)
and names it in its instructions, so that the small model calls it, and stops at the tool's result
(`tool_use_behavior="stop_on_first_tool"`): the tool ran with the
arguments the server's grammar produced, and its result is the run's
final output."""

from __future__ import annotations

import asyncio
import json

import harness


def test_an_agent_runs_its_tool_on_a_real_model(chat_tools, pace, monkeypatch):
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    import agents

    agents.set_tracing_disabled(True)
    ran: list[dict] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        ran.append({"city": city})
        return f"clear, 21 C in {city}"

    agent = agents.Agent(
        name="assistant",
        instructions="Call get_weather.",
        model=agents.OpenAIResponsesModel(model="gemma-3-270m",
                                          openai_client=harness.async_client(chat_tools)),
        model_settings=agents.ModelSettings(tool_choice="get_weather", max_tokens=64),
        tools=[get_weather],
        tool_use_behavior="stop_on_first_tool",
    )
    mark = chat_tools.mark()
    result = asyncio.run(asyncio.wait_for(agents.Runner.run(agent, "Weather in Paris?"), pace.seconds(64)))

    sent = chat_tools.accepted(mark, "/chat/completions")
    assert len(sent) == 1
    body = sent[0].json()
    assert body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather"]
    assert len(ran) == 1, ran
    call = next(i.raw_item for i in result.new_items if i.type == "tool_call_item")
    assert json.loads(call.arguments) == ran[0]
    assert result.final_output == f"clear, 21 C in {ran[0]['city']}"
