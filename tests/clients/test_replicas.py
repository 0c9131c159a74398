"""Several replicas behind a load balancer: three `wirebridge serve`
processes (the real binary) sharing one real redis-server and one seal key,
in front of one Chat upstream (`wirebridge demo`, behind a tap that records
every request it is sent).

The official openai SDK's requests are spread round-robin over the replicas,
one request to the next replica each time (an httpx transport that turns
each request to the next replica's port, so that keep-alive connections do
not pin a conversation to one process, as a per-request balancer would). It
holds a 20-turn conversation that sends only `previous_response_id`, once
streaming and once not, asking for reasoning of every turn to be replayed
and for it back sealed (`include: ["reasoning.encrypted_content"]`), so that
each turn's history holds carriers sealed by other replicas. Midway, one
replica is killed (SIGKILL) and started again on the same port.

What must hold: every turn's history, as the upstream received it, is the
whole conversation so far in order (each earlier input, answer and
reasoning, as the SDK got them), whichever replica kept each turn and
whichever serves the next; a response is retrieved, and its input items
listed, from every replica; a deletion on one replica is seen by all; and a
replica with a seal key of its own cannot open the others' carriers (the
reason the key is shared).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2
import openai
import pytest

import harness

REPLICAS = 3
TURNS = 20
# The replica killed and started again after this turn.
RESTART_AFTER = 10
# Reasoning asked for, replayed for every turn, and handed back sealed.
REASONING = {"effort": "low", "summary": "auto", "context": "all_turns"}
INCLUDE = ["reasoning.encrypted_content"]

# A backend that takes a reasoning effort and has reasoning replayed, and a
# carrier that cannot be opened refused rather than dropped: a replica that
# could not open another's carrier fails the turn instead of sending the
# upstream a shorter history.
SETTINGS = """\
profile = "interleaved"

[profiles.interleaved]
max_tokens_field = "max_completion_tokens"
text_parts_as_string = false
reasoning_effort = true
replay_reasoning = true

[loss_policy]
reasoning_history = "reject"
"""


# --------------------------------------------------------------------------
# Redis, the upstream, the replicas
# --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url():
    """A real redis-server on a free loopback port, persisting nothing."""
    server = shutil.which("redis-server") or shutil.which("valkey-server")
    if server is None:
        pytest.fail("redis-server is not installed (apt-get install -y redis-server)", pytrace=False)
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="wirebridge-replicas-redis-")
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    pytest.fail("redis-server did not start", pytrace=False)
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def upstream(wirebridge, log_dir):
    """`wirebridge demo --api chat` behind a tap recording what it is sent."""
    demo = harness.start_demo(log_dir, "replicas", "chat")
    tap = harness.Tap(demo.url)
    yield tap
    tap.close()
    demo.stop()


@pytest.fixture(scope="module")
def seal_key(wirebridge):
    """One key for every replica, made by `wirebridge keygen`."""
    made = subprocess.run([str(wirebridge), "keygen"], capture_output=True, text=True, timeout=20, check=True)
    return made.stdout.strip()


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("replicas") / "wirebridge.toml"
    path.write_text(SETTINGS)
    return path


class Replicas:
    """`wirebridge serve` processes on one store, upstream and settings."""

    def __init__(self, name: str, log_dir: Path, upstream: str, store: str, settings: Path,
                 seal_key: str | None, count: int = REPLICAS) -> None:
        self.name = name
        self.log_dir = log_dir
        self.upstream = upstream
        self.store = store
        self.settings = settings
        self.env = {"WIREBRIDGE_SEAL_KEY": seal_key} if seal_key else {}
        self.starts = 0
        self.processes: list[harness.Process] = []
        try:
            for _ in range(count):
                self.processes.append(self._start(0))
        except BaseException:
            self.stop()
            raise

    def _start(self, port: int) -> harness.Process:
        self.starts += 1
        args = ["serve", "--listen", f"127.0.0.1:{port}", "--upstream", self.upstream, "--upstream-api", "chat",
                "--config", str(self.settings), "--store", self.store]
        return harness.Process(args, self.log_dir / f"{self.name}-{self.starts}.log", self.env)

    @property
    def urls(self) -> list[str]:
        return [p.url for p in self.processes]

    def restart(self, n: int) -> None:
        """Kills replica `n` at once (SIGKILL: no graceful shutdown), and
        starts it again on the same port."""
        old = self.processes[n]
        port = int(old.url.rsplit(":", 1)[1])
        old.proc.kill()
        old.proc.wait()
        old.stop()
        self.processes[n] = self._start(port)
        assert self.processes[n].url == old.url

    def stop(self) -> list[tuple[harness.Process, bool, int | None]]:
        """Stops every replica: (process, alive until then, exit code)."""
        stopped = []
        for process in self.processes:
            alive = process.alive()
            stopped.append((process, alive, process.stop()))
        return stopped


@pytest.fixture(scope="module")
def replicas(log_dir, upstream, redis_url, settings, seal_key):
    replicas = Replicas("replica", log_dir, upstream.url + "/v1", redis_url, settings, seal_key)
    yield replicas
    for process, alive, code in replicas.stop():
        log = process.log()
        assert alive, f"a replica exited during the tests (code {code}):\n{log[-4000:]}"
        assert "panicked" not in log, f"a replica panicked:\n{log[-4000:]}"
        assert code == 0, f"a replica exited with {code} on SIGTERM:\n{log[-4000:]}"


# --------------------------------------------------------------------------
# The load balancer
# --------------------------------------------------------------------------


@dataclass
class Served:
    """One exchange as the balancer passed it on."""

    replica: int
    method: str
    path: str
    status: int
    dropped: str | None


class RoundRobin(httpx2.BaseTransport):
    """Sends each request to the next replica, in turn: the request's URL
    (and `Host`) is pointed at that replica's port, and the response, a
    stream included, is passed back as it arrives. Records which replica
    served what."""

    def __init__(self, replicas: Replicas) -> None:
        self.replicas = replicas
        self.inner = httpx2.HTTPTransport()
        self.next = 0
        self.served: list[Served] = []

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        n = self.next
        self.next = (n + 1) % len(self.replicas.processes)
        target = httpx2.URL(self.replicas.urls[n])
        request.url = request.url.copy_with(host=target.host, port=target.port)
        request.headers["host"] = f"{target.host}:{target.port}"
        response = self.inner.handle_request(request)
        dropped = response.headers.get("x-wirebridge-dropped")
        self.served.append(Served(n, request.method, request.url.path, response.status_code, dropped))
        return response

    def close(self) -> None:
        self.inner.close()


def sdk(base_url: str, key: str, transport: httpx2.BaseTransport | None = None) -> openai.OpenAI:
    """The official SDK: no retries (a failure shows as it is), bounded waits."""
    return openai.OpenAI(
        base_url=base_url + "/v1",
        api_key=key,
        max_retries=0,
        timeout=openai.Timeout(20.0, connect=5.0),
        http_client=openai.DefaultHttpxClient(transport=transport, trust_env=False),
    )


# --------------------------------------------------------------------------
# What the upstream was sent
# --------------------------------------------------------------------------


def text_of(content) -> str:
    """A Chat message's text: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [])


