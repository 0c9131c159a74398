"""A Chat client over a Responses upstream that replays a recorded
Responses stream or body (`wirebridge demo --api responses --replay FILE`,
`*.chunks.txt` framed as SSE): every chunk parses into the SDK's typed
class, `chat.completions.stream()` accumulates the final completion, the
content equals the recording's, and every object the bridge emits (and the
request it sends upstream) is valid against the official spec.

Recordings with known quirks:

* `openai-reasoning-encrypted-content.1.chunks.txt` concatenates four
  responses (one `response.created` each): it is split into four streams,
  each replayed on its own.
* `openai-phase.1.chunks.txt` was trimmed where it was recorded: most text
  deltas are missing (`sequence_number` jumps 5→41 and 52→126), so the
  deltas do not add up to the items' final text. A streaming Chat client
  gets the deltas, so its content is compared with the deltas; the two
  messages (phase `commentary`, then `final_answer`) are one Chat content.
* `openai-error.1.chunks.txt` fails in the stream (nested `error` event,
  `response.failed`): the SDK must raise `APIError` with the upstream's
  message.
* `openai-web-search-tool.1.chunks.txt`: hosted `web_search_call` items have
  no Chat equivalent and are left out; the text and its usage are carried.
* `github-copilot-id-rotation.1.chunks.txt`: not OpenAI; item ids change
  between the events of one item.
* Reasoning (summaries, encrypted content) is left out of Chat answers: the
  bridge serves the strict Chat shape by default.
* `recorded/llama-server/responses-stream-text.sse`: llama-server's own
  Responses endpoint, not OpenAI: no `sequence_number`, `output_index` or
  `content_index`, and `response.created` names no model. Chat chunks go
  out before the model is known, so they name the requested one.

The hand-made streams of `tests/handmade/` (see its README: backends'
orders no recording holds) interleave their output items: a message done
inside a reasoning item, an `mcp_list_tools` item never done, two items'
events in turns. A Responses client (openai SDK) and a Messages client
(anthropic SDK) read each one, streamed and not, without error, one item
at a time.
"""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

import checks
import drive
import harness
import recorded
import schema

RESPONSES_DIR = harness.FIXTURES / "vercel-ai" / "responses"
CONCATENATED = RESPONSES_DIR / "openai-reasoning-encrypted-content.1.chunks.txt"
TRIMMED = {"openai-phase.1.chunks.txt"}
STREAMS = sorted(p for p in RESPONSES_DIR.glob("*.chunks.txt") if p != CONCATENATED)
# (source, part): the parts are written to a temporary directory when used.
STREAM_CASES = [(p, None) for p in STREAMS] + [(CONCATENATED, n) for n in range(1, 5)]
BODIES = sorted(p for p in RESPONSES_DIR.glob("*.json") if p.name != "openai-error.1.json")
# The project's own recordings of real Responses servers (tests/recorded/SERVER/).
OWN_STREAMS = harness.recorded_answers("responses-stream-*.sse")
OWN_BODIES = harness.recorded_answers("responses-json-*.json")
STREAM_CASES += [(p, None) for p in OWN_STREAMS]


def path_id(path) -> str:
    if path.is_relative_to(harness.RECORDED):
        return "recorded/" + str(path.relative_to(harness.RECORDED))
    return path.name


def case_id(case) -> str:
    path, part = case
    return path_id(path) + (f"#part{part}" if part else "")


def test_every_recorded_responses_answer_is_covered():
    """Every Responses stream and body in the fixtures is replayed here, or
    (HTTP error bodies) in test_failures.py."""
    assert set(RESPONSES_DIR.glob("*.chunks.txt")) == set(STREAMS) | {CONCATENATED}
    assert set(RESPONSES_DIR.glob("*.json")) == set(BODIES) | {RESPONSES_DIR / "openai-error.1.json"}
    assert len(STREAMS) == 10 and len(BODIES) == 3
    assert OWN_STREAMS and OWN_BODIES, "no recordings of our own"


