"""Compaction in front of a Chat backend, with the official SDK against the
real binary: `client.responses.compact(...)`, a follow-up turn that carries
the compaction item (on another replica with the same seal key), an item
the bridge cannot open, a missing model, `compaction_trigger` and
`context_management`. The upstream is a scripted Chat server that answers
from a queue and records what it receives; every Response and
CompactResource the bridge emits is validated against both spec files."""

from __future__ import annotations

import base64
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest

import harness
import schema

validate = harness.validate

SUMMARY = "The user asked for a haiku about the sea; the draft 'Waves fold into foam' counts five syllables."
ANSWER = "Salt wind combs the dunes."

CONVERSATION = [
    {"role": "user", "content": "Write a haiku about the sea."},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Waves fold into foam"}]},
    {"type": "function_call", "call_id": "call_1", "name": "count_syllables", "arguments": '{"line":"Waves fold into foam"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "5"},
]


class ScriptedChat:
    """A Chat Completions server answering each request with the next text
    of its script (as a body, or as a stream when asked), `/tokenize` with
    `tokens`, and `GET /v1/models` (the bridge checking a credential) with
    a list; it records every POST."""

    def __init__(self) -> None:
        self.requests: list[harness.Captured] = []
        self.script: list[str] = []
        self.tokens = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                data = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with owner._lock:
                    owner.requests.append(harness.Captured("POST", self.path, headers, data))
                    text = owner.script.pop(0) if owner.script else None
                if self.path.endswith("/tokenize"):
                    self._send(200, "application/json", json.dumps({"count": owner.tokens}).encode())
                    return
                if text is None:
                    error = {"error": {"message": "nothing scripted", "type": "server_error"}}
                    self._send(500, "application/json", json.dumps(error).encode())
                    return
                body = json.loads(data)
                usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
                if body.get("stream"):
                    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
                             "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]}
                    end = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage}
                    stream = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(end)}\n\ndata: [DONE]\n\n"
                    self._send(200, "text/event-stream", stream.encode())
                    return
                reply = {"id": "c", "object": "chat.completion", "created": 1, "model": body["model"],
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                         "usage": usage}
                self._send(200, "application/json", json.dumps(reply).encode())

            def do_GET(self):  # noqa: N802 (http.server's naming)
                if not self.path.endswith("/models"):
                    self._send(404, "application/json", b'{"error":{"message":"not found"}}')
                    return
                models = {"object": "list", "data": [{"id": "m", "object": "model", "created": 1, "owned_by": "o"}]}
                self._send(200, "application/json", json.dumps(models).encode())

            def _send(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, *texts: str) -> None:
        with self._lock:
            self.script = list(texts)

    def mark(self) -> int:
        return len(self.requests)

    def since(self, mark: int) -> list[harness.Captured]:
        return self.requests[mark:]

    def chat_since(self, mark: int) -> list[dict]:
        return [r.json() for r in self.since(mark) if r.path.endswith("/chat/completions")]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


KEY = base64.b64encode(os.urandom(32)).decode()


def start(log_dir, name: str, upstream: ScriptedChat, key: str = KEY, profile: str | None = None,
          extra: list[str] | None = None) -> harness.Chain:
    bridge = harness.start_bridge(log_dir, name, upstream.url + "/v1", "chat", profile, extra,
                                  env={"WIREBRIDGE_SEAL_KEY": key})
    return harness.Chain(name, bridge, upstream)


@pytest.fixture(scope="module")
def upstream():
    server = ScriptedChat()
    yield server
    server.close()


@pytest.fixture(scope="module")
def bridge(wirebridge, log_dir, upstream):
    chain = start(log_dir, "compaction", upstream)
    yield chain
    alive = chain.bridge.alive()
    code = chain.bridge.stop()
    log = chain.bridge.log()
    assert alive and code == 0 and "panicked" not in log, log[-4000:]


@pytest.fixture(scope="module")
def replica(wirebridge, log_dir, upstream):
    """A second bridge with the same seal key."""
    chain = start(log_dir, "compaction-replica", upstream)
    yield chain
    assert chain.bridge.alive()
    chain.bridge.stop()


def assert_valid_compaction(spec, body: dict) -> None:
    """A CompactResource, against both spec files."""
    for doc in (validate.OPENAI_URI, validate.OPEN_RESPONSES_URI):
        errors = spec.errors(body, "CompactResource", doc)
        assert not errors, schema._report(errors, f"the compaction {json.dumps(body)[:2000]} ({doc})")


