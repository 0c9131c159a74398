"""Prompt cache diagnostics through the real binary, answered by the bridge
from the fingerprints its store keeps: Responses clients (the openai SDK)
ask with `prompt_cache_options.comparison_response_id` and read
`prompt_cache_diagnostics`; Messages clients (the anthropic SDK) ask with
`diagnostics.previous_message_id` and read `diagnostics`. Both SDKs type
the answer, so a malformed one fails here.

A request takes part when it carries the options (a first turn opts in with
`{}` or a null id); each case here sends requests that differ in one thing
only, and the answer names that thing."""

from __future__ import annotations

import anthropic
import openai
import pytest

import harness

POLICY = "You answer questions about the support policy. " * 40
TIME = [{"type": "function", "name": "get_time", "parameters": {"type": "object", "properties": {}}}]
DATE = [{"type": "function", "name": "get_date", "parameters": {"type": "object", "properties": {}}}]


def other_tenant(chain) -> openai.OpenAI:
    return openai.OpenAI(base_url=chain.base_url, api_key="sk-another-tenant", max_retries=0, timeout=20,
                         http_client=openai.DefaultHttpxClient(trust_env=False))


def ask(client, *, tools=TIME, model="demo", compare_with=None, stream=False, **extra):
    """One Responses request opted into diagnostics; the finished response.
    Streamed, every lifecycle event must carry the same diagnostics."""
    options = {"comparison_response_id": compare_with}
    if not stream:
        return client.responses.create(model=model, instructions=POLICY, input="Reply with exactly OK.",
                                       tools=tools, extra_body={"prompt_cache_options": options}, **extra)
    events = list(client.responses.create(model=model, instructions=POLICY, input="Reply with exactly OK.",
                                          tools=tools, stream=True,
                                          extra_body={"prompt_cache_options": options}, **extra))
    lifecycle = [e.response for e in events
                 if e.type in ("response.created", "response.in_progress", "response.completed")]
    assert len(lifecycle) == 3
    assert all(r.prompt_cache_diagnostics == lifecycle[0].prompt_cache_diagnostics for r in lifecycle)
    assert events[-1].type == "response.completed"
    return events[-1].response


@pytest.mark.parametrize("stream", [False, True])
def test_tools_changed_is_named_and_nothing_changed_is_a_hit(chat_upstream, stream):
    client = harness.client(chat_upstream)
    first = ask(client, stream=stream)
    # Nothing to compare with: the first turn answers none.
    assert first.prompt_cache_diagnostics is None

    changed = ask(client, tools=DATE, compare_with=first.id, stream=stream)
    diagnostics = changed.prompt_cache_diagnostics
    assert diagnostics.type == "cache_miss"
    assert diagnostics.reason == "tools_changed"
    # Tools come first in the prompt: all of it is missed, nothing reused.
    assert diagnostics.cache_missed_tokens > len(POLICY) // 8
    assert diagnostics.comparison_reusable_tokens == 0

    same = ask(client, compare_with=first.id, stream=stream)
    assert same.prompt_cache_diagnostics.type == "cache_hit"


def test_another_model_is_model_changed(chat_upstream):
    client = harness.client(chat_upstream)
    first = ask(client)
    other = ask(client, model="demo-large", compare_with=first.id)
    assert other.prompt_cache_diagnostics.type == "cache_miss"
    assert other.prompt_cache_diagnostics.reason == "model_changed"


def test_a_continuation_of_the_compared_response_is_a_hit(chat_upstream):
    client = harness.client(chat_upstream)
    first = ask(client)
    # The history comes from the store, the new question after it.
    next_turn = client.responses.create(model="demo", instructions=POLICY, input="And now?", tools=TIME,
                                        previous_response_id=first.id,
                                        extra_body={"prompt_cache_options": {"comparison_response_id": first.id}})
    assert next_turn.prompt_cache_diagnostics.type == "cache_hit"
    # Other instructions change the prefix from the start of the input.
    edited = client.responses.create(model="demo", instructions="Be brief.", input="And now?", tools=TIME,
                                     previous_response_id=first.id,
                                     extra_body={"prompt_cache_options": {"comparison_response_id": first.id}})
    assert edited.prompt_cache_diagnostics.type == "cache_miss"
    assert edited.prompt_cache_diagnostics.reason == "input_changed"


def test_another_tenant_s_response_is_not_found(chat_upstream):
    mine = ask(harness.client(chat_upstream))
    theirs = ask(other_tenant(chat_upstream), compare_with=mine.id)
    assert theirs.prompt_cache_diagnostics.type == "comparison_response_not_found"
    unknown = ask(harness.client(chat_upstream), compare_with="resp_never_seen")
    assert unknown.prompt_cache_diagnostics.type == "comparison_response_not_found"


