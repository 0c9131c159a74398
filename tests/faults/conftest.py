"""Fixtures of the fault-injection suite: the real `wirebridge` binary on
loopback, started by the client suite's harness (tests/clients/harness.py),
with small limits so that every fault shows within a few seconds.

How a test waits. The machine may be loaded: then a timer fires late, a
thread wakes late, a connection is slow to open, and a test holds only if
it does not count on any of them being prompt. So a test waits for a state
it can observe (a log line, a socket the bridge closed, a byte received, a
count read from /proc), with a deadline generous enough that
reaching it means the state never came (`probe.DEADLINE`, through
`probe.eventually`, `probe.wait_closed` and `upstreams.Reply.wait`). It
never asserts that something took less than a tight bound, or happened
within a short window:

- that a timeout fires is shown by what it does (the connection closed, the
  408, the stream's failure event naming it) within such a deadline, and
  that it does not fire before its time by a lower bound: a late timer
  makes a lower bound only safer;
- a lower bound is timed from before what starts the bridge's clock (the
  request sent, the socket opened), never from after it: the bridge may
  have started counting before a late test thread reads the time;
- a bound on how many times something happens over time (log lines,
  keep-alive comments) comes from the time measured around it, not from the
  time a script meant to take;
- a window in which something must not happen (a connection beyond the cap
  served) may be short: load only makes a violation less likely to be seen,
  never a correct bridge fail;
- what a fault needs to hold for a while (a client's pauses shorter than a
  timeout) is given a wide margin, or is held by waiting on what the other
  side observed rather than on the clock;
- slow work that is not under test (loading the SDK takes seconds on a
  loaded machine) is done before a window opens, not inside it."""

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
