"""`POST /v1/responses/input_tokens` (`client.responses.input_tokens.count`)
through the real binary: the request resolved and translated as a turn
would be, and counted by the backend's tokenizer where the profile names
one, else estimated; the `x-wirebridge-input-tokens` header says which."""

from __future__ import annotations

import pytest

import harness
from test_compaction import ScriptedChat, start

TOKENIZING_PROFILE = """\
profile = "tokenizing"

[profiles.tokenizing]
tokenize = "/tokenize"
"""


@pytest.fixture()
def upstream():
    server = ScriptedChat()
    yield server
    server.close()


def counted(client, spec, **request):
    raw = client.responses.input_tokens.with_raw_response.count(**request)
    body = raw.http_response.json()
    errors = spec.errors(body, "TokenCountsResource")
    assert not errors, f"{body}: {errors}"
    assert raw.parse().input_tokens == body["input_tokens"]
    return body["input_tokens"], raw.headers["x-wirebridge-input-tokens"]


def test_counted_by_the_backends_tokenizer(upstream, log_dir, tmp_path, spec):
    config = tmp_path / "bridge.toml"
    config.write_text(TOKENIZING_PROFILE)
    chain = start(log_dir, "input-tokens-counted", upstream, extra=["--config", str(config)])
    try:
        client = harness.client(chain)
        upstream.answer("Nice to meet you, Ada.")
        first = client.responses.create(model="m", input="My name is Ada.")
        upstream.tokens = 321
        mark = upstream.mark()
        tokens, how = counted(client, spec, model="m", input="What is my name?",
                              previous_response_id=first.id, instructions="Be brief.")
        assert (tokens, how) == (321, "counted")
        [asked] = [r.json() for r in upstream.since(mark) if r.path.endswith("/tokenize")]
        # What was counted is the conversation the turn would send.
        assert [(m["role"], m["content"]) for m in asked["messages"]] == [
            ("system", "Be brief."), ("user", "My name is Ada."),
            ("assistant", "Nice to meet you, Ada."), ("user", "What is my name?")]
        assert not upstream.chat_since(mark), "counting generates nothing"

        stranger = harness.client(chain)
        stranger.api_key = "sk-someone-else"
        with pytest.raises(Exception) as refused:
            stranger.responses.input_tokens.count(model="m", input="?", previous_response_id=first.id)
        assert getattr(refused.value, "status_code", None) == 404
    finally:
        harness.stop_checked(chain)


def test_estimated_without_a_tokenizer(upstream, log_dir, spec):
    chain = start(log_dir, "input-tokens-estimated", upstream)
    try:
        client = harness.client(chain)
        short, how = counted(client, spec, model="m", input="Hi")
        assert how == "estimated" and short > 0
        long, _ = counted(client, spec, model="m", input="Hi " * 400)
        assert long > short + 200
        assert upstream.since(0) == [], "an estimate asks the backend nothing"
        with pytest.raises(Exception) as refused:
            client.responses.input_tokens.count(input="no model")
        assert getattr(refused.value, "status_code", None) == 400
    finally:
        harness.stop_checked(chain)