def client_request(expected: recorded.Expected) -> dict:
    """A Chat request for the recorded answer: the tools it calls."""
    request = {"model": "gpt-5", "messages": [{"role": "user", "content": "Replay the recording"}]}
    names = list(dict.fromkeys(call.name for call in expected.calls))
    if names:
        request["tools"] = [
            {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names
        ]
    return request


@pytest.fixture(scope="module")
def parts_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("split")


@pytest.fixture(scope="module", params=STREAM_CASES, ids=case_id)
def stream_replay(request, wirebridge, log_dir, parts_dir):
    source, part = request.param
    path = source
    if part is not None:
        parts = recorded.split_responses(source, parts_dir)
        assert len(parts) == 4, f"{source.name} holds {len(parts)} responses, not 4"
        path = parts[part - 1]
    events = recorded.payloads(path)
    expected = recorded.from_responses_events(events)
    created = next(e for e in events if e.get("type") == "response.created")
    if not created["response"].get("model"):
        expected.model = client_request(expected)["model"]
    if source.name not in TRIMMED:
        # The recording is whole: its deltas add up to its items' text.
        assert expected.messages == [t for t in recorded.final_message_texts(events) if t]
    else:
        assert expected.messages != recorded.final_message_texts(events)
    chain = harness.start_chain(log_dir, path.name, "responses", replay=path)
    yield chain, path, expected
    harness.stop_checked(chain)


@pytest.fixture(scope="module", params=BODIES + OWN_BODIES, ids=path_id)
def body_replay(request, wirebridge, log_dir):
    path = request.param
    chain = harness.start_chain(log_dir, path.name, "responses", replay=path)
    expected = recorded.from_responses_body(json.loads(path.read_text(encoding="utf-8")))
    yield chain, path, expected
    harness.stop_checked(chain)


def check(observed, expected):
    checks.assert_content(observed, expected, reasoning=False, separate_messages=False)


@pytest.mark.parametrize("style", ["create-stream", "stream-helper"])
def test_responses_stream_to_chat_client(stream_replay, style):
    chain, path, expected = stream_replay
    if expected.status == "failed":
        with pytest.raises(openai.APIError) as raised:
            drive.chat_client(chain, style, client_request(expected))
        checks.assert_stream_error(raised.value, expected.error_message)
        return
    observed = drive.chat_client(chain, style, client_request(expected))
    check(observed, expected)


def test_responses_stream_to_chat_client_schema(stream_replay, spec):
    chain, path, expected = stream_replay
    mark = chain.tap.mark()
    request = {**client_request(expected), "stream": True, "stream_options": {"include_usage": True}}
    schema.assert_valid_client_request(spec, request, "chat")
    status, content_type, text = harness.post_direct(chain.base_url + "/chat/completions", json.dumps(request).encode())
    assert status == 200, text
    assert content_type.startswith("text/event-stream"), content_type
    chunks = schema.assert_valid_stream(spec, text, "chat")
    if expected.status == "failed":
        assert "error" in chunks[-1] and expected.error_message in chunks[-1]["error"]["message"]
    else:
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"], "no usage chunk last"
    sent = drive.one_upstream_request(chain, mark, "/responses")
    body = schema.assert_valid_request(spec, sent, "responses")
    assert body["stream"] is True


def test_responses_body_to_chat_client(body_replay):
    chain, path, expected = body_replay
    observed = drive.chat_client(chain, "create", client_request(expected))
    check(observed, expected)


def test_responses_body_to_streaming_chat_client(body_replay, spec):
    """The upstream answers a body to a request for a stream (it ignores
    `stream`): the Chat client that asked for a stream gets one, valid,
    with the body's content, never the body itself."""
    chain, path, expected = body_replay
    request = {**client_request(expected), "stream": True, "stream_options": {"include_usage": True}}
    status, content_type, text = harness.post_direct(chain.base_url + "/chat/completions", json.dumps(request).encode())
    assert status == 200, text
    assert content_type.startswith("text/event-stream"), (content_type, text[:300])
    schema.assert_valid_stream(spec, text, "chat")
    check(drive.chat_client(chain, "create-stream", client_request(expected)), expected)


def test_responses_body_to_chat_client_schema(body_replay, spec):
    chain, path, expected = body_replay
    mark = chain.tap.mark()
    request = client_request(expected)
    schema.assert_valid_client_request(spec, request, "chat")
    status, content_type, text = harness.post_direct(chain.base_url + "/chat/completions", json.dumps(request).encode())
    assert status == 200, text
    assert content_type.startswith("application/json"), content_type
    schema.assert_valid_body(spec, status, text, "chat")
    sent = drive.one_upstream_request(chain, mark, "/responses")
    body = schema.assert_valid_request(spec, sent, "responses")
    assert not body.get("stream")


# --------------------------------------------------------------------------
# A call the backend left unfinished
# --------------------------------------------------------------------------

CUT_ARGUMENTS = '{"command":["ls"'
CUT_CALL = {"type": "function_call", "id": "fc_cut", "call_id": "call_cut", "name": "bash",
            "arguments": CUT_ARGUMENTS, "status": "incomplete"}
USAGE = {"input_tokens": 12, "output_tokens": 6, "total_tokens": 18}
# The backend opens a call, streams part of its arguments, ends the item
# `incomplete`, and yet completes the response: the stop reason may not come
# from the terminal event alone.
UNFINISHED_CALL_EVENTS = [
    {"type": "response.created", "sequence_number": 0, "response": {
        "id": "resp_cut", "object": "response", "created_at": 1700000000, "status": "in_progress",
        "model": "gpt-5", "output": []}},
    {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
     "item": {**CUT_CALL, "arguments": "", "status": "in_progress"}},
    {"type": "response.function_call_arguments.delta", "sequence_number": 2, "output_index": 0,
     "item_id": "fc_cut", "delta": CUT_ARGUMENTS},
    {"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": CUT_CALL},
    {"type": "response.completed", "sequence_number": 4, "response": {
        "id": "resp_cut", "object": "response", "created_at": 1700000000, "status": "completed",
        "model": "gpt-5", "output": [CUT_CALL], "usage": USAGE}},
]
BASH_CHAT = {"type": "function", "function": {
    "name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "array"}}}}}
BASH_MESSAGES = {"name": "bash", "input_schema": {"type": "object", "properties": {"command": {"type": "array"}}}}


@pytest.fixture(scope="module")
def unfinished_call(wirebridge, log_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("unfinished") / "unfinished-call.chunks.txt"
    path.write_text("".join(json.dumps(event) + "\n" for event in UNFINISHED_CALL_EVENTS))
    chain = harness.start_chain(log_dir, "unfinished-call", "responses", replay=path)
    yield chain
    harness.stop_checked(chain)


def declared_tools(chain, mark: int) -> list[str]:
    """The names of the tools the one request sent upstream declared."""
    sent = drive.one_upstream_request(chain, mark, "/responses").json()
    return [tool.get("name") for tool in sent.get("tools", [])]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_an_unfinished_call_is_no_call_for_a_chat_client(unfinished_call, stream):
    """A call item that ended `incomplete` in a response that completed: the
    Chat client's answer finishes for `length` (the API's word for an answer
    cut short), never `tool_calls`; the body holds no call to run, and the
    stream holds only the fragment it had already sent."""
    client = harness.client(unfinished_call)
    request = {"model": "gpt-5", "messages": [{"role": "user", "content": "list the files"}], "tools": [BASH_CHAT]}
    mark = unfinished_call.tap.mark()
    if stream:
        chunks = list(client.chat.completions.create(**request, stream=True, stream_options={"include_usage": True}))
        observed = checks.from_chunks(chunks)
        assert observed.seen_finish_reason == "length", observed.seen_finish_reason
        sent = "".join(call.function.arguments or "" for chunk in chunks for choice in chunk.choices
                       for call in choice.delta.tool_calls or [])
        assert sent == CUT_ARGUMENTS
        assert chunks[-1].usage.completion_tokens == 6
    else:
        completion = client.chat.completions.create(**request)
        choice = completion.choices[0]
        assert choice.finish_reason == "length", completion
        assert not choice.message.tool_calls, completion
        assert completion.usage.completion_tokens == 6
    assert declared_tools(unfinished_call, mark) == ["bash"]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_an_unfinished_call_is_no_tool_use_for_a_messages_client(unfinished_call, stream):
    """The same answer for a Messages client (what Claude Code speaks): the
    message stops for `max_tokens`, never `tool_use`, streamed or not, so no
    client runs a tool whose input does not parse; the body holds no
    `tool_use` block, the stream only the one it had already opened."""
    import anthropic

    client = anthropic.Anthropic(base_url=unfinished_call.bridge.url, api_key="sk-ant-wirebridge", max_retries=0,
                                 timeout=20.0, http_client=anthropic.DefaultHttpxClient(trust_env=False))
    request = {"model": "gpt-5", "max_tokens": 256, "tools": [BASH_MESSAGES],
               "messages": [{"role": "user", "content": "list the files"}]}
    mark = unfinished_call.tap.mark()
    if stream:
        with client.messages.stream(**request) as events:
            kinds = [event.type for event in events]
            message = events.get_final_message()
        assert kinds[-1] == "message_stop", kinds
        assert message.stop_reason == "max_tokens", message
        assert [block.type for block in message.content] == ["tool_use"]
    else:
        message = client.messages.create(**request)
        assert message.stop_reason == "max_tokens", message
        assert not [block for block in message.content if block.type == "tool_use"], message
    assert message.usage.output_tokens == 6
    assert declared_tools(unfinished_call, mark) == ["bash"]


BROKEN_CALL = {**CUT_CALL, "status": "completed"}
# The same arguments in a call the backend says it finished.
BROKEN_CALL_EVENTS = [
    {**event, "item": BROKEN_CALL} if event["type"] == "response.output_item.done"
    else {**event, "response": {**event["response"], "output": [BROKEN_CALL]}} if event["type"] == "response.completed"
    else event
    for event in UNFINISHED_CALL_EVENTS
]


@pytest.fixture(scope="module")
def broken_call(wirebridge, log_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("broken") / "broken-call.chunks.txt"
    path.write_text("".join(json.dumps(event) + "\n" for event in BROKEN_CALL_EVENTS))
    chain = harness.start_chain(log_dir, "broken-call", "responses", replay=path)
    yield chain
    harness.stop_checked(chain)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_a_finished_call_whose_arguments_do_not_parse_is_an_error_for_a_chat_client(broken_call, stream):
    """A call the backend calls finished, with arguments that are no JSON
    object: a Chat client could not run it, so it gets the error (a chunk
    after what was sent, or a 502), as a Messages client does."""
    client = harness.client(broken_call)
    request = {"model": "gpt-5", "messages": [{"role": "user", "content": "list the files"}], "tools": [BASH_CHAT]}
    with pytest.raises(openai.APIError) as raised:
        if stream:
            list(client.chat.completions.create(**request, stream=True))
        else:
            client.chat.completions.create(**request)
    assert "not a JSON object" in str(raised.value), raised.value
    if not stream:
        assert raised.value.status_code == 502


# --------------------------------------------------------------------------
# Interleaved items (hand-made streams), for Responses and Messages clients
# --------------------------------------------------------------------------

HANDMADE = sorted((harness.REPO / "tests" / "handmade").glob("responses-stream-*.sse"))


@pytest.fixture(scope="module", params=HANDMADE, ids=lambda p: "handmade/" + p.name)
def interleaved_replay(request, wirebridge, log_dir):
    path = request.param
    events = recorded.payloads(path)
    expected = recorded.from_responses_events(events)
    chain = harness.start_chain(log_dir, path.name, "responses", replay=path)
    yield chain, path, expected
    harness.stop_checked(chain)


def test_the_interleaved_streams_are_there():
    assert [p.name for p in HANDMADE] == [
        "responses-stream-items-in-turns.sse",
        "responses-stream-mcp-list-tools-never-done.sse",
        "responses-stream-message-inside-reasoning.sse",
    ]


@pytest.mark.parametrize("style", drive.RESPONSES_STYLES)
def test_interleaved_items_reach_a_responses_client_one_at_a_time(interleaved_replay, style):
    chain, path, expected = interleaved_replay
    request = {"model": "gpt-5", "input": "Replay the recording"}
    observed = drive.responses_client(chain, style, request)
    checks.assert_content(observed, expected, reasoning=True, separate_messages=True)


def test_interleaved_items_follow_the_grammar(interleaved_replay, spec):
    chain, path, expected = interleaved_replay
    request = {"model": "gpt-5", "input": "Replay the recording", "stream": True}
    status, content_type, text = harness.post_direct(chain.base_url + "/responses", json.dumps(request).encode())
    assert status == 200, text
    if "mcp_list_tools" in path.read_text(encoding="utf-8"):
        # OpenAI's `mcp_list_tools` item has no `status`, which the Open
        # Responses spec asks of an extension item: it reaches the client
        # as the backend wrote it, and only the order is checked here.
        events = harness.sse_payloads(text)
    else:
        events = schema.assert_valid_stream(spec, text, "responses")
    added = [e["output_index"] for e in events if e["type"] == "response.output_item.added"]
    done = [e["output_index"] for e in events if e["type"] == "response.output_item.done"]
    # One item at a time: each is done before the next is added.
    assert added == done == list(range(len(added))), (added, done)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    final = events[-1]["response"]["output"]
    upstream = recorded.payloads(path)[-1]["response"]["output"]
    assert [i["type"] for i in final] == [i["type"] for i in upstream]


def messages_sdk(chain) -> anthropic.Anthropic:
    return harness.anthropic_client(chain)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_interleaved_items_reach_a_messages_client(interleaved_replay, stream):
    chain, path, expected = interleaved_replay
    ask = {
        "model": "gpt-5",
        "max_tokens": 1024,
        "thinking": {"type": "enabled", "budget_tokens": 512},
        "messages": [{"role": "user", "content": "Replay the recording"}],
    }
    client = messages_sdk(chain)
    if stream:
        with client.messages.stream(**ask) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**ask)
    text = "".join(b.text for b in message.content if b.type == "text")
    thinking = "".join(b.thinking for b in message.content if b.type == "thinking")
    assert text == expected.text
    assert thinking == expected.reasoning
    assert message.stop_reason == "end_turn"
    assert message.usage.output_tokens == expected.usage.output_tokens
