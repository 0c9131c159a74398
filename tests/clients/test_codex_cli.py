"""The real Codex CLI, run as `codex_runs` runs it, through the real
`wirebridge serve`, in front of the scripted demo upstream speaking only
Chat Completions. Codex reads only its bundled model catalog here.

The demo upstream calls a tool when the user message asks for it by name
(`call exec_command with cmd="…"`), reasons first when asked for a
reasoning effort, and answers from tool results, so each test is one tool
loop: the model asks, Codex runs the tool for real, sends the output back,
and prints the final answer."""

from __future__ import annotations

import json
import re

import pytest

import harness
from codex_runs import Run, offered, upstream_turns

# A profile for backends with interleaved thinking (vLLM serving Qwen3,
# DeepSeek, Kimi, GLM): reasoning efforts forwarded, reasoning replayed.
BRIDGE_CONFIG = """\
profile = "interleaved"

[profiles.interleaved]
max_tokens_field = "max_completion_tokens"
text_parts_as_string = false
reasoning_effort = true
replay_reasoning = true
"""


@pytest.fixture(scope="session")
def codex_chain(wirebridge, log_dir, tmp_path_factory):
    config = tmp_path_factory.mktemp("bridge") / "bridge.toml"
    config.write_text(BRIDGE_CONFIG)
    chain = harness.start_chain(log_dir, "codex", "chat", extra=["--config", str(config)])
    yield chain
    harness.stop_checked(chain)


