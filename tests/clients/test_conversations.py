"""The Conversations API with the official SDK and the Agents SDK against
the real binary, in front of the demo upstream speaking Chat and speaking a
Responses API that keeps no state: conversations created, read, updated,
listed in pages, extended by hand and by responses, deleted; items read and
deleted; another credential finds nothing. Every object the bridge answers
is checked against the OpenAPI spec's schema for it, and what the upstream
is sent is read from the tap: a turn in a conversation reaches the backend
with the conversation's items before its own input."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest

import harness
import schema


@pytest.fixture(scope="module", params=["chat", "responses"])
def chain(request, log_dir):
    api = request.param
    chain = harness.start_chain(log_dir, f"conversations-{api}", api)
    chain.api = api
    yield chain
    harness.stop_checked(chain)


def valid(spec, raw, name: str) -> dict:
    """The body of a raw SDK response, valid against schema `name`."""
    assert raw.http_response.status_code == 200, raw.http_response.text
    body = json.loads(raw.http_response.text)
    errors = spec.errors(body, name)
    assert not errors, f"{name}: {errors[:5]}\n{raw.http_response.text[:2000]}"
    return body


def upstream_texts(chain, mark: int) -> list[str]:
    """The text of each message (or item) of the one request the upstream got
    since `mark`."""
    (sent,) = [c.json() for c in chain.tap.since(mark)
               if c.path.endswith(("/chat/completions", "/responses"))]
    entries = sent["messages"] if chain.api == "chat" else sent["input"]
    assert "conversation" not in sent, sent
    texts = []
    for entry in entries:
        content = entry.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        texts.append(content or entry.get("output") or entry.get("type") or "")
    return texts


def item_texts(items) -> list[str]:
    return ["".join(getattr(part, "text", "") for part in item.content) for item in items]


def test_a_conversation_is_created_read_updated_and_deleted(chain, spec):
    client = harness.client(chain)
    raw = client.conversations.with_raw_response.create(
        items=[{"role": "user", "content": "Hello"},
               {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi!"}]}],
        metadata={"topic": "greetings"},
    )
    created = valid(spec, raw, "ConversationResource")
    assert created["id"].startswith("conv_")
    assert created["metadata"] == {"topic": "greetings"}
    conversation_id = created["id"]

    raw = client.conversations.with_raw_response.retrieve(conversation_id)
    assert valid(spec, raw, "ConversationResource") == created

    raw = client.conversations.with_raw_response.update(conversation_id, metadata={"topic": "other"})
    updated = valid(spec, raw, "ConversationResource")
    assert updated["metadata"] == {"topic": "other"}
    assert updated["created_at"] == created["created_at"]

    raw = client.conversations.items.with_raw_response.list(conversation_id, order="asc")
    listed = valid(spec, raw, "ConversationItemList")
    assert [item["role"] for item in listed["data"]] == ["user", "assistant"]
    # Short forms are listed in full.
    assert listed["data"][0]["content"] == [{"type": "input_text", "text": "Hello"}]
    assert listed["data"][0]["status"] == "completed"
    assert listed["first_id"] == listed["data"][0]["id"] and not listed["has_more"]

    raw = client.conversations.with_raw_response.delete(conversation_id)
    assert valid(spec, raw, "DeletedConversationResource") == {
        "id": conversation_id, "object": "conversation.deleted", "deleted": True}
    with pytest.raises(openai.NotFoundError):
        client.conversations.retrieve(conversation_id)
    with pytest.raises(openai.NotFoundError):
        client.conversations.items.list(conversation_id)


def test_items_are_added_paged_read_and_deleted(chain, spec):
    client = harness.client(chain)
    conversation = client.conversations.create()
    assert conversation.metadata in ({}, None)
    raw = client.conversations.items.with_raw_response.create(
        conversation.id, items=[{"role": "user", "content": f"item {n}"} for n in range(5)])
    added = valid(spec, raw, "ConversationItemList")
    assert [item["content"][0]["text"] for item in added["data"]] == [f"item {n}" for n in range(5)]

    # Newest first by default; the SDK's pager follows `after`.
    first_page = client.conversations.items.list(conversation.id, limit=2)
    assert item_texts(first_page.data) == ["item 4", "item 3"] and first_page.has_more
    every = [item for item in client.conversations.items.list(conversation.id, limit=2)]
    assert item_texts(every) == [f"item {n}" for n in (4, 3, 2, 1, 0)]
    ascending = client.conversations.items.list(conversation.id, order="asc", after=every[2].id)
    assert item_texts(ascending.data) == ["item 3", "item 4"]

    raw = client.conversations.items.with_raw_response.retrieve(every[0].id, conversation_id=conversation.id)
    assert valid(spec, raw, "ConversationItem")["id"] == every[0].id
    raw = client.conversations.items.with_raw_response.delete(every[0].id, conversation_id=conversation.id)
    assert valid(spec, raw, "ConversationResource")["id"] == conversation.id
    with pytest.raises(openai.NotFoundError):
        client.conversations.items.retrieve(every[0].id, conversation_id=conversation.id)
    assert len(client.conversations.items.list(conversation.id).data) == 4

    # What is not an item is refused, naming the field.
    with pytest.raises(openai.BadRequestError) as refused:
        client.conversations.items.create(conversation.id, items=[{"role": "robot", "content": "x"}])
    assert refused.value.body["param"] == "items[0]"
    with pytest.raises(openai.BadRequestError) as refused:
        client.conversations.items.create(
            conversation.id, items=[{"role": "user", "content": "x"}] * 21)
    assert refused.value.body["param"] == "items"
    with pytest.raises(openai.BadRequestError) as refused:
        client.conversations.items.list(conversation.id, after="msg_nowhere")
    assert refused.value.body["param"] == "after"
    with pytest.raises(openai.BadRequestError) as refused:
        client.conversations.update(conversation.id, metadata={"k": "v" * 513})
    assert refused.value.body["param"] == "metadata"


def test_responses_in_a_conversation_see_it_and_extend_it(chain, spec):
    client = harness.client(chain)
    conversation = client.conversations.create(items=[{"role": "user", "content": "My name is Ada."}])

    mark = chain.tap.mark()
    raw = client.responses.with_raw_response.create(
        model="demo", input="What is my name?", conversation=conversation.id)
    body = schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    assert body["conversation"] == {"id": conversation.id}
    assert upstream_texts(chain, mark) == ["My name is Ada.", "What is my name?"]
    first = raw.parse()

    # Streamed, naming the conversation as an object.
    mark = chain.tap.mark()
    with client.responses.stream(model="demo", input="Thanks.", conversation={"id": conversation.id}) as stream:
        second = stream.get_final_response()
    assert second.conversation.id == conversation.id
    assert upstream_texts(chain, mark) == ["My name is Ada.", "What is my name?", first.output_text, "Thanks."]

    items = list(client.conversations.items.list(conversation.id, order="asc"))
    assert [item.type for item in items] == ["message"] * 5
    assert item_texts(items) == ["My name is Ada.", "What is my name?", first.output_text,
                                 "Thanks.", second.output_text]
    assert items[2].id == first.output[0].id
    # The responses themselves are kept too.
    assert client.responses.retrieve(first.id).conversation.id == conversation.id

    # An item added by hand is history for the next turn.
    client.conversations.items.create(conversation.id, items=[{"role": "user", "content": "By hand."}])
    mark = chain.tap.mark()
    client.responses.create(model="demo", input="Last.", conversation=conversation.id, store=False)
    assert upstream_texts(chain, mark)[-2:] == ["By hand.", "Last."]
    # A response not stored still adds its turn to the conversation.
    assert len(client.conversations.items.list(conversation.id).data) == 8


def test_a_conversation_is_refused_where_it_cannot_be_used(chain):
    client = harness.client(chain)
    conversation = client.conversations.create()
    first = client.responses.create(model="demo", input="Hi")
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="demo", input="x", conversation=conversation.id,
                                previous_response_id=first.id)
    assert refused.value.body["param"] == "conversation"
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.create(model="demo", input="x", conversation="conv_nowhere")
    assert missing.value.body["param"] == "conversation"


def test_another_credential_finds_nothing(chain):
    alice = harness.client(chain)
    conversation = alice.conversations.create(items=[{"role": "user", "content": "secret"}])
    mallory = openai.OpenAI(base_url=chain.base_url, api_key="sk-mallory", max_retries=0, timeout=20,
                            http_client=openai.DefaultHttpxClient(trust_env=False))
    for attempt in (
        lambda: mallory.conversations.retrieve(conversation.id),
        lambda: mallory.conversations.items.list(conversation.id),
        lambda: mallory.conversations.items.create(conversation.id, items=[{"role": "user", "content": "x"}]),
        lambda: mallory.conversations.update(conversation.id, metadata={"a": "b"}),
        lambda: mallory.conversations.delete(conversation.id),
        lambda: mallory.responses.create(model="demo", input="x", conversation=conversation.id),
    ):
        with pytest.raises(openai.NotFoundError):
            attempt()
    assert item_texts(alice.conversations.items.list(conversation.id).data) == ["secret"]


def test_the_agents_sdk_keeps_its_session_in_a_conversation(chain, monkeypatch):
    """`OpenAIConversationsSession` creates a conversation, reads it before
    each run and adds each run's items; `conversation_id` on a run lets the
    server keep the history instead."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    import agents
    from agents.memory import OpenAIConversationsSession

    agents.set_tracing_disabled(True)
    client = harness.async_client(chain)
    model = agents.OpenAIResponsesModel(model="demo", openai_client=client)
    assistant = agents.Agent(name="assistant", instructions="Answer briefly.", model=model)

    async def run():
        session = OpenAIConversationsSession(openai_client=client)
        first = await agents.Runner.run(assistant, "My name is Ada.", session=session)
        second = await agents.Runner.run(assistant, "What is my name?", session=session)
        items = await session.get_items()
        conversation = await client.conversations.create()
        streamed = agents.Runner.run_streamed(assistant, "Remember me.", conversation_id=conversation.id)
        async for _ in streamed.stream_events():
            pass
        again = await agents.Runner.run(assistant, "Who am I?", conversation_id=conversation.id)
        kept = [item async for item in client.conversations.items.list(conversation.id, order="asc")]
        return session.session_id, first, second, items, streamed, again, kept

    mark = chain.tap.mark()
    session_id, first, second, items, streamed, again, kept = asyncio.run(asyncio.wait_for(run(), 60))
    assert session_id.startswith("conv_")
    assert first.final_output and second.final_output
    texts = [item["content"] if isinstance(item["content"], str) else item["content"][0]["text"]
             for item in items]
    assert texts == ["My name is Ada.", first.final_output, "What is my name?", second.final_output]
    # With `conversation_id`, the bridge kept the history and sent it whole.
    assert [item.role for item in kept] == ["user", "assistant", "user", "assistant"]
    assert item_texts(kept)[0] == "Remember me." and item_texts(kept)[2] == "Who am I?"
    (last,) = [c.json() for c in chain.tap.since(mark)
               if c.path.endswith(("/chat/completions", "/responses"))][-1:]
    entries = last["messages"] if chain.api == "chat" else last["input"]
    assert len([e for e in entries if e.get("role") == "user"]) == 2, entries


