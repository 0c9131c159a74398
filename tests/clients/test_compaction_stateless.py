"""Compaction in front of a Responses API that keeps no state, with the
official SDK against the real binary: the demo upstream with
`--upstream-api responses` refuses stateful fields by name, as vLLM and
llama.cpp do, so the bridge runs compaction itself. The backend writes the
summary in a Responses request of the bridge's; a later turn carrying the
compaction item sends the backend the summary, never the sealed carrier.
What the upstream gets is checked through the tap, what the client gets
against both spec files."""

from __future__ import annotations

import base64
import json
import os

import pytest

import harness
import schema
from test_compaction import CONVERSATION, assert_valid_compaction

SUMMARY_INTRO = "[Summary of the earlier conversation]"


@pytest.fixture(scope="module")
def chain(wirebridge, log_dir):
    key = base64.b64encode(os.urandom(32)).decode()
    chain = harness.start_chain(log_dir, "compaction-stateless", "responses",
                                env={"WIREBRIDGE_SEAL_KEY": key})
    yield chain
    harness.stop_checked(chain)


def sent_since(chain, mark: int) -> list[dict]:
    bodies = [c.json() for c in chain.tap.since(mark) if c.path.endswith("/responses")]
    for body in bodies:
        text = json.dumps(body)
        for field in ("previous_response_id", "store", "context_management", "encrypted_content"):
            assert f'"{field}"' not in text, f"{field} reached the upstream: {text[:600]}"
    return bodies


def text_of(item: dict) -> str:
    content = item.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


def test_compact_then_continue(chain, spec):
    client = harness.client(chain)
    mark = chain.tap.mark()
    raw = client.responses.with_raw_response.compact(model="demo", input=CONVERSATION)
    assert raw.http_response.status_code == 200, raw.http_response.text
    assert_valid_compaction(spec, json.loads(raw.http_response.text))
    compacted = raw.parse()
    assert [item.type for item in compacted.output] == ["message", "compaction"]
    (asked,) = sent_since(chain, mark)
    assert not asked.get("stream")
    assert "summary" in text_of(asked["input"][-1]).lower()

    follow_up = [entry.model_dump(exclude_none=True, warnings=False) for entry in compacted.output]
    follow_up.append({"role": "user", "content": "Now a second stanza."})
    mark = chain.tap.mark()
    raw = client.responses.with_raw_response.create(model="demo", input=follow_up)
    schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    assert raw.headers.get("x-wirebridge-dropped") is None
    (sent,) = sent_since(chain, mark)
    texts = [text_of(item) for item in sent["input"]]
    assert texts[0] == "Write a haiku about the sea."
    assert texts[1].startswith(SUMMARY_INTRO), texts
    assert texts[2] == "Now a second stanza."
    assert len(texts) == 3, texts


@pytest.mark.parametrize("stream", [False, True])
def test_a_trigger_turn_is_one_compaction_item(chain, spec, stream):
    client = harness.client(chain)
    turn = CONVERSATION + [{"type": "compaction_trigger"}]
    mark = chain.tap.mark()
    if stream:
        with client.responses.stream(model="demo", input=turn) as events:
            response = events.get_final_response()
    else:
        raw = client.responses.with_raw_response.create(model="demo", input=turn)
        schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
        response = raw.parse()
    assert [item.type for item in response.output] == ["compaction"]
    assert len(sent_since(chain, mark)) == 1, "one summary request"


def test_a_turn_in_a_conversation_compacts_past_its_threshold(chain, spec):
    """`conversation` and `context_management` together: the stored
    conversation is summarized, the turn joins it with its compaction item,
    and the conversation's next turn sends the backend the summary, never
    the sealed carrier."""
    client = harness.client(chain)
    conversation = client.conversations.create(items=CONVERSATION)
    long = "and the tide returns " * 250
    mark = chain.tap.mark()
    raw = client.responses.with_raw_response.create(
        model="demo", conversation=conversation.id, input=long,
        context_management=[{"type": "compaction", "compact_threshold": 1000}],
    )
    assert raw.http_response.status_code == 200, raw.http_response.text
    assert raw.headers.get("x-wirebridge-dropped") is None, raw.headers.get("x-wirebridge-dropped")
    schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    response = raw.parse()
    assert [item.type for item in response.output] == ["compaction", "message"]
    summary_request, reply_request = sent_since(chain, mark)
    assert text_of(summary_request["input"][0]) == "Write a haiku about the sea."
    texts = [text_of(item) for item in reply_request["input"]]
    assert texts[:2] == ["Write a haiku about the sea.", long], texts[:2]
    assert texts[2].startswith(SUMMARY_INTRO) and len(texts) == 3, texts

    listed = client.conversations.items.with_raw_response.list(conversation.id, order="asc", limit=100)
    types = [item["type"] for item in listed.http_response.json()["data"]]
    assert types[len(CONVERSATION):] == ["message", "compaction", "message"], types

    mark = chain.tap.mark()
    client.responses.create(model="demo", conversation=conversation.id, input="Thanks.")
    (sent,) = sent_since(chain, mark)
    texts = [text_of(item) for item in sent["input"]]
    assert texts[0] == "Write a haiku about the sea." and texts[2].startswith(SUMMARY_INTRO), texts
    assert texts[-1] == "Thanks.", texts