def test_a_comparison_id_that_is_not_a_string_is_refused_naming_it(chat_upstream):
    with pytest.raises(openai.BadRequestError) as refused:
        harness.client(chat_upstream).responses.create(
            model="demo", input="x", extra_body={"prompt_cache_options": {"comparison_response_id": 7}})
    assert refused.value.body["param"] == "prompt_cache_options.comparison_response_id"


# --------------------------------------------------------------------------
# Messages clients: `diagnostics.previous_message_id`, over the demo's Chat
# API and its Responses API, through the bridge's Responses hub.
# --------------------------------------------------------------------------

CLOCK = [{"name": "get_time", "description": "The time.", "input_schema": {"type": "object", "properties": {}}}]
CALENDAR = [{"name": "get_date", "description": "The date.", "input_schema": {"type": "object", "properties": {}}}]


@pytest.fixture(params=["chat", "responses"])
def chain(request, chat_upstream, responses_upstream):
    return chat_upstream if request.param == "chat" else responses_upstream


def claude(chain, key: str = "sk-ant-wirebridge") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=chain.bridge.url, api_key=key, max_retries=0, timeout=20.0,
                               http_client=anthropic.DefaultHttpxClient(trust_env=False))


def message(client, *, previous=None, tools=CLOCK, model="demo", system=POLICY, stream=False):
    """One Messages request opted into diagnostics; the message. Streamed,
    the diagnostics come in `message_start`, as Anthropic's API sends
    them, and the SDK's accumulated message carries them."""
    kwargs = dict(model=model, max_tokens=64, system=system, tools=tools,
                  messages=[{"role": "user", "content": "Reply with exactly OK."}],
                  extra_body={"diagnostics": {"previous_message_id": previous}})
    if not stream:
        return client.messages.create(**kwargs)
    with client.messages.stream(**kwargs) as events:
        final = events.get_final_message()
    return final


@pytest.mark.parametrize("stream", [False, True])
def test_messages_tools_changed_is_named_and_nothing_changed_is_none(chain, stream):
    client = claude(chain)
    first = message(client, stream=stream)
    assert first.diagnostics is None

    changed = message(client, previous=first.id, tools=CALENDAR, stream=stream)
    reason = changed.diagnostics.cache_miss_reason
    assert reason.type == "tools_changed"
    assert reason.cache_missed_input_tokens > len(POLICY) // 8

    # Nothing changed: no divergence, and `diagnostics` is null.
    same = message(client, previous=first.id, stream=stream)
    assert same.diagnostics is None
    # The message compared with this time answers for itself next.
    after = message(client, previous=same.id, tools=CALENDAR, stream=stream)
    assert after.diagnostics.cache_miss_reason.type == "tools_changed"


def test_messages_model_and_system_changes_are_named(chain):
    client = claude(chain)
    first = message(client)
    model = message(client, previous=first.id, model="demo-large")
    assert model.diagnostics.cache_miss_reason.type == "model_changed"
    system = message(client, previous=first.id, system="Be brief.")
    assert system.diagnostics.cache_miss_reason.type == "system_changed"


def test_messages_another_tenant_s_message_is_not_found(chain):
    mine = message(claude(chain))
    theirs = message(claude(chain, key="sk-ant-another-tenant"), previous=mine.id)
    assert theirs.diagnostics.cache_miss_reason.type == "previous_message_not_found"


# --------------------------------------------------------------------------
# Bridges sharing a Redis store: a fingerprint kept by one is compared by
# another, and a Messages client's too.
# --------------------------------------------------------------------------


def test_two_bridges_sharing_redis_compare_what_either_kept():
    from redis_servers import RedisServer
    from test_stateful_redis import Proxy

    server = RedisServer().start()
    first_bridge, second_bridge = Proxy(server.url()), Proxy(server.url())
    try:
        kept = ask(first_bridge.client())
        changed = ask(second_bridge.client(), tools=DATE, compare_with=kept.id)
        assert changed.prompt_cache_diagnostics.reason == "tools_changed"
        same = ask(second_bridge.client(), compare_with=kept.id)
        assert same.prompt_cache_diagnostics.type == "cache_hit"
        theirs = ask(second_bridge.client("sk-mallory"), compare_with=kept.id)
        assert theirs.prompt_cache_diagnostics.type == "comparison_response_not_found"

        claude_first = anthropic.Anthropic(base_url=first_bridge.url, api_key="sk-ant-x", max_retries=0,
                                           timeout=20.0)
        claude_second = anthropic.Anthropic(base_url=second_bridge.url, api_key="sk-ant-x", max_retries=0,
                                            timeout=20.0)
        opened = message(claude_first)
        edited = message(claude_second, previous=opened.id, system="Be brief.")
        assert edited.diagnostics.cache_miss_reason.type == "system_changed"
    finally:
        first_bridge.stop()
        second_bridge.stop()
        server.stop()
