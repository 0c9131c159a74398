"""Stateful Responses through `wirebridge serve --store redis://…`, driven by
the official openai SDK: a three-turn conversation that sends only
`previous_response_id` (never the history), streaming and not; retrieval,
input items and deletion; and the same conversation continuing after the
proxy restarts, because Redis kept it.

A real redis-server is started on a free loopback port, and the real
`wirebridge` binary in front of its demo upstream.
"""

import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import time

import openai
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("WIREBRIDGE_BIN", str(REPO / "target/debug/wirebridge"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(port, workdir):
    server = shutil.which("redis-server") or shutil.which("valkey-server")
    if server is None:
        pytest.fail("redis-server is not installed (apt-get install -y redis-server)")
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    pytest.fail("redis-server did not start")


@pytest.fixture(scope="module")
def redis_url():
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="wirebridge-redis-")
    proc = start_redis(port, workdir)
    yield f"redis://127.0.0.1:{port}/0"
    proc.kill()
    proc.wait()
    shutil.rmtree(workdir, ignore_errors=True)


class Proxy:
    def __init__(self, store):
        self.proc = subprocess.Popen(
            [BIN, "serve", "--listen", "127.0.0.1:0", "--store", store],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": "warn"},
            text=True,
        )
        line = self.proc.stdout.readline()
        assert line.startswith("listening on "), line
        self.url = line.split()[-1]

    def client(self, key="sk-alice"):
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=key, max_retries=0, timeout=20)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)


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


def test_an_unknown_previous_response_is_a_404_naming_it(proxy):
    with pytest.raises(openai.NotFoundError) as raised:
        proxy.client().responses.create(model="demo", input="x", previous_response_id="resp_nope")
    assert raised.value.body["param"] == "previous_response_id"
    assert raised.value.body["code"] == "previous_response_not_found"


def test_redis_down_is_a_503_then_recovers():
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="wirebridge-redis-")
    redis = start_redis(port, workdir)
    proxy = Proxy(f"redis://127.0.0.1:{port}/0")
    try:
        client = proxy.client()
        first = client.responses.create(model="demo", input="before")
        redis.kill()
        redis.wait()
        started = time.time()
        with pytest.raises(openai.InternalServerError) as raised:
            client.responses.retrieve(first.id)
        assert raised.value.status_code == 503
        assert raised.value.body["code"] == "store_unavailable"
        with pytest.raises(openai.InternalServerError):
            client.responses.create(model="demo", input="x", previous_response_id=first.id)
        assert time.time() - started < 10, "a dead store must not hang requests"

        redis = start_redis(port, workdir)
        # The data died with that Redis (it kept none on disk); the bridge is back.
        again = client.responses.create(model="demo", input="after")
        assert client.responses.retrieve(again.id).output_text == again.output_text
    finally:
        proxy.stop()
        redis.kill()
        redis.wait()
        shutil.rmtree(workdir, ignore_errors=True)
