"""The connection cap: at `max_connections` the bridge stops accepting, so
further connections wait in the kernel's backlog (never accepted, then
failed), and it never holds more; a real client waiting behind them is
served once they close."""

from __future__ import annotations

import socket
import threading
import time

import harness
import probe

CAP = 20


def test_at_the_cap_connections_wait_and_are_served_once_others_close(chain):
    bridge = chain("--max-connections", str(CAP), "--header-read-timeout", "10s", "--idle-timeout", "10s")
    pid, port = bridge.bridge.proc.pid, probe.address(bridge)[1]
    held = probe.Sampler(lambda: probe.accepted_connections(pid, port))
    sockets = []
    try:
        # 50 clients each send a request and keep their connection: only
        # CAP are accepted and answered.
        for _ in range(50):
            s = probe.connect(bridge)
            probe.request(s, "GET", "/healthz")
            sockets.append(s)
        answered = []
        for s in sockets[:CAP]:
            assert probe.read_response(s).status == 200
            answered.append(s)
        time.sleep(0.5)
        assert not any(readable(s) for s in sockets[CAP:]), "connections beyond the cap were served"
        assert probe.accepted_connections(pid, port) == CAP

        # A real client queues behind them...
        served = {}

        def real_client():
            with harness.client(bridge, timeout=probe.DEADLINE) as client:
                served["response"] = client.responses.create(model="demo", input="behind the queue")

        thread = threading.Thread(target=real_client)
        thread.start()
        time.sleep(0.5)
        assert "response" not in served, "served past the cap"
        # ...and is served once they close.
        probe.close_all(sockets)
        thread.join(probe.DEADLINE)
        assert "response" in served, "not served once the connections closed"
        assert served["response"].status == "completed"
    finally:
        probe.close_all(sockets)
        most = held.stop()
    assert most <= CAP, f"the bridge held {most} connections, over the cap of {CAP}"
    assert probe.eventually(lambda: "at the connection limit" in bridge.bridge.log())


def readable(s) -> bool:
    """Whether anything (a response) has arrived on `s`."""
    s.setblocking(False)
    try:
        return bool(s.recv(1, socket.MSG_PEEK))
    except BlockingIOError:
        return False
    finally:
        s.setblocking(True)


def test_websocket_connections_count_against_the_cap_while_they_live(chain):
    """An upgraded connection ends its HTTP life at once, but its session
    keeps its place: at the cap, with WebSockets open, the next client
    waits until one of them closes."""
    from websockets.sync.client import connect as ws_connect

    cap = 3
    bridge = chain("--max-connections", str(cap), "--idle-timeout", "10s")
    url = bridge.bridge.url.replace("http://", "ws://") + "/v1/responses"
    sockets = [ws_connect(url, additional_headers={"authorization": "Bearer sk-x"}, open_timeout=probe.DEADLINE)
               for _ in range(cap)]
    try:
        # Each one works.
        sockets[0].send('{"type":"response.create","model":"demo","input":"hello"}')
        while '"response.completed"' not in sockets[0].recv(timeout=probe.DEADLINE):
            pass
        served = {}

        def real_client():
            with harness.client(bridge, timeout=probe.DEADLINE) as client:
                served["response"] = client.responses.create(model="demo", input="behind them")

        thread = threading.Thread(target=real_client)
        thread.start()
        time.sleep(1.0)
        assert "response" not in served, "served past the cap while the WebSockets were open"
        sockets[1].close()
        thread.join(probe.DEADLINE)
        assert "response" in served, "not served once a WebSocket closed"
        assert served["response"].status == "completed"
    finally:
        for s in sockets:
            s.close()
