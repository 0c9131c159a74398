#!/usr/bin/env python3
"""Fills fuzz/corpus/<target>/ with seeds: the recorded fixtures of the shared
directory (see its fixtures/README.md) and the repository's own test inputs
and golden outputs.

    python3 fuzz/seed.py [SHARED_DIR]

SHARED_DIR defaults to $WIREBRIDGE_SHARED_DIR, else `shared` beside the
repository, as for the tests. Stream seeds get the two header bytes the
stream targets read (split 0: one piece; options 0: default settings, or 1
for messages_stream, which then shows thinking; see fuzz/src/lib.rs).
Existing corpus files are kept: the fuzzer adds its own next to the seeds,
and a seed is rewritten only under its own name.
"""

import json
import os
import re
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
ROOT = FUZZ.parent
HEADER = b"\x00\x00"


def shared_dir():
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    env = os.environ.get("WIREBRIDGE_SHARED_DIR")
    return Path(env) if env else ROOT.parent / "shared"


def sniff_responses(sse: bytes) -> bool:
    """Whether raw SSE is a Responses stream (as the test kit decides):
    an `event:` line, or data whose `type` starts with `response.`."""
    for line in sse.decode("utf-8", "replace").splitlines():
        if line.startswith("event:"):
            return True
        if line.startswith("data:"):
            try:
                value = json.loads(line[5:])
            except ValueError:
                continue
            if isinstance(value, dict):
                kind = value.get("type")
                if isinstance(kind, str) and kind.startswith("response."):
                    return True
                if "object" in value or "choices" in value:
                    return False
    return False


def chunk_lines(path: Path):
    return [line for line in path.read_text().splitlines() if line.strip()]


def chat_frames(lines):
    """`*.chunks.txt` lines (SSE framing stripped) as a Chat stream."""
    out = "".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n"
    return out.encode()


def responses_frames(lines):
    """`*.chunks.txt` lines as a Responses stream: each named by its type."""
    out = ""
    for line in lines:
        out += f"event: {json.loads(line)['type']}\ndata: {line}\n\n"
    return out.encode()


def split_responses(lines):
    """Lines of several concatenated responses, one group per
    `response.created`."""
    groups = []
    for line in lines:
        created = json.loads(line).get("type") == "response.created"
        if not groups or (created and groups[-1]):
            groups.append([])
        groups[-1].append(line)
    return groups


def classify(name):
    """The target a test input or golden file seeds, by its name: golden
    files end with their kind (`NAME.chat-request.json`), inputs are named
    `chat-request-*.json`, `messages-*request*.json`, `*request*.json`
    (Responses) or `*.KIND.sse`."""
    for kind in ["chat-stream", "responses-stream", "chat-request", "responses-request", "messages-stream"]:
        if name.endswith(f".{kind}.sse") or name.endswith(f".{kind}.json"):
            return kind.replace("-", "_")
    if name.endswith(".json") and name.startswith("chat-request-"):
        return "chat_request"
    if name.endswith(".json") and name.startswith("messages-") and "request" in name:
        return "messages_request"
    if name.endswith(".json") and "request" in name:
        return "responses_request"
    return None


def collect(shared: Path):
    fixtures = shared / "fixtures"
    if not fixtures.is_dir():
        sys.exit(f"no fixtures in {shared}: pass the shared directory, or set WIREBRIDGE_SHARED_DIR")
    seeds = {"chat_stream": {}, "responses_stream": {}, "responses_request": {}, "chat_request": {},
             "messages_request": {}, "messages_stream": {}}

    for path in sorted((fixtures / "openai-python").glob("*.sse")):
        sse = path.read_bytes()
        kind = "responses_stream" if sniff_responses(sse) else "chat_stream"
        seeds[kind][path.stem] = sse
    for path in sorted((fixtures / "vercel-ai/chat").glob("*.chunks.txt")):
        seeds["chat_stream"][path.name] = chat_frames(chunk_lines(path))
    for path in sorted((fixtures / "vercel-ai/responses").glob("*.chunks.txt")):
        groups = split_responses(chunk_lines(path))
        for i, group in enumerate(groups, 1):
            name = f"{path.name}-{i}" if len(groups) > 1 else path.name
            seeds["responses_stream"][name] = responses_frames(group)
    for path in sorted((fixtures / "codex-peer").glob("*.json")):
        body = json.loads(path.read_text())["body"]
        seeds["responses_request"][path.stem] = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()

    # The repository's own inputs, and the golden outputs of each direction,
    # which are valid input of the other.
    for test_dir in [ROOT / "crates/wirebridge-convert/tests", ROOT / "crates/wirebridge-demo/tests"]:
        for sub in ["inputs", "golden"]:
            for path in sorted((test_dir / sub).glob("*")):
                target = classify(path.name)
                if target:
                    seeds[target][f"{test_dir.parent.name}-{sub}-{path.name}"] = path.read_bytes()
    return seeds


