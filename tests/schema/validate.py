#!/usr/bin/env python3
"""Validate Chat Completions / Responses payloads against the OpenAI OpenAPI
spec, and Responses payloads against the Open Responses spec as well.

Usage:
    python tests/schema/validate.py KIND FILE...
    python tests/schema/validate.py --self-test   (tests/schema/self_test.py)

KIND is one of:
    chat-request        CreateChatCompletionRequest         (JSON file)
    responses-request   CreateResponse, and Open Responses' CreateResponseBody
    chat-response       CreateChatCompletionResponse        (JSON file)
    responses-response  Response, and Open Responses' ResponseResource
    chat-stream         SSE text: each data frame except [DONE] against
                        CreateChatCompletionStreamResponse; a frame with a
                        top-level `error` key against ErrorResponse
    responses-stream    SSE text: each event against ResponseStreamEvent, and
                        against the Open Responses event of its type (the
                        bridge's `error` event carries both the spec's flat
                        fields and the nested `error` object Open Responses
                        defines)

Stream files may also be "chunks" files (one JSON payload per line, no SSE
framing, as in shared/fixtures/vercel-ai). A request file that wraps a capture
({method, path, headers, body}, as in shared/fixtures/codex-peer) is unwrapped.

The spec is read from $WIREBRIDGE_SHARED_DIR/spec, defaulting to
<repo>/../shared/spec. One line is printed per file: `ok FILE` or
`FAIL FILE: path: message`; the exit status is 1 if any file failed.

The OpenAI spec is OpenAPI 3.1 (JSON Schema 2020-12), with two OpenAPI-isms
that plain JSON Schema gets wrong, rewritten before validation:

* 112 OpenAPI-3.0 style `nullable: true` flags, which 2020-12 ignores (so every
  chunk's `finish_reason: null` would be rejected): turned into null types
  (`--no-nullable-fix` keeps them);
* `oneOf` unions whose branches overlap (a `type: "message"` input item is both
  an EasyInputMessage and an InputMessage, so every real Codex request fails
  with "is valid under each of"): turned into `anyOf` (`--strict-oneof` keeps
  them).

Where the two specs disagree, one rule each, stated here and in
docs/mappings/responses-over-chat.md:

* `Response.usage` is `null` until the upstream reports usage (on
  `response.created` and `response.in_progress`): Open Responses requires the
  key and allows null, OpenAI's own streams send null (see the recordings in
  shared/fixtures/vercel-ai), and only OpenAI's spec omits `nullable`; it is
  rewritten to allow null.
* Types outside the Open Responses vocabulary (OpenAI's custom tool calls,
  namespace and hosted tools, `response.reasoning_text.*` events) are checked
  under its rules for extensions: see tests/schema/open_responses.py.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator

from jsonschema import Draft202012Validator
from jsonschema.exceptions import relevance
from referencing import Registry
from referencing.jsonschema import DRAFT202012

import open_responses

OPENAI_URI = "urn:wirebridge:spec:openapi"
OPEN_RESPONSES_URI = open_responses.URI

KINDS = {
    "chat-request": "CreateChatCompletionRequest",
    "responses-request": "CreateResponse",
    "chat-response": "CreateChatCompletionResponse",
    "responses-response": "Response",
    "chat-stream": "CreateChatCompletionStreamResponse",
    "responses-stream": "ResponseStreamEvent",
}

MAX_MESSAGE = 300


# --------------------------------------------------------------------------
# Spec loading
# --------------------------------------------------------------------------


def spec_dir() -> Path:
    """`$WIREBRIDGE_SHARED_DIR/spec`, else `<repo>/../shared/spec`."""
    env = os.environ.get("WIREBRIDGE_SHARED_DIR")
    if env:
        return Path(env) / "spec"
    repo = Path(__file__).resolve().parents[2]
    return repo.parent / "shared" / "spec"


def oneof_to_anyof(node: Any) -> Any:
    """Rewrite every `oneOf` into `anyOf`.

    OpenAPI unions with a `discriminator` mean "pick the branch by `type`",
    but OpenAI's branches overlap as plain JSON Schema: a `type: "message"`
    input item matches both EasyInputMessage and InputMessage, so a strict
    `oneOf` rejects every real request with typed messages (e.g. all Codex
    requests) with "is valid under each of"."""
    if isinstance(node, list):
        return [oneof_to_anyof(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k == "oneOf" and isinstance(v, list) and "anyOf" not in node:
            out["anyOf"] = oneof_to_anyof(v)
        else:
            out[k] = oneof_to_anyof(v)
    return out


def fix_nullable(node: Any) -> Any:
    """Rewrite OpenAPI 3.0 `nullable: true` into JSON Schema null types."""
    if isinstance(node, list):
        return [fix_nullable(x) for x in node]
    if not isinstance(node, dict):
        return node
    node = {k: fix_nullable(v) for k, v in node.items()}
    flag = node.get("nullable")
    if not isinstance(flag, bool):
        return node  # e.g. a property that happens to be named "nullable"
    del node["nullable"]
    if not flag:
        return node
    ty = node.get("type")
    if isinstance(ty, (str, list)):
        types = [ty] if isinstance(ty, str) else list(ty)
        if "null" not in types:
            types.append("null")
        node["type"] = types
        if "enum" in node and None not in node["enum"]:
            node["enum"] = list(node["enum"]) + [None]
        return node
    return {"anyOf": [node, {"type": "null"}]}


def nullable_usage(doc: dict) -> None:
    """Lets OpenAI's `Response.usage` be null, as OpenAI's own streams send
    it before usage is known (see the module docs)."""
    response = doc["components"]["schemas"]["Response"]
    for part in response.get("allOf", [response]):
        props = part.get("properties", {})
        if "usage" in props:
            props["usage"] = {"anyOf": [props["usage"], {"type": "null"}]}
            return
    for part in response.get("allOf", []):
        ref = part.get("$ref", "")
        props = doc["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {}).get("properties", {})
        if "usage" in props:
            raise SystemExit("Response.usage is defined in a shared component; patch it there")
    raise SystemExit("Response.usage not found in the OpenAI spec")


class Spec:
    """Both spec documents in one registry, with validators cached per schema."""

    def __init__(self, directory: Path, nullable_fix: bool = True, strict_oneof: bool = False) -> None:
        self.directory = directory
        openai_path = directory / "openapi.json"
        open_responses_path = directory / "open-responses-openapi.json"
        for p in (openai_path, open_responses_path):
            if not p.is_file():
                raise SystemExit(
                    f"spec file {p} not found (set WIREBRIDGE_SHARED_DIR to the shared directory)"
                )
        self.openai = json.loads(openai_path.read_text(encoding="utf-8"))
        self.open_responses = json.loads(open_responses_path.read_text(encoding="utf-8"))
        if nullable_fix:
            self.openai = fix_nullable(self.openai)
            self.open_responses = fix_nullable(self.open_responses)
        if not strict_oneof:
            self.openai = oneof_to_anyof(self.openai)
            self.open_responses = oneof_to_anyof(self.open_responses)
        nullable_usage(self.openai)
        open_responses.extend(self.open_responses)
        self._open_events = open_responses.event_branches(self.open_responses)
        self.registry = Registry().with_resources(
            [
                (OPENAI_URI, DRAFT202012.create_resource(self.openai)),
                (OPEN_RESPONSES_URI, DRAFT202012.create_resource(self.open_responses)),
            ]
        )
        self._event_branches: dict[str, str] | None = None

    def schema(self, name: str, doc: str = OPENAI_URI) -> dict:
        document = self.openai if doc == OPENAI_URI else self.open_responses
        try:
            return document["components"]["schemas"][name]
        except KeyError:
            raise SystemExit(f"schema {name} not found in {doc}") from None

    @functools.lru_cache(maxsize=None)
    def validator(self, name: str, doc: str = OPENAI_URI) -> Draft202012Validator:
        self.schema(name, doc)  # fail early on a bad name
        wrapper = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": f"{doc}#/components/schemas/{name}",
        }
        return Draft202012Validator(wrapper, registry=self.registry)

    def error(self, instance: Any, name: str, doc: str = OPENAI_URI) -> str | None:
        """None when valid, else `path: message` of the most relevant error."""
        errors = self.errors(instance, name, doc)
        return errors[0] if errors else None

    def errors(self, instance: Any, name: str, doc: str = OPENAI_URI) -> list[str]:
        """Every error as `path: message`, the most relevant first.

        `ResponseStreamEvent` is validated through the branch of its anyOf
        whose `type` matches the event (see `event_errors`). The OpenAI
        schemas with an Open Responses counterpart (`Response`,
        `CreateResponse`, the stream events) are checked against both; the
        errors of the second are prefixed `[open-responses]`."""
        if name == "ResponseStreamEvent" and doc == OPENAI_URI:
            return self.event_errors(instance)
        errors = self._errors(instance, name, doc)
        counterpart = open_responses.COUNTERPARTS.get(name) if doc == OPENAI_URI else None
        if counterpart:
            errors += [f"[open-responses] {e}" for e in self._errors(instance, counterpart, OPEN_RESPONSES_URI)]
        return errors

    def _errors(self, instance: Any, name: str, doc: str = OPENAI_URI) -> list[str]:
        found = sorted(self.validator(name, doc).iter_errors(instance), key=relevance, reverse=True)
        out = []
        for e in found:
            e = explain([e])
            message = e.message
            if len(message) > MAX_MESSAGE:
                message = message[:MAX_MESSAGE] + "…"
            out.append(f"{e.json_path}: {message}")
        return out

    def event_errors(self, event: Any) -> list[str]:
        """An event against both specs: `openai_event_errors`, then
        `open_event_errors`."""
        return self.openai_event_errors(event) + self.open_event_errors(event)

    def openai_event_errors(self, event: Any) -> list[str]:
        """Validate against ResponseStreamEvent. Every branch of its anyOf
        requires `type` with a single allowed value (checked when the branch
        table is built), so an event is valid under the anyOf iff it is valid
        under the branch for its `type`: validating that branch alone gives the
        same verdict and a precise message, and an invalid event is not checked
        against the 57 other branches (a valid one costs about the same either
        way). Events with no branch go through the whole anyOf (and fail)."""
        ty = event.get("type") if isinstance(event, dict) else None
        branch = self.event_branches().get(ty) if isinstance(ty, str) else None
        if branch is None:
            return [f"unknown event type {ty!r}: {e}" for e in self._errors(event, "ResponseStreamEvent")]
        return [f"({branch}) {e}" for e in self._errors(event, branch)]

    def open_event_errors(self, event: Any) -> list[str]:
        """The event against the Open Responses schema of its type, or its
        rules for extension events."""
        name = open_responses.event_schema(self._open_events, event)
        return [f"[open-responses] ({name}) {e}" for e in self._errors(event, name, OPEN_RESPONSES_URI)]

    def event_error(self, event: Any) -> str | None:
        """First error of `event_errors`, or None."""
        errors = self.event_errors(event)
        return errors[0] if errors else None

    def event_branches(self) -> dict[str, str]:
        """Event `type` -> component name, from ResponseStreamEvent's anyOf."""
        if self._event_branches is None:
            branches: dict[str, str] = {}
            for ref in self.schema("ResponseStreamEvent")["anyOf"]:
                name = ref["$ref"].rsplit("/", 1)[-1]
                schema = self.schema(name)
                ty = schema.get("properties", {}).get("type", {})
                values = [v for v in ty.get("enum", []) + ([ty["const"]] if "const" in ty else []) if v is not None]
                if "type" not in schema.get("required", []) or len(values) != 1 or values[0] in branches:
                    raise SystemExit(
                        f"ResponseStreamEvent branch {name} is not discriminated by a single required `type`; "
                        "branch dispatch would not be equivalent to the anyOf"
                    )
                branches[values[0]] = name
            self._event_branches = branches
        return self._event_branches