def roles_and_texts(chat: dict) -> list[tuple[str, str]]:
    return [(m["role"], m.get("content") or "") for m in chat["messages"]]


def test_compact_then_continue_on_another_replica(bridge, replica, upstream, spec):
    client = harness.client(bridge)
    upstream.answer(SUMMARY)
    mark = upstream.mark()
    raw = client.responses.with_raw_response.compact(
        model="m", instructions="You are a poet.", input=CONVERSATION
    )
    assert raw.http_response.status_code == 200
    assert_valid_compaction(spec, json.loads(raw.http_response.text))
    compacted = raw.parse()
    assert compacted.object == "response.compaction"
    assert [item.type for item in compacted.output] == ["message", "compaction"]
    assert compacted.output[0].role == "user"
    assert compacted.output[0].content[0].text == "Write a haiku about the sea."
    item = compacted.output[1]
    assert item.id and item.encrypted_content
    assert "haiku" not in item.encrypted_content, "the summary travels sealed"
    assert compacted.usage.total_tokens == 60

    # One non-streaming Chat request: the conversation, then an instruction.
    (summary_request,) = upstream.chat_since(mark)
    assert not summary_request.get("stream")
    roles = [m["role"] for m in summary_request["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"], roles
    assert summary_request["messages"][0]["content"] == "You are a poet."
    assert summary_request["messages"][2]["tool_calls"][0]["id"] == "call_1"
    instruction = summary_request["messages"][-1]["content"]
    assert "summary" in instruction.lower()

    # The next turn, on the other replica: the summary in place of the item.
    other = harness.client(replica)
    upstream.answer(ANSWER)
    mark = upstream.mark()
    # The SDK types the kept user messages as assistant output messages (as it
    # does for OpenAI's own compactions): dump them as they came, unwarned.
    follow_up = [entry.model_dump(exclude_none=True, warnings=False) for entry in compacted.output]
    follow_up.append({"role": "user", "content": "Now a second stanza."})
    raw = other.responses.with_raw_response.create(model="m", input=follow_up)
    assert raw.headers.get("x-wirebridge-dropped") is None
    schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    response = raw.parse()
    assert response.output_text == ANSWER

    (chat,) = upstream.chat_since(mark)
    sent = roles_and_texts(chat)
    assert len(sent) == 3, sent
    assert sent[0] == ("user", "Write a haiku about the sea.")
    role, text = sent[1]
    assert role == "user" and text.endswith(SUMMARY), sent[1]
    assert "Waves fold into foam" not in text.replace(SUMMARY, ""), "no earlier reply, only the summary"
    assert sent[2] == ("user", "Now a second stanza.")
    assert all(m["role"] != "assistant" and "tool_calls" not in m for m in chat["messages"])


def test_a_tampered_compaction_is_dropped_and_reported(bridge, upstream, spec):
    client = harness.client(bridge)
    upstream.answer(SUMMARY)
    compacted = client.responses.compact(model="m", input=CONVERSATION)
    item = compacted.output[-1].model_dump(exclude_none=True)
    sealed = item["encrypted_content"]
    item["encrypted_content"] = sealed[:-6] + ("A" if sealed[-6] != "A" else "B") + sealed[-5:]

    upstream.answer(ANSWER)
    mark = upstream.mark()
    raw = client.responses.with_raw_response.create(
        model="m", input=[item, {"role": "user", "content": "Go on."}]
    )
    assert raw.http_response.status_code == 200
    assert raw.headers["x-wirebridge-dropped"] == "input[0].encrypted_content"
    schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    (chat,) = upstream.chat_since(mark)
    assert roles_and_texts(chat) == [("user", "Go on.")], "nothing stands in for what cannot be read"


def test_compact_without_a_model_is_a_400_naming_it(bridge, upstream, spec):
    client = harness.client(bridge)
    mark = upstream.mark()
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.compact(model=None, input=CONVERSATION)
    error = raised.value.response.json()
    schema.assert_valid_body(spec, 400, raised.value.response.text, "responses")
    assert error["error"]["param"] == "model"
    assert error["error"]["type"] == "invalid_request_error"
    assert upstream.since(mark) == [], "the upstream is not called"


def trigger_input() -> list:
    return [*CONVERSATION, {"type": "compaction_trigger"}]


def test_compaction_trigger_produces_exactly_one_compaction_item(bridge, upstream, spec):
    client = harness.client(bridge)
    upstream.answer(SUMMARY)
    mark = upstream.mark()
    raw = client.responses.with_raw_response.create(model="m", input=trigger_input())
    schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    response = raw.parse()
    assert response.status == "completed"
    assert [item.type for item in response.output] == ["compaction"]
    assert len(upstream.chat_since(mark)) == 1, "the summary only: the turn does not also reply"

    # Streamed: the item arrives through output_item.added / output_item.done.
    upstream.answer(SUMMARY)
    status, content_type, text = harness.post_direct(
        bridge.base_url + "/responses",
        json.dumps({"model": "m", "input": trigger_input(), "stream": True}).encode(),
    )
    assert status == 200 and content_type.startswith("text/event-stream")
    events = schema.assert_valid_stream(spec, text, "responses")
    added = [e for e in events if e["type"] == "response.output_item.added"]
    done = [e for e in events if e["type"] == "response.output_item.done"]
    assert [e["item"]["type"] for e in added] == ["compaction"]
    assert [e["item"]["type"] for e in done] == ["compaction"]
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["output"] == [done[0]["item"]]

    # The SDK's stream accumulator takes it too.
    upstream.answer(SUMMARY)
    with client.responses.stream(model="m", input=trigger_input()) as stream:
        final = stream.get_final_response()
    assert [item.type for item in final.output] == ["compaction"]

    # The item continues the conversation like one from /responses/compact.
    upstream.answer(ANSWER)
    mark = upstream.mark()
    follow_up = [*CONVERSATION, final.output[0].model_dump(exclude_none=True),
                 {"role": "user", "content": "Again."}]
    assert client.responses.create(model="m", input=follow_up).output_text == ANSWER
    (chat,) = upstream.chat_since(mark)
    sent = roles_and_texts(chat)
    assert [role for role, _ in sent] == ["user", "user", "user"], sent
    assert sent[1][1].endswith(SUMMARY)


def test_a_compaction_trigger_that_is_not_last_is_a_400_naming_it(bridge, upstream, spec):
    client = harness.client(bridge)
    mark = upstream.mark()
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model="m", input=[*trigger_input(), {"role": "user", "content": "more"}])
    schema.assert_valid_body(spec, 400, raised.value.response.text, "responses")
    assert raised.value.response.json()["error"]["param"] == "input[4]"
    assert upstream.since(mark) == []