def test_a_shell_call_and_its_reasoning_on_an_ordinary_model(codex, codex_chain, tmp_path):
    """`qwen3-coder` is not in Codex's catalog: the ordinary request shape
    (a `tools` array), asking for a reasoning summary. The reasoning shows in
    `codex exec --json`, comes back sealed in the next request, and reaches
    the backend again on the assistant message of the tool loop."""
    mark = codex_chain.tap.mark()
    run = Run(codex, codex_chain, tmp_path / "home", tmp_path / "work", "qwen3-coder",
              'call exec_command with cmd="printf wirebridge-shell-ok > proof.txt && cat proof.txt"',
              'model_reasoning_effort="low"')
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "wirebridge-shell-ok"
    commands = run.items("command_execution")
    assert commands and commands[0]["exit_code"] == 0, run.report()
    assert "wirebridge-shell-ok" in run.final_answer()

    first, second = upstream_turns(codex_chain, mark)
    assert "exec_command" in offered(first)
    assert first["reasoning_effort"] == "low"
    reasoning = run.items("reasoning")
    assert reasoning, f"no reasoning item:\n{run.report()}"
    # The reasoning Codex showed is the reasoning the backend gets back,
    # on the assistant message that made the call.
    assistant = next(m for m in second["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
    assert assistant["reasoning_content"] == reasoning[0]["text"]
    assert assistant["tool_calls"][0]["function"]["name"] == "exec_command"
    tool_result = next(m for m in second["messages"] if m["role"] == "tool")
    assert "wirebridge-shell-ok" in tool_result["content"]
    # Codex kept the reasoning as the bridge's sealed carrier, and the
    # bridge opened it (nothing about it was reported as dropped).
    rollouts = "".join(p.read_text() for p in (run.home / "sessions").rglob("*.jsonl"))
    assert '"encrypted_content":"wbs1.' in rollouts
    assert "encrypted_content" not in codex_chain.bridge.log()


def test_a_shell_call_on_a_code_mode_model(codex, codex_chain, tmp_path):
    """`gpt-5.6-sol` is a code-mode ("Responses Lite") model in Codex's
    catalog: no `tools` array, its tools in an `additional_tools` item, and
    one `exec` tool running JavaScript that calls the others."""
    mark = codex_chain.tap.mark()
    script = "const r = await tools.exec_command({cmd: 'printf code-mode-ok > proof.txt && cat proof.txt'}); text(r.output);"
    run = Run(codex, codex_chain, tmp_path / "home", tmp_path / "work", "gpt-5.6-sol",
              f'call functions__exec with input="{script}"')
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "code-mode-ok"
    assert "code-mode-ok" in run.final_answer()

    first, second = upstream_turns(codex_chain, mark)
    tools = offered(first)
    assert "functions__exec" in tools and "functions__wait" in tools, tools
    exec_tool = next(t for t in first["tools"] if t["function"]["name"] == "functions__exec")
    assert exec_tool["function"]["parameters"]["required"] == ["input"]
    assert first["parallel_tool_calls"] is False
    call = next(m for m in second["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"input": script}


def test_apply_patch_writes_a_file(codex, codex_chain, tmp_path):
    """The freeform `apply_patch` tool (a custom tool with a grammar) is
    offered as a function taking `{"input": string}`; the backend's call
    comes back to Codex as a `custom_tool_call`, which Codex applies."""
    mark = codex_chain.tap.mark()
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello from the bridge\n*** End Patch\n"
    run = Run(codex, codex_chain, tmp_path / "home", tmp_path / "work", "gpt-5.5",
              f'call apply_patch with input="{patch}"')
    assert run.code == 0, run.report()
    assert (run.work / "hello.txt").read_text() == "hello from the bridge\n"
    changes = run.items("file_change")
    assert changes and changes[0]["status"] == "completed", run.report()
    first, _ = upstream_turns(codex_chain, mark)
    apply_patch = next(t for t in first["tools"] if t["function"]["name"] == "apply_patch")
    assert "grammar" in apply_patch["function"]["parameters"]["properties"]["input"]["description"]


def test_a_tool_loop_over_a_websocket(codex, codex_chain, tmp_path):
    """With `supports_websockets = true` on its provider, Codex opens a
    Responses WebSocket to the bridge and runs the whole tool loop over it:
    both model turns go through the one upgraded connection, none over
    HTTP, and none falls back."""
    mark = codex_chain.tap.mark()
    log_before = len(codex_chain.bridge.log())
    run = Run(codex, codex_chain, tmp_path / "home", tmp_path / "work", "qwen3-coder",
              'call exec_command with cmd="printf over-websocket > proof.txt && cat proof.txt"',
              "model_providers.wirebridge.supports_websockets=true")
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "over-websocket"
    assert "over-websocket" in run.final_answer()
    assert len(upstream_turns(codex_chain, mark)) == 2
    log = re.sub(r"\x1b\[[0-9;]*m", "", codex_chain.bridge.log()[log_before:]).splitlines()
    upgrades = [line for line in log if "path=/v1/responses status=101" in line]
    assert len(upgrades) == 1, f"Codex did not open one WebSocket:\n{log[-20:]}"
    turns = [line for line in log if " exchange " in line]
    # Codex warms the connection up first (`generate: false`, answered by
    # the bridge alone), then runs the two model turns.
    assert len(turns) == 3, turns
    assert all('transport="websocket"' in line for line in turns), turns
    assert "input_tokens=0 output_tokens=0" in turns[0], turns[0]



def text(message: dict) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content)
    return content


@pytest.mark.parametrize("name", ["wirebridge", "OpenAI"])
def test_a_long_session_compacts(codex, codex_chain, tmp_path, name):
    """Past `model_auto_compact_token_limit`, in the middle of a tool loop,
    Codex compacts the conversation and carries on. Under a provider named
    `OpenAI` (or an Azure one) it sends the conversation to `/responses`
    with a `compaction_trigger` item last: the bridge writes the summary
    with its own prompt in one non-streaming request, and opens the sealed
    `compaction` item it answers with when Codex sends it back. Under any
    other name Codex asks for the summary itself, in an ordinary streamed
    turn of its own that the bridge translates like any other. Either way
    the user's message is sent again, and the loop ends with an answer."""
    mark = codex_chain.tap.mark()
    log_before = len(codex_chain.bridge.log())
    prompt = 'call exec_command with cmd="printf compacted > proof.txt && cat proof.txt"'
    run = Run(codex, codex_chain, tmp_path / "home", tmp_path / "work", "qwen3-coder", prompt,
              f'model_providers.wirebridge.name="{name}"', "model_auto_compact_token_limit=1000")
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "compacted"
    assert run.final_answer()
    first, summary, after = upstream_turns(codex_chain, mark)
    asked = text(summary["messages"][-1])
    assert summary["messages"][-1]["role"] == "user"
    continued = [text(m) for m in after["messages"] if m["role"] == "user"]
    assert prompt in continued
    bridge_summary = [t for t in continued if t.startswith("[Summary of the earlier conversation]")]
    assert "/responses/compact" not in codex_chain.bridge.log()[log_before:]
    if name == "OpenAI":
        assert not summary.get("stream") and summary["tool_choice"] == "none", summary
        assert asked.startswith("Pause the task: do not answer the last message"), asked
        assert continued[-1] in bridge_summary, continued
        assert "This is the wirebridge demo upstream." in continued[-1]
    else:
        assert summary["stream"] is True and not summary.get("tools"), summary
        assert not asked.startswith("Pause the task"), asked
        assert not bridge_summary, continued
