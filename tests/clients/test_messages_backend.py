"""A Messages backend (`wirebridge serve --upstream-api messages`): the
demo upstream speaking Anthropic's Messages API behind a tap, reached by
the official openai SDK, the real Codex CLI and the real Claude Code CLI.

The demo signs each thinking block it writes and refuses, as Anthropic's
API does, a conversation that hands one back altered or unsigned: a turn it
answers after a tool loop proves the bridge returned the thinking byte for
byte. What the backend was sent is read at the tap; what it answered, by
asking it again directly (it is deterministic)."""

from __future__ import annotations

import base64
import json
import os

import openai
import pytest

import harness
from codex_runs import Run as CodexRun
from test_claude_code import ANSWER, OUTPUT, PROMPT, Run as ClaudeRun, claude  # noqa: F401 (a fixture)

TOOLS = [{"type": "function", "name": "get_weather", "description": "The weather in a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
CALL = "call get_weather with city=Paris"
WEATHER = "Paris: sunny, 18 C"


@pytest.fixture(scope="module")
def chain(wirebridge, log_dir):
    key = base64.b64encode(os.urandom(32)).decode()
    started = harness.start_chain(log_dir, "messages-backend", "messages", env={"WIREBRIDGE_SEAL_KEY": key})
    yield started
    harness.stop_checked(started)


def messages_sent(chain, mark: int) -> list[harness.Captured]:
    return [c for c in chain.tap.since(mark) if c.method == "POST" and c.path.endswith("/messages")]


def thinking_answered(chain, captured: harness.Captured) -> dict:
    """The thinking block the backend wrote in answer to `captured`."""
    body = captured.json()
    body["stream"] = False
    status, _, text = harness.post_direct(chain.upstream_url + captured.path, json.dumps(body).encode())
    assert status == 200, text
    [block] = [b for b in json.loads(text)["content"] if b["type"] == "thinking"]
    return block


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_thinking_goes_back_signed_through_the_store(chain, stream):
    client = harness.client(chain)
    mark = chain.tap.mark()

    def create(**fields):
        if not stream:
            return client.responses.create(model="demo", tools=TOOLS, reasoning={"effort": "low"}, **fields)
        with client.responses.stream(model="demo", tools=TOOLS, reasoning={"effort": "low"}, **fields) as s:
            return s.get_final_response()

    first = create(input=CALL)
    assert [item.type for item in first.output] == ["reasoning", "function_call"], first.output
    assert first.output[0].encrypted_content.startswith("wbt1.")
    [call] = [item for item in first.output if item.type == "function_call"]
    assert json.loads(call.arguments) == {"city": "Paris"}
    answer = create(previous_response_id=first.id,
                    input=[{"type": "function_call_output", "call_id": call.call_id, "output": WEATHER}])
    assert answer.output_text == f"The tool returned: {WEATHER}"

    asked, continued = messages_sent(chain, mark)
    assert asked.json()["thinking"]["type"] == "enabled"
    assistant = continued.json()["messages"][1]
    assert assistant["role"] == "assistant"
    # The block the backend wrote, byte for byte, before the call it made.
    assert assistant["content"][0] == thinking_answered(chain, asked)
    assert assistant["content"][1] == {"type": "tool_use", "id": call.call_id, "name": "get_weather",
                                       "input": {"city": "Paris"}}
    result = continued.json()["messages"][2]["content"][0]
    assert result == {"type": "tool_result", "tool_use_id": call.call_id, "content": WEATHER}


def test_a_client_that_keeps_its_own_history_hands_the_thinking_back(chain):
    client = harness.client(chain)
    first = client.responses.create(model="demo", input=CALL, tools=TOOLS, reasoning={"effort": "low"},
                                    store=False, include=["reasoning.encrypted_content"])
    history = [{"role": "user", "content": CALL}] + [item.model_dump(exclude_none=True) for item in first.output]
    [call] = [item for item in first.output if item.type == "function_call"]
    history.append({"type": "function_call_output", "call_id": call.call_id, "output": WEATHER})
    answer = client.responses.create(model="demo", input=history, tools=TOOLS, reasoning={"effort": "low"},
                                     store=False)
    assert answer.output_text == f"The tool returned: {WEATHER}"

    # An altered carrier never reaches the backend.
    altered = [dict(item) for item in history]
    carrier = altered[1]["encrypted_content"]
    altered[1]["encrypted_content"] = carrier[:12] + ("A" if carrier[12] != "A" else "B") + carrier[13:]
    mark = chain.tap.mark()
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="demo", input=altered, tools=TOOLS, store=False)
    assert refused.value.body["param"] == "input[1].encrypted_content", refused.value.body
    assert messages_sent(chain, mark) == []


def test_a_chat_client_reaches_the_backend_through_the_responses_side(chain):
    client = harness.client(chain)
    mark = chain.tap.mark()
    reply = client.chat.completions.create(model="demo", messages=[
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello Messages"}])
    assert reply.choices[0].message.content == 'You said: "Hello Messages". This is the wirebridge demo upstream.'
    [sent] = messages_sent(chain, mark)
    assert sent.json()["system"] == [{"type": "text", "text": "Be brief."}]


def test_the_anthropic_profile_sends_the_key_as_anthropic_reads_it(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "messages-anthropic", "messages", profile="anthropic")
    try:
        client = harness.client(chain)
        mark = chain.tap.mark()
        client.responses.create(model="demo", input="Hi", instructions="Be kind.")
        [sent] = messages_sent(chain, mark)
        headers = {name.lower(): value for name, value in sent.headers.items()}
        assert "authorization" not in headers, headers
        assert headers["x-api-key"] == client.api_key
        assert headers["anthropic-version"] == "2023-06-01"
        body = sent.json()
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert body["max_tokens"] == 32000
    finally:
        harness.stop_checked(chain)


def test_codex_runs_a_tool_loop(codex, chain, tmp_path):
    mark = chain.tap.mark()
    run = CodexRun(codex, chain, tmp_path / "home", tmp_path / "work", "qwen3-coder",
                   'call exec_command with cmd="printf messages-backend-ok > proof.txt && cat proof.txt"',
                   'model_reasoning_effort="low"')
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "messages-backend-ok"
    assert "messages-backend-ok" in run.final_answer()
    asked, continued = messages_sent(chain, mark)
    assert "exec_command" in [t["name"] for t in asked.json()["tools"]]
    assistant = next(m for m in continued.json()["messages"] if m["role"] == "assistant")
    # Codex keeps no response on the bridge (store: false): the thinking
    # came back from its own history, sealed, and reached the backend whole.
    assert assistant["content"][0] == thinking_answered(chain, asked)
    assert assistant["content"][-1]["type"] == "tool_use"
    results = [b for m in continued.json()["messages"] if m["role"] == "user" for b in m["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert results and "messages-backend-ok" in json.dumps(results[0]["content"])


def test_codex_resumes_a_session_with_its_thinking(codex, chain, tmp_path):
    """A session resumed later (`codex exec resume --last`): the backend gets
    the earlier turns, their thinking still signed as it wrote it."""
    home, work = tmp_path / "home", tmp_path / "work"
    first = CodexRun(codex, chain, home, work, "qwen3-coder", "say alpha", 'model_reasoning_effort="low"')
    assert first.code == 0, first.report()
    mark = chain.tap.mark()
    resumed = CodexRun(codex, chain, home, work, "qwen3-coder", "say bravo", 'model_reasoning_effort="low"',
                       resume=True)
    assert resumed.code == 0, resumed.report()
    assert "bravo" in resumed.final_answer()
    [turn] = messages_sent(chain, mark)
    said = json.dumps(turn.json()["messages"])
    assert "say alpha" in said and "say bravo" in said
    assistant = next(m for m in turn.json()["messages"] if m["role"] == "assistant")
    assert assistant["content"][0]["type"] == "thinking" and assistant["content"][0]["signature"]


def test_codex_runs_a_tool_loop_over_a_websocket(codex, chain, tmp_path):
    """Codex's WebSocket mode over a Messages backend: both turns on one
    upgraded connection, each written as a Messages request."""
    mark = chain.tap.mark()
    log_before = len(chain.bridge.log())
    run = CodexRun(codex, chain, tmp_path / "home", tmp_path / "work", "qwen3-coder",
                   'call exec_command with cmd="printf messages-over-websocket > proof.txt && cat proof.txt"',
                   "model_providers.wirebridge.supports_websockets=true")
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "messages-over-websocket"
    assert len(messages_sent(chain, mark)) == 2
    log = chain.bridge.log()[log_before:]
    assert log.count("status=101") == 1, log[-3000:]
    turns = [line for line in log.splitlines() if " exchange " in line and "responses_to_messages" in line]
    assert len(turns) == 3 and all("websocket" in line for line in turns), turns


def test_claude_code_passes_through_untouched(claude, chain, tmp_path):
    front = harness.Tap(chain.bridge.url)
    try:
        sent_mark, upstream_mark = front.mark(), chain.tap.mark()
        run = ClaudeRun(claude, front.url, tmp_path / "home", tmp_path / "work", PROMPT)
        assert run.code == 0, run.report()
        assert run.result["result"] == ANSWER, run.report()
        sent = [c for c in front.since(sent_mark) if c.method == "POST"]
        upstream = [c for c in chain.tap.since(upstream_mark) if c.method == "POST"]
        # The call and the answer from its output, each sent once: its
        # environment, a `system` turn after the user's message under
        # `mid-conversation-tool-changes-2026-07-01`, is taken as
        # Anthropic's API takes it (a refused turn would be sent again
        # without it).
        assert [c.path for c in sent] == ["/v1/messages?beta=true"] * 2, [c.path for c in sent]
        assert any(m["role"] == "system" for m in sent[0].json()["messages"]), sent[0].json()["messages"]
        # Its API is the backend's: every request reaches it as it was sent.
        assert [c.path for c in upstream] == [c.path for c in sent]
        assert [c.body for c in upstream] == [c.body for c in sent]
        assert any(f"echo {OUTPUT}" in c.body.decode() and "tool_result" in c.body.decode() for c in upstream)
    finally:
        front.close()


def test_a_configured_key_goes_as_x_api_key_and_the_clients_stays_home(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "messages-anthropic-key", "messages", profile="anthropic",
                                extra=["--upstream-api-key-env", "WIREBRIDGE_TEST_ANTHROPIC_KEY"],
                                env={"WIREBRIDGE_TEST_ANTHROPIC_KEY": "sk-ant-configured"})
    try:
        client = harness.client(chain)
        mark = chain.tap.mark()
        client.responses.create(model="demo", input="Hi")
        client.chat.completions.create(model="demo", messages=[{"role": "user", "content": "Hi"}])
        sent = messages_sent(chain, mark)
        assert len(sent) == 2
        for request in sent:
            headers = {name.lower(): value for name, value in request.headers.items()}
            assert headers["x-api-key"] == "sk-ant-configured"
            assert "authorization" not in headers, headers
            assert client.api_key not in json.dumps(headers)
        assert "sk-ant-configured" not in chain.bridge.log()
    finally:
        harness.stop_checked(chain)


def test_input_tokens_are_counted_by_the_backend(chain):
    client = harness.client(chain)
    first = client.responses.create(model="demo", input="My name is Ada.")
    mark = chain.tap.mark()
    raw = client.responses.input_tokens.with_raw_response.count(
        model="demo", input="What is my name?", previous_response_id=first.id)
    assert raw.headers["x-wirebridge-input-tokens"] == "counted"
    [asked] = [c for c in chain.tap.since(mark) if c.path.endswith("/messages/count_tokens")]
    body = asked.json()
    assert "max_tokens" not in body and "stream" not in body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    # What the backend counted, asked again directly.
    status, _, text = harness.post_direct(chain.upstream_url + asked.path, asked.body)
    assert status == 200
    assert raw.parse().input_tokens == json.loads(text)["input_tokens"]
