"""Several replicas of one backend behind one bridge, when replicas fail
or move: when a replica is killed its chains move and their next turns
succeed, and a connection refused goes to the next replica at once; a
replica answering 5xx is ejected, then tried again after the back-off; a
host name resolved again (`--upstream-resolve-every`) is reached at its
address while the request keeps the name; a profile's `session_header`
carries one value per conversation to the upstream.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai

from replica_set import (  # noqa: F401 (the fixture three)
    REPLICAS,
    Replica,
    Replicas,
    bridge,
    checked_stop,
    fetch,
    first_user_text,
    free_port,
    metric,
    sdk,
    three,
    turn,
    where,
)

# --------------------------------------------------------------------------
# Failures
# --------------------------------------------------------------------------


def test_a_killed_replica_s_chains_move_and_succeed(wirebridge, log_dir):
    replicas = Replicas([Replica(log_dir, f"killed-{n}") for n in range(REPLICAS)])
    process = bridge(log_dir, "killed", [r.url for r in replicas.replicas])
    try:
        client = sdk(process)
        marks = replicas.mark()
        chains = {}
        for n in range(6):
            chains[f"killed chain {n}"] = turn(client, f"killed chain {n}", None, n % 2 == 1)
        before = {text: r[0] for text, r in where(replicas, marks).items()}
        victim = Counter(before.values()).most_common(1)[0][0]
        replicas.replicas[victim].kill()
        marks = replicas.mark()
        for n, previous in enumerate(chains.values()):
            for t in range(2):
                previous = turn(client, f"after the kill {t}", previous, n % 2 == 1)
        after = where(replicas, marks)
        for opening, home in before.items():
            went = after[opening]
            assert len(set(went)) == 1, (opening, went)
            if home == victim:
                assert went[0] != victim
            else:
                # Only the dead replica's chains move.
                assert went[0] == home, (opening, home, went)
        assert metric(process, "replica_failovers", victim) >= 1
        _, ready = fetch(process.url + "/readyz")
        assert json.loads(ready)["status"] == "ready"
    finally:
        checked_stop(process)
        for replica in replicas.replicas:
            replica.stop()


def test_a_refused_connection_goes_to_the_next_replica(three, log_dir):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    urls = [dead] + [r.url for r in three.replicas]
    process = bridge(log_dir, "refused", urls, ["--replica-eject-after", "100"])
    try:
        client = sdk(process)
        for n in range(8):
            # Every one answered, whether or not its first choice is dead.
            turn(client, f"refused {n}", None, n % 2 == 0)
        failovers = metric(process, "replica_failovers", 0)
        assert failovers >= 1, "no request's first choice was the dead replica"
        assert metric(process, "replica_ejections", 0) == 0
        log = process.log()
        assert "the request goes to the next" in log
        assert "replica=0" in log or '"replica":0' in log
    finally:
        checked_stop(process)


class Switchable:
    """A Chat upstream answering 500, or a completion, as told."""

    def __init__(self) -> None:
        self.failing = True
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                self.rfile.read(int(self.headers.get("content-length", 0)))
                owner.requests += 1
                if owner.failing:
                    status, body = 500, {"error": {"message": "the model crashed", "type": "server_error"}}
                else:
                    status, body = 200, {
                        "id": "c1", "object": "chat.completion", "created": 1, "model": "demo",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "back"},
                                     "finish_reason": "stop"}]}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802 (http.server's naming)
                data = json.dumps({"object": "list", "data": []}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_failing_replica_is_ejected_and_returns_after_the_backoff(three, log_dir):
    failing = Switchable()
    healthy = three.replicas[0]
    process = bridge(log_dir, "ejected", [failing.url, healthy.url],
                     ["--replica-eject-after", "2", "--replica-backoff", "2s"])
    try:
        client = sdk(process)
        # New sessions until two have gone to the failing replica: each
        # gets its 500 (as a 502 or 500 in the client's dialect), never
        # sent again elsewhere.
        errors = 0
        for n in range(40):
            try:
                turn(client, f"ejection {n}", None, False)
            except openai.APIStatusError as e:
                assert e.status_code >= 500
                errors += 1
            if errors == 2:
                break
        assert errors == 2 and failing.requests == 2
        assert metric(process, "replica_ejections", 0) == 1
        _, ready = fetch(process.url + "/readyz")
        assert json.loads(ready)["replicas"] == {"ready": 1, "total": 2}
        # Ejected: every session is served by the other.
        for n in range(6):
            turn(client, f"while ejected {n}", None, n % 2 == 0)
        assert failing.requests == 2
        # After the back-off it is tried again, and, healthy now, serves.
        failing.failing = False
        time.sleep(2.5)
        for n in range(12):
            turn(client, f"after the back-off {n}", None, False)
        assert failing.requests > 2
        _, ready = fetch(process.url + "/readyz")
        assert json.loads(ready)["replicas"] == {"ready": 2, "total": 2}
        assert "it is tried again" in process.log()
    finally:
        checked_stop(process)
        failing.close()


# --------------------------------------------------------------------------
# A name resolved again, and the session header
# --------------------------------------------------------------------------


def test_a_name_resolved_again_is_served_at_its_address_under_its_name(three, log_dir):
    # `localhost` resolves to the tap's loopback address (and, on some
    # hosts, to ::1 too, where nothing listens: that replica's turns go on
    # to the next, and it is ejected).
    replica = three.replicas[0]
    by_name = replica.url.replace("127.0.0.1", "localhost")
    process = bridge(log_dir, "resolved", [by_name], ["--upstream-resolve-every", "200ms"])
    try:
        time.sleep(0.5)
        client = sdk(process)
        mark = replica.tap.mark()
        previous = None
        for t in range(3):
            previous = turn(client, f"resolved turn {t}", previous, t % 2 == 1)
        got = replica.chats(mark)
        assert len(got) == 3
        # Reached at its address, the request still names the host.
        host = by_name.split("/")[2]
        assert all(r.headers.get("host") == host for r in got), [r.headers.get("host") for r in got]
        _, ready = fetch(process.url + "/readyz")
        assert json.loads(ready)["replicas"]["ready"] >= 1
        assert metric(process, "replica_in_set", 0) == 1
    finally:
        checked_stop(process)


def test_the_session_header_tells_the_upstream_each_conversation(three, log_dir):
    config = log_dir / "session-header.toml"
    config.write_text('profile = "routed"\n[profiles.routed]\nsession_header = "x-session-affinity"\n')
    process = bridge(log_dir, "session", [r.url for r in three.replicas], ["--config", str(config)])
    try:
        client = sdk(process)
        marks = three.mark()
        told: dict[str, set[str]] = {}
        for n in range(3):
            previous = None
            for t in range(2):
                previous = turn(client, f"session {n} turn {t}", previous, t == 1)
        for replica, mark in zip(three.replicas, marks):
            for request in replica.chats(mark):
                opening = first_user_text(request.json())
                told.setdefault(opening, set()).add(request.headers.get("x-session-affinity", "none"))
        # One value for every turn of a conversation, another for each.
        assert len(told) == 3, told
        values = [next(iter(v)) for v in told.values()]
        assert all(len(v) == 1 for v in told.values()), told
        assert all(len(v) == 16 and all(c in "0123456789abcdef" for c in v) for v in values), values
        assert len(set(values)) == 3, values
    finally:
        checked_stop(process)