def conversation(request: dict) -> list[tuple[str, str, str | None]]:
    """(role, text, reasoning) of each message of a Chat request."""
    return [(m["role"], text_of(m.get("content")), m.get("reasoning_content")) for m in request["messages"]]


def reasoning_of(response) -> tuple[str, str | None]:
    """The reasoning the SDK got with `response`: its summary text, and its
    sealed carrier."""
    items = [item for item in response.output if item.type == "reasoning"]
    assert len(items) == 1, response.output
    summary = "".join(part.text for part in items[0].summary)
    assert summary, "the upstream was asked to reason and sent no reasoning"
    return summary, items[0].encrypted_content


# --------------------------------------------------------------------------
# The conversation
# --------------------------------------------------------------------------


def ask(client: openai.OpenAI, text: str, previous: str | None, streaming: bool):
    """One turn: the final response, and the stream's event types."""
    if not streaming:
        return client.responses.create(
            model="demo", input=text, previous_response_id=previous, reasoning=REASONING, include=INCLUDE
        ), []
    with client.responses.stream(
        model="demo", input=text, previous_response_id=previous, reasoning=REASONING, include=INCLUDE
    ) as stream:
        events = [event.type for event in stream]
        return stream.get_final_response(), events


def hold_conversation(replicas: Replicas, tap: harness.Tap, key: str, streaming: bool, victim: int):
    """Holds the conversation over every replica, restarting `victim` after
    turn RESTART_AFTER; checks every turn's history as the upstream got it.
    Returns the responses, the inputs and the balancer."""
    balancer = RoundRobin(replicas)
    client = sdk(replicas.urls[0], key, balancer)
    history: list[tuple[str, str, str | None]] = []
    responses, inputs = [], []
    turn_replica = {}
    for turn in range(1, TURNS + 1):
        # A word more each turn, so that each turn's reasoning differs too.
        text = f"Turn {turn}: " + " ".join(["again"] * turn)
        previous = responses[-1].id if responses else None
        mark = tap.mark()
        response, events = ask(client, text, previous, streaming)
        turn_replica[turn] = balancer.served[-1].replica

        assert response.status == "completed", response
        assert response.previous_response_id == previous
        if streaming:
            assert events[0] == "response.created" and events[-1] == "response.completed", events
            assert events.count("response.output_text.delta") > 1, "the answer streamed in pieces"
        sent = tap.since(mark)
        assert len(sent) == 1, f"turn {turn}: {len(sent)} upstream requests"
        assert conversation(sent[0].json()) == history + [("user", text, None)], (
            f"turn {turn} (replica {turn_replica[turn]}): the upstream did not get the whole conversation"
        )

        summary, sealed = reasoning_of(response)
        assert sealed, "the reasoning was asked for sealed"
        history += [("user", text, None), ("assistant", response.output_text, summary)]
        responses.append(response)
        inputs.append(text)
        if turn == RESTART_AFTER:
            replicas.restart(victim)

    kept = [s for s in balancer.served if s.method == "POST"]
    assert all(s.status == 200 and s.dropped is None for s in kept), kept
    # Every replica served turns, the restarted one before and after.
    assert set(turn_replica.values()) == set(range(REPLICAS)), turn_replica
    assert any(turn_replica[t] == victim for t in range(1, RESTART_AFTER + 1)), turn_replica
    assert any(turn_replica[t] == victim for t in range(RESTART_AFTER + 1, TURNS + 1)), turn_replica
    return responses, inputs, balancer