def test_turns_run_at_once_lose_no_item(chain):
    """Eight responses in one conversation at once: each saw the
    conversation as it began, and all their items are kept, each turn's
    input followed by its answer."""
    from concurrent.futures import ThreadPoolExecutor

    client = harness.client(chain)
    conversation = client.conversations.create()

    def turn(n: int):
        return client.responses.create(model="demo", input=f"Turn {n}", conversation=conversation.id)

    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(turn, range(8)))
    items = list(client.conversations.items.list(conversation.id, order="asc", limit=100))
    texts = item_texts(items)
    assert len(texts) == 16, texts
    answers = {r.output_text for r in responses}
    for question, answer in zip(texts[::2], texts[1::2]):
        assert question.startswith("Turn "), texts
        assert answer in answers, texts
    assert sorted(texts[::2]) == sorted(f"Turn {n}" for n in range(8))


def test_made_up_keys_do_not_evict_a_real_tenants_conversation(log_dir):
    """A conversation is kept only under a credential the backend accepts:
    the bridge asks it once per credential (`GET /v1/models` with that
    credential) before the first write. Against a backend that accepts one
    key, a new client whose first call creates a conversation gets it, and
    40 made-up keys writing conversations with items are each refused with
    the backend's 401: the real tenant's conversation, in a store that keeps
    4 tenants, is still there."""
    body = json.dumps({"error": {"message": "Incorrect API key provided.",
                                 "type": "invalid_request_error", "param": None,
                                 "code": "invalid_api_key"}}).encode()
    static = harness.StaticUpstream(401, body, accepts="Bearer sk-wirebridge-test")
    chain = harness.start_chain(log_dir, "conversations-made-up-keys", "chat", static=static,
                                extra=["--store-max-tenants", "4"])
    try:
        real = harness.client(chain)
        created = real.conversations.create(items=[{"role": "user", "content": "Keep me"}])
        real.conversations.items.create(created.id, items=[{"role": "user", "content": "And me"}])
        import httpx
        with httpx.Client(base_url=chain.base_url, trust_env=False, timeout=10.0) as http:
            replies = [http.post("conversations", json={"items": [{"role": "user", "content": "x" * 1000}]},
                                 headers={"authorization": f"Bearer sk-made-up-{n}"})
                       for n in range(40)]
        assert real.conversations.retrieve(created.id).id == created.id
        for reply in replies:
            assert reply.status_code == 401, reply.text
            assert reply.json()["error"]["code"] == "invalid_api_key", reply.text
        asked = [(c.method, c.path, c.headers.get("authorization")) for c in static.requests]
        # The real key once, at its first write; each made-up key at its own.
        assert asked == [("GET", "/v1/models", "Bearer sk-wirebridge-test")] + [
            ("GET", "/v1/models", f"Bearer sk-made-up-{n}") for n in range(40)]
        texts = item_texts(real.conversations.items.list(created.id, order="asc").data)
        assert texts == ["Keep me", "And me"]
    finally:
        harness.stop_checked(chain)


