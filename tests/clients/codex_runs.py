"""Running the real Codex CLI (npm `@openai/codex`, pinned in
tests/clients/node) against a bridge: each run with a Codex home of its
own, a provider pointing at the bridge, and no network beyond loopback."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import harness

CODEX_VERSION = harness.node_pin("@openai/codex")
NODE_DIR = harness.NODE_DIR


def codex_binary() -> Path:
    """`$WIREBRIDGE_CODEX_BIN`, else the binary the npm package installs."""
    return Path(os.environ.get("WIREBRIDGE_CODEX_BIN", NODE_DIR / "node_modules" / ".bin" / "codex"))


def codex_home(home: Path, chain: harness.Chain, catalog: bool = False) -> dict[str, str]:
    """Writes a Codex home whose provider is the bridge, and returns the
    environment Codex runs with. With `catalog`, the provider's
    `model_catalog_url` is the bridge's `/models`: Codex reads its model
    catalog there (and only its bundled one without it)."""
    home.mkdir(parents=True, exist_ok=True)
    catalog_url = f'model_catalog_url = "{chain.base_url}/models"\n' if catalog else ""
    (home / "config.toml").write_text(
        f"""\
model_provider = "wirebridge"
check_for_update_on_startup = false

[model_providers.wirebridge]
name = "wirebridge"
base_url = "{chain.base_url}"
{catalog_url}wire_api = "responses"
env_key = "WIREBRIDGE_TEST_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"""
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_", "WIREBRIDGE_"))}
    env.update(CODEX_HOME=str(home), WIREBRIDGE_TEST_KEY="sk-codex-test")
    return env


class Run:
    """One `codex exec --json` run: its events, exit code and working
    directory. `config` are `-c` settings, `images` files attached with
    `-i`; with `resume`, the run continues the home's latest session
    (`codex exec resume --last`)."""

    def __init__(self, codex: Path, chain: harness.Chain, home: Path, work: Path, model: str,
                 prompt: str, *config: str, images: tuple[Path, ...] = (), catalog: bool = False,
                 resume: bool = False) -> None:
        env = codex_home(home, chain, catalog)
        work.mkdir(parents=True, exist_ok=True)
        args = [str(codex), "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access",
                "-C", str(work), "-m", model]
        for setting in config:
            args += ["-c", setting]
        for image in images:
            args += ["-i", str(image)]
        if resume:
            args += ["resume", "--last"]
        # `-i` takes several files: the prompt is told apart by `--`.
        done = subprocess.run(args + ["--", prompt], capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, timeout=120)
        self.code = done.returncode
        self.stderr = done.stderr
        self.work = work
        self.home = home
        self.events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    def items(self, kind: str) -> list[dict]:
        return [e["item"] for e in self.events if e["type"] == "item.completed" and e["item"]["type"] == kind]

    def final_answer(self) -> str:
        messages = self.items("agent_message")
        assert messages, self.report()
        return messages[-1]["text"]

    def report(self) -> str:
        return f"exit {self.code}\nevents: {json.dumps(self.events, indent=1)[:6000]}\nstderr: {self.stderr[-3000:]}"


def upstream_turns(chain: harness.Chain, mark: int, endpoint: str = "/chat/completions") -> list[dict]:
    """The requests the upstream received on `endpoint` since `mark`."""
    return [c.json() for c in chain.tap.since(mark) if c.path.endswith(endpoint)]


def offered(chat: dict) -> list[str]:
    return [t["function"]["name"] for t in chat.get("tools", [])]
