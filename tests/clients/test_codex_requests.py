"""Requests a real Responses client sent (Codex CLI, captured in
`codex-peer/`: namespace tools, a hosted `web_search` tool, `store: false`,
`include`, `client_metadata`, a tool round trip), sent as recorded through
the bridge to the demo Chat upstream: the request the bridge sends upstream
is valid, and the SDK reads the answer into typed events with the content
the upstream sent."""

from __future__ import annotations

import json

import pytest

import checks
import drive
import harness
import schema

REQUESTS = sorted((harness.FIXTURES / "codex-peer").glob("*.json"))


def recorded_body(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["body"]


@pytest.mark.parametrize("path", REQUESTS, ids=lambda p: p.name)
def test_codex_request_over_chat_upstream(chat_upstream, spec, path):
    body = recorded_body(path)
    assert body["stream"] is True
    client = harness.client(chat_upstream)
    mark = chat_upstream.tap.mark()
    # Every field as recorded, through the SDK (`extra_body` sends fields the
    # SDK's signature does not name).
    extra = {k: v for k, v in body.items() if k not in ("model", "stream")}
    events = list(client.responses.create(model=body["model"], stream=True, extra_body=extra))
    checks.assert_typed_events(events)
    checks.assert_sequence(events)
    observed = checks.from_events(events)

    sent = drive.one_upstream_request(chat_upstream, mark, "/chat/completions")
    upstream = schema.assert_valid_request(spec, sent, "chat")
    names = [t["function"]["name"] for t in upstream["tools"]]
    assert "exec_command" in names and any(n.startswith("multi_agent_v1") for n in names), names
    if body["input"][-1]["type"] == "function_call_output":
        call, output = body["input"][-2], body["input"][-1]
        assistant, tool = upstream["messages"][-2:]
        assert [c["id"] for c in assistant["tool_calls"]] == [call["call_id"]]
        assert assistant["tool_calls"][0]["function"] == {"name": call["name"], "arguments": call["arguments"]}
        assert (tool["role"], tool["tool_call_id"]) == ("tool", output["call_id"])
    expected = drive.upstream_answer(chat_upstream, sent)
    checks.assert_content(observed, expected, reasoning=True, separate_messages=True)
    assert expected.text, "the demo upstream was expected to answer"


@pytest.mark.parametrize("path", REQUESTS, ids=lambda p: p.name)
def test_codex_request_over_chat_upstream_schema(chat_upstream, spec, path):
    body = recorded_body(path)
    status, content_type, text = harness.post_direct(chat_upstream.base_url + "/responses", json.dumps(body).encode())
    assert status == 200, text
    assert content_type.startswith("text/event-stream")
    events = schema.assert_valid_stream(spec, text, "responses")
    assert events[-1]["type"] == "response.completed"
