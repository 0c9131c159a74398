"""Several replicas of one backend behind one bridge: `wirebridge serve`
(the real binary) given three upstream URLs, each a `wirebridge demo --api
chat` behind a tap that records which replica got which request, driven by
the official openai SDK.

What must hold: every turn of a `previous_response_id` chain goes to one
replica, streaming or not; six chains that share their instructions and
tools (as every session of one agent does) spread over the three with at
most three on one; two bridge processes, the replicas listed in other
orders, send the same conversation to the same replica; when a replica is
killed its chains move and their next turns succeed, and a connection
refused goes to the next replica at once; a replica answering 5xx is
ejected, then tried again after the back-off; a host name resolved again
(`--upstream-resolve-every`) is reached at its address while the request
keeps the name; a profile's `session_header` carries one value per
conversation to the upstream.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import openai
import pytest

import harness

REPLICAS = 3
INSTRUCTIONS = "You are a careful coding agent. Answer briefly."
TOOLS = [{
    "type": "function",
    "name": "shell",
    "description": "Runs a command.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
}]
ENDPOINTS = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}


class Replica:
    """`wirebridge demo --api API` behind a tap."""

    def __init__(self, log_dir: Path, name: str, api: str = "chat") -> None:
        self.demo = harness.start_demo(log_dir, name, api)
        self.tap = harness.Tap(self.demo.url)
        self.url = self.tap.url + "/v1"
        self.endpoint = ENDPOINTS[api]

    def chats(self, mark: int) -> list[harness.Captured]:
        """The generation requests it got since `mark`."""
        return [r for r in self.tap.since(mark) if r.method == "POST" and r.path == self.endpoint]

    def kill(self) -> None:
        """Gone as a crashed host is: the demo killed, the tap's port
        refusing connections."""
        self.demo.proc.kill()
        self.demo.stop()
        self.tap.close()

    def stop(self) -> None:
        self.tap.close()
        self.demo.stop()


class Replicas:
    """The replicas, with what each got since a mark."""

    def __init__(self, replicas: list) -> None:
        self.replicas = replicas

    def mark(self) -> list[int]:
        return [r.tap.mark() if isinstance(r, Replica) else r.mark() for r in self.replicas]

    def served(self, marks: list[int]) -> list[list[dict]]:
        """Each replica's chat request bodies since `marks`."""
        out = []
        for replica, mark in zip(self.replicas, marks):
            captured = replica.chats(mark) if isinstance(replica, Replica) else [
                r for r in replica.since(mark) if r.method == "POST"]
            out.append([r.json() for r in captured])
        return out


def first_user_text(body: dict) -> str:
    messages = body.get("messages") or body["input"]
    if isinstance(messages, str):
        return messages
    for message in messages:
        if message.get("role") == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in content)
    raise AssertionError(f"no user message: {body}")


def where(replicas: Replicas, marks: list[int]) -> dict[str, list[int]]:
    """For each conversation (by its first user message), the replicas its
    requests went to, in the order they were received by each."""
    placed: dict[str, list[int]] = {}
    for index, bodies in enumerate(replicas.served(marks)):
        for body in bodies:
            placed.setdefault(first_user_text(body), []).append(index)
    return placed


def bridge(log_dir: Path, name: str, upstreams: list[str], extra: list[str] | None = None,
           api: str = "chat") -> harness.Process:
    args = ["serve", "--listen", "127.0.0.1:0", "--upstream-api", api, "--store", "memory"]
    for url in upstreams:
        args += ["--upstream", url]
    return harness.Process(args + (extra or []), log_dir / f"{name}.bridge.log")


def sdk(process: harness.Process) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=process.url + "/v1",
        api_key="sk-wirebridge-test",
        max_retries=0,
        timeout=openai.Timeout(20.0, connect=5.0),
        http_client=openai.DefaultHttpxClient(trust_env=False),
    )


def turn(client: openai.OpenAI, said: str, previous: str | None, stream: bool) -> str:
    """One turn of a session: its id."""
    kwargs = {"model": "demo", "instructions": INSTRUCTIONS, "tools": TOOLS, "input": said}
    if previous is not None:
        kwargs["previous_response_id"] = previous
    if not stream:
        response = client.responses.create(**kwargs)
        assert response.status == "completed", response
        return response.id
    with client.responses.stream(**kwargs) as events:
        for _ in events:
            pass
        final = events.get_final_response()
    assert final.status == "completed", final
    return final.id


