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

import json
import os
import subprocess
from pathlib import Path

import pytest

import harness
from test_chat_backend import server_answer

CODEX_VERSION = "0.169.0"
NODE_DIR = harness.REPO / "tests" / "clients" / "node"


@pytest.fixture(scope="module")
def codex() -> Path:
    path = Path(os.environ.get("WIREBRIDGE_CODEX_BIN", NODE_DIR / "node_modules" / ".bin" / "codex"))
    if not path.exists():
        pytest.fail(f"{path} not found: `bash scripts/test.sh` installs it (npm ci in {NODE_DIR})", pytrace=False)
    version = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60).stdout
    assert CODEX_VERSION in version, version
    return path


def test_codex_sends_its_real_request_and_reads_the_answer(codex, chat_text, tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(
        f"""\
model_provider = "wirebridge"
check_for_update_on_startup = false

[model_providers.wirebridge]
name = "wirebridge"
base_url = "{chat_text.base_url}"
wire_api = "responses"
env_key = "WIREBRIDGE_TEST_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"""
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_", "WIREBRIDGE_"))}
    env.update(CODEX_HOME=str(home), WIREBRIDGE_TEST_KEY="sk-codex-test")
    mark = chat_text.mark()
    done = subprocess.run(
        [str(codex), "exec", "--json", "--skip-git-repo-check", "-s", "read-only", "-C", str(work),
         "-m", "gemma-3-270m", "Say hello."],
        capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=150,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    report = f"exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"

    sent = chat_text.accepted(mark, "/chat/completions")
    assert len(sent) == 1, report
    body = sent[0].json()
    offered = {t["function"]["name"] for t in body["tools"]}
    assert {"exec_command", "write_stdin", "view_image"} <= offered, offered
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][-1] == {"role": "user", "content": "Say hello."}

    expected = server_answer(sent[0])
    assert expected.status == "incomplete", "the server stopped by itself: the test's premise changed"
    messages = [e["item"]["text"] for e in events
                if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"]
    assert messages == [expected.text], report
    failed = [e for e in events if e["type"] == "turn.failed"]
    assert failed and "max_output_tokens" in failed[0]["error"]["message"], report
