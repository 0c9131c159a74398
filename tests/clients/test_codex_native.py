"""The real Codex CLI through the real `wirebridge serve`, in front of the
demo upstream speaking only a Responses API that keeps no state (it refuses
`previous_response_id`, as vLLM, llama.cpp and DeepSeek do): a tool loop
over HTTP, the same over a WebSocket (where Codex chains its turns with
`previous_response_id`), and a session resumed later."""

from __future__ import annotations

import re

import pytest

import harness
from codex_runs import Run, upstream_turns

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
