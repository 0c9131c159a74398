"""Fixtures of the fault-injection suite: the real `wirebridge` binary on
loopback, started by the client suite's harness (tests/clients/harness.py),
with small limits so that every fault shows within a few seconds."""

from __future__ import annotations

import re
import resource
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients"))

import harness  # noqa: E402  (tests/clients/harness.py)

# Every test gets this bound (seconds): each is meant to take a few.
TEST_TIMEOUT = 30

# The bridges started inherit this process's limit on open files, and a test
# holds 300 connections open at once: make room where the soft limit is low.
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if _soft != resource.RLIM_INFINITY and _soft < 4096:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, _hard if _hard != resource.RLIM_INFINITY else 4096), _hard))


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


@pytest.fixture
def chain(wirebridge, log_dir, request):
    """Starts `wirebridge serve` (flags as given) in front of the demo
    upstream speaking Chat Completions behind a tap, or of `static` (an
    object with `url` and `close()`); stopped, and checked to have stayed up
    and exited 0, at the end of the test."""
    started = []

    def start(*flags: str, static=None, env=None, preexec=None) -> harness.Chain:
        name = re.sub(r"[^\w.\[\]-]", "_", request.node.name)  # a file name
        chain = harness.start_chain(log_dir, name, "chat", static=static, extra=list(flags),
                                    env=env, preexec=preexec)
        started.append(chain)
        return chain

    yield start
    for chain in started:
        harness.stop_checked(chain)
