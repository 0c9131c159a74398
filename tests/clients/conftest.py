"""Fixtures of the real-client conformance suite: the `wirebridge` binary
as a process in front of its demo upstream (or a replayed recording), with a
tap recording what it sends upstream, driven by the official `openai` SDK."""

from __future__ import annotations

import json
import subprocess

import pytest

import codex_runs
import harness

# Every test gets this bound (seconds), on top of the SDK's own timeouts,
# so that a hang fails the test instead of the run.
TEST_TIMEOUT = 60


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("timeout"):
        return
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


@pytest.fixture(scope="session")
def wirebridge():
    """The binary under test."""
    path = harness.binary()
    if not path.is_file():
        pytest.fail(
            f"{path} not found: run `cargo build -p wirebridge-cli` first, or set WIREBRIDGE_BIN",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("logs")


@pytest.fixture(scope="session")
def spec():
    return harness.validate.Spec(harness.validate.spec_dir())


@pytest.fixture(scope="session")
def chat_upstream(wirebridge, log_dir):
    """The bridge in front of the demo upstream speaking only Chat
    Completions: Responses requests are translated. With the `vllm` profile,
    which forwards `reasoning.effort` (the default profile drops it), so that
    the demo upstream can be asked to reason; the replays use the default."""
    chain = harness.start_chain(log_dir, "demo-chat", "chat", profile="vllm")
    yield chain
    harness.stop_checked(chain)


@pytest.fixture(scope="session")
def responses_upstream(wirebridge, log_dir):
    """The bridge in front of the demo upstream speaking only Responses:
    Chat requests are translated."""
    chain = harness.start_chain(log_dir, "demo-responses", "responses")
    yield chain
    harness.stop_checked(chain)


@pytest.fixture(scope="session")
def node_clients():
    """The directory of the Node clients (tests/clients/node), every package
    its package.json pins installed there."""
    node_dir = harness.NODE_DIR
    pinned = json.loads((node_dir / "package.json").read_text())["dependencies"]
    missing = [name for name in pinned if not (node_dir / "node_modules" / name / "package.json").is_file()]
    if missing:
        pytest.fail(f"the Node clients {missing} are not installed: `bash scripts/test.sh` installs them in "
                    f"{node_dir}", pytrace=False)
    return node_dir


@pytest.fixture(scope="session")
def codex():
    """The Codex binary the npm package installs, at the pinned version."""
    path = codex_runs.codex_binary()
    if not path.exists():
        pytest.fail(f"{path} not found: `bash scripts/test.sh` installs it (npm install in "
                    f"{codex_runs.NODE_DIR})", pytrace=False)
    version = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60).stdout
    assert codex_runs.CODEX_VERSION in version, version
    return path
