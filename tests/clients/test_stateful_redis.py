"""Stateful Responses through `wirebridge serve --store redis://…`, driven by
the official openai SDK: a three-turn conversation that sends only
`previous_response_id` (never the history), streaming and not; retrieval,
input items and deletion; and the same conversation continuing after the
proxy restarts, because Redis kept it. Then the ways Redis is deployed: over
TLS with a CA file, as an ACL user, as a Redis Cluster; and Redis going away:
the bridge starts without it, answers 503 for what needs it, and uses it once
it is back, never showing its password.

Real redis-servers are started on free loopback ports, and the real
`wirebridge` binary in front of its demo upstream.
"""

import os
import pathlib
import signal
import subprocess
import tempfile
import time

import openai
import pytest

from redis_servers import Certificates, RedisCluster, RedisServer, free_port

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("WIREBRIDGE_BIN", str(REPO / "target/debug/wirebridge"))

# An ACL user's password, with characters a URL must escape.
PASSWORD = "s3cret@pw:x"
PASSWORD_IN_URL = "s3cret%40pw%3Ax"


@pytest.fixture(scope="module")
def redis_url():
    server = RedisServer().start()
    yield server.url()
    server.stop()


class Proxy:
    def __init__(self, store, *args):
        self.log = tempfile.NamedTemporaryFile(prefix="wirebridge-log-", delete=False)
        self.proc = subprocess.Popen(
            [BIN, "serve", "--listen", "127.0.0.1:0", "--store", store, *args],
            stdout=subprocess.PIPE,
            stderr=self.log,
            env={**os.environ, "RUST_LOG": "info"},
            text=True,
        )
        line = self.proc.stdout.readline()
        assert line.startswith("listening on "), line + self.logs()
        self.url = line.split()[-1]

    def client(self, key="sk-alice"):
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=key, max_retries=0, timeout=20)

    def logs(self):
        return pathlib.Path(self.log.name).read_text(errors="replace")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.log.close()
        os.unlink(self.log.name)


@pytest.fixture
def proxy(redis_url):
    proxy = Proxy(redis_url)
    yield proxy
    proxy.stop()


def test_three_turns_with_previous_response_id_only(proxy):
    client = proxy.client()
    first = client.responses.create(model="demo", input="My name is Ada.")
    with client.responses.stream(model="demo", input="What is my name?", previous_response_id=first.id) as stream:
        second = stream.get_final_response()
    third = client.responses.create(model="demo", input="Thanks.", previous_response_id=second.id)
    assert third.previous_response_id == second.id
    assert "Thanks." in third.output_text

    retrieved = client.responses.retrieve(second.id)
    assert retrieved.id == second.id
    assert retrieved.output_text == second.output_text
    # The input items of a turn are that turn's own, not the inherited history.
    items = client.responses.input_items.list(second.id)
    texts = [part.text for item in items.data for part in item.content]
    assert texts == ["What is my name?"]

    deleted = client.responses.delete(first.id)
    assert deleted is None or getattr(deleted, "deleted", True)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)
    # Another key sees nothing.
    with pytest.raises(openai.NotFoundError):
        proxy.client("sk-mallory").responses.retrieve(second.id)


def test_the_conversation_survives_a_restart(redis_url):
    before = Proxy(redis_url)
    try:
        first = before.client().responses.create(model="demo", input="Remember this.")
    finally:
        before.stop()
    after = Proxy(redis_url)
    try:
        client = after.client()
        assert client.responses.retrieve(first.id).output_text == first.output_text
        again = client.responses.create(model="demo", input="And now?", previous_response_id=first.id)
        assert again.status == "completed"
    finally:
        after.stop()


def test_a_background_response_cut_by_a_shutdown_ends_failed(redis_url):
    """A run longer than the shutdown's grace period ends `failed`, with
    the reason, where the next process (or any replica) reads it: never
    left `in_progress`."""
    before = Proxy(redis_url, "--shutdown-grace-secs", "1")
    try:
        # 8 s before the answer (the demo's pause before a whole body),
        # against a 1 s grace period.
        queued = before.client().responses.create(model="demo", input="Long demo:slow 8000", background=True)
        deadline = time.time() + 10
        while before.client().responses.retrieve(queued.id).status == "queued":
            assert time.time() < deadline
            time.sleep(0.05)
    finally:
        started = time.time()
        before.stop()
    assert time.time() - started < 6, "the shutdown waited for the run"
    after = Proxy(redis_url)
    try:
        failed = after.client().responses.retrieve(queued.id)
        assert failed.status == "failed"
        assert failed.error.code == "server_error"
        assert "shut down" in failed.error.message
    finally:
        after.stop()


