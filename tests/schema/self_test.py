"""The validator's own check (`validate.py --self-test`): the spec's
examples and hand-made payloads, known good and known bad, each expected to
validate or not, so that a spec rewrite (nullable, oneOf) that goes wrong, or
a check that can no longer fail, is caught before any file is judged."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

from validate import OPEN_RESPONSES_URI, Spec, frame_errors, parse_sse


def spec_example(spec: Spec, name: str) -> Any:
    """A component's example: `x-oaiMeta.example` (JSON text) or `example`."""
    schema = spec.schema(name)
    if "example" in schema:
        return copy.deepcopy(schema["example"])
    text = schema["x-oaiMeta"]["example"]
    return json.loads(text)


def repaired_response(spec: Spec) -> dict:
    """The spec's `Response.example`, minimally repaired where it contradicts
    its own schema: `user: null` (schema: string) is dropped and its
    `output_text` parts get the required `logprobs: []`."""
    response = spec_example(spec, "Response")
    response.pop("user", None)
    for item in response.get("output", []):
        for part in item.get("content", []):
            if part.get("type") == "output_text":
                part.setdefault("logprobs", [])
    return response


# What the Open Responses spec requires of a Response beyond OpenAI's
# example, with the values the bridge writes when a request leaves them out.
OPEN_RESPONSES_DEFAULTS = {
    "background": False,
    "frequency_penalty": 0.0,
    "presence_penalty": 0.0,
    "max_tool_calls": None,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "safety_identifier": None,
    "service_tier": "default",
    "top_logprobs": 0,
    "completed_at": 1741476778,
}


def complete_response(spec: Spec) -> dict:
    """`repaired_response`, plus what Open Responses requires: valid under
    both specs."""
    response = repaired_response(spec)
    for key, value in OPEN_RESPONSES_DEFAULTS.items():
        response.setdefault(key, value)
    for tool in response.get("tools", []):
        tool.setdefault("description", None)
    return response


# Spec examples that contradict their own schema (reported, not asserted).
KNOWN_BAD_SPEC_EXAMPLES = [
    "Response",
    "ResponseCreatedEvent",
    "ResponseInProgressEvent",
    "ResponseOutputItemDoneEvent",
    "ResponseContentPartAddedEvent",
    "ResponseContentPartDoneEvent",
    "ResponseTextDeltaEvent",
    "ResponseTextDoneEvent",
    "ResponseCompletedEvent",
    "ResponseIncompleteEvent",
    "ResponseFailedEvent",
    "ResponseQueuedEvent",
    "ResponseCustomToolCallInputDeltaEvent",
]


