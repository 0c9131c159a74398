"""The real Codex CLI through the real `wirebridge serve`, in front of the
demo upstream speaking only a Responses API that keeps no state (it refuses
`previous_response_id`, as vLLM, llama.cpp and DeepSeek do): a tool loop
over HTTP, the same over a WebSocket (where Codex chains its turns with
`previous_response_id`), a session resumed later, and a code-mode model
whose tools come in an input item, against a scripted backend."""

from __future__ import annotations

import re

import pytest

import harness
from codex_runs import Run, upstream_turns
from scripted_responses import ScriptedResponses

MODEL = "qwen3-coder"


@pytest.fixture(scope="session")
def native_chain(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "codex-native", "responses")
    yield chain
    harness.stop_checked(chain)


def stateless(turns: list[dict]) -> None:
    for turn in turns:
        assert "previous_response_id" not in turn, turn.get("previous_response_id")


def kinds(turn: dict) -> list[str]:
    return [item.get("type", "message") for item in turn["input"]]


def test_a_tool_loop_over_http(codex, native_chain, tmp_path):
    """Codex sends `store: false` and the whole conversation each turn, and
    asks for its reasoning back sealed: the backend gives none sealed, so
    the bridge seals it, and opens it into reasoning text for the backend
    on the next turn."""
    mark = native_chain.tap.mark()
    run = Run(codex, native_chain, tmp_path / "home", tmp_path / "work", MODEL,
              'call exec_command with cmd="printf native-ok > proof.txt && cat proof.txt"',
              'model_reasoning_effort="low"')
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "native-ok"
    assert "native-ok" in run.final_answer()
    first, second = upstream_turns(native_chain, mark, "/responses")
    stateless([first, second])
    assert "function_call" in kinds(second) and "function_call_output" in kinds(second)
    assert "reasoning.encrypted_content" in first.get("include", [])
    shown = run.items("reasoning")
    assert shown, f"no reasoning item:\n{run.report()}"
    [replayed] = [item for item in second["input"] if item.get("type") == "reasoning"]
    assert "encrypted_content" not in replayed, replayed
    assert replayed["content"] == [{"type": "reasoning_text", "text": shown[0]["text"]}], replayed
    rollouts = "".join(p.read_text() for p in (run.home / "sessions").rglob("*.jsonl"))
    assert '"encrypted_content":"wbs1.' in rollouts


def test_a_tool_loop_over_a_websocket(codex, native_chain, tmp_path):
    """Over a WebSocket Codex sends only what is new, after
    `previous_response_id`; the upstream still gets whole conversations."""
    mark = native_chain.tap.mark()
    log_before = len(native_chain.bridge.log())
    run = Run(codex, native_chain, tmp_path / "home", tmp_path / "work", MODEL,
              'call exec_command with cmd="printf native-ws > proof.txt && cat proof.txt"',
              "model_providers.wirebridge.supports_websockets=true")
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "native-ws"
    first, second = upstream_turns(native_chain, mark, "/responses")
    stateless([first, second])
    assert kinds(second)[:len(kinds(first))] == kinds(first), "the first turn, whole, before the second"
    assert kinds(second)[-2:] == ["function_call", "function_call_output"], kinds(second)
    log = re.sub(r"\x1b\[[0-9;]*m", "", native_chain.bridge.log()[log_before:]).splitlines()
    assert len([line for line in log if "path=/v1/responses status=101" in line]) == 1
    turns = [line for line in log if " exchange " in line]
    assert all('transport="websocket"' in line and 'direction="responses_to_responses"' in line
               for line in turns), turns


def test_a_session_resumed_later(codex, native_chain, tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    first = Run(codex, native_chain, home, work, MODEL, "say alpha")
    assert first.code == 0, first.report()
    mark = native_chain.tap.mark()
    resumed = Run(codex, native_chain, home, work, MODEL, "say bravo", resume=True)
    assert resumed.code == 0, resumed.report()
    assert "bravo" in resumed.final_answer()
    [turn] = upstream_turns(native_chain, mark, "/responses")
    stateless([turn])
    texts = [part.get("text", "") for item in turn["input"] if item.get("role") == "user"
             for part in (item["content"] if isinstance(item["content"], list) else [{"text": item["content"]}])]
    assert any("say alpha" in t for t in texts) and "say bravo" in texts[-1], texts


CODE_MODE_SCRIPT = ("const r = await tools.exec_command({cmd: 'printf native-code-mode > proof.txt && cat proof.txt'});"
                    " text(r.output);")


@pytest.fixture(scope="module")
def code_mode_chain(wirebridge, log_dir):
    upstream = ScriptedResponses(CODE_MODE_SCRIPT)
    bridge = harness.start_bridge(log_dir, "codex-native-code-mode", upstream.url + "/v1", "responses")
    chain = harness.Chain("codex-native-code-mode", bridge, upstream)
    yield chain
    harness.stop_checked(chain)


def test_a_code_mode_model_offers_its_tools_to_the_backend(codex, code_mode_chain, tmp_path):
    """`gpt-5.6-sol` is a code-mode model in Codex's catalog: it sends no
    `tools` array, only an `additional_tools` input item. A backend that
    keeps no state does not know that item: the bridge sends its tools in
    `tools` and leaves the item out, and the backend's call of the
    namespaced `exec` tool reaches Codex, which runs it."""
    mark = code_mode_chain.tap.mark()
    run = Run(codex, code_mode_chain, tmp_path / "home", tmp_path / "work", "gpt-5.6-sol",
              "run the proof script")
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "native-code-mode"
    assert "native-code-mode" in run.final_answer()

    first, second = upstream_turns(code_mode_chain, mark, "/responses")
    stateless([first, second])
    for turn in (first, second):
        assert "additional_tools" not in kinds(turn), kinds(turn)
        namespaces = {t["name"]: t for t in turn.get("tools", []) if t.get("type") == "namespace"}
        assert "functions" in namespaces, turn.get("tools")
        inner = {t["name"]: t["type"] for t in namespaces["functions"]["tools"]}
        assert inner.get("exec") == "custom" and inner.get("wait") == "function", inner
    [call] = [item for item in second["input"] if item.get("type") == "custom_tool_call"]
    assert (call["namespace"], call["name"], call["input"]) == ("functions", "exec", CODE_MODE_SCRIPT)
    [output] = [item for item in second["input"] if item.get("type") == "custom_tool_call_output"]
    assert output["call_id"] == call["call_id"]