def test_a_background_response_left_by_a_killed_process_reads_failed_once_its_lease_expires(redis_url):
    """A process killed without a word writes nothing more: its run's lease
    in Redis expires, and the next process to read the response marks it
    `failed` rather than leaving it `queued` or `in_progress` for ever."""
    lease = ["--background-lease", "2s"]
    before = Proxy(redis_url, *lease)
    try:
        # A run longer than the lease, polled while it goes on: the lease is
        # renewed, and it completes.
        client = before.client()
        running = client.responses.create(model="demo", input="Going on demo:slow 3000", background=True)
        deadline = time.time() + 15
        while (read := client.responses.retrieve(running.id)).status in ("queued", "in_progress"):
            assert time.time() < deadline
            time.sleep(0.2)
        assert read.status == "completed", read
        queued = before.client().responses.create(model="demo", input="Long demo:slow 8000", background=True)
        assert queued.status == "queued"
        continued = before.client().responses.create(model="demo", input="Also long demo:slow 8000",
                                                     background=True)
    finally:
        before.proc.kill()
        before.proc.wait(timeout=20)
    after = Proxy(redis_url, *lease)
    try:
        client = after.client()
        deadline = time.time() + 15
        while (read := client.responses.retrieve(queued.id)).status in ("queued", "in_progress"):
            assert time.time() < deadline, f"still {read.status} long after its lease"
            time.sleep(0.2)
        assert read.status == "failed", read
        assert read.error.code == "server_error"
        assert "stopped before it was done" in read.error.message, read.error
        # It stays so, and is no longer running: it can be continued.
        assert client.responses.retrieve(queued.id).status == "failed"
        again = client.responses.create(model="demo", input="And now?", previous_response_id=queued.id)
        assert again.status == "completed"
        # Continuing one nobody has read since is what finds its lease gone.
        deadline = time.time() + 15
        while True:
            try:
                again = client.responses.create(model="demo", input="Go on", previous_response_id=continued.id)
                break
            except openai.BadRequestError as refused:
                assert refused.body["code"] == "previous_response_in_progress", refused.body
                assert time.time() < deadline, "still running long after its lease"
                time.sleep(0.2)
        assert again.status == "completed"
        assert client.responses.retrieve(continued.id).status == "failed"
    finally:
        after.stop()


def test_an_unknown_previous_response_is_a_404_naming_it(proxy):
    with pytest.raises(openai.NotFoundError) as raised:
        proxy.client().responses.create(model="demo", input="x", previous_response_id="resp_nope")
    assert raised.value.body["param"] == "previous_response_id"
    assert raised.value.body["code"] == "previous_response_not_found"


def eventually(action, seconds=15):
    """`action()`, retried until it stops raising or `seconds` pass."""
    deadline = time.time() + seconds
    while True:
        try:
            return action()
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def assert_store_unavailable(raised, secret=PASSWORD):
    assert raised.value.status_code == 503
    assert raised.value.body["code"] == "store_unavailable"
    assert raised.value.body["type"] == "server_error"
    assert secret not in str(raised.value.body) and PASSWORD_IN_URL not in str(raised.value.body)


def test_redis_down_is_a_503_then_recovers():
    redis = RedisServer().start()
    proxy = Proxy(redis.url())
    try:
        client = proxy.client()
        first = client.responses.create(model="demo", input="before")
        redis.kill()
        started = time.time()
        with pytest.raises(openai.InternalServerError) as raised:
            client.responses.retrieve(first.id)
        assert_store_unavailable(raised)
        with pytest.raises(openai.InternalServerError):
            client.responses.create(model="demo", input="x", previous_response_id=first.id)
        assert time.time() - started < 10, "a dead store must not hang requests"

        redis.start()
        # The data died with that Redis (it kept none on disk); the bridge is back.
        again = client.responses.create(model="demo", input="after")
        assert client.responses.retrieve(again.id).output_text == again.output_text
    finally:
        proxy.stop()
        redis.stop()