def _branch_mismatch(errors: list) -> bool:
    """True when a branch of an anyOf/oneOf was rejected for being the wrong
    kind of thing altogether: another JSON type, or another `type` tag."""
    for e in errors:
        if e.validator == "type" and not e.relative_path:
            return True
        if e.validator in ("const", "enum") and list(e.relative_path) == ["type"]:
            return True
    return False


def explain(errors: list):
    """The most useful error. Like jsonschema's best_match, but an anyOf/oneOf
    failure is explained through the branch that matches the instance's kind
    (its JSON type and `type` tag; the one with the fewest errors if several
    do) instead of "is not valid under any of the given schemas" or a deep
    error from an unrelated branch."""
    e = max(errors, key=relevance)
    while e.context:
        branches: dict[Any, list] = {}
        for sub in e.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        candidates = [errs for errs in branches.values() if not _branch_mismatch(errs)]
        if not candidates:
            break
        e = max(min(candidates, key=len), key=relevance)
    return e


# --------------------------------------------------------------------------
# Input parsing
# --------------------------------------------------------------------------


def parse_sse(text: str) -> list[tuple[str | None, str]]:
    """(event, data) frames of SSE text: LF/CRLF/CR lines, comments skipped,
    data lines joined with \\n, frames without data dropped, last frame kept
    even without a final blank line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    frames: list[tuple[str | None, str]] = []
    event: str | None = None
    data: list[str] | None = None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if data is not None:
                frames.append((event, "\n".join(data)))
            event, data = None, None
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            event = value or None
        elif field == "data":
            data = (data or []) + [value]
    if data is not None:
        frames.append((event, "\n".join(data)))
    return frames


def stream_frames(path: Path, text: str) -> list[tuple[str | None, str]]:
    """Frames of an SSE file, or of a chunks file (one JSON per line)."""
    lines = [l for l in text.splitlines() if l.strip()]
    is_sse = any(l.startswith("data:") for l in lines)
    if path.name.endswith(".chunks.txt") or not is_sse:
        return [(None, l.strip()) for l in lines]
    return parse_sse(text)


def frame_errors(spec: Spec, kind: str, frames: list[tuple[str | None, str]]) -> Iterator[str]:
    """Yield one message per error, prefixed with its frame."""
    for i, (event, data) in enumerate(frames):
        if data.strip() == "[DONE]":
            if kind == "responses-stream":
                yield f"frame {i}: [DONE] is not part of a Responses stream"
            continue
        try:
            payload = json.loads(data)
        except json.JSONDecodeError as e:
            yield f"frame {i}: not JSON: {e}"
            continue
        if kind == "chat-stream":
            if isinstance(payload, dict) and "error" in payload:
                label, errors = "error chunk", spec.errors(payload, "ErrorResponse")
            else:
                label, errors = "chunk", spec.errors(payload, "CreateChatCompletionStreamResponse")
        else:
            ty = payload.get("type") if isinstance(payload, dict) else None
            label, errors = str(ty), spec.event_errors(payload)
        for err in errors:
            yield f"frame {i} ({label}) {err}"


def load_json(path: Path, kind: str) -> Any:
    value = json.loads(path.read_text(encoding="utf-8"))
    if (
        kind.endswith("-request")
        and isinstance(value, dict)
        and {"method", "body"} <= value.keys()
    ):
        value = value["body"]
    return value


def validate_file(spec: Spec, kind: str, path: Path) -> list[str]:
    """Every problem of a file, the most relevant first (empty when valid)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        return [f"cannot read: {e}"]
    if kind.endswith("-stream"):
        frames = stream_frames(path, text)
        if not frames:
            return ["no frames"]
        return list(frame_errors(spec, kind, frames))
    try:
        value = load_json(path, kind)
    except json.JSONDecodeError as e:
        return [f"not JSON: {e}"]
    return spec.errors(value, KINDS[kind])


