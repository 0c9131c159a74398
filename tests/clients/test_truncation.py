"""`truncation="auto"` with the official SDK against the real binary, in
front of the demo upstream speaking Chat and speaking a Responses API that
keeps no state: a conversation over the model's context window (the model
catalog's `context_window`) reaches the upstream without its oldest turns,
the reply says what was left out, and the Response is valid against both
spec files."""

from __future__ import annotations

import pytest

import harness
import schema

WINDOW = 600


def conversation() -> list[dict]:
    """Four turns of about 1 KB each, a call and its result in the third,
    then the latest question."""
    def long(n: int) -> str:
        return f"Turn {n}: " + "words " * 170

    return [
        {"role": "developer", "content": "Answer briefly."},
        {"role": "user", "content": long(1)},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One."}]},
        {"role": "user", "content": long(2)},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two."}]},
        {"role": "user", "content": long(3)},
        {"type": "function_call", "call_id": "call_1", "name": "look", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "seen"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Three."}]},
        {"role": "user", "content": "And now?"},
    ]


@pytest.fixture(scope="module", params=["chat", "responses"])
def chain(request, wirebridge, log_dir, tmp_path_factory):
    config = tmp_path_factory.mktemp("truncation") / "bridge.toml"
    config.write_text(f'[models."demo"]\ncontext_window = {WINDOW}\n')
    api = request.param
    chain = harness.start_chain(log_dir, f"truncation-{api}", api, extra=["--config", str(config)])
    chain.api = api
    yield chain
    harness.stop_checked(chain)


def upstream_texts(chain, mark: int) -> list[str]:
    """The text of each message (or item) the upstream got, its first words."""
    (sent,) = [c.json() for c in chain.tap.since(mark)
               if c.path.endswith(("/chat/completions", "/responses"))]
    entries = sent["messages"] if chain.api == "chat" else sent["input"]
    texts = []
    for entry in entries:
        content = entry.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        texts.append((content or entry.get("output") or entry.get("type") or "")[:7])
    return texts


def test_the_oldest_turns_are_left_out_to_fit(chain, spec):
    client = harness.client(chain)
    mark = chain.tap.mark()
    raw = client.responses.with_raw_response.create(model="demo", input=conversation(), truncation="auto")
    schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    response = raw.parse()
    assert response.status == "completed"
    assert response.truncation == "auto"
    assert raw.headers.get("x-wirebridge-dropped") == "input", raw.headers
    texts = upstream_texts(chain, mark)
    assert texts[0] == "Answer ", texts
    assert texts[1] == "Turn 3:", f"the third turn first, whole: {texts}"
    assert texts[-1] == "And now", texts
    assert not any(t.startswith(("Turn 1", "Turn 2")) for t in texts), texts


def test_without_truncation_the_whole_conversation_is_sent(chain):
    client = harness.client(chain)
    mark = chain.tap.mark()
    raw = client.responses.with_raw_response.create(model="demo", input=conversation())
    assert raw.http_response.status_code == 200
    assert raw.headers.get("x-wirebridge-dropped") is None
    assert len(upstream_texts(chain, mark)) == 10
