"""The real Codex CLI through the bridge to llama-server's Chat endpoint.

Codex sends its whole real request (about 40 KB: its instructions, nine
tools including a hosted `web_search`, `reasoning`, `include`,
`prompt_cache_key`, `client_metadata`) with `tool_choice: "auto"`, and
neither template makes this small base model call a tool unforced, so this
is one text turn; the forced-call round trip is tested with the SDKs
(test_chat_backend.py, test_agents_sdk.py). llama-server stops the answer at
its `-n` cap, so the turn ends `incomplete` (`max_output_tokens`), which
Codex reports after showing the text."""

from __future__ import annotations

import subprocess
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
