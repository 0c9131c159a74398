"""What WebSocket connections on made-up credentials can make the bridge
hold: each connection caches its responses (16 MiB of them by default) and
the per-credential cap does not bound made-up credentials, so many
connections of `generate: false` warm-ups (no backend call at all) would
hold their number times 16 MiB. One bound for every connection together
(`--websocket-max-memory`) keeps the bridge's peak memory near it: a
connection that needs room evicts its own oldest responses, and a turn that
still does not fit is answered with an `error` event (503,
`websocket_memory_exhausted`) on a connection that stays usable."""

from __future__ import annotations

import json

import probe

# Connections, each on its own made-up credential, and the warm-ups each
# sends, of about 1 MiB of input each: every connection's cache (16 MiB)
# could keep them all.
CONNECTIONS = 24
WARMUPS = 10
WARMUP_BYTES = 1 << 20

# The bound under test: room for 8 warm-ups of the 240.
MAX_MEMORY = 8 << 20

# Unbounded, the caches would hold every warm-up's input at once, 240 MiB
# (the bridge's peak then grows by 270-290 MB). With the bound they hold at
# most 8 MiB; the rest of what the peak may grow by is the turn in flight
# (one at a time, its message copied a few times while it is read, parsed
# and translated) and each connection's WebSocket read buffer, which keeps
# the room of the largest frame it has received (1 MiB here, one frame a
# message) until the connection closes: 25-30 MB when every turn is
# refused and nothing is kept, about 1.1 MB a connection, given back when
# the connections close. A quarter of the
# unbounded figure, 60 MiB, leaves room for both, and is far under it.
UNBOUNDED_KB = CONNECTIONS * WARMUPS * WARMUP_BYTES // 1024
PEAK_GROWTH_KB = UNBOUNDED_KB // 4


def warmup(socket, text: str) -> dict:
    """Sends a `generate: false` turn of `text`: its last event, the
    terminal one (`response.completed` or `error`)."""
    socket.send(json.dumps({"type": "response.create", "model": "demo", "store": False,
                            "generate": False, "input": text}))
    while True:
        event = json.loads(socket.recv(timeout=probe.DEADLINE))
        if event["type"] in ("response.completed", "response.failed", "error"):
            return event


def test_warmups_on_many_made_up_credentials_hold_the_bound_not_their_caches(chain):
    from websockets.sync.client import connect as ws_connect

    bridge = chain("--websocket-max-memory", str(MAX_MEMORY))
    pid = bridge.bridge.proc.pid
    url = bridge.bridge.url.replace("http://", "ws://") + "/v1/responses"
    sockets = [ws_connect(url, additional_headers={"authorization": f"Bearer sk-made-up-{n}"},
                          open_timeout=probe.DEADLINE, max_size=None)
               for n in range(CONNECTIONS)]
    assert probe.metric(bridge, 'wirebridge_budget_refusals_total{kind="websocket_memory"}').endswith(" 0")
    before = probe.peak_kb(pid)
    refused: dict[int, dict] = {}
    completed = 0
    try:
        for round in range(WARMUPS):
            for n, socket in enumerate(sockets):
                # Each input its own, so that nothing is shared between them.
                text = f"{n}-{round}-" + "x" * WARMUP_BYTES
                event = warmup(socket, text)
                if event["type"] == "response.completed":
                    completed += 1
                else:
                    refused[n] = event
        growth = probe.peak_kb(pid) - before
        print(f"{completed} warm-ups kept, {CONNECTIONS * WARMUPS - completed} refused; peak resident "
              f"memory {before} KB -> {before + growth} KB (unbounded: {UNBOUNDED_KB} KB of caches)")
        assert growth < PEAK_GROWTH_KB, f"the warm-ups grew the bridge's peak memory by {growth} KB"

        # The connections that found room kept it, each evicting its own
        # oldest warm-up for the next (at least half the 8 the bound holds,
        # every round); the others were told why, in the protocol's
        # error event.
        assert completed >= WARMUPS * (MAX_MEMORY // WARMUP_BYTES) // 2, completed
        assert refused, "no turn was refused"
        for event in refused.values():
            assert event["type"] == "error", event
            assert event["status"] == 503, event
            assert event["error"]["code"] == "websocket_memory_exhausted", event
            assert event["error"]["type"] == "server_error", event
            assert f"{MAX_MEMORY}-byte memory bound" in event["error"]["message"], event
            assert "--websocket-max-memory" in event["error"]["message"], event
        refusals = CONNECTIONS * WARMUPS - completed
        assert probe.metric(bridge, 'wirebridge_budget_refusals_total{kind="websocket_memory"}').endswith(
            f" {refusals}")

        # Once the others close, a refused connection runs its turn.
        last = max(refused)
        for n, socket in enumerate(sockets):
            if n != last:
                socket.close()
        assert probe.eventually(lambda: warmup(sockets[last], "after " + "y" * WARMUP_BYTES)["type"]
                                == "response.completed")
    finally:
        for socket in sockets:
            socket.close()
