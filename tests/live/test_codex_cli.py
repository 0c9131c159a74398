"""The real Codex CLI through the bridge to llama-server's Chat endpoint.

Codex sends its whole real request (about 40 KB: its instructions, nine
tools including a hosted `web_search`, `reasoning`, `include`,
`prompt_cache_key`, `client_metadata`) with `tool_choice: "auto"`:

* a text turn on the text server, where the model calls nothing unforced.
  llama-server stops the answer at its `-n` cap, so the turn ends
  `incomplete` (`max_output_tokens`), which Codex reports after showing the
  text;
* a shell command run for real, on the copy server (see conftest.py). The
  prompt shows the model three earlier exchanges in Firefunction v2's
  markup, each a call of `exec_command`, its output and a short answer. The
  model copies the call, llama-server parses it into a Chat tool call, the
  bridge hands it to Codex as a `function_call`, Codex runs the command and
  sends its output back, and the model copies the answer, which ends the
  turn."""

from __future__ import annotations

import json
import subprocess
import types
from pathlib import Path

import pytest

import codex_runs
from test_chat_backend import server_answer


@pytest.fixture(scope="module")
def codex() -> Path:
    path = codex_runs.codex_binary()
    if not path.exists():
        pytest.fail(f"{path} not found: `bash scripts/test.sh` installs it (npm ci in {codex_runs.NODE_DIR})",
                    pytrace=False)
    version = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60).stdout
    assert codex_runs.CODEX_VERSION in version, version
    return path


# Codex's request: about 9,800 prompt tokens (its instructions and tools).
CODEX_PROMPT_TOKENS = 10_000


@pytest.fixture(autouse=True)
def codex_bounded_by_the_pace(pace, monkeypatch):
    """A Codex run waits as long as the pace gives its turns (two, each a
    prompt of Codex's size and a capped answer), not the fixed time
    `codex_runs` sets for the scripted upstream, which a busy machine
    exceeds on this prompt."""
    seconds = pace.seconds(prompt_tokens=CODEX_PROMPT_TOKENS, requests=2)

    def run(*args, timeout=None, **kwargs):
        return subprocess.run(*args, timeout=seconds, **kwargs)

    monkeypatch.setattr(codex_runs, "subprocess", types.SimpleNamespace(run=run, DEVNULL=subprocess.DEVNULL))


def test_codex_sends_its_real_request_and_reads_the_answer(codex, chat_text, tmp_path):
    mark = chat_text.mark()
    run = codex_runs.Run(codex, chat_text, tmp_path / "home", tmp_path / "work", "gemma-3-270m", "Say hello.")
    report = run.report()

    sent = chat_text.accepted(mark, "/chat/completions")
    assert len(sent) == 1, report
    body = sent[0].json()
    offered = set(codex_runs.offered(body))
    assert {"exec_command", "write_stdin", "view_image"} <= offered, offered
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][-1] == {"role": "user", "content": "Say hello."}

    expected = server_answer(sent[0])
    assert expected.status == "incomplete", "the server stopped by itself: the test's premise changed"
    assert [item["text"] for item in run.items("agent_message")] == [expected.text], report
    failed = [e for e in run.events if e["type"] == "turn.failed"]
    assert failed and "max_output_tokens" in failed[0]["error"]["message"], report


# The command the model is shown calling, and what its output holds.
MARKER = "wirebridge-live"
COMMAND = f"echo {MARKER}"
ASK = f"Run {COMMAND}."


def _header(role: str) -> str:
    return f"<|start_header_id|>{role}<|end_header_id|>\n\n"


def _shown_exchange() -> str:
    """The user's turn closed, then an exchange as Firefunction v2's template
    renders one: the assistant's call, the tool's output as Codex writes it
    (its chunk id and wall time vary from run to run), and the assistant's
    answer, ended by `</s>`, a control token of Gemma's tokenizer that
    llama-server takes for the end of a turn; then the user's turn again."""
    call = json.dumps([{"name": "exec_command", "arguments": {"cmd": COMMAND}}])
    output = ("Chunk ID: 0a5c20\nWall time: 0.0000 seconds\nProcess exited with code 0\n"
              f"Original token count: 4\nOutput:\n{MARKER}")
    return (f"<|eot_id|>{_header('assistant')}functools{call}<|eot_id|>{_header('tool')}{output}"
            f"<|eot_id|>{_header('assistant')}Done.</s><|eot_id|>{_header('user')}{ASK}")


PROMPT = ASK + _shown_exchange() * 3


def test_codex_runs_the_shell_command_the_model_calls(codex, chat_copy, tmp_path):
    """Each part the model copies follows the same text in the prompt: the
    call follows the user's ask, the answer follows Codex's output of the
    command. The answer ends at `</s>`, so the turn completes."""
    mark = chat_copy.mark()
    run = codex_runs.Run(codex, chat_copy, tmp_path / "home", tmp_path / "work", "gemma-3-270m", PROMPT)
    report = run.report()

    sent = chat_copy.accepted(mark, "/chat/completions")
    assert len(sent) == 2, report
    first, second = (exchange.json() for exchange in sent)
    assert first["tool_choice"] == "auto" and "exec_command" in codex_runs.offered(first)
    assert first["messages"][-1] == {"role": "user", "content": PROMPT}

    # The server's call is the command Codex ran.
    called = server_answer(sent[0])
    assert [c.name for c in called.calls] == ["exec_command"], f"the server made no call: {called.text!r}"
    call = called.calls[0]
    commands = run.items("command_execution")
    assert len(commands) == 1, report
    assert call.parsed["cmd"] in commands[0]["command"], report
    assert commands[0]["exit_code"] == 0 and MARKER in commands[0]["aggregated_output"], report

    # The next request is the history, then the call and its output, paired
    # by the server's call id.
    history = len(first["messages"])
    assert second["messages"][:history] == first["messages"]
    assistant, tool = second["messages"][history:]
    assert assistant == {"role": "assistant", "content": None,
                         "tool_calls": [{"id": call.call_id, "type": "function",
                                         "function": {"name": "exec_command", "arguments": call.arguments}}]}
    assert tool["role"] == "tool" and tool["tool_call_id"] == call.call_id
    assert MARKER in tool["content"]

    # What the server answered to the output is Codex's final message.
    answered = server_answer(sent[1])
    assert not answered.calls and answered.status == "completed", \
        "the server did not end the turn with text: the test's premise changed"
    assert [item["text"] for item in run.items("agent_message")] == [answered.text], report
    assert run.events[-1]["type"] == "turn.completed" and run.code == 0, report
