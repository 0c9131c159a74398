"""Responses WebSocket mode through the real binary, driven by the official
SDK's WebSocket client (`client.responses.connect()`), in front of the demo
upstream speaking only Chat Completions, and again speaking only a Responses
API that keeps no state (it refuses `previous_response_id`), with the tap
recording what reaches it. Every message the bridge sends is validated against both specs: stream
events against OpenAI's and Open Responses' event schemas, error events
against Open Responses' `WebSocketErrorEvent`."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

import harness

TERMINAL = {"response.completed", "response.incomplete", "response.failed", "error"}


@pytest.fixture(params=["chat", "responses"])
def chain(wirebridge, log_dir, request):
    """A chain of its own per test: what reaches the upstream, and which
    upstream connections stay open, belong to that test alone."""
    chain = harness.start_chain(log_dir, f"ws-{request.node.name}", request.param,
                                extra=["--store", "memory"])
    yield chain
    harness.stop_checked(chain)


def connect(chain, api_key="sk-wirebridge-test"):
    client = harness.client(chain)
    client.api_key = api_key
    return client.responses.connect()


def turn(connection, spec) -> list[dict]:
    """The messages of one turn, to its terminal event or error event, each
    validated and read by the SDK."""
    events = []
    while True:
        raw = connection.recv_bytes()
        event = json.loads(raw)
        if event["type"] == "error":
            errors = spec.errors(event, "WebSocketErrorEvent", harness.validate.OPEN_RESPONSES_URI)
        else:
            errors = spec.event_errors(event)
        assert not errors, f"{json.dumps(event)[:1500]}:\n  " + "\n  ".join(errors[:5])
        assert connection.parse_event(raw).type == event["type"]
        events.append(event)
        if event["type"] in TERMINAL:
            return events


def completed(events: list[dict]) -> dict:
    assert events[-1]["type"] == "response.completed", json.dumps(events[-1])[:2000]
    return events[-1]["response"]


def text(response: dict) -> str:
    return "".join(
        part.get("text", "")
        for item in response["output"] if item["type"] == "message"
        for part in item["content"]
    )


def conversation(captured: harness.Captured) -> list[dict]:
    """The messages of a Chat request, or the input items of a Responses
    one, as the upstream received them."""
    body = captured.json()
    return body["messages"] if "messages" in body else body["input"]


def roles(captured: harness.Captured) -> list[str]:
    return [message.get("role") for message in conversation(captured)]


def user_texts(captured: harness.Captured) -> list[str]:
    """The user messages of a request, as the upstream received them."""
    texts = []
    for message in conversation(captured):
        if message.get("role") != "user":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        texts.append(content)
    return texts


def test_a_streamed_turn(chain, spec):
    mark = chain.tap.mark()
    with connect(chain) as connection:
        connection.response.create(model="demo", input="hello")
        events = turn(connection, spec)
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"], kinds
    assert "response.output_text.delta" in kinds
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert "hello" in text(completed(events))
    [sent] = chain.tap.since(mark)
    assert sent.path.endswith(("/chat/completions", "/responses")) and sent.json()["stream"] is True
    assert "previous_response_id" not in sent.json()


def test_three_turns_on_one_connection_continue_with_store_false(chain, spec):
    mark = chain.tap.mark()
    with connect(chain) as connection:
        previous = None
        for word in ["alpha", "bravo", "charlie"]:
            connection.response.create(model="demo", input=f"say {word}", store=False,
                                       **({"previous_response_id": previous} if previous else {}))
            response = completed(turn(connection, spec))
            assert response["store"] is False
            previous = response["id"]
    sent = chain.tap.since(mark)
    assert len(sent) == 3
    assert user_texts(sent[2]) == ["say alpha", "say bravo", "say charlie"]
    # The earlier answers went back as assistant messages, the whole
    # conversation each time.
    assert roles(sent[2]) == ["user", "assistant"] * 2 + ["user"]
    assert all("previous_response_id" not in s.json() for s in sent)


def test_after_reconnecting_an_unstored_response_is_not_found_and_the_full_history_works(chain, spec):
    with connect(chain) as connection:
        connection.response.create(model="demo", input="say alpha", store=False)
        first = completed(turn(connection, spec))
    mark = chain.tap.mark()
    with connect(chain) as connection:
        connection.response.create(model="demo", input="say bravo", store=False,
                                   previous_response_id=first["id"])
        [error] = turn(connection, spec)
        assert error["status"] == 404
        assert error["error"]["code"] == "previous_response_not_found"
        assert error["error"]["param"] == "previous_response_id"
        assert chain.tap.since(mark) == [], "nothing reached the upstream"
        # The whole conversation resent: answered on the same connection.
        history = [{"role": "user", "content": "say alpha"}] + first["output"]
        connection.response.create(model="demo", input=history + [{"role": "user", "content": "say bravo"}],
                                   store=False)
        completed(turn(connection, spec))
    [sent] = chain.tap.since(mark)
    assert user_texts(sent) == ["say alpha", "say bravo"]


def test_a_stored_response_continues_on_another_connection(chain, spec):
    with connect(chain) as connection:
        connection.response.create(model="demo", input="say alpha")
        first = completed(turn(connection, spec))
        assert first["store"] is True
    mark = chain.tap.mark()
    with connect(chain) as connection:
        connection.response.create(model="demo", input="say bravo", previous_response_id=first["id"])
        completed(turn(connection, spec))
    assert user_texts(chain.tap.since(mark)[0]) == ["say alpha", "say bravo"]
    # Another tenant's connection cannot.
    with connect(chain, api_key="sk-someone-else") as connection:
        connection.response.create(model="demo", input="say bravo", previous_response_id=first["id"])
        [error] = turn(connection, spec)
        assert error["status"] == 404


def test_a_failed_turn_evicts_the_response_it_continued(chain, spec):
    with connect(chain) as connection:
        connection.response.create(model="demo", input="say alpha", store=False)
        first = completed(turn(connection, spec))
        connection.response.create(model="demo", input="demo:error 500", store=False,
                                   previous_response_id=first["id"])
        [error] = turn(connection, spec)
        assert error["status"] == 500
        connection.response.create(model="demo", input="say bravo", store=False,
                                   previous_response_id=first["id"])
        [error] = turn(connection, spec)
        assert error["status"] == 404
        assert error["error"]["code"] == "previous_response_not_found"


def test_a_warm_up_reaches_no_backend(chain, spec):
    mark = chain.tap.mark()
    with connect(chain) as connection:
        connection.response.create(model="demo", input="say alpha", generate=False, store=False)
        warm = completed(turn(connection, spec))
        assert warm["output"] == [] and warm["usage"]["total_tokens"] == 0
        assert chain.tap.since(mark) == [], "a warm-up must not reach the backend"
        connection.response.create(model="demo", input="say bravo", store=False,
                                   previous_response_id=warm["id"])
        completed(turn(connection, spec))
    [sent] = chain.tap.since(mark)
    assert user_texts(sent) == ["say alpha", "say bravo"]


def test_a_warm_up_is_stored_only_once_the_backend_accepted_the_credential(chain, spec):
    """A warm-up never reaches the backend, so nothing checked its
    credential: until the backend has answered that credential once, the
    warm-up is kept on its connection only, never in the shared store."""
    client = harness.client(chain)
    client.api_key = "sk-never-checked"
    with connect(chain, api_key="sk-never-checked") as connection:
        connection.response.create(model="demo", input="say alpha", generate=False)
        warm = completed(turn(connection, spec))
        # Not in the store, and it says so; the connection continues it.
        assert warm["store"] is False
        connection.response.create(model="demo", input="say bravo", previous_response_id=warm["id"])
        completed(turn(connection, spec))
    with pytest.raises(Exception) as refused:
        client.responses.retrieve(warm["id"])
    assert getattr(refused.value, "status_code", None) == 404, "kept on its connection only"

    # One turn the backend answers accepts the credential.
    client.responses.create(model="demo", input="hello")
    with connect(chain, api_key="sk-never-checked") as connection:
        connection.response.create(model="demo", input="say bravo", generate=False)
        warm = completed(turn(connection, spec))
    assert warm["store"] is True
    assert client.responses.retrieve(warm["id"]).id == warm["id"]


def test_lanes_and_bad_messages(chain, spec):
    with connect(chain) as connection:
        connection.response.create(model="demo", input="hello", stream_id="lane-7")
        events = turn(connection, spec)
        assert {e.get("stream_id") for e in events} == {"lane-7"}
        connection.send_raw("not json")
        [error] = turn(connection, spec)
        assert error["status"] == 400 and error["error"]["code"] == "invalid_json"
        connection.response.create(model="demo", input="hello", background=True)
        [error] = turn(connection, spec)
        assert error["error"]["param"] == "background"
        # Still serving.
        completed(turn_after(connection, spec, model="demo", input="hello"))


def turn_after(connection, spec, **create):
    connection.response.create(**create)
    return turn(connection, spec)


def test_disconnecting_mid_turn_drops_the_upstream_request(chain, spec):
    connection = connect(chain).__enter__()
    try:
        connection.response.create(model="demo", input="write a long story demo:slow 200")
        while json.loads(connection.recv_bytes())["type"] != "response.output_text.delta":
            pass
        assert harness_open_upstream(chain) >= 1, "the upstream request is open"
    finally:
        connection.close()
    deadline = time.monotonic() + 5
    while harness_open_upstream(chain) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert harness_open_upstream(chain) == 0, "the upstream connection outlived the client"


def harness_open_upstream(chain) -> int:
    """Connections open between the bridge and the upstream (the tap's
    sockets come in pairs)."""
    with chain.tap._lock:
        return len(chain.tap._sockets) // 2


def test_a_compaction_trigger_over_a_websocket(chain, spec):
    """A turn that ends with `compaction_trigger` answers with the one
    compaction item, as over HTTP; the next turn on the connection sends
    the backend the summary in place of what it summarizes."""
    with connect(chain) as connection:
        connection.response.create(model="demo", input="say alpha", store=False)
        first = completed(turn(connection, spec))
        connection.response.create(model="demo", store=False, previous_response_id=first["id"],
                                   input=[{"type": "compaction_trigger"}])
        compacted = completed(turn(connection, spec))
        [item] = compacted["output"]
        assert item["type"] == "compaction" and item["encrypted_content"]
        mark = chain.tap.mark()
        connection.response.create(model="demo", store=False,
                                   input=[item, {"role": "user", "content": "say bravo"}])
        completed(turn(connection, spec))
    [sent] = chain.tap.since(mark)
    texts = user_texts(sent)
    assert texts[-1] == "say bravo"
    assert texts[0].startswith("[Summary of the earlier conversation]"), texts


def test_a_steer_is_refused_with_its_input_handed_back(chain, spec):
    """`response.steer` is answered with the SDK's `response.steer.failed`
    (code `steering_not_supported`), the input handed back; sent with the
    next `response.create`, it is answered. No spec defines the event (the
    SDK's types do), so the SDK's own model validates it, strictly."""
    from openai.types.responses import ResponseSteerFailedEvent

    steer_input = [{"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "say it shorter"}]}]
    mark = chain.tap.mark()
    with connect(chain) as connection:
        connection.response.create(model="demo", input="hello", store=False)
        first = completed(turn(connection, spec))
        connection.response.steer(input=steer_input, previous_response_id=first["id"])
        raw = connection.recv_bytes()
        event = ResponseSteerFailedEvent.model_validate_json(raw)
        assert event.error.code == "steering_not_supported"
        assert event.steer.previous_response_id == first["id"]
        assert event.steer.id is None, "no id: the steer was never accepted"
        assert json.loads(raw)["steer"]["input"] == steer_input
        assert isinstance(connection.parse_event(raw), ResponseSteerFailedEvent)

        connection.response.create(model="demo", input=steer_input, store=False,
                                   previous_response_id=first["id"])
        completed(turn(connection, spec))
    first_sent, second_sent = chain.tap.since(mark)
    assert user_texts(second_sent) == ["hello", "say it shorter"]


def raw_connect(chain, key: str):
    """A plain WebSocket client on the bridge's `/v1/responses`."""
    from websockets.sync.client import connect as ws_connect

    url = chain.base_url.replace("http://", "ws://") + "/responses"
    return ws_connect(url, additional_headers={"authorization": f"Bearer {key}"}, open_timeout=5)


def test_the_upgrade_tells_codex_its_message_limit_turn_state_and_catalog(wirebridge, log_dir):
    """Codex reads four headers from the upgrade: the largest message it
    may send (the bridge's `max_body`, past which the connection closes with
    1009), a turn state it sends back when it reopens a connection during a
    turn (echoed then), and, once it has read the catalog, the catalog's tag
    and the backend's model when the catalog lists only that one."""
    from websockets.exceptions import ConnectionClosedError
    from websockets.sync.client import connect as ws_connect

    chain = harness.start_chain(log_dir, "ws-codex-head", "chat", extra=["--max-body", "65536"])
    try:
        with raw_connect(chain, "sk-a") as connection:
            headers = connection.response.headers
            assert headers["x-codex-websocket-max-message-bytes"] == "65536"
            assert headers["x-reasoning-included"] == "true"
            state = headers["x-codex-turn-state"]
            assert state
            assert "x-models-etag" not in headers and "openai-model" not in headers
            connection.send(json.dumps({"type": "response.create", "model": "demo", "input": "x" * 65536}))
            with pytest.raises(ConnectionClosedError) as closed:
                connection.recv(timeout=5)
            assert closed.value.rcvd.code == 1009
        with raw_connect(chain, "sk-a") as other:
            assert other.response.headers["x-codex-turn-state"] != state

        url = chain.base_url.replace("http://", "ws://") + "/responses"
        again = ws_connect(url, additional_headers={"authorization": "Bearer sk-a", "x-codex-turn-state": state},
                           open_timeout=5)
        with again:
            assert again.response.headers["x-codex-turn-state"] == state

        # Codex reads its catalog: the demo upstream lists one model.
        request = urllib.request.Request(chain.base_url + "/models?client_version=0.171.0",
                                         headers={"authorization": "Bearer sk-a"})
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=5) as reply:
            tag = reply.headers["etag"]
            assert [m["slug"] for m in json.load(reply)["models"]] == ["wirebridge-demo"]
        with raw_connect(chain, "sk-a") as connection:
            assert connection.response.headers["x-models-etag"] == tag
            assert connection.response.headers["openai-model"] == "wirebridge-demo"
        # Another credential has read no catalog: none is named to it.
        with raw_connect(chain, "sk-b") as connection:
            assert "x-models-etag" not in connection.response.headers
            assert "openai-model" not in connection.response.headers
    finally:
        harness.stop_checked(chain)