def check_retrieval_and_deletion(replicas: Replicas, key: str, responses, inputs, balancer: RoundRobin) -> None:
    """Every replica retrieves the responses and lists their input items; a
    deletion through one replica is seen by every one."""
    last, first = responses[-1], responses[0]
    middle = RESTART_AFTER - 1  # kept before the restart
    for url in replicas.urls:
        pinned = sdk(url, key)
        for n in (0, middle, len(responses) - 1):
            retrieved = pinned.responses.retrieve(responses[n].id)
            assert retrieved.id == responses[n].id
            assert retrieved.output_text == responses[n].output_text
            assert retrieved.previous_response_id == responses[n].previous_response_id
            assert reasoning_of(retrieved)[0] == reasoning_of(responses[n])[0]
            # A turn's input items are its own, not the history it inherited.
            items = pinned.responses.input_items.list(responses[n].id)
            assert [part.text for item in items.data for part in item.content] == [inputs[n]]
        # Another credential sees nothing, on any replica.
        with pytest.raises(openai.NotFoundError):
            sdk(url, key + "-other").responses.retrieve(last.id)

    client = sdk(replicas.urls[0], key, balancer)
    deleted = client.responses.delete(responses[middle].id)
    assert deleted is None or getattr(deleted, "deleted", True)
    for url in replicas.urls:
        pinned = sdk(url, key)
        with pytest.raises(openai.NotFoundError):
            pinned.responses.retrieve(responses[middle].id)
        assert pinned.responses.retrieve(first.id).id == first.id
        # The conversation now misses a turn: continuing it is refused,
        # naming the missing one, rather than answered from a shorter history.
        with pytest.raises(openai.NotFoundError) as refused:
            pinned.responses.create(model="demo", input="And now?", previous_response_id=last.id)
        assert refused.value.body["code"] == "previous_response_not_found"
        assert responses[middle].id in refused.value.body["message"]


def test_twenty_turns_over_three_replicas(replicas, upstream):
    key = "sk-replicas-plain"
    responses, inputs, balancer = hold_conversation(replicas, upstream, key, streaming=False, victim=1)
    check_retrieval_and_deletion(replicas, key, responses, inputs, balancer)


def test_twenty_streamed_turns_over_three_replicas(replicas, upstream):
    key = "sk-replicas-streaming"
    responses, inputs, balancer = hold_conversation(replicas, upstream, key, streaming=True, victim=2)
    check_retrieval_and_deletion(replicas, key, responses, inputs, balancer)


def test_a_replica_with_a_seal_key_of_its_own_cannot_continue(replicas, upstream, log_dir, redis_url, settings):
    """The reason the key is shared: a replica with its own key finds the
    conversation in Redis but cannot open the reasoning the others sealed,
    and (carriers that cannot be opened being refused here) sends the
    upstream nothing."""
    key = "sk-replicas-own-key"
    client = sdk(replicas.urls[0], key)
    first = client.responses.create(model="demo", input="Hello there", reasoning=REASONING, include=INCLUDE)
    assert reasoning_of(first)[1], "the reasoning was asked for sealed"

    stranger = Replicas("stranger", log_dir, upstream.url + "/v1", redis_url, settings, seal_key=None, count=1)
    try:
        mark = upstream.mark()
        with pytest.raises(openai.BadRequestError) as refused:
            sdk(stranger.urls[0], key).responses.create(
                model="demo", input="And now?", previous_response_id=first.id, reasoning=REASONING
            )
        assert "encrypted_content" in refused.value.body["param"], refused.value.body
        assert upstream.since(mark) == []
        # The same request on a replica with the shared key goes through.
        again = sdk(replicas.urls[1], key).responses.create(
            model="demo", input="And now?", previous_response_id=first.id, reasoning=REASONING
        )
        assert again.status == "completed"
        assert len(upstream.since(mark)) == 1
    finally:
        stranger.stop()