# Turns that compact: a final `compaction_trigger`, and a threshold.
COMPACTING_TURNS = {
    "trigger": b'{"model":"m","input":[{"role":"user","content":"Plan a trip."},'
               b'{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Where to?"}]},'
               b'{"type":"compaction_trigger"}]}',
    "threshold": b'{"model":"m","context_management":[{"type":"compaction","compact_threshold":1000}],'
                 b'"input":[{"role":"user","content":"Plan a trip."},'
                 b'{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},'
                 b'{"type":"function_call_output","call_id":"c1","output":"ok"}]}',
}


def status(code):
    """The two status bytes `upstream_reply` reads as `code` (100 + n % 500)."""
    return (code - 100).to_bytes(2, "big")


def reply(options, code, content_type, body):
    """An `upstream_reply` input: options, status, one header, the body."""
    return bytes([options]) + status(code) + f"content-type: {content_type}\n\n".encode() + body


def upstream_replies(shared: Path, seeds):
    """What each layer's upstream may answer: for a Responses client over a
    Chat service (options 0), the recorded Chat streams and bodies; for the
    layers over a Responses service (1: Chat clients, 2: Messages clients,
    3: Responses clients with the bridge's store), the Responses ones; and
    for every layer the recorded error bodies, at the statuses upstreams
    send them with. Bit 2 of options is set for the streams: the client
    asked for one."""
    fixtures = shared / "fixtures"
    errors = []
    bodies = {"chat": [], "responses": []}
    for api in ["chat", "responses"]:
        for path in sorted((fixtures / "vercel-ai" / api).glob("*.json")):
            data = path.read_bytes()
            try:
                value = json.loads(data)
            except ValueError:
                continue
            if isinstance(value, dict) and "object" not in value and isinstance(value.get("error"), dict):
                errors.append((path.stem, data))
            else:
                bodies[api].append((path.stem, data))
    for path in sorted((fixtures / "openai-python").glob("chat-json-*.json")):
        bodies["chat"].append((path.stem, path.read_bytes()))
    out = {}
    for layer in range(4):
        api = "chat" if layer == 0 else "responses"
        for name, sse in list(seeds[f"{api}_stream"].items())[:40]:
            out[f"{layer}-stream-{name}"] = reply(layer | 4, 200, "text/event-stream", sse)
        for name, body in bodies[api]:
            out[f"{layer}-body-{name}"] = reply(layer, 200, "application/json", body)
        for name, body in errors:
            for code in [400, 429, 500, 503]:
                out[f"{layer}-error-{code}-{name}"] = reply(layer | 4 * (code == 429), code, "application/json", body)
    return out


# Messages a WebSocket-mode client sends: the Codex requests as
# `response.create` (with a lane, and as a warm-up), and the other kinds.
WEBSOCKET_MESSAGES = {
    "processed": b'{"type":"response.processed","response_id":"resp_1"}',
    "steer": b'{"type":"response.steer","previous_response_id":"resp_1","input":[{"type":"message","role":"user","content":"stop"}]}',
    "steer-text": b'{"type":"response.steer","previous_response_id":"resp_1","input":"stop"}',
    "unknown": b'{"type":"session.update","session":{}}',
    "stream-false": b'{"type":"response.create","model":"m","stream_id":"s","stream":false}',
    "background": b'{"type":"response.create","model":"m","background":true}',
}


def websocket_messages(seeds):
    out = dict(WEBSOCKET_MESSAGES)
    for name, body in seeds["responses_request"].items():
        value = json.loads(body)
        if not isinstance(value, dict):
            continue
        value = {"type": "response.create", **value}
        out[f"create-{name}"] = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
        lane = {**value, "stream_id": "lane-1", "generate": False}
        out[f"warm-up-{name}"] = json.dumps(lane, separators=(",", ":"), ensure_ascii=False).encode()
    return out