def test_a_tenant_holds_at_most_its_cap_of_connections(wirebridge, log_dir):
    from websockets.exceptions import InvalidStatus

    chain = harness.start_chain(log_dir, "ws-cap", "chat", extra=["--websocket-max-per-tenant", "2"])
    try:
        first, second = raw_connect(chain, "sk-a"), raw_connect(chain, "sk-a")
        with pytest.raises(InvalidStatus) as refused:
            raw_connect(chain, "sk-a")
        assert refused.value.response.status_code == 429
        body = json.loads(refused.value.response.body)
        assert body["error"]["code"] == "too_many_connections"
        # Counted as a budget reached, once.
        metrics = urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            chain.bridge.url + "/metrics", timeout=5).read().decode()
        assert 'wirebridge_budget_refusals_total{kind="websocket_connections"} 1' in metrics.splitlines(), metrics
        # Another credential has its own cap.
        other = raw_connect(chain, "sk-b")
        # A place comes back when a connection ends.
        first.close()
        deadline = time.monotonic() + 5
        while True:
            try:
                third = raw_connect(chain, "sk-a")
                break
            except InvalidStatus:
                assert time.monotonic() < deadline, "the closed connection's place never came back"
                time.sleep(0.05)
        for connection in (second, other, third):
            connection.close()
    finally:
        harness.stop_checked(chain)


