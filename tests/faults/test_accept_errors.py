"""Out of file descriptors: with a connection cap above what its open-file
limit holds, the bridge's accepts fail (EMFILE) while clients keep coming.
It must back off instead of spinning, log the failures a few times with a
count instead of once each, and serve again as soon as descriptors free
up. With no cap set, the cap is lowered to what the limit holds, and
accepts never fail."""

from __future__ import annotations

import resource
import time

import harness
import probe


def open_files_limit(soft: int):
    """A `preexec` lowering the child's soft limit on open files."""

    def lower():
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return lower


def accept_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if "accept" in line.lower()]


def test_exhausted_descriptors_back_off_log_little_and_recover(chain):
    bridge = chain("--max-connections", "1000", "--header-read-timeout", "30s",
                   preexec=open_files_limit(64))
    pid = bridge.bridge.proc.pid
    assert "max_connections is more than the open-file limit" in probe.plain_log(bridge.bridge)
    sockets = []
    try:
        # More connections than descriptors: the kernel completes them all
        # (the backlog), the bridge runs out partway.
        sockets = [probe.connect(bridge) for _ in range(100)]
        assert probe.eventually(lambda: "accept failed" in probe.plain_log(bridge.bridge)), "accepts never failed"
        assert probe.eventually(lambda: probe.open_files(pid) >= 63)
        cpu = probe.cpu_seconds(pid)
        time.sleep(2.0)
        spent = probe.cpu_seconds(pid) - cpu
        assert spent < 0.5, f"{spent:.2f}s of CPU in 2s out of descriptors: spinning"
        failed = [line for line in accept_lines(probe.plain_log(bridge.bridge)) if "accept failed" in line]
        assert 1 <= len(failed) <= 2, "\n".join(failed)
        assert "failures=" in failed[0]

        # Descriptors free up: the waiting connections are taken, and a real
        # client is served.
        probe.close_all(sockets)
        started = time.monotonic()
        with harness.client(bridge, timeout=10) as client:
            response = client.responses.create(model="demo", input="served again")
        assert response.status == "completed" and "served again" in response.output_text
        assert time.monotonic() - started < 3.0
        assert probe.eventually(lambda: "accepting connections again" in probe.plain_log(bridge.bridge))
    finally:
        probe.close_all(sockets)
    lines = accept_lines(probe.plain_log(bridge.bridge))
    assert len(lines) <= 5, "\n".join(lines)


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
    log = probe.plain_log(bridge.bridge)
    assert "accept failed" not in log
    assert "max_connections=32" in log
