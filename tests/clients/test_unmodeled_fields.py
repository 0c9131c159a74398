"""Keys the bridge does not read, sent by the openai SDK (as `extra_body`)
through the real binary to the demo Chat upstream: a recorded Codex request reports nothing; the same request with
a key added inside an input item, one of its content parts and a tool
reports each by its JSON path in `x-wirebridge-dropped`; and a policy that
refuses `unsupported_parameter` answers 400 naming the path."""

from __future__ import annotations

import copy
import json

import openai
import pytest

import harness

CODEX_TURN = harness.FIXTURES / "codex-peer" / "codex-exec-0.169.0-request-2-with-function_call_output.json"

# What the keys added below are, as the bridge names them.
ADDED = ["input[3].cache_hint", "input[3].content[0].lang", "tools[0].eager_input_streaming"]

STRICT = """\
[loss_policy]
unsupported_parameter = "reject"
"""


@pytest.fixture(scope="module")
def strict_chain(wirebridge, log_dir, tmp_path_factory):
    config = tmp_path_factory.mktemp("unmodeled") / "bridge.toml"
    config.write_text(STRICT)
    chain = harness.start_chain(log_dir, "unmodeled-strict", "chat", extra=["--config", str(config)])
    yield chain
    harness.stop_checked(chain)


def codex_turn() -> dict:
    return json.loads(CODEX_TURN.read_text(encoding="utf-8"))["body"]


def with_unknown_keys(body: dict) -> dict:
    body = copy.deepcopy(body)
    item = body["input"][3]
    assert item["role"] == "user" and item["content"][0]["type"] == "input_text", item
    item["cache_hint"] = "warm"
    item["content"][0]["lang"] = "en"
    assert body["tools"][0]["type"] == "function", body["tools"][0]
    body["tools"][0]["eager_input_streaming"] = True
    return body


def send(chain, body: dict):
    """The request through the SDK, unstreamed: every field but the model
    as `extra_body`, as a client sends fields its signature does not name."""
    client = harness.client(chain)
    extra = {k: v for k, v in body.items() if k not in ("model", "stream")}
    return client.responses.with_raw_response.create(model=body["model"], extra_body=extra)


def dropped(raw) -> list[str]:
    header = raw.headers.get("x-wirebridge-dropped") or ""
    return [path for path in header.split(", ") if path]


def test_keys_added_inside_an_item_a_part_and_a_tool_are_reported_by_path(chat_upstream):
    plain = send(chat_upstream, codex_turn())
    assert plain.http_response.status_code == 200
    before = dropped(plain)
    assert not set(ADDED) & set(before), before

    raw = send(chat_upstream, with_unknown_keys(codex_turn()))
    assert raw.http_response.status_code == 200
    after = dropped(raw)
    assert sorted(path for path in after if path not in before) == sorted(ADDED), after
    assert raw.parse().output_text, "answered as before"


def test_a_strict_policy_refuses_a_key_not_read_with_a_400_naming_its_path(strict_chain):
    client = harness.client(strict_chain)
    mark = strict_chain.tap.mark()
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(
            model="demo",
            extra_body={"input": [{"role": "user",
                                   "content": [{"type": "input_text", "text": "Hi", "lang": "en"}]}]},
        )
    error = refused.value
    assert error.status_code == 400
    assert error.param == "input[0].content[0].lang", error.body
    assert "input[0].content[0].lang" in str(error)
    assert not [c for c in strict_chain.tap.since(mark) if c.method == "POST"], "nothing sent upstream"
