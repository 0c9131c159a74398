"""The real Claude Code CLI in its interactive terminal (the README's own
`claude` command), run in a detached tmux session through the real
`wirebridge serve`, in front of the scripted demo upstream speaking Chat
Completions, then Anthropic's Messages API.

Claude Code gets a home of its own whose `.claude.json` says what a first
run would ask: onboarding done, the key in `ANTHROPIC_API_KEY` approved
(by its last 20 characters, as Claude Code records the answer) and the
working folder trusted. No keystroke answers a first-run screen: if one
shows, the prompt never reaches the bridge and the test fails with the
pane in its message.

The test types the prompt of the `-p` tests (a call of Claude Code's Bash
tool), waits for the demo's answer to its output in the pane, and exits
with `/exit`. In its terminal Claude Code starts in auto mode, where it
asks Anthropic's API to check its tool calls (`safeguards`, with the
`dangerous-tool-use-2026-09-03` and `afk-mode-2026-01-31` betas): a
translating bridge reports those as lost, since no backend runs that
check, and nothing else. A Messages backend gets every request as it was
sent."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import harness
from test_claude_code import ANSWER, MODEL, OUTPUT, PROMPT, claude, dropped  # noqa: F401 (a fixture)

KEY = "sk-ant-wirebridge-test"
# Bounds for a busy machine: Claude Code's start, then a whole tool loop.
STARTUP_TIMEOUT = 90.0
ANSWER_TIMEOUT = 90.0
EXIT_TIMEOUT = 30.0
POLL_INTERVAL = 0.25

# The betas Claude Code's auto mode turns on, for features only
# Anthropic's API has; a translating bridge reports each as lost.
AUTO_MODE_BETAS = ("dangerous-tool-use-2026-09-03", "afk-mode-2026-01-31")


@pytest.fixture(scope="module")
def tmux():
    """The tmux binary; the tests skip without one."""
    path = shutil.which("tmux")
    if path is None:
        pytest.skip("tmux is not installed: the interactive terminal is driven through a tmux session")
    return path


@pytest.fixture(scope="module", params=["chat", "messages"])
def terminal_chain(request, wirebridge, log_dir):
    """The bridge in front of the demo upstream speaking one API, and a tap
    in front of the bridge recording what Claude Code sends it."""
    chain = harness.start_chain(log_dir, f"claude-terminal-{request.param}", request.param)
    front = harness.Tap(chain.bridge.url)
    yield request.param, chain, front
    front.close()
    harness.stop_checked(chain)


def first_run_answered(home: Path, work: Path) -> None:
    """Writes the answers to Claude Code's first-run screens into its
    global config, `$HOME/.claude.json`."""
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {str(work.resolve()): {"hasTrustDialogAccepted": True}},
    }
    (home / ".claude.json").write_text(json.dumps(config))


class Terminal:
    """Claude Code running in a detached tmux session of its own (a server
    on a socket of its own, at `socket`, so that nothing else's sessions are
    touched and nothing is left outside the test's folder)."""

    def __init__(self, tmux: str, claude: Path, base_url: str, home: Path, work: Path, socket: Path) -> None:
        self.tmux = tmux
        self.socket = str(socket)
        # Outside any tmux session the test may run in (`TMUX` would name
        # it), but with the same `TMUX_TMPDIR` as the commands that follow.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "CLAUDE_", "WIREBRIDGE_")) and k not in ("TMUX", "TMUX_PANE")}
        env.update(
            HOME=str(home),
            ANTHROPIC_BASE_URL=base_url,
            ANTHROPIC_API_KEY=KEY,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        # The new server starts with this environment, and the session's
        # command inherits it.
        self.run("new-session", "-d", "-s", "claude", "-x", "200", "-y", "50", "-c", str(work),
                 str(claude), "--model", MODEL, env=env)

    def run(self, *args: str, env: dict[str, str] | None = None, check: bool = True):
        return subprocess.run([self.tmux, "-S", self.socket, *args], env=env, capture_output=True,
                              text=True, timeout=30, check=check)

    def pane(self) -> str:
        """What the pane shows now ("" once the session has ended)."""
        shown = self.run("capture-pane", "-p", "-t", "claude", check=False)
        return shown.stdout if shown.returncode == 0 else ""

    def alive(self) -> bool:
        return self.run("has-session", "-t", "claude", check=False).returncode == 0

    def wait_for(self, what: str, seen, timeout: float) -> str:
        """Polls the pane until `seen(pane)` holds; fails with the pane
        after `timeout` seconds, or if Claude Code exited."""
        deadline = time.monotonic() + timeout
        while True:
            pane = self.pane()
            if seen(pane):
                return pane
            if not self.alive():
                pytest.fail(f"Claude Code exited while waiting for {what}; the pane last showed:\n{pane}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} within {timeout:.0f} s; the pane shows:\n{pane}")
            time.sleep(POLL_INTERVAL)

    def submit(self, text: str) -> None:
        """Types `text` literally (no key names), then waits for the input
        box to show it before pressing Enter, so that no keystroke is lost
        to a screen still drawing."""
        self.run("send-keys", "-t", "claude", "-l", text)
        self.wait_for(f"the typed {text!r}", lambda pane: text in pane, STARTUP_TIMEOUT)
        self.run("send-keys", "-t", "claude", "Enter")

    def wait_exited(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                return False
            time.sleep(POLL_INTERVAL)
        return True

    def close(self) -> None:
        """Ends the session's server (it exits by itself once Claude Code
        has: then there is nothing to end)."""
        self.run("kill-server", check=False)


def ready(pane: str) -> bool:
    """Claude Code's input box is up: its banner, then the `❯` prompt
    between the box's rules, and the footer naming the permission mode."""
    return "Claude Code v" in pane and re.search(r"^❯", pane, re.M) is not None and "shift+tab" in pane


# The waits below are each bounded; the whole test is too, above their sum.
@pytest.mark.timeout(STARTUP_TIMEOUT + ANSWER_TIMEOUT + EXIT_TIMEOUT + 60)
def test_claude_code_in_its_terminal_is_refused_nothing(tmux, claude, terminal_chain, tmp_path):
    api, chain, front = terminal_chain
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    first_run_answered(home, work)
    sent_mark, upstream_mark = front.mark(), chain.tap.mark()
    log_before = len(chain.bridge.log())

    terminal = Terminal(tmux, claude, front.url, home, work, tmp_path / "tmux.sock")
    try:
        # A first-run screen (theme, trust, key) would stand in the way of
        # the input box: the config must have answered each.
        terminal.wait_for("input box", ready, STARTUP_TIMEOUT)
        terminal.submit(PROMPT)
        pane = terminal.wait_for(f"answer {ANSWER!r}", lambda pane: ANSWER in pane, ANSWER_TIMEOUT)
        assert "API Error" not in pane, pane
        terminal.submit("/exit")
        exited = terminal.wait_exited(EXIT_TIMEOUT)
        pane = terminal.pane()
    finally:
        terminal.close()
    assert exited, f"Claude Code did not exit on /exit; the pane shows:\n{pane}"

    # The call, and the answer to its output: each sent once, streamed, on
    # Claude Code's own path (a refused request would have been sent again
    # without what was refused).
    sent = front.since(sent_mark)
    assert [(c.method, c.path) for c in sent] == [("POST", "/v1/messages?beta=true")] * 2, \
        [(c.method, c.path, c.headers.get("anthropic-beta")) for c in sent]
    assert all(c.json()["stream"] is True for c in sent)
    assert any(f"echo {OUTPUT}" in c.body.decode() and "tool_result" in c.body.decode() for c in sent[1:])

    # The bridge logs each: an `exchange` when it translates, a `request`
    # when the backend speaks Messages itself; all answered with a 2xx.
    log = re.sub(r"\x1b\[[0-9;]*m", "", chain.bridge.log()[log_before:]).splitlines()
    exchanges = [line for line in log if re.search(r" (exchange|request) .*path=/v1/messages ", line)]
    assert len(exchanges) == len(sent), exchanges
    assert all(re.search(r" status=2\d\d ", line) for line in exchanges), exchanges
    assert "panicked" not in chain.bridge.log()

    upstream = [c for c in chain.tap.since(upstream_mark) if c.method == "POST"]
    if api == "messages":
        # The backend's API is the client's: every request reaches it as
        # sent, and nothing is reported lost.
        assert [(c.path, c.body) for c in upstream] == [(c.path, c.body) for c in sent]
        assert all(dropped(line) == [] for line in exchanges), exchanges
        return

    assert [c.path for c in upstream] == ["/v1/chat/completions"] * 2, [c.path for c in upstream]
    for request, line in zip(sent, exchanges):
        betas = request.headers["anthropic-beta"].split(",")
        auto_mode = [beta for beta in betas if beta in AUTO_MODE_BETAS]
        lost = dropped(line)
        # Auto mode's betas are each reported (as `anthropic-beta`, once
        # per beta): one more would be a beta the bridge does not know.
        assert lost.count("anthropic-beta") == len(auto_mode), (betas, line)
        # Its `safeguards` is reported where it is sent; a tool's deferred
        # loading is, as in `-p` mode; nothing else is.
        assert ("safeguards" in lost) == ("safeguards" in request.json()), line
        others = [p for p in lost if p not in ("anthropic-beta", "safeguards")]
        assert all(re.fullmatch(r"tools\[\d+\]\.defer_loading", p) for p in others), line
