"""Out of file descriptors: with a connection cap above what its open-file
limit holds, the bridge's accepts fail (EMFILE) while clients keep coming.
It must back off instead of spinning, log the failures a few times with a
count instead of once each, and serve again once descriptors free
up. With no cap set, the cap is lowered to what the limit holds, and
accepts never fail."""

from __future__ import annotations

import re
import resource
import time

import harness
import probe


# At most one line about failing accepts per this long (LOG_EVERY in the
# server's accept loop).
LOG_EVERY = 5.0


def open_files_limit(soft: int):
    """A `preexec` lowering the child's soft limit on open files."""

    def lower():
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return lower


def accept_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if "accept" in line.lower()]


def test_exhausted_descriptors_back_off_log_little_and_recover(chain):
    began = time.monotonic()
    bridge = chain("--max-connections", "1000", "--header-read-timeout", "30s",
                   preexec=open_files_limit(64))
    pid = bridge.bridge.proc.pid
    log = lambda: probe.plain_log(bridge.bridge)  # noqa: E731
    # The bridge writes its log from a thread of its own: a line is waited for.
    assert probe.eventually(lambda: "max_connections is more than the open-file limit" in log())
    sockets = []
    try:
        # More connections than descriptors: the kernel completes them all
        # (the backlog), the bridge runs out partway.
        sockets = [probe.connect(bridge) for _ in range(100)]
        assert probe.eventually(lambda: "accept failed" in log()), "accepts never failed"
        assert probe.eventually(lambda: probe.open_files(pid) >= 63)
        # Out of descriptors for a while: the CPU it takes is a small part
        # of the time it lasted, as measured.
        cpu, wall = probe.cpu_seconds(pid), time.monotonic()
        time.sleep(2.0)
        spent, lasted = probe.cpu_seconds(pid) - cpu, time.monotonic() - wall
        assert spent < lasted / 4, f"{spent:.2f}s of CPU in {lasted:.2f}s out of descriptors: spinning"

        # Descriptors free up: the waiting connections are taken, and a real
        # client is served.
        probe.close_all(sockets)
        with harness.client(bridge, timeout=probe.DEADLINE) as client:
            response = client.responses.create(model="demo", input="served again")
        assert response.status == "completed" and "served again" in response.output_text
        assert probe.eventually(lambda: "accepting connections again" in log())
    finally:
        probe.close_all(sockets)
    took = time.monotonic() - began
    lines = accept_lines(log())
    failed = [line for line in lines if "accept failed" in line]
    again = [line for line in lines if "accepting connections again" in line]
    # Logged a few times, with a count: at most one line per LOG_EVERY of
    # the time the test took, and fewer lines than failures.
    assert 1 <= len(failed) <= 1 + took // LOG_EVERY, "\n".join(failed)
    assert all("failures=" in line for line in failed), "\n".join(failed)
    assert len(again) == 1, "\n".join(lines)
    failures = int(re.search(r"failures=(\d+)", again[0]).group(1))
    assert failures > len(failed), "\n".join(lines)


def test_with_no_cap_set_the_cap_fits_the_descriptors(chain):
    # 128 descriptors: 64 kept for the process, 2 per connection (the
    # client's and the upstream's) leave room for 32.
    bridge = chain("--header-read-timeout", "30s", preexec=open_files_limit(128))
    pid, port = bridge.bridge.proc.pid, probe.address(bridge)[1]
    sockets = []
    try:
        sockets = [probe.connect(bridge) for _ in range(60)]
        assert probe.eventually(lambda: probe.accepted_connections(pid, port) == 32)
        time.sleep(0.5)
        assert probe.accepted_connections(pid, port) == 32
        assert probe.open_files(pid) < 128
    finally:
        probe.close_all(sockets)
    with harness.client(bridge, timeout=10) as client:
        assert client.responses.create(model="demo", input="fits").status == "completed"
    assert probe.eventually(lambda: "max_connections=32" in probe.plain_log(bridge.bridge))
    assert "accept failed" not in probe.plain_log(bridge.bridge)