# Histories and the requests that refer to them, for `reference_resolution`
# (see its header): the bound's two bytes, then operations. 0: store a turn
# [flags previous n sizes...], 1: a conversation [flags n sizes...], 2: a
# request [flags previous conversation n entries...]; an entry 0 [index]
# refers to a stored item, 2 [len bytes...] to a made-up id, 3 [size] is a
# message.
REFERENCES = {
    # Two turns of tenant 0 (the second continuing the first), one of
    # tenant 1; tenant 0 refers to its own item, tenant 1's, and a made-up
    # one, continuing its second turn.
    "mixed": bytes([0x02, 0x00,
                    0, 0, 0, 1, 2, 3,
                    0, 1, 0, 0, 1,
                    0, 2, 0, 0, 4,
                    2, 2, 2, 0, 4, 0, 0, 0, 3, 2, 3, 0x61, 0x62, 0x63, 3, 1]),
    # One item named twice, within the bound, then fifteen times, past it.
    "repeated": bytes([0x00, 0x80,
                       0, 0, 0, 0, 2,
                       2, 0, 0, 0, 2, 0, 0, 0, 0,
                       2, 0, 0, 0, 15] + [0, 0] * 15),
    # A conversation continued past a bound of 64 bytes.
    "long-history": bytes([0x00, 0x10,
                           0, 0, 0, 0, 8,
                           0, 2, 0, 0, 8,
                           2, 2, 0, 0, 1, 3, 1]),
    # A conversation of each tenant, joined by tenant 0 with a reference.
    "conversations": bytes([0x04, 0x00,
                            0, 0, 0, 0, 1,
                            1, 0, 1, 1, 1,
                            1, 1, 0, 2,
                            2, 4, 0, 0, 2, 0, 0, 3, 1,
                            2, 4, 0, 1, 1, 3, 1]),
    # Tenant 1 continues tenant 0's turn, then refers to its items.
    "other-tenant": bytes([0x10, 0x00,
                           0, 0, 0, 1, 1, 1,
                           2, 3, 0, 0, 2, 0, 0, 1, 1,
                           2, 1, 0, 0, 2, 0, 0, 0, 1]),
}

# Conversations API calls of two tenants, for `conversation_routes` (see
# its header): 0 create, 1 add items, 2 list, 3 get an item, 4 delete it,
# 5 set metadata, 6 delete, 7 retrieve; each then [flags] and its bytes.
CONVERSATION_CALLS = {
    # Create with two items, add three, list them every way.
    "list": bytes([0, 0, 2, 1, 2,
                   1, 0, 0, 3, 3, 4, 5,
                   2, 0, 0, 0, 0, 0,
                   2, 0, 0, 1, 3, 0,
                   2, 0, 0, 2, 3, 2,
                   2, 0, 0, 1, 0, 255,
                   2, 0, 0, 0, 102, 0]),
    # Delete an item, read it and list past it; then the conversation.
    "delete": bytes([0, 0, 3, 1, 2, 3,
                     4, 0, 0, 1,
                     3, 0, 0, 1,
                     3, 0, 0, 0,
                     2, 0, 0, 1, 0, 2,
                     6, 0, 0,
                     7, 0, 0,
                     2, 0, 0, 0, 0, 0]),
    # Metadata set and read back, one key too many, a key too long.
    "metadata": bytes([0, 1, 0,
                       5, 1, 0, 2, 3, 4,
                       7, 1, 0,
                       5, 1, 0, 17] + [1] * 17 + [
                       5, 1, 0, 1, 250]),
    # Tenant 1 reaches for tenant 0's conversation with every call.
    "other-tenant": bytes([0, 0, 1, 7,
                           1, 1, 0, 1, 1,
                           2, 1, 0, 0, 0, 0,
                           3, 1, 0, 0,
                           4, 1, 0, 0,
                           5, 1, 0, 1, 1,
                           6, 1, 0,
                           7, 1, 0,
                           7, 0, 0]),
    # Twenty-one items at once, and none.
    "item-counts": bytes([0, 0, 0,
                          1, 0, 0, 21] + [1] * 21 + [
                          1, 0, 0, 0,
                          1, 0, 0, 20] + [2] * 20 + [
                          2, 0, 0, 1, 21, 20]),
}