def self_test(spec: Spec) -> int:
    failures = 0

    def expect(label: str, ok: bool, err: str | None) -> None:
        nonlocal failures
        passed = (err is None) == ok
        if not passed:
            failures += 1
        verdict = "ok  " if passed else "FAIL"
        got = "valid" if err is None else f"invalid ({err})"
        print(f"{verdict} {label}: expected {'valid' if ok else 'invalid'}, got {got}")

    # Known-good payloads: the spec's own examples that agree with its schemas.
    good_event_examples = [
        "ResponseOutputItemAddedEvent",
        "ResponseReasoningSummaryPartAddedEvent",
        "ResponseReasoningSummaryPartDoneEvent",
        "ResponseReasoningSummaryTextDeltaEvent",
        "ResponseReasoningSummaryTextDoneEvent",
        "ResponseReasoningTextDeltaEvent",
        "ResponseRefusalDeltaEvent",
        "ResponseRefusalDoneEvent",
        "ResponseFunctionCallArgumentsDoneEvent",
        "ResponseWebSearchCallSearchingEvent",
        "ResponseErrorEvent",
    ]
    examples = {name: spec_example(spec, name) for name in good_event_examples}
    first = lambda errors: errors[0] if errors else None  # noqa: E731
    for name, ex in examples.items():
        expect(f"spec example {name} as ResponseStreamEvent (OpenAI)", True, first(spec.openai_event_errors(ex)))
    chat = spec_example(spec, "CreateChatCompletionResponse")
    expect("spec example CreateChatCompletionResponse", True, spec.error(chat, "CreateChatCompletionResponse"))
    chunk_text = spec.schema("CreateChatCompletionStreamResponse")["x-oaiMeta"]["example"]
    chunks = [json.loads(l) for l in chunk_text.splitlines() if l.strip().startswith("{")]
    for k, c in enumerate(chunks):
        expect(f"spec example chat chunk {k}", True, spec.error(c, "CreateChatCompletionStreamResponse"))
    repaired = repaired_response(spec)
    expect(
        "spec example Response (repaired: no user:null, logprobs added) (OpenAI)",
        True,
        first(spec._errors(repaired, "Response")),
    )
    expect(
        "the repaired example misses what Open Responses requires",
        False,
        spec.error(repaired, "Response"),
    )
    response = complete_response(spec)
    expect("the repaired example with the Open Responses fields, both specs", True, spec.error(response, "Response"))

    # Known-good hand-made payloads.
    in_progress = dict(response, status="in_progress", output=[], usage=None, completed_at=None)
    created = {"type": "response.created", "response": in_progress, "sequence_number": 0}
    expect("response.created (usage null) built from the complete Response", True, spec.error(created, "ResponseStreamEvent"))
    completed = {"type": "response.completed", "response": response, "sequence_number": 9}
    expect("response.completed built from the complete Response", True, spec.error(completed, "ResponseStreamEvent"))
    delta = {
        "type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
        "content_index": 0, "delta": "x", "sequence_number": 3, "logprobs": [],
    }
    expect("output_text.delta with logprobs", True, spec.error(delta, "ResponseStreamEvent"))
    expect(
        "minimal CreateResponse",
        True,
        spec.error({"model": "gpt-4o", "input": "hi", "stream": True}, "CreateResponse"),
    )
    expect(
        "minimal CreateChatCompletionRequest",
        True,
        spec.error(
            {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}],
             "stream": True, "stream_options": {"include_usage": True}},
            "CreateChatCompletionRequest",
        ),
    )
    typed_input = {
        "model": "gpt-4o",
        "input": [
            {"type": "message", "role": "developer", "content": "be brief"},
            {"type": "message", "id": "msg_1", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "42"},
        ],
        "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": False}],
    }
    expect("CreateResponse with typed message items (overlapping oneOf)", True, spec.error(typed_input, "CreateResponse"))
    bad = copy.deepcopy(typed_input)
    del bad["input"][2]["call_id"]
    expect("CreateResponse with a function_call item without call_id", False, spec.error(bad, "CreateResponse"))
    nested_error = {
        "type": "error",
        "sequence_number": 2,
        "error": {"type": "server_error", "code": None, "message": "boom", "param": None},
    }
    expect(
        "nested error event as Open Responses ErrorStreamingEvent",
        True,
        spec.error(nested_error, "ErrorStreamingEvent", OPEN_RESPONSES_URI),
    )
    both_error = dict(nested_error, code=None, message="boom", param=None)
    expect("error event with the flat and the nested shape, both specs", True, spec.error(both_error, "ResponseStreamEvent"))
    expect("error event with the nested shape only, both specs", False, spec.error(nested_error, "ResponseStreamEvent"))

    # Open Responses: its extension rules, and its standard shapes unwidened.
    custom_call = {
        "type": "custom_tool_call", "id": "ctc_1", "status": "completed",
        "call_id": "call_1", "name": "apply_patch", "input": "*** Begin Patch",
    }
    namespaced = {"type": "namespace", "name": "ns", "description": "d", "tools": [{"type": "function", "name": "f", "parameters": {}, "strict": False}]}
    extended = dict(response, output=[custom_call], tools=[namespaced], tool_choice={"type": "custom", "name": "apply_patch"})
    expect("custom_tool_call item, namespace tool and custom tool_choice (extensions)", True, spec.error(extended, "Response"))
    bad = copy.deepcopy(extended)
    del bad["output"][0]["id"]
    expect("an extension item without id", False, spec.error(bad, "Response"))
    bad = dict(response, tools=[{"type": "function", "name": "f", "parameters": {}, "strict": False}])
    expect("a function tool without description (Open Responses requires the key)", False, spec.error(bad, "Response"))
    bad = dict(response, output=[{"type": "message", "id": "m", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}])
    expect("a message whose output_text lacks annotations is not an extension", False, spec.error(bad, "Response"))
    reasoning_delta = {
        "type": "response.reasoning_text.delta", "item_id": "rs_1", "output_index": 0,
        "content_index": 0, "delta": "hm", "sequence_number": 4,
    }
    expect("response.reasoning_text.delta (an extension event)", True, spec.error(reasoning_delta, "ResponseStreamEvent"))
    bad = {k: v for k, v in reasoning_delta.items() if k != "sequence_number"}
    expect("an extension event without sequence_number", False, spec.error(bad, "ResponseStreamEvent"))
    bad = dict(response)
    del bad["presence_penalty"]
    expect("Response without presence_penalty (Open Responses requires it)", False, spec.error(bad, "Response"))
    bad = dict(response, top_p=None)
    expect("Response with top_p null (Open Responses: a number)", False, spec.error(bad, "Response"))
    http_error = {"error": {"message": "bad", "type": "invalid_request_error", "param": None, "code": None}}
    expect("ErrorResponse", True, spec.error(http_error, "ErrorResponse"))
    chunk_null_finish = copy.deepcopy(chunks[0])
    chunk_null_finish["usage"] = None
    expect(
        "chunk with finish_reason null and usage null (nullable rewrite)",
        True,
        spec.error(chunk_null_finish, "CreateChatCompletionStreamResponse"),
    )
    usage_chunk = {k: v for k, v in chunks[0].items() if k != "obfuscation"}
    usage_chunk["choices"] = []
    usage_chunk["usage"] = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    expect("usage chunk", True, spec.error(usage_chunk, "CreateChatCompletionStreamResponse"))

    # Known-bad payloads: a required field missing, a wrong type, a bad value.
    bad = copy.deepcopy(created)
    del bad["sequence_number"]
    expect("response.created without sequence_number", False, spec.error(bad, "ResponseStreamEvent"))
    bad = copy.deepcopy(completed)
    del bad["response"]["id"]
    expect("response.completed without response.id", False, spec.error(bad, "ResponseStreamEvent"))
    bad = copy.deepcopy(response)
    bad["created_at"] = "yesterday"
    expect("Response with string created_at", False, spec.error(bad, "Response"))
    bad = copy.deepcopy(response)
    del bad["output"]
    expect("Response without output", False, spec.error(bad, "Response"))
    bad = copy.deepcopy(response)
    bad["usage"] = None
    expect("Response with usage null (nullable: see nullable_usage)", True, spec.error(bad, "Response"))
    bad["usage"] = "none"
    expect("Response with a string usage", False, spec.error(bad, "Response"))
    bad = copy.deepcopy(response)
    del bad["output"][0]["content"][0]["annotations"]
    expect("Response whose output_text lacks annotations", False, spec.error(bad, "Response"))
    bad = copy.deepcopy(chunks[0])
    del bad["choices"]
    expect("chat chunk without choices", False, spec.error(bad, "CreateChatCompletionStreamResponse"))
    bad = copy.deepcopy(chunks[0])
    bad["created"] = "now"
    expect("chat chunk with string created", False, spec.error(bad, "CreateChatCompletionStreamResponse"))
    bad = copy.deepcopy(chunks[0])
    bad["choices"][0]["finish_reason"] = "eos"
    expect("chat chunk with unknown finish_reason", False, spec.error(bad, "CreateChatCompletionStreamResponse"))
    bad = copy.deepcopy(chat)
    bad["choices"][0]["message"]["role"] = 7
    expect("chat completion with integer role", False, spec.error(bad, "CreateChatCompletionResponse"))
    expect(
        "CreateChatCompletionRequest without messages",
        False,
        spec.error({"model": "gpt-4o"}, "CreateChatCompletionRequest"),
    )
    expect(
        "CreateResponse with string temperature",
        False,
        spec.error({"model": "gpt-4o", "input": "hi", "temperature": "hot"}, "CreateResponse"),
    )
    bad = copy.deepcopy(nested_error)
    del bad["error"]["message"]
    expect("nested error event without message", False, spec.error(bad, "ErrorStreamingEvent", OPEN_RESPONSES_URI))
    expect("nested error event as the spec's ResponseErrorEvent", False, spec.error(nested_error, "ResponseErrorEvent"))
    expect(
        "ErrorResponse without error.type",
        False,
        spec.error({"error": {"message": "bad", "param": None, "code": None}}, "ErrorResponse"),
    )
    bad = {k: v for k, v in delta.items() if k != "logprobs"}
    expect("output_text.delta without logprobs", False, spec.error(bad, "ResponseStreamEvent"))
    expect(
        "unknown event type",
        False,
        spec.error({"type": "response.bogus", "sequence_number": 1}, "ResponseStreamEvent"),
    )

    # Branch dispatch gives the same verdict as the whole anyOf.
    samples = list(examples.values()) + [created, completed, delta, bad, nested_error]
    for ex in samples:
        full = not list(spec.validator("ResponseStreamEvent").iter_errors(ex))
        fast = not spec.openai_event_errors(ex)
        expect(f"branch dispatch agrees with the anyOf for {ex.get('type')}", True, None if full == fast else f"anyOf={full} branch={fast}")

    # The stream paths end to end (SSE parsing + per-frame dispatch).
    good_chat_sse = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    errs = list(frame_errors(spec, "chat-stream", parse_sse(good_chat_sse)))
    expect("chat SSE stream from the spec example", True, errs[0] if errs else None)
    errs = list(frame_errors(spec, "chat-stream", parse_sse(good_chat_sse + 'data: {"error": {"message": "x"}}\n\n')))
    expect("chat SSE stream with an incomplete error chunk", False, errs[0] if errs else None)
    events = [created, examples["ResponseOutputItemAddedEvent"], both_error]
    good_resp_sse = "".join(f"event: {e['type']}\r\ndata: {json.dumps(e)}\r\n\r\n" for e in events)
    errs = list(frame_errors(spec, "responses-stream", parse_sse(good_resp_sse)))
    expect("responses SSE stream (CRLF) with an error event", True, errs[0] if errs else None)
    errs = list(frame_errors(spec, "responses-stream", parse_sse(good_resp_sse + "data: [DONE]\n\n")))
    expect("responses SSE stream ending in [DONE]", False, errs[0] if errs else None)

    # Spec examples that contradict the spec (information only).
    for name in KNOWN_BAD_SPEC_EXAMPLES:
        try:
            ex = spec_example(spec, name)
        except (KeyError, json.JSONDecodeError) as e:
            print(f"info spec example {name} is not parseable JSON: {e}")
            continue
        target = "Response" if name == "Response" else "ResponseStreamEvent"
        err = spec.error(ex, target)
        print(f"info spec example {name} vs its own schema: {err or 'valid (no longer a known defect)'}")

    # Speed of the big anyOf vs branch dispatch (validators are cached).
    n = 50
    start = time.perf_counter()
    for _ in range(n):
        list(spec.validator("ResponseStreamEvent").iter_errors(completed))
    full_ms = (time.perf_counter() - start) / n * 1000
    start = time.perf_counter()
    for _ in range(n):
        spec.event_error(completed)
    branch_ms = (time.perf_counter() - start) / n * 1000
    start = time.perf_counter()
    for _ in range(n):
        spec.event_error(delta)
    delta_ms = (time.perf_counter() - start) / n * 1000
    print(
        f"info response.completed: {full_ms:.2f} ms through the whole anyOf, {branch_ms:.2f} ms through its branch; "
        f"output_text.delta: {delta_ms:.3f} ms"
    )

    print(f"self-test: {'FAILED' if failures else 'passed'} ({failures} unexpected results)")
    return 1 if failures else 0


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------
