"""What the SDK ended up with, read from its own typed objects, and the
comparison with what the upstream sent (`recorded.Expected`)."""

from __future__ import annotations

import json
import typing

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

import recorded
from recorded import Call, Expected, Usage

# --------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------


def _event_classes() -> dict[str, type]:
    """`type` value -> the SDK class for it, from the SDK's event union."""
    union = typing.get_args(ResponseStreamEvent)[0]
    classes = {}
    for cls in typing.get_args(union):
        (literal,) = typing.get_args(cls.model_fields["type"].annotation)
        classes[literal] = cls
    return classes


EVENT_CLASSES = _event_classes()


def assert_typed_events(events: list) -> None:
    """Each event is an instance of the SDK class its `type` names, and the
    SDK's pydantic model accepts it under validation, not just construction."""
    assert events, "no events"
    for n, event in enumerate(events):
        cls = EVENT_CLASSES.get(event.type)
        assert cls is not None, f"event {n}: type {event.type!r} is not a Responses stream event the SDK knows"
        assert type(event) is cls, f"event {n}: {event.type} parsed as {type(event).__name__}, not {cls.__name__}"
        cls.model_validate(event.to_dict())


def assert_sequence(events: list) -> None:
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), f"sequence numbers not consecutive: {numbers}"


def from_response(response: Response) -> Expected:
    """Content of a Responses `Response` (a body, or a stream's final one)."""
    observed = Expected(model=response.model, status=response.status or "completed")
    if response.incomplete_details is not None:
        observed.incomplete_reason = response.incomplete_details.reason
    if response.error is not None:
        observed.error_message = response.error.message
    tokens: list[str] = []
    saw_logprobs = False
    for item in response.output:
        if item.type == "message":
            text = ""
            for part in item.content:
                if part.type == "output_text":
                    text += part.text
                    if part.logprobs:
                        saw_logprobs = True
                        tokens += [lp.token for lp in part.logprobs]
                elif part.type == "refusal":
                    observed.refusal += part.refusal
            if text:
                observed.messages.append(text)
        elif item.type == "function_call":
            observed.calls.append(Call(item.call_id, item.name, item.arguments))
        elif item.type == "reasoning":
            for part in list(item.summary or []) + list(item.content or []):
                observed.reasoning += part.text
    observed.text = "".join(observed.messages)
    assert observed.text == response.output_text
    if saw_logprobs:
        observed.logprob_tokens = tokens
    if response.usage is not None:
        u = response.usage
        observed.usage = Usage(
            u.input_tokens,
            u.output_tokens,
            u.total_tokens,
            u.input_tokens_details.cached_tokens if u.input_tokens_details else None,
            u.output_tokens_details.reasoning_tokens if u.output_tokens_details else None,
        )
    return observed


def from_events(events: list) -> Expected:
    """Content of a stream of SDK events, read from the deltas (what a
    client that renders as it goes shows) and the terminal event."""
    observed = recorded.from_responses_events([e.to_dict() for e in events])
    terminal = events[-1]
    assert terminal.type in ("response.completed", "response.incomplete", "response.failed"), terminal.type
    final = from_response(terminal.response)
    # Deltas and the terminal response must agree with each other.
    assert observed.calls == final.calls
    assert observed.messages == final.messages, "text deltas differ from the final response's text"
    assert observed.refusal == final.refusal
    assert observed.reasoning == final.reasoning, "reasoning deltas differ from the final reasoning item"
    observed.logprob_tokens = final.logprob_tokens
    observed.model = final.model
    return observed


# --------------------------------------------------------------------------
# Chat Completions
# --------------------------------------------------------------------------


def _chat_usage(usage) -> Usage | None:
    if usage is None:
        return None
    return Usage(
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.total_tokens,
        usage.prompt_tokens_details.cached_tokens if usage.prompt_tokens_details else None,
        usage.completion_tokens_details.reasoning_tokens if usage.completion_tokens_details else None,
    )