def test_a_conversation_over_three_replicas(replicas, upstream):
    """A conversation created on one replica, extended by responses and by
    hand through the others, turn after turn: every turn's history is the
    conversation so far, and every replica lists it whole."""
    key = "sk-replicas-conversation"
    balancer = RoundRobin(replicas)
    client = sdk(replicas.urls[0], key, balancer)
    conversation = client.conversations.create(items=[{"role": "user", "content": "Hello."}])
    history = [("user", "Hello.", None)]
    for turn in range(1, 7):
        text = f"Turn {turn}"
        mark = upstream.mark()
        response = client.responses.create(model="demo", input=text, conversation=conversation.id)
        assert response.conversation.id == conversation.id
        (sent,) = upstream.since(mark)
        got = [(role, text_, None) for role, text_, _ in conversation_of(sent.json())]
        assert got == history + [("user", text, None)], f"turn {turn}"
        history += [("user", text, None), ("assistant", response.output_text, None)]
        if turn % 3 == 0:
            client.conversations.items.create(conversation.id, items=[{"role": "user", "content": f"Note {turn}"}])
            history.append(("user", f"Note {turn}", None))
    served = {s.replica for s in balancer.served}
    assert served == set(range(REPLICAS)), balancer.served
    for url in replicas.urls:
        items = list(sdk(url, key).conversations.items.list(conversation.id, order="asc"))
        assert [(item.role, text_of([p.model_dump() for p in item.content])) for item in items] == [
            (role, text_) for role, text_, _ in history]
        with pytest.raises(openai.NotFoundError):
            sdk(url, key + "-other").conversations.retrieve(conversation.id)
    client.conversations.delete(conversation.id)
    for url in replicas.urls:
        with pytest.raises(openai.NotFoundError):
            sdk(url, key).conversations.items.list(conversation.id)


def conversation_of(request: dict) -> list[tuple[str, str, str | None]]:
    """(role, text, reasoning) of each message, without the system prompt."""
    return [m for m in conversation(request) if m[0] != "system"]


def test_a_background_response_over_three_replicas(replicas, upstream):
    """A background response started on one replica is polled on the
    others, and one cancelled through another replica than the one running
    it stops there and stays cancelled."""
    key = "sk-replicas-background"
    first, second, third = (sdk(url, key) for url in replicas.urls)
    queued = first.responses.create(model="demo", input="Run me", background=True)
    assert queued.status == "queued"
    deadline = time.monotonic() + 20
    while (polled := second.responses.retrieve(queued.id)).status in ("queued", "in_progress"):
        assert time.monotonic() < deadline, polled.status
        time.sleep(0.05)
    assert polled.status == "completed" and "Run me" in polled.output_text
    assert third.responses.retrieve(queued.id).output_text == polled.output_text

    # 6 s before the answer (the demo's pause before a whole body): the
    # cancel reaches it long before.
    slow = first.responses.create(model="demo", input="A long one demo:slow 6000", background=True)
    time.sleep(0.5)
    assert second.responses.cancel(slow.id).status == "cancelled"
    # The replica running it sees the cancel within a second or so, and
    # stops: the response never turns completed.
    time.sleep(2.5)
    for client in (first, second, third):
        assert client.responses.retrieve(slow.id).status == "cancelled"
    time.sleep(4)
    assert first.responses.retrieve(slow.id).status == "cancelled"


def test_a_follower_of_a_run_cancelled_through_another_replica_is_told_it_ended(replicas, upstream):
    """Followed on the replica running it and cancelled through another:
    the replica running it reads the cancel from the store, stops, and the
    stream ends with the cancelled response."""
    key = "sk-replicas-background-follow"
    first, second = sdk(replicas.urls[0], key), sdk(replicas.urls[1], key)
    stream = first.responses.create(model="demo", input="Follow me demo:slow 500", background=True, stream=True)
    events = iter(stream)
    created = next(events)
    assert created.type == "response.created", created
    assert second.responses.cancel(created.response.id).status == "cancelled"
    rest = list(events)
    assert rest, "the stream ended without a word"
    last = rest[-1]
    assert last.type == "response.failed", [e.type for e in rest]
    assert last.response.status == "cancelled" and last.response.id == created.response.id
    assert first.responses.retrieve(created.response.id).status == "cancelled"
