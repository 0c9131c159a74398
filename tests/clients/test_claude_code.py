"""The real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned in
tests/clients/node) through the real `wirebridge serve`, in front of the
scripted demo upstream speaking Chat Completions, then Responses: an
Anthropic Messages client on each kind of backend.

Claude Code runs as `claude -p PROMPT --output-format json`, and in
stream-json mode (`--input-format stream-json --output-format stream-json
--verbose`, the prompt a JSON line on stdin: what the Agent SDK and the IDE
integrations drive), with a home
of its own, the bridge as `ANTHROPIC_BASE_URL`, a key in
`ANTHROPIC_API_KEY`, and `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`
(no update check, telemetry or error reporting): with a key in the
environment and `-p`, it asks for no login, no onboarding and no trust
of the working directory, and connects to nothing but the base URL.
`--allowedTools Bash` lets it run its Bash tool without asking.

The prompt asks the demo upstream for a call of Claude Code's own `Bash`
tool, so each run is one tool loop: Claude Code streams
`POST /v1/messages?beta=true` with its tools, system prompt, thinking
settings and metadata, runs the command the demo asked for, sends its
output back, and prints the demo's answer to it. Claude Code sends its
environment as a system turn after the user's message (`role: "system"`
inside `messages`), which the bridge keeps in its place."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import drive
import harness

CLAUDE_VERSION = harness.node_pin("@anthropic-ai/claude-code")
NODE_DIR = harness.NODE_DIR
MODEL = "qwen3-coder"

# The demo upstream calls the tool named after `call`, with the `key=value`
# words after it as arguments, and answers a tool result with
# `The tool returned: OUTPUT`.
OUTPUT = "wirebridge-claude"
PROMPT = f'call Bash with command="echo {OUTPUT}"'
ARGUMENTS = {"command": f"echo {OUTPUT}"}
ANSWER = f"The tool returned: {OUTPUT}"


def claude_binary() -> Path:
    """`$WIREBRIDGE_CLAUDE_BIN`, else the binary the npm package installs."""
    return Path(os.environ.get("WIREBRIDGE_CLAUDE_BIN", NODE_DIR / "node_modules" / ".bin" / "claude"))


@pytest.fixture(scope="session")
def claude():
    """The Claude Code binary the npm package installs, at the pinned version."""
    path = claude_binary()
    if not path.exists():
        pytest.fail(f"{path} not found: `bash scripts/test.sh` installs it (npm install in {NODE_DIR})",
                    pytrace=False)
    # Without its install script the package leaves a stub that says so.
    version = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60)
    assert CLAUDE_VERSION in version.stdout, version.stdout + version.stderr
    return path


@pytest.fixture(scope="module", params=["chat", "responses"])
def claude_chain(request, wirebridge, log_dir):
    """The bridge in front of the demo upstream speaking one API, and a tap
    in front of the bridge recording what Claude Code sends it."""
    chain = harness.start_chain(log_dir, f"claude-{request.param}", request.param)
    front = harness.Tap(chain.bridge.url)
    yield request.param, chain, front
    front.close()
    harness.stop_checked(chain)


class Run:
    """One `claude -p PROMPT --output-format json` run against `base_url`
    (with `stream_json`, one in stream-json mode, the prompt sent as a user
    message on stdin), in `work`, with `home` as its home: its exit code,
    its JSON result and its stderr."""

    def __init__(self, claude: Path, base_url: str, home: Path, work: Path, prompt: str,
                 stream_json: bool = False) -> None:
        home.mkdir(parents=True, exist_ok=True)
        work.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "WIREBRIDGE_"))}
        env.update(
            HOME=str(home),
            ANTHROPIC_BASE_URL=base_url,
            ANTHROPIC_API_KEY="sk-ant-wirebridge-test",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        options = ["--model", MODEL, "--allowedTools", "Bash"]
        if stream_json:
            args = [str(claude), "-p", "--input-format", "stream-json", "--output-format", "stream-json",
                    "--verbose", *options]
            message = {"type": "user", "message": {"role": "user", "content": prompt}}
            stdin = {"input": json.dumps(message) + "\n"}
        else:
            args = [str(claude), "-p", prompt, "--output-format", "json", *options]
            stdin = {"stdin": subprocess.DEVNULL}
        done = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=50, **stdin)
        self.code = done.returncode
        self.stdout = done.stdout
        self.stderr = done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        # The result is the last line (stream-json writes the session's
        # events before it).
        self.result = lines[-1] if lines else {}

    def report(self) -> str:
        return f"exit {self.code}\nstdout: {self.stdout[-4000:]}\nstderr: {self.stderr[-3000:]}"


def output_text(output) -> str:
    """A tool output's text: a string, or the text of its parts."""
    if isinstance(output, str):
        return output
    return "".join(part.get("text", "") for part in output)