def test_a_connection_past_its_age_closes_after_its_turn(wirebridge, log_dir, spec):
    chain = harness.start_chain(log_dir, "ws-age", "chat", extra=["--websocket-max-age", "1s"])
    try:
        with connect(chain) as connection:
            # A turn running at the limit ends first.
            connection.response.create(model="demo", input="demo:slow 200 " + " ".join(["word"] * 10))
            response = completed(turn(connection, spec))
            assert response["status"] == "completed"
            started = time.monotonic()
            with pytest.raises(Exception) as closed:
                connection.recv_bytes()
            assert time.monotonic() - started < 5
        assert "age limit" in str(closed.value), repr(closed.value)
    finally:
        harness.stop_checked(chain)


def test_turns_in_a_conversation_over_a_websocket(chain, spec):
    """`conversation` on `response.create`: each turn reaches the upstream
    after the conversation's items, and adds its own to it, as over HTTP."""
    client = harness.client(chain)
    conversation = client.conversations.create(items=[{"role": "user", "content": "My name is Ada."}])
    mark = chain.tap.mark()
    with connect(chain) as connection:
        first = completed(turn_after(connection, spec, model="demo", input="Who am I?",
                                     conversation=conversation.id))
        assert first["conversation"] == {"id": conversation.id}
        second = completed(turn_after(connection, spec, model="demo", input="Again?",
                                      conversation={"id": conversation.id}))
    sent = [c for c in chain.tap.since(mark) if c.path.endswith(("/chat/completions", "/responses"))]
    assert user_texts(sent[0]) == ["My name is Ada.", "Who am I?"]
    assert user_texts(sent[1]) == ["My name is Ada.", "Who am I?", "Again?"]
    items = list(client.conversations.items.list(conversation.id, order="asc"))
    assert [item.role for item in items] == ["user", "user", "assistant", "user", "assistant"]
    assert items[-1].id == second["output"][0]["id"]


def test_a_background_response_is_not_run_over_a_websocket(chain, spec):
    """A WebSocket turn is answered on its connection: `background` is
    refused there (an error event naming it), and the connection goes on."""
    with connect(chain) as connection:
        events = turn_after(connection, spec, model="demo", input="x", background=True)
        assert events[-1]["type"] == "error", events[-1]
        assert events[-1]["error"]["param"] == "background", events[-1]
        assert "hello" in text(completed(turn_after(connection, spec, model="demo", input="hello")))
