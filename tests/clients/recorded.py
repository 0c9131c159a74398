"""What a client must end up with, computed straight from what the upstream
sent (a recorded stream or body, or the demo upstream's own answer), in
the upstream's API, independently of the bridge."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import harness


@dataclass
class Call:
    call_id: str
    name: str
    arguments: str

    @property
    def parsed(self):
        return json.loads(self.arguments)


@dataclass
class Usage:
    input_tokens: int
    output_tokens: int
    total_tokens: int
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass
class Expected:
    """The content of one answer, API-neutral."""

    # The model that answered, as the upstream named it.
    model: str = ""
    text: str = ""
    # Text of each output message, in order (Responses output items).
    messages: list[str] = field(default_factory=list)
    refusal: str = ""
    reasoning: str = ""
    calls: list[Call] = field(default_factory=list)
    usage: Usage | None = None
    # "completed", "incomplete" or "failed".
    status: str = "completed"
    # Responses `incomplete_details.reason`: max_output_tokens / content_filter.
    incomplete_reason: str | None = None
    error_message: str | None = None
    # Tokens of the text's log probabilities, when the upstream sent them.
    logprob_tokens: list[str] | None = None
    # The Chat `finish_reason` a Chat client was sent (observed answers only).
    seen_finish_reason: str | None = None

    @property
    def finish_reason(self) -> str:
        """The Chat `finish_reason` this answer means."""
        if self.status == "incomplete":
            return "content_filter" if self.incomplete_reason == "content_filter" else "length"
        return "tool_calls" if self.calls else "stop"


# --------------------------------------------------------------------------
# Loading recordings
# --------------------------------------------------------------------------


def payloads(path: Path) -> list[dict]:
    """The JSON payloads of a recorded stream: `.sse` files are SSE,
    `*.chunks.txt` files one JSON payload per line."""
    text = path.read_text(encoding="utf-8")
    if path.name.endswith(".chunks.txt"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return harness.sse_payloads(text)


def split_responses(path: Path, out_dir: Path) -> list[Path]:
    """Split a chunks file that concatenates several Responses streams (a new
    one at each `response.created`) into one chunks file per response."""
    parts: list[list[str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        if json.loads(line).get("type") == "response.created" or not parts:
            parts.append([])
        parts[-1].append(line)
    stem = path.name[: -len(".chunks.txt")]
    files = []
    for n, lines in enumerate(parts, 1):
        target = out_dir / f"{stem}.part{n}.chunks.txt"
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files.append(target)
    return files


# --------------------------------------------------------------------------
# Chat Completions
# --------------------------------------------------------------------------


def chat_usage(usage: dict | None) -> Usage | None:
    if not usage:
        return None
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=usage["prompt_tokens"],
        output_tokens=usage["completion_tokens"],
        total_tokens=usage["total_tokens"],
        cached_tokens=prompt_details.get("cached_tokens"),
        reasoning_tokens=completion_details.get("reasoning_tokens"),
    )


def _chat_status(expected: Expected, finish_reason: str | None) -> None:
    if finish_reason == "length":
        expected.status, expected.incomplete_reason = "incomplete", "max_output_tokens"
    elif finish_reason == "content_filter":
        expected.status, expected.incomplete_reason = "incomplete", "content_filter"


def from_chat_chunks(chunks: list[dict]) -> Expected:
    """Choice 0 of a Chat stream: content, refusal and reasoning deltas
    concatenated, tool call fragments joined by `index`, the last usage, the
    first model named."""
    expected = Expected()
    calls: dict[int, dict] = {}
    finish_reason = None
    logprobs: list[str] = []
    saw_logprobs = False
    for chunk in chunks:
        if "error" in chunk:
            expected.status = "failed"
            expected.error_message = chunk["error"].get("message")
            break
        # The first chunk that names a model (Azure opens with one that
        # does not) names the answer's.
        if not expected.model:
            expected.model = chunk.get("model") or ""
        if chunk.get("usage"):
            expected.usage = chat_usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            expected.text += delta.get("content") or ""
            expected.refusal += delta.get("refusal") or ""
            reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
            expected.reasoning += reasoning if isinstance(reasoning, str) else ""
            for fragment in delta.get("tool_calls") or []:
                call = calls.setdefault(fragment.get("index", 0), {"id": "", "name": "", "arguments": ""})
                call["id"] = call["id"] or fragment.get("id") or ""
                function = fragment.get("function") or {}
                call["name"] = call["name"] or function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
            if (choice.get("logprobs") or {}).get("content") is not None:
                saw_logprobs = True
                logprobs += [entry["token"] for entry in choice["logprobs"]["content"]]
            finish_reason = choice.get("finish_reason") or finish_reason
    expected.calls = [Call(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())]
    expected.messages = [expected.text] if expected.text else []
    expected.logprob_tokens = logprobs if saw_logprobs else None
    if expected.status != "failed":
        _chat_status(expected, finish_reason)
    return expected


def from_chat_body(body: dict) -> Expected:
    """Choice 0 of a Chat completion body."""
    choice = next(c for c in body["choices"] if c.get("index", 0) == 0)
    message = choice["message"]
    expected = Expected(
        model=body.get("model") or "",
        text=message.get("content") or "",
        refusal=message.get("refusal") or "",
        reasoning=message.get("reasoning_content") or "",
        calls=[
            Call(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or []
        ],
        usage=chat_usage(body.get("usage")),
    )
    expected.messages = [expected.text] if expected.text else []
    if (choice.get("logprobs") or {}).get("content") is not None:
        expected.logprob_tokens = [entry["token"] for entry in choice["logprobs"]["content"]]
    _chat_status(expected, choice.get("finish_reason"))
    return expected


# --------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------


def responses_usage(usage: dict | None) -> Usage | None:
    if not usage:
        return None
    return Usage(
        input_tokens=usage["input_tokens"],
        output_tokens=usage["output_tokens"],
        total_tokens=usage["total_tokens"],
        cached_tokens=(usage.get("input_tokens_details") or {}).get("cached_tokens"),
        reasoning_tokens=(usage.get("output_tokens_details") or {}).get("reasoning_tokens"),
    )


def _responses_status(expected: Expected, response: dict) -> None:
    expected.status = response.get("status") or "completed"
    if expected.status == "incomplete":
        expected.incomplete_reason = (response.get("incomplete_details") or {}).get("reason")
    if expected.status == "failed" and expected.error_message is None:
        expected.error_message = (response.get("error") or {}).get("message")


def from_responses_events(events: list[dict]) -> Expected:
    """A Responses stream as a client sees it: text, refusal and reasoning
    from their deltas, tool calls from the finished items, usage and status
    from the terminal event, the message of an `error` event."""
    expected = Expected()
    # Text by output item, keyed by `output_index`: some servers change
    # `item_id` between the events of one item; others (llama-server) send
    # no `output_index`, and then the item id keys it.
    message_text: dict[int | str, str] = {}
    for event in events:
        ty = event.get("type")
        if ty == "response.output_text.delta":
            index = event.get("output_index", event.get("item_id"))
            message_text[index] = message_text.get(index, "") + event["delta"]
        elif ty == "response.refusal.delta":
            expected.refusal += event["delta"]
        elif ty in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            expected.reasoning += event["delta"]
        elif ty == "response.output_item.done" and event["item"]["type"] == "function_call":
            item = event["item"]
            expected.calls.append(Call(item["call_id"], item["name"], item["arguments"]))
        elif ty == "error":
            error = event.get("error") if isinstance(event.get("error"), dict) else event
            expected.error_message = error.get("message")
            expected.status = "failed"
        elif ty in ("response.completed", "response.incomplete", "response.failed"):
            _responses_status(expected, event["response"])
            expected.model = event["response"].get("model") or ""
            expected.usage = responses_usage(event["response"].get("usage"))
    expected.messages = [message_text[i] for i in sorted(message_text)]
    expected.text = "".join(expected.messages)
    return expected


def final_message_texts(events: list[dict]) -> list[str]:
    """The text of each finished message item (`output_item.done`)."""
    return [
        "".join(part.get("text", "") for part in event["item"]["content"] if part["type"] == "output_text")
        for event in events
        if event.get("type") == "response.output_item.done" and event["item"]["type"] == "message"
    ]


def from_responses_body(body: dict) -> Expected:
    expected = Expected(model=body.get("model") or "")
    for item in body.get("output", []):
        if item["type"] == "message":
            text = ""
            for part in item.get("content", []):
                if part["type"] == "output_text":
                    text += part["text"]
                elif part["type"] == "refusal":
                    expected.refusal += part["refusal"]
            if text:
                expected.messages.append(text)
        elif item["type"] == "function_call":
            expected.calls.append(Call(item["call_id"], item["name"], item["arguments"]))
        elif item["type"] == "reasoning":
            for part in (item.get("summary") or []) + (item.get("content") or []):
                expected.reasoning += part.get("text", "")
    expected.text = "".join(expected.messages)
    expected.usage = responses_usage(body.get("usage"))
    _responses_status(expected, body)
    return expected