def test_starts_while_redis_is_down_and_uses_it_once_up():
    """Redis is not there when the bridge starts: it starts all the same,
    serves what needs no store, answers 503 for what does, and uses Redis as
    soon as it is up, without a restart; its password is never shown."""
    user_rules = ("--user", "bridge", "on", f">{PASSWORD}", "~wirebridge:resp:*", "+@all",
                  "--user", "default", "off")
    redis = RedisServer(args=user_rules)
    proxy = Proxy(redis.url(f"bridge:{PASSWORD_IN_URL}"), "--store-timeout", "1s")
    try:
        client = proxy.client()
        # Nothing to store or read: served as usual.
        stateless = client.responses.create(model="demo", input="hello", store=False)
        assert stateless.status == "completed" and stateless.output_text
        chat = client.chat.completions.create(model="demo", messages=[{"role": "user", "content": "hi"}])
        assert chat.choices[0].message.content
        # Asked to be stored: delivered, saying it was not.
        unkept = client.responses.create(model="demo", input="keep me")
        assert unkept.status == "completed" and unkept.store is False
        # Streamed, and over the WebSocket, the terminal event says so.
        events = list(client.responses.create(model="demo", input="keep me", stream=True))
        assert events[-1].type == "response.completed" and events[-1].response.store is False
        with client.responses.connect() as connection:
            connection.response.create(model="demo", input="keep me")
            for event in connection:
                if event.type in ("response.completed", "response.failed", "error"):
                    break
            assert event.type == "response.completed" and event.response.store is False, event
        # What needs the store: a prompt 503 in the OpenAI error format.
        started = time.time()
        with pytest.raises(openai.InternalServerError) as raised:
            client.responses.create(model="demo", input="x", previous_response_id="resp_123")
        assert_store_unavailable(raised)
        with pytest.raises(openai.InternalServerError) as raised:
            client.responses.retrieve("resp_123")
        assert_store_unavailable(raised)
        assert time.time() - started < 6, "each took at most about the 1 s store timeout"

        redis.start()
        # The first request after Redis is up is served from it.
        first = client.responses.create(model="demo", input="My name is Ada.")
        assert first.store is not False
        second = client.responses.create(model="demo", input="And?", previous_response_id=first.id)
        assert second.previous_response_id == first.id
        assert client.responses.retrieve(first.id).output_text == first.output_text

        logs = proxy.logs()
        assert "the response store is unavailable" in logs, logs
        assert "the response store answers again" in logs, logs
        assert PASSWORD not in logs and PASSWORD_IN_URL not in logs, logs
        assert "//bridge:" not in logs and "redis://***@127.0.0.1" in logs, "the URL is shown redacted"
    finally:
        proxy.stop()
        redis.stop()


def test_a_frozen_redis_is_a_503_within_the_store_timeout_then_recovers():
    """Redis stops answering mid-run (its connections stay open): requests
    that need it fail within `--store-timeout`, and work once it answers."""
    redis = RedisServer().start()
    proxy = Proxy(redis.url(), "--store-timeout", "1s")
    try:
        client = proxy.client()
        first = client.responses.create(model="demo", input="before")
        redis.signal(signal.SIGSTOP)
        try:
            started = time.time()
            with pytest.raises(openai.InternalServerError) as raised:
                client.responses.retrieve(first.id)
            assert_store_unavailable(raised)
            assert time.time() - started < 4, time.time() - started
        finally:
            redis.signal(signal.SIGCONT)
        again = eventually(lambda: client.responses.retrieve(first.id))
        assert again.output_text == first.output_text
    finally:
        proxy.stop()
        redis.stop()


def test_tls_with_a_ca_file():
    certs = Certificates()
    redis = RedisServer(certs=certs).start()
    good = Proxy(redis.url(), "--store-ca-file", certs.path("ca.crt"))
    wrong = Proxy(redis.url(), "--store-ca-file", certs.path("other-ca.crt"))
    try:
        client = good.client()
        first = client.responses.create(model="demo", input="Over TLS.")
        second = client.responses.create(model="demo", input="Still?", previous_response_id=first.id)
        items = client.responses.input_items.list(second.id)
        assert [part.text for item in items.data for part in item.content] == ["Still?"]
        # A server certificate that CA did not sign: a 503 saying why.
        with pytest.raises(openai.InternalServerError) as raised:
            wrong.client().responses.retrieve(first.id)
        assert_store_unavailable(raised)
        assert "certificate" in raised.value.body["message"].lower(), raised.value.body
    finally:
        good.stop()
        wrong.stop()
        redis.stop()
        certs.remove()


def test_a_redis_cluster():
    cluster = RedisCluster()
    proxy = Proxy(cluster.url())
    try:
        # Several tenants, so that conversations live on several nodes.
        for key in ("sk-ada", "sk-bob", "sk-cy", "sk-dee"):
            client = proxy.client(key)
            first = client.responses.create(model="demo", input=f"I am {key}.")
            with client.responses.stream(model="demo", input="Who?", previous_response_id=first.id) as stream:
                second = stream.get_final_response()
            third = client.responses.create(model="demo", input="Bye.", previous_response_id=second.id)
            assert third.status == "completed"
            assert client.responses.retrieve(second.id).output_text == second.output_text
    finally:
        proxy.stop()
        cluster.stop()


def test_settings_that_cannot_be_used_stop_it_without_showing_the_password():
    for code, args in (
        (2, ["--store", f"redis+cluster://u:{PASSWORD_IN_URL}@a:1,,b:2"]),
        (2, ["--store", f"redis://u:{PASSWORD_IN_URL}@127.0.0.1:1/0", "--store-ca-file", "/ca.pem"]),
        (1, ["--store", f"rediss://u:{PASSWORD_IN_URL}@127.0.0.1:1/0", "--store-ca-file", "/nonexistent.pem"]),
    ):
        done = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", *args],
                              capture_output=True, text=True, timeout=20)
        assert done.returncode == code, done
        assert "store" in done.stderr, done.stderr
        assert PASSWORD_IN_URL not in done.stderr and PASSWORD not in done.stderr, done.stderr