def managed(threshold) -> list:
    return [{"type": "compaction", "compact_threshold": threshold}]


def test_context_management_compacts_past_its_threshold(bridge, upstream, spec):
    client = harness.client(bridge)

    # Small: answered as it is.
    upstream.answer(ANSWER)
    mark = upstream.mark()
    raw = client.responses.with_raw_response.create(
        model="m", input=CONVERSATION, context_management=managed(1000)
    )
    assert raw.headers.get("x-wirebridge-dropped") is None, "acted on, not dropped"
    schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    assert [item.type for item in raw.parse().output] == ["message"]
    assert len(upstream.chat_since(mark)) == 1

    # Past the threshold (estimated at 4 bytes a token): summarized first.
    long = "and the tide returns " * 250
    conversation = [*CONVERSATION, {"role": "user", "content": long}]
    upstream.answer(SUMMARY, ANSWER)
    mark = upstream.mark()
    status, _, text = harness.post_direct(
        bridge.base_url + "/responses",
        json.dumps({"model": "m", "input": conversation, "stream": True,
                    "context_management": managed(1000)}).encode(),
    )
    assert status == 200
    events = schema.assert_valid_stream(spec, text, "responses")
    final = events[-1]["response"]
    assert [item["type"] for item in final["output"]] == ["compaction", "message"]
    assert final["output"][1]["content"][0]["text"] == ANSWER
    added = [e for e in events if e["type"] == "response.output_item.added"]
    assert [(e["output_index"], e["item"]["type"]) for e in added] == [(0, "compaction"), (1, "message")]
    assert final["usage"]["total_tokens"] == 120, "the summary's tokens and the reply's"

    summary_request, reply_request = upstream.chat_since(mark)
    assert not summary_request.get("stream")
    assert reply_request["stream"] is True
    sent = roles_and_texts(reply_request)
    assert sent[:2] == [("user", "Write a haiku about the sea."), ("user", long)], sent[:2]
    assert sent[2][0] == "user" and sent[2][1].endswith(SUMMARY)
    assert len(sent) == 3, "the reply, the call and its result are in the summary"

    # The SDK, with the compacted output fed back as the docs say.
    upstream.answer(SUMMARY, ANSWER)
    response = client.responses.create(model="m", input=conversation, context_management=managed(1000))
    assert [item.type for item in response.output] == ["compaction", "message"]
    upstream.answer(ANSWER)
    mark = upstream.mark()
    follow_up = [*conversation, *(item.model_dump(exclude_none=True) for item in response.output),
                 {"role": "user", "content": "Thanks."}]
    client.responses.create(model="m", input=follow_up)
    (chat,) = upstream.chat_since(mark)
    sent = roles_and_texts(chat)
    assert [role for role, _ in sent] == ["user", "user", "user", "assistant", "user"], sent
    assert sent[2][1].endswith(SUMMARY) and sent[3][1] == ANSWER