def chat_call_and_output(second: dict) -> tuple[dict, dict]:
    """The assistant's tool call and the tool message answering it."""
    call = next(m for m in second["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
    result = next(m for m in second["messages"] if m["role"] == "tool")
    assert len(call["tool_calls"]) == 1, call
    return call["tool_calls"][0], result


def responses_call_and_output(second: dict) -> tuple[dict, dict]:
    """The `function_call` item and the `function_call_output` answering it."""
    call = next(i for i in second["input"] if i.get("type") == "function_call")
    result = next(i for i in second["input"] if i.get("type") == "function_call_output")
    return call, result


def test_claude_code_runs_a_bash_call(claude, claude_chain, tmp_path):
    api, chain, front = claude_chain
    sent_mark, upstream_mark = front.mark(), chain.tap.mark()
    log_before = len(chain.bridge.log())
    run = Run(claude, front.url, tmp_path / "home", tmp_path / "work", PROMPT)

    assert run.code == 0, run.report()
    assert run.result.get("is_error") is False, run.report()
    assert run.result["result"] == ANSWER, run.report()

    # Claude Code asked the bridge twice, streamed, on its own path and
    # query: once for the call, once with the command's output.
    sent = front.since(sent_mark)
    assert [(c.method, c.path) for c in sent] == [("POST", "/v1/messages?beta=true")] * 2, sent
    assert all(c.json()["stream"] is True for c in sent)

    endpoint = "/chat/completions" if api == "chat" else "/responses"
    upstream = chain.tap.since(upstream_mark)
    assert [c.path for c in upstream] == ["/v1" + endpoint] * 2, [c.path for c in upstream]
    first, second = (c.json() for c in upstream)
    if api == "chat":
        assert "Bash" in [t["function"]["name"] for t in first["tools"]]
        roles = [m["role"] for m in first["messages"]]
        call, result = chat_call_and_output(second)
        name, arguments, call_id = call["function"]["name"], call["function"]["arguments"], call["id"]
        answered, output = result["tool_call_id"], output_text(result["content"])
    else:
        assert "Bash" in [t["name"] for t in first["tools"] if t["type"] == "function"]
        roles = [i["role"] for i in first["input"] if i.get("type", "message") == "message"]
        call, result = responses_call_and_output(second)
        name, arguments, call_id = call["name"], call["arguments"], call["call_id"]
        answered, output = result["call_id"], output_text(result["output"])
    # Claude Code's system turn follows the user's message upstream too.
    assert "system" in roles[roles.index("user"):], roles
    # The call Claude Code ran went back with its output, paired by id.
    assert name == "Bash"
    assert json.loads(arguments) == ARGUMENTS
    assert answered == call_id
    assert OUTPUT in output, output

    # Claude Code adds up the usage of its two turns: the upstream's own
    # (asked again directly; the demo upstream is deterministic).
    usages = [drive.upstream_answer(chain, c).usage for c in upstream]
    assert all(usages), usages
    usage = run.result["usage"]
    assert usage["input_tokens"] == sum(u.input_tokens for u in usages), (usage, usages)
    assert usage["output_tokens"] == sum(u.output_tokens for u in usages), (usage, usages)

    log = re.sub(r"\x1b\[[0-9;]*m", "", chain.bridge.log()[log_before:]).splitlines()
    exchanges = [line for line in log if " exchange " in line]
    messages = [line for line in exchanges if "path=/v1/messages " in line]
    inner = [line for line in exchanges if "path=/v1/responses " in line]
    assert len(messages) == 2 and len(inner) == 2, exchanges
    assert all('direction="messages_to_responses"' in line and "status=200" in line for line in messages), messages
    # Every beta Claude Code turns on is one the bridge knows: none is
    # reported as dropped (an unknown one would be, by name).
    assert all(c.headers.get("anthropic-beta") for c in sent), sent
    assert not any("anthropic-beta" in line for line in messages), messages
    # Nor is any field of its requests, but the deferred loading of a tool.
    for line in messages:
        assert all(re.fullmatch(r"tools\[\d+\]\.defer_loading", p) for p in dropped(line)), line
    assert all('via="messages_to_responses"' in line for line in inner), inner
    assert "panicked" not in chain.bridge.log()


def messages_exchanges(chain, log_before: int) -> list[str]:
    """The bridge's log lines of the `/v1/messages` exchanges since
    `log_before`."""
    log = re.sub(r"\x1b\[[0-9;]*m", "", chain.bridge.log()[log_before:]).splitlines()
    return [line for line in log if " exchange " in line and "path=/v1/messages " in line]


def dropped(line: str) -> list[str]:
    """The paths an exchange's log line names as dropped."""
    found = re.search(r" dropped=(.*?) trace_id=", line)
    return [p for p in found.group(1).split(", ") if p] if found else []


def test_claude_code_in_stream_json_mode_is_refused_nothing(claude, claude_chain, tmp_path):
    """Stream-json mode asks for `thinking.display: "updates"` with its beta:
    each turn is answered the first time, with nothing reported lost but the
    deferred loading of a tool (no backend here has Anthropic's tool search
    to load it from)."""
    api, chain, front = claude_chain
    sent_mark = front.mark()
    log_before = len(chain.bridge.log())
    run = Run(claude, front.url, tmp_path / "home", tmp_path / "work", PROMPT, stream_json=True)

    assert run.code == 0, run.report()
    assert run.result.get("type") == "result", run.report()
    assert run.result.get("is_error") is False, run.report()
    assert run.result["result"] == ANSWER, run.report()

    # Two turns, each sent once: a refused request would have been sent
    # again without what was refused.
    sent = front.since(sent_mark)
    assert [(c.method, c.path) for c in sent] == [("POST", "/v1/messages?beta=true")] * 2, \
        [(c.method, c.path, c.headers.get("anthropic-beta")) for c in sent]
    for c in sent:
        assert c.json()["thinking"].get("display") == "updates", c.json()["thinking"]
        assert "thinking-display-updates-2026-08-18" in c.headers["anthropic-beta"].split(","), c.headers

    messages = messages_exchanges(chain, log_before)
    assert len(messages) == 2, messages
    assert all("status=200" in line for line in messages), messages
    for line in messages:
        assert all(re.fullmatch(r"tools\[\d+\]\.defer_loading", p) for p in dropped(line)), line
    assert "panicked" not in chain.bridge.log()