# The record letter of each delta kind a Responses translator hands to a
# Messages one (crates/wirebridge-convert/src/handed.rs).
HANDED = {
    "response.output_text.delta": ("t", "content_index"),
    "response.refusal.delta": ("r", "content_index"),
    "response.reasoning_summary_text.delta": ("s", "summary_index"),
    "response.reasoning_text.delta": ("R", "content_index"),
    "response.function_call_arguments.delta": ("a", None),
}


def handed_records(sse: bytes) -> bytes:
    """`sse` with each text, refusal, reasoning and tool-argument delta's data written as
    the record that stands for it in `Framing::Handed`."""
    out = []
    for line in sse.split(b"\n"):
        if line.startswith(b"data:"):
            try:
                event = json.loads(line[5:])
            except ValueError:
                event = None
            kind = HANDED.get(event.get("type")) if isinstance(event, dict) else None
            if kind and isinstance(event.get("delta"), str):
                letter, part = kind
                record = "\x01%s%d,%d,%s" % (
                    letter,
                    event.get("output_index", 0),
                    event.get(part, 0) if part else 0,
                    json.dumps(event["delta"]),
                )
                line = b"data: " + record.encode()
        out.append(line)
    return b"\n".join(out)


def write(target, name, data):
    directory = FUZZ / "corpus" / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / ("seed-" + re.sub(r"[^A-Za-z0-9._-]", "_", name))).write_bytes(data)


def main():
    shared = shared_dir()
    seeds = collect(shared)
    for target in ["chat_stream", "responses_stream"]:
        for name, sse in seeds[target].items():
            write(target, name, HEADER + sse)
            # The decoder sees both dialects, fed one byte at a time
            # (split 1) with a 4 KiB event limit (options 3).
            write("sse_decoder", name, b"\x01\x03" + sse)
    # The Messages translator reads the same Responses streams, with
    # thinking shown as a summary (options 1).
    for name, sse in seeds["responses_stream"].items():
        write("messages_stream", name, b"\x00\x01" + sse)
        # The same stream as the Responses layer below hands it to the
        # Messages one in the same process: its deltas as records.
        handed = handed_records(sse)
        if handed != sse:
            write("messages_stream", name + "-handed", b"\x00\x01" + handed)
    # A Messages backend's streams (the demo's golden answers), each under
    # every context: tools declared, sealed, a small event limit.
    for name, sse in seeds["messages_stream"].items():
        for options in range(8):
            write("messages_backend_stream", f"{name}-{options}", bytes([0, options]) + sse)
    for target in ["responses_request", "chat_request", "messages_request"]:
        for name, body in seeds[target].items():
            write(target, name, body)
    # Compaction reads Responses requests on both routes (route byte 0:
    # `/responses/compact`, 1: a turn), and the two ways a turn compacts.
    for name, body in seeds["responses_request"].items():
        write("compaction_request", f"compact-{name}", b"\x00" + body)
        write("compaction_request", f"turn-{name}", b"\x01" + body)
    for name, body in COMPACTING_TURNS.items():
        write("compaction_request", name, b"\x01" + body)
    # A stored conversation spliced: each request's items cut into turns
    # two ways, under the default options and with reasoning replayed.
    for name, body in seeds["responses_request"].items():
        write("history_splice", f"{name}-0", b"\x00\x00" + body)
        write("history_splice", f"{name}-1", b"\x01\x5a" + body)
    # Carriers: each mode byte with no change (the genuine carrier, or an
    # empty made-up one), and one flipped byte.
    for mode in range(16):
        write("sealed_carriers", f"mode-{mode}", bytes([mode]))
        write("sealed_carriers", f"mode-{mode}-flip", bytes([mode]) + b"\x00" * 20 + b"\x01")
    for name, data in upstream_replies(shared, seeds).items():
        write("upstream_reply", name, data)
    for name, data in websocket_messages(seeds).items():
        write("websocket_client_event", name, data)
    for name, data in REFERENCES.items():
        write("reference_resolution", name, data)
    for name, data in CONVERSATION_CALLS.items():
        write("conversation_routes", name, data)
    for target in ["sse_decoder", "chat_stream", "responses_stream", "responses_request", "chat_request", "messages_request", "messages_stream", "compaction_request", "sealed_carriers", "websocket_client_event", "upstream_reply", "history_splice", "messages_backend_stream", "reference_resolution", "conversation_routes"]:
        count = len(list((FUZZ / "corpus" / target).glob("seed-*")))
        print(f"{target}: {count} seeds")


if __name__ == "__main__":
    main()
