"""Compaction on demand for Messages clients (`compaction`, beta
`compact-2026-09-04`) through the real binary, with the official anthropic
SDK, on the demo upstream speaking Chat Completions, Responses (a backend
that keeps no state) and Anthropic Messages. The bridge's engine asks the
backend for a summary and seals it into the reply's one `compaction` block
(`stop_reason: "compaction"`); a later request that sends the block first
has it opened, and the backend is sent the summary in place of the turns
before it. What each backend was sent is read at the tap."""

from __future__ import annotations

import base64
import os

import anthropic
import pytest

import harness

BETA = "compact-2026-09-04"
THREADS_BETA = "message-threads-2026-08-12"
KEY = base64.b64encode(os.urandom(32)).decode()
# Words that appear only in the turns the compaction stands for.
CONVERSATION = [
    {"role": "user", "content": "Plan a trip to Zanzibar in June."},
    {"role": "assistant", "content": "Stone Town first, then the heliotrope beaches of Nungwi."},
    {"role": "user", "content": "Add a spice farm visit."},
    {"role": "assistant", "content": "A morning at Kizimbani's spice farm fits on day three."},
]
DROPPED = ["Zanzibar", "heliotrope", "Kizimbani"]
NEXT = "What should I pack?"
SUMMARY_MARK = "[Summary of the earlier conversation]"


def start(log_dir, api: str) -> harness.Chain:
    return harness.start_chain(log_dir, f"messages-compaction-{api}", api,
                               env={"WIREBRIDGE_SEAL_KEY": KEY})


@pytest.fixture(scope="module")
def chat_chain(wirebridge, log_dir):
    chain = start(log_dir, "chat")
    yield chain
    harness.stop_checked(chain)


@pytest.fixture(scope="module")
def responses_chain(wirebridge, log_dir):
    chain = start(log_dir, "responses")
    yield chain
    harness.stop_checked(chain)


@pytest.fixture(scope="module")
def messages_chain(wirebridge, log_dir):
    chain = start(log_dir, "messages")
    yield chain
    harness.stop_checked(chain)


@pytest.fixture(params=["chat", "responses", "messages"])
def chain(request, chat_chain, responses_chain, messages_chain):
    return {"chat": chat_chain, "responses": responses_chain, "messages": messages_chain}[request.param]


def sdk(chain, key: str = "sk-ant-compaction") -> anthropic.Anthropic:
    return harness.anthropic_client(chain, key)


def create(client, stream: bool, messages: list, betas: list[str] = (BETA,), **fields):
    ask = dict(model="demo", max_tokens=256, messages=messages, betas=list(betas), **fields)
    if not stream:
        return client.beta.messages.create(**ask)
    with client.beta.messages.stream(**ask) as events:
        return events.get_final_message()


def compact(client, stream: bool, messages: list, **fields):
    return create(client, stream, messages, compaction={"type": "summarize"}, **fields)


def posts(chain, mark: int) -> list[harness.Captured]:
    return [c for c in chain.tap.since(mark) if c.method == "POST"]


def assert_compacted(reply) -> dict:
    """The reply of a compaction: one `compaction` block, its content
    opaque; the block as the next request sends it back."""
    assert reply.stop_reason == "compaction", reply
    assert [block.type for block in reply.content] == ["compaction"], reply.content
    carrier = reply.content[0].content
    assert isinstance(carrier, str) and carrier, reply.content
    for word in DROPPED:
        assert word not in carrier, "the summary travels sealed"
    assert reply.usage.output_tokens > 0, reply.usage
    return {"type": "compaction", "content": carrier}


def assert_summary_sent(captured: harness.Captured) -> None:
    """The backend was sent the summary and the new turn, none of the
    turns the summary stands for."""
    sent = captured.body.decode()
    assert SUMMARY_MARK in sent, sent
    assert NEXT in sent, sent
    for word in DROPPED:
        assert word not in sent, f"{word!r} was sent again: {sent}"


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_compacted_conversation_continues_from_its_block(chain, stream):
    client = sdk(chain)
    mark = chain.tap.mark()
    block = assert_compacted(compact(client, stream, CONVERSATION))

    # One call to the backend: the summary of the whole conversation.
    (summary_request,) = posts(chain, mark)
    asked = summary_request.body.decode()
    assert all(word in asked for word in DROPPED), asked
    assert '"stream":true' not in asked.replace(" ", ""), "a summary is asked for in one piece"

    # The block first (in an assistant turn, as the reply gave it), then a
    # new turn: the backend is sent the summary instead of what it replaced.
    mark = chain.tap.mark()
    reply = create(client, stream, [{"role": "assistant", "content": [block]},
                                    {"role": "user", "content": NEXT}])
    assert reply.stop_reason == "end_turn", reply
    assert reply.content[0].type == "text" and reply.content[0].text
    (captured,) = posts(chain, mark)
    assert_summary_sent(captured)


def test_what_comes_before_the_block_is_dropped(chain):
    client = sdk(chain)
    block = assert_compacted(compact(client, False, CONVERSATION))
    mark = chain.tap.mark()
    # A client that keeps its whole history sends the old turns too: the
    # block stands for them, in a user turn this time.
    create(client, False, [*CONVERSATION, {"role": "user", "content": [block, {"type": "text", "text": NEXT}]}])
    (captured,) = posts(chain, mark)
    assert_summary_sent(captured)


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_tampered_block_is_a_400_naming_it(chain, stream):
    client = sdk(chain)
    block = assert_compacted(compact(client, False, CONVERSATION))
    carrier = block["content"]
    forged = {**block, "content": carrier[:-6] + ("A" if carrier[-6] != "A" else "B") + carrier[-5:]}
    mark = chain.tap.mark()
    with pytest.raises(anthropic.BadRequestError) as raised:
        create(client, stream, [{"role": "user", "content": "Earlier."},
                                {"role": "assistant", "content": [forged]},
                                {"role": "user", "content": NEXT}])
    error = raised.value.response.json()
    assert error["type"] == "error", error
    assert error["error"]["type"] == "invalid_request_error", error
    assert "messages[1].content[0]" in error["error"]["message"], error
    assert posts(chain, mark) == [], "the backend is not called"