def conversation_types(client, conversation_id: str) -> list[str]:
    """The types of a conversation's items, oldest first, as the bridge lists them."""
    raw = client.conversations.items.with_raw_response.list(conversation_id, order="asc", limit=100)
    return [item["type"] for item in raw.http_response.json()["data"]]


@pytest.mark.parametrize("stream", [False, True])
def test_a_turn_in_a_conversation_compacts_past_its_threshold(bridge, upstream, spec, stream):
    """`conversation` and `context_management` together: the conversation's
    items are what is measured and summarized, the turn joins the
    conversation with its compaction item, and the next turn of the
    conversation is sent the summary in place of what it stands for."""
    client = harness.client(bridge)
    conversation = client.conversations.create(items=CONVERSATION)
    long = "and the tide returns " * 250
    upstream.answer(SUMMARY, ANSWER)
    mark = upstream.mark()
    raw = client.responses.with_raw_response.create(
        model="m", conversation=conversation.id, input=long, context_management=managed(1000),
        stream=stream,
    )
    text = raw.http_response.read().decode()
    assert raw.http_response.status_code == 200, text
    assert raw.headers.get("x-wirebridge-dropped") is None, raw.headers.get("x-wirebridge-dropped")
    if stream:
        events = schema.assert_valid_stream(spec, text, "responses")
        final = events[-1]["response"]
    else:
        schema.assert_valid_body(spec, 200, text, "responses")
        final = json.loads(text)
    assert [item["type"] for item in final["output"]] == ["compaction", "message"]
    assert final["conversation"]["id"] == conversation.id

    summary_request, reply_request = upstream.chat_since(mark)
    summarized = roles_and_texts(summary_request)
    assert summarized[0] == ("user", "Write a haiku about the sea."), summarized
    assert ("user", long) in summarized, "the turn's own input is summarized with the conversation"
    sent = roles_and_texts(reply_request)
    assert sent[:2] == [("user", "Write a haiku about the sea."), ("user", long)], sent[:2]
    assert sent[2][0] == "user" and sent[2][1].endswith(SUMMARY)
    assert len(sent) == 3, sent

    types = conversation_types(client, conversation.id)
    assert types[:len(CONVERSATION)] == [item.get("type", "message") for item in CONVERSATION], types
    assert types[len(CONVERSATION):] == ["message", "compaction", "message"], types

    upstream.answer(ANSWER)
    mark = upstream.mark()
    client.responses.create(model="m", conversation=conversation.id, input="Thanks.")
    (chat,) = upstream.chat_since(mark)
    sent = roles_and_texts(chat)
    assert [role for role, _ in sent] == ["user", "user", "user", "assistant", "user"], sent
    assert sent[2][1].endswith(SUMMARY) and sent[3][1] == ANSWER and sent[4][1] == "Thanks."


def test_a_threshold_below_1000_is_a_400_naming_it(bridge, upstream, spec):
    client = harness.client(bridge)
    mark = upstream.mark()
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model="m", input="hi", context_management=managed(999))
    schema.assert_valid_body(spec, 400, raised.value.response.text, "responses")
    assert raised.value.response.json()["error"]["param"] == "context_management[0].compact_threshold"
    assert upstream.since(mark) == []