def from_completion(completion: ChatCompletion) -> Expected:
    """Content of choice 0 of a Chat completion (a body, or a stream's
    accumulated one)."""
    assert len(completion.choices) == 1, f"{len(completion.choices)} choices"
    choice = completion.choices[0]
    message = choice.message
    observed = Expected(
        model=completion.model,
        text=message.content or "",
        refusal=message.refusal or "",
        calls=[Call(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []],
        usage=_chat_usage(completion.usage),
    )
    extra = message.model_extra or {}
    observed.reasoning = extra.get("reasoning_content") or extra.get("reasoning") or ""
    observed.messages = [observed.text] if observed.text else []
    if choice.logprobs is not None and choice.logprobs.content is not None:
        observed.logprob_tokens = [lp.token for lp in choice.logprobs.content]
    observed.status = {"length": "incomplete", "content_filter": "incomplete"}.get(choice.finish_reason, "completed")
    if choice.finish_reason == "length":
        observed.incomplete_reason = "max_output_tokens"
    elif choice.finish_reason == "content_filter":
        observed.incomplete_reason = "content_filter"
    observed.seen_finish_reason = choice.finish_reason
    return observed


def from_chunks(chunks: list[ChatCompletionChunk]) -> Expected:
    """Content of SDK chunks, joined as a client joins them."""
    assert chunks, "no chunks"
    for n, chunk in enumerate(chunks):
        assert type(chunk) is ChatCompletionChunk, f"chunk {n} parsed as {type(chunk).__name__}"
        ChatCompletionChunk.model_validate(chunk.to_dict())
    assert len({c.id for c in chunks}) == 1, "chunks of one completion carry different ids"
    assert len({c.model for c in chunks}) == 1, "chunks of one completion name different models"
    for chunk in chunks:
        for choice in chunk.choices:
            assert choice.index == 0, f"choice index {choice.index}"
    observed = recorded.from_chat_chunks([c.to_dict() for c in chunks])
    finishes = [ch.finish_reason for c in chunks for ch in c.choices if ch.finish_reason]
    assert len(finishes) == 1, f"finish_reason sent {len(finishes)} times: {finishes}"
    observed.seen_finish_reason = finishes[0]
    return observed


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------


def assert_content(observed: Expected, expected: Expected, *, reasoning: bool, separate_messages: bool,
                   usage: bool = True, logprobs: bool = False) -> None:
    """The client got what the upstream sent: text (per message where the
    client's API has several), refusal, tool calls (id, name, arguments as
    JSON), usage, the outcome; reasoning where the client's API carries it."""
    assert observed.model == expected.model
    if separate_messages:
        assert observed.messages == expected.messages
    assert observed.text == expected.text
    assert observed.refusal == expected.refusal
    assert [(c.call_id, c.name) for c in observed.calls] == [(c.call_id, c.name) for c in expected.calls]
    assert [c.parsed for c in observed.calls] == [c.parsed for c in expected.calls]
    assert [c.arguments for c in observed.calls] == [c.arguments for c in expected.calls]
    assert observed.status == expected.status
    assert observed.incomplete_reason == expected.incomplete_reason
    if observed.seen_finish_reason is not None:
        assert observed.seen_finish_reason == expected.finish_reason
    if reasoning:
        assert observed.reasoning == expected.reasoning
    else:
        assert observed.reasoning == "", "reasoning where the client's API has no place for it"
    if logprobs:
        assert observed.logprob_tokens == expected.logprob_tokens
    if usage:
        assert expected.usage is not None, "the upstream sent no usage"
        assert observed.usage is not None, "usage lost"
        for name in ("input_tokens", "output_tokens", "total_tokens"):
            assert getattr(observed.usage, name) == getattr(expected.usage, name), name
        for name in ("cached_tokens", "reasoning_tokens"):
            if getattr(expected.usage, name) is not None:
                assert (getattr(observed.usage, name) or 0) == getattr(expected.usage, name), name


def assert_stream_error(raised: BaseException, message: str | None = None) -> None:
    """A stream that failed is reported by the SDK as an `APIError` carrying
    the error the bridge sent in the stream: not a parse error, not a dropped
    connection (the bridge reports upstream failures in-band)."""
    assert isinstance(raised, openai.APIError), f"{type(raised).__name__}: {raised}"
    assert not isinstance(raised, (openai.APIConnectionError, openai.APIStatusError)), (
        f"{type(raised).__name__}: {raised}"
    )
    if message is not None:
        assert message in str(raised), f"{raised!s} does not carry {message!r}"


def dump(value) -> str:
    return json.dumps(value, indent=1, default=str)[:4000]
