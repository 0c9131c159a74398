"""Stored conversations that cannot be what they seem: a turn missing from
the chain, a write the store refused, a tenant flooding the memory store,
and clients without credentials or with credentials that are not text."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess
import tempfile
import time
from urllib.parse import urlsplit

import pytest

import harness
import upstreams


def request(bridge, method: str, path: str, body: dict | None = None,
            authorization: bytes | None = b"Bearer k1") -> tuple[int, dict, dict]:
    url = urlsplit(bridge.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.putrequest(method, "/v1" + path)
    data = json.dumps(body).encode() if body is not None else b""
    conn.putheader("content-type", "application/json")
    conn.putheader("content-length", str(len(data)))
    if authorization is not None:
        # Raw bytes: a credential need not be text.
        conn.putheader("authorization", authorization)
    conn.endheaders(data)
    response = conn.getresponse()
    raw = response.read()
    headers = {k.lower(): v for k, v in response.getheaders()}
    conn.close()
    if headers.get("content-type", "").startswith("text/event-stream"):
        payloads = harness.sse_payloads(raw.decode())
        return response.status, headers, payloads[-1]["response"]
    return response.status, headers, json.loads(raw) if raw else {}


def echo():
    """A Chat upstream that answers with the user texts it was sent."""
    def script(reply, body):
        chat = json.loads(body)
        said = " | ".join(m["content"] for m in chat["messages"]
                          if m["role"] == "user" and isinstance(m["content"], str))
        if chat.get("stream"):
            reply.head()
            for frame in upstreams.text_stream(said):
                reply.send(frame)
        else:
            answer = upstreams.completion(said)
            reply.head(content_type="application/json", length=len(answer))
            reply.send(answer)
    return upstreams.Upstream(script)


def text(response: dict) -> str:
    return response["output"][0]["content"][0]["text"]


def conversation(bridge, turns: list[str], **kwargs) -> list[str]:
    ids, previous = [], None
    for turn in turns:
        status, _, response = request(bridge, "POST", "/responses",
                                      {"model": "m", "input": turn, "previous_response_id": previous}, **kwargs)
        assert status == 200, response
        previous = response["id"]
        ids.append(previous)
    return ids


def test_a_conversation_missing_a_turn_is_refused_naming_it(chain):
    bridge = chain(static=echo())
    first, middle, last = conversation(bridge, ["one", "two", "three"])
    assert request(bridge, "DELETE", f"/responses/{middle}")[0] == 200
    status, _, error = request(bridge, "POST", "/responses",
                               {"model": "m", "input": "four", "previous_response_id": last})
    assert status == 404, error
    assert error["error"]["code"] == "previous_response_not_found"
    assert middle in error["error"]["message"]


def test_continuing_past_a_gap_is_a_choice_and_is_reported(chain):
    bridge = chain("--missing-history", "continue", static=echo())
    first, middle, last = conversation(bridge, ["one", "two", "three"])
    request(bridge, "DELETE", f"/responses/{middle}")
    status, headers, response = request(bridge, "POST", "/responses",
                                        {"model": "m", "input": "four", "previous_response_id": last})
    assert status == 200, response
    assert text(response) == "three | four"
    assert headers["x-wirebridge-dropped"] == "previous_response_id"


def test_without_credentials_nothing_is_kept_unless_shared_on_purpose(chain):
    bridge = chain(static=echo())
    status, _, response = request(bridge, "POST", "/responses", {"model": "m", "input": "one"},
                                  authorization=None)
    assert status == 200 and response["store"] is False, response
    status, _, error = request(bridge, "POST", "/responses",
                               {"model": "m", "input": "two", "previous_response_id": response["id"]},
                               authorization=None)
    assert status == 400 and error["error"]["code"] == "store_requires_credentials", error
    assert request(bridge, "GET", f"/responses/{response['id']}", authorization=None)[0] == 404

    shared = chain("--anonymous-store", static=echo())
    ids = conversation(shared, ["one", "two"], authorization=None)
    status, _, response = request(shared, "GET", f"/responses/{ids[1]}", authorization=None)
    assert status == 200 and text(response) == "one | two"


def test_credentials_that_are_not_text_are_tenants_of_their_own(chain):
    bridge = chain(static=echo())
    (mine,) = conversation(bridge, ["secret"], authorization=b"Bearer caf\xe9")
    for other in [b"Bearer caf\xe8", b"Bearer \xff\xfe", None]:
        status, _, _ = request(bridge, "GET", f"/responses/{mine}", authorization=other)
        assert status == 404, other
    assert request(bridge, "GET", f"/responses/{mine}", authorization=b"Bearer caf\xe9")[0] == 200


def test_one_tenant_flooding_the_memory_store_evicts_only_its_own(chain):
    bridge = chain(static=echo(), env={"WIREBRIDGE_STORE_TENANT_MAX_ENTRIES": "3"})
    (theirs,) = conversation(bridge, ["kept"], authorization=b"Bearer quiet")
    flood = [conversation(bridge, [f"flood {n}"], authorization=b"Bearer loud")[0] for n in range(10)]
    assert request(bridge, "GET", f"/responses/{theirs}", authorization=b"Bearer quiet")[0] == 200
    kept = [request(bridge, "GET", f"/responses/{i}", authorization=b"Bearer loud")[0] for i in flood]
    assert kept == [404] * 7 + [200] * 3, kept


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def full_redis():
    """A redis-server that refuses writes once 4 MB are used (noeviction):
    an empty server uses about 1 MB."""
    server = shutil.which("redis-server") or shutil.which("valkey-server")
    if server is None:
        pytest.fail("redis-server is not installed (apt-get install -y redis-server)")
    port, workdir = free_port(), tempfile.mkdtemp(prefix="wirebridge-redis-")
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir, "--maxmemory", "4mb", "--maxmemory-policy", "noeviction"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    proc.kill()
    proc.wait()
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.mark.parametrize("stream", [False, True])
def test_a_response_the_store_refused_says_it_was_not_stored(chain, full_redis, stream):
    bridge = chain("--store", full_redis, static=echo())
    # The record holds the input, the output (this upstream repeats the
    # input) and the response (the output again): some 6 MB, more than the
    # server may still take.
    big = "x" * 2_000_000
    status, _, response = request(bridge, "POST", "/responses",
                                  {"model": "m", "input": big, "stream": stream})
    assert status == 200
    assert response["store"] is False, {k: v for k, v in response.items() if k != "output"}
    status, _, error = request(bridge, "POST", "/responses",
                               {"model": "m", "input": "next", "previous_response_id": response["id"]})
    assert status == 404, error
    # A small response fits again once Redis has let go of the big write's
    # buffer (it does so lazily, within seconds), and is kept.
    deadline = time.time() + 10
    while True:
        status, _, small = request(bridge, "POST", "/responses", {"model": "m", "input": "small"})
        assert status == 200, small
        if small["store"] is True or time.time() > deadline:
            break
        time.sleep(0.2)
    assert small["store"] is True, "the store never took a small response again"
    status, _, _ = request(bridge, "GET", f"/responses/{small['id']}")
    assert status == 200