def fetch(url: str) -> tuple[int, str]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def metric(process: harness.Process, name: str, replica: int) -> float:
    """A replica's series: a counter (`_total`) or a gauge."""
    _, text = fetch(process.url + "/metrics")
    prefixes = [f'wirebridge_{name}{suffix}{{replica="{replica}"}} ' for suffix in ("_total", "")]
    for line in text.splitlines():
        for prefix in prefixes:
            if line.startswith(prefix):
                return float(line[len(prefix):])
    raise AssertionError(f"no {prefixes} in /metrics:\n{text}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def checked_stop(process: harness.Process) -> None:
    alive = process.alive()
    code = process.stop()
    log = process.log()
    assert alive, f"the bridge exited during the test (code {code}):\n{log[-4000:]}"
    assert "panicked" not in log, log[-4000:]
    assert code == 0, f"exit {code}:\n{log[-4000:]}"


@pytest.fixture(scope="module")
def three(wirebridge, log_dir):
    replicas = [Replica(log_dir, f"replica-{n}") for n in range(REPLICAS)]
    yield Replicas(replicas)
    for replica in replicas:
        replica.stop()


@pytest.fixture(scope="module")
def bridged(three, log_dir):
    process = bridge(log_dir, "replicas", [r.url for r in three.replicas])
    yield process
    checked_stop(process)


# --------------------------------------------------------------------------
# Affinity and spread
# --------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_chain_stays_on_one_replica(three, bridged, stream):
    client = sdk(bridged)
    marks = three.mark()
    previous = None
    opening = f"chain kept in place ({'stream' if stream else 'body'})"
    for n in range(6):
        previous = turn(client, opening if n == 0 else f"turn {n}", previous, stream)
    placed = where(three, marks)
    assert list(placed) == [opening], placed
    assert len(placed[opening]) == 6 and len(set(placed[opening])) == 1, placed
    # The replica's request counter says so too.
    home = placed[opening][0]
    assert metric(bridged, "replica_requests", home) >= 6


def test_prompt_tokens_are_counted_to_the_replica_that_answered(three, log_dir):
    """Each answer's prompt tokens (its usage, as the client gets it) go to
    the series of the replica that gave it, and to no other."""
    process = bridge(log_dir, "replica-tokens", [r.url for r in three.replicas])
    try:
        client = sdk(process)
        marks = three.mark()
        previous, used = None, 0
        for n in range(3):
            kwargs = {"model": "demo", "instructions": INSTRUCTIONS, "input": f"count me {n}"}
            if previous is not None:
                kwargs["previous_response_id"] = previous
            response = client.responses.create(**kwargs)
            previous, used = response.id, used + response.usage.input_tokens
        [home] = set(where(three, marks)["count me 0"])
        counted = [metric(process, "replica_prompt_tokens", r) for r in range(REPLICAS)]
        assert counted[home] == used > 0, counted
        assert sum(counted) == used, counted
        assert 'replica=' in process.log()
    finally:
        checked_stop(process)


def test_a_chain_stays_on_one_replica_of_a_responses_backend(wirebridge, log_dir):
    # A Responses backend that keeps no state: the bridge sends it the
    # whole conversation each turn, to one replica.
    replicas = Replicas([Replica(log_dir, f"responses-{n}", "responses") for n in range(REPLICAS)])
    process = bridge(log_dir, "responses", [r.url for r in replicas.replicas], api="responses")
    try:
        client = sdk(process)
        for session in range(3):
            marks = replicas.mark()
            previous = None
            opening = f"responses session {session}"
            for n in range(4):
                previous = turn(client, opening if n == 0 else f"turn {n}", previous, n % 2 == 1)
            placed = where(replicas, marks)
            assert list(placed) == [opening], placed
            assert len(placed[opening]) == 4 and len(set(placed[opening])) == 1, placed
    finally:
        checked_stop(process)
        for replica in replicas.replicas:
            replica.stop()


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_chat_client_passed_through_stays_on_one_replica(three, bridged, stream):
    # A Chat client on a Chat backend is not translated: the bridge reads
    # its request to key it, and sends it on as it came.
    client = sdk(bridged)
    marks = three.mark()
    opening = f"a chat conversation ({'stream' if stream else 'body'})"
    messages = [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": opening}]
    for n in range(4):
        if stream:
            chunks = client.chat.completions.create(model="demo", messages=messages, stream=True)
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            text = client.chat.completions.create(model="demo", messages=messages).choices[0].message.content
        messages += [{"role": "assistant", "content": text or "ok"}, {"role": "user", "content": f"more {n}"}]
    placed = where(three, marks)
    assert list(placed) == [opening], placed
    assert len(placed[opening]) == 4 and len(set(placed[opening])) == 1, placed
    # Passed on as the client wrote it.
    assert three.served(marks)[placed[opening][0]][0]["messages"][1]["content"] == opening


def test_six_chains_of_one_agent_spread_over_the_replicas(three, log_dir):
    # A bridge of its own: no pins from other tests.
    process = bridge(log_dir, "spread", [r.url for r in three.replicas])
    try:
        client = sdk(process)
        marks = three.mark()
        sessions = [turn(client, f"session {n}: fix the failing test", None, False) for n in range(6)]
        for n, previous in enumerate(sessions):
            turn(client, f"session {n}: and run it again", previous, False)
        placed = where(three, marks)
        assert len(placed) == 6, placed
        # Each session's two turns on one replica.
        assert all(len(set(replicas)) == 1 for replicas in placed.values()), placed
        per_replica = Counter(replicas[0] for replicas in placed.values())
        assert max(per_replica.values()) <= 3, per_replica
        assert len(per_replica) >= 2, per_replica
    finally:
        checked_stop(process)


def test_two_bridges_choose_the_same_replica(three, log_dir):
    # The replicas listed in another order by each: they agree by the
    # replicas' names, not their places in the list.
    urls = [r.url for r in three.replicas]
    one = bridge(log_dir, "agree-1", urls)
    other = bridge(log_dir, "agree-2", list(reversed(urls)))
    try:
        clients = [sdk(one), sdk(other)]
        for n in range(4):
            marks = three.mark()
            # A stateless client sends its whole conversation each turn;
            # the turns alternate between the two bridges.
            history = [{"role": "user", "content": f"shared session {n}"}]
            for t in range(4):
                response = clients[t % 2].responses.create(
                    model="demo", instructions=INSTRUCTIONS, tools=TOOLS, input=history, store=False)
                assert response.status == "completed"
                history += [{"role": "assistant", "content": response.output_text or "ok"},
                            {"role": "user", "content": f"step {t}"}]
            placed = where(three, marks)
            assert len(placed) == 1 and len(set(next(iter(placed.values())))) == 1, placed
    finally:
        checked_stop(one)
        checked_stop(other)


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