def test_another_credentials_block_is_refused(chain):
    block = assert_compacted(compact(sdk(chain), False, CONVERSATION))
    mark = chain.tap.mark()
    with pytest.raises(anthropic.BadRequestError) as raised:
        create(sdk(chain, key="sk-ant-someone-else"), False,
               [{"role": "assistant", "content": [block]}, {"role": "user", "content": NEXT}])
    assert "messages[0].content[0]" in raised.value.response.json()["error"]["message"]
    assert posts(chain, mark) == []


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_thread_is_compacted_from_its_stored_history(chain, stream):
    client = sdk(chain)
    betas = [BETA, THREADS_BETA]
    first = create(client, stream, CONVERSATION[:1], betas, extra_body={"thread": {"type": "create"}})
    second = create(client, stream, CONVERSATION[2:3], betas,
                    extra_body={"thread": {"type": "continue", "previous_message_id": first.id}})
    mark = chain.tap.mark()
    # Only the compaction is sent: the thread holds the conversation.
    compacted = compact(client, stream, [{"role": "user", "content": "Compact, please."}], betas=betas,
                        extra_body={"thread": {"type": "continue", "previous_message_id": second.id}})
    assert_compacted(compacted)
    (summary_request,) = posts(chain, mark)
    asked = summary_request.body.decode()
    assert "Zanzibar" in asked and "spice farm" in asked, asked

    # The thread goes on from the compaction: the backend is sent its summary.
    mark = chain.tap.mark()
    create(client, stream, [{"role": "user", "content": NEXT}], betas,
           extra_body={"thread": {"type": "continue", "previous_message_id": compacted.id}})
    (captured,) = posts(chain, mark)
    sent = captured.body.decode()
    assert SUMMARY_MARK in sent and NEXT in sent, sent
    assert "Zanzibar" not in sent, sent


def test_the_sdk_s_thread_helper_creates_continues_and_compacts_a_thread(chain):
    client = sdk(chain)
    thread = client.beta.messages.thread(model="demo", max_tokens=256, betas=[BETA])
    first = thread.send(CONVERSATION[0])
    assert first.stop_reason == "end_turn"
    thread.send(CONVERSATION[2])
    mark = chain.tap.mark()
    # Nothing new to send: the thread holds what the compaction summarizes.
    compacted = thread.send(compaction={"type": "summarize"})
    assert_compacted(compacted)
    (summary_request,) = posts(chain, mark)
    assert "Zanzibar" in summary_request.body.decode()

    mark = chain.tap.mark()
    reply = thread.send({"role": "user", "content": NEXT})
    assert reply.stop_reason == "end_turn", reply
    (captured,) = posts(chain, mark)
    assert_summary_sent(captured)



def test_another_bridge_s_block_is_refused(wirebridge, log_dir, chat_chain):
    """A bridge with a key of its own (one generated for its process)
    cannot open what another sealed: a 400 naming the block, the backend
    never called."""
    block = assert_compacted(compact(sdk(chat_chain), False, CONVERSATION))
    other = harness.start_chain(log_dir, "messages-compaction-other-key", "chat")
    try:
        mark = other.tap.mark()
        with pytest.raises(anthropic.BadRequestError) as raised:
            create(sdk(other), False, [{"role": "assistant", "content": [block]}, {"role": "user", "content": NEXT}])
        message = raised.value.response.json()["error"]["message"]
        assert "messages[0].content[0]" in message, message
        assert posts(other, mark) == [], "the backend is not called"
    finally:
        harness.stop_checked(other)


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_compaction_edit_compacts_past_its_threshold(api, stream, chat_chain, responses_chain):
    """`context_management` with a `compact_20260112` edit (beta
    `compact-2026-01-12`): past its trigger the engine compacts first, and
    the reply is the compaction block, then the answer. (On a Messages
    backend a request with this beta alone is the backend's, as it came.)"""
    chain = {"chat": chat_chain, "responses": responses_chain}[api]
    client = sdk(chain)
    long = [{"role": "user", "content": "Mind the details: " + "every day counts. " * 400},
            {"role": "assistant", "content": "Noted."}, *CONVERSATION, {"role": "user", "content": "Anything else?"}]
    edit = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 1000}}]}
    mark = chain.tap.mark()
    reply = create(client, stream, long, betas=["compact-2026-01-12"], context_management=edit)
    assert reply.stop_reason == "end_turn", reply
    assert [block.type for block in reply.content] == ["compaction", "text"], reply.content
    assert reply.content[0].content and reply.content[1].text

    # The summary was asked for, then the answer: the assistant's turns
    # stood for by the summary, the client's own kept as written.
    answer = posts(chain, mark)[-1].body.decode()
    assert SUMMARY_MARK in answer, answer
    assert "heliotrope" not in answer and "Kizimbani" not in answer, answer

    # The reply sent back as it came, then a new turn: the block stands for
    # everything before it.
    mark = chain.tap.mark()
    blocks = [block.model_dump(exclude_none=True) for block in reply.content]
    follow = create(client, stream, [*long, {"role": "assistant", "content": blocks},
                                     {"role": "user", "content": NEXT}], betas=["compact-2026-01-12"])
    assert follow.stop_reason == "end_turn", follow
    (captured,) = posts(chain, mark)
    assert_summary_sent(captured)