def test_a_refused_write_keeps_the_connection(log_dir):
    """A refused create is answered once its body is read: the client's
    kept-alive connection serves the next request."""
    import http.client
    import urllib.parse

    static = harness.StaticUpstream(401, b'{"error":{"message":"no","type":"invalid_request_error"}}')
    chain = harness.start_chain(log_dir, "conversations-refused-keepalive", "chat", static=static)
    try:
        url = urllib.parse.urlsplit(chain.base_url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        body = json.dumps({"items": [{"role": "user", "content": "x" * 200_000}]})
        connection.request("POST", f"{url.path}/conversations", body=body,
                           headers={"authorization": "Bearer sk-made-up", "content-type": "application/json"})
        socket = connection.sock
        reply = connection.getresponse()
        assert reply.status == 401
        reply.read()
        assert reply.getheader("connection") != "close"
        assert connection.sock is socket
        connection.request("GET", f"{url.path}/conversations/conv_1", headers={"authorization": "Bearer sk-made-up"})
        assert connection.sock is socket
        assert connection.getresponse().status == 404
        connection.close()
    finally:
        harness.stop_checked(chain)


def test_a_refused_credential_keeps_no_conversation(log_dir):
    """Against a backend that refuses the credential, creating a conversation
    is the backend's own 401, in OpenAI's shape, and nothing is kept."""
    body = json.dumps({"error": {"message": "Incorrect API key provided: sk-wire***test.",
                                 "type": "invalid_request_error", "param": None,
                                 "code": "invalid_api_key"}}).encode()
    static = harness.StaticUpstream(401, body)
    chain = harness.start_chain(log_dir, "conversations-refused-key", "chat", static=static)
    try:
        client = harness.client(chain)
        with pytest.raises(openai.AuthenticationError) as refused:
            client.conversations.create(items=[{"role": "user", "content": "Hello"}])
        assert refused.value.status_code == 401
        assert refused.value.code == "invalid_api_key"
        assert "Incorrect API key provided" in refused.value.message
        (probe,) = static.requests
        assert (probe.method, probe.path) == ("GET", "/v1/models")
        assert probe.headers["authorization"] == "Bearer sk-wirebridge-test"
    finally:
        harness.stop_checked(chain)


def test_trusted_credentials_are_not_checked(log_dir):
    """With `--trust-credentials` (a deployment that authenticates in front
    of the bridge), a conversation is kept without asking the backend."""
    static = harness.StaticUpstream(401, b'{"error":{"message":"no","type":"invalid_request_error"}}')
    chain = harness.start_chain(log_dir, "conversations-trusted", "chat", static=static,
                                extra=["--trust-credentials"])
    try:
        client = harness.client(chain)
        created = client.conversations.create(items=[{"role": "user", "content": "Hello"}])
        assert client.conversations.retrieve(created.id).id == created.id
        assert static.requests == []
    finally:
        harness.stop_checked(chain)