# --------------------------------------------------------------------------
# Self-test
# --------------------------------------------------------------------------


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Validate OpenAI Chat Completions / Responses payloads against the OpenAPI spec.",
    )
    parser.add_argument("kind", nargs="?", choices=sorted(KINDS), help="what the files hold")
    parser.add_argument("files", nargs="*", type=Path, help="JSON, SSE or chunks files")
    parser.add_argument("--self-test", action="store_true", help="check the validator on known-good and known-bad payloads")
    parser.add_argument("--no-nullable-fix", action="store_true", help="keep OpenAPI 3.0 `nullable` flags as they are (ignored by JSON Schema)")
    parser.add_argument("--strict-oneof", action="store_true", help="keep `oneOf` exclusive (OpenAI's overlapping unions then reject real requests)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every problem, one per line, after the FAIL line")
    args = parser.parse_args(list(argv) if argv is not None else None)

    spec = Spec(spec_dir(), nullable_fix=not args.no_nullable_fix, strict_oneof=args.strict_oneof)
    if args.self_test:
        # The validator's own check lives beside it; imported here only, as
        # it imports this module.
        from self_test import self_test

        return self_test(spec)
    if not args.kind or not args.files:
        parser.error("KIND and at least one FILE are required (or --self-test)")

    failed = False
    for path in args.files:
        problems = validate_file(spec, args.kind, path)
        if not problems:
            print(f"ok {path}")
            continue
        failed = True
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        print(f"FAIL {path}: {problems[0]}{more}")
        if args.verbose:
            for p in problems[1:]:
                print(f"    {p}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
