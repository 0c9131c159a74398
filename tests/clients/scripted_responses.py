"""A Responses API that keeps no state, scripted for one tool loop of a
code-mode model, for tests whose demo upstream cannot play the part: the
first turn calls the `exec` tool of the `functions` namespace with a fixed
script (a `custom_tool_call`, as a code-mode model makes it), and a turn
ending with that call's output is answered `The tool returned: OUTPUT`.

It streams as vLLM and llama.cpp do when asked to (every event typed and
numbered), refuses `previous_response_id` as they do, and records every
request it is sent."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import harness


def _events(model: str, items: list[dict], deltas: list[dict]) -> bytes:
    """A whole stream: created, each item's events, completed."""
    frames: list[dict] = []
    response = {"id": "resp_scripted", "object": "response", "created_at": 1, "status": "in_progress",
                "model": model, "output": []}
    frames.append({"type": "response.created", "response": response})
    for index, item in enumerate(items):
        opened = {**item, "status": "in_progress"}
        if item["type"] == "custom_tool_call":
            opened["input"] = ""
        elif item["type"] == "message":
            opened["content"] = []
        frames.append({"type": "response.output_item.added", "output_index": index, "item": opened})
        for delta in deltas[index:index + 1]:
            frames.extend({**event, "output_index": index, "item_id": item["id"]} for event in delta["events"])
        frames.append({"type": "response.output_item.done", "output_index": index, "item": item})
    usage = {"input_tokens": 20, "output_tokens": 5, "total_tokens": 25}
    frames.append({"type": "response.completed",
                   "response": {**response, "status": "completed", "output": items, "usage": usage}})
    out = []
    for n, frame in enumerate(frames):
        frame["sequence_number"] = n
        out.append(f"event: {frame['type']}\ndata: {json.dumps(frame)}\n\n")
    return "".join(out).encode()


def exec_call(script: str) -> tuple[dict, dict]:
    """A `custom_tool_call` of `functions.exec`, and its input's events."""
    item = {"type": "custom_tool_call", "id": "ctc_1", "status": "completed", "call_id": "call_exec_1",
            "namespace": "functions", "name": "exec", "input": script}
    events = [{"type": "response.custom_tool_call_input.delta", "delta": script},
              {"type": "response.custom_tool_call_input.done", "input": script}]
    return item, {"events": events}


def message(text: str) -> tuple[dict, dict]:
    """An assistant message, and its text's events."""
    part = {"type": "output_text", "text": text, "annotations": []}
    item = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [part]}
    events = [{"type": "response.content_part.added", "content_index": 0,
               "part": {**part, "text": ""}},
              {"type": "response.output_text.delta", "content_index": 0, "delta": text},
              {"type": "response.output_text.done", "content_index": 0, "text": text},
              {"type": "response.content_part.done", "content_index": 0, "part": part}]
    return item, {"events": events}


def output_text(output) -> str:
    if isinstance(output, list):
        return "".join(part.get("text", "") for part in output)
    return output or ""


class ScriptedResponses:
    """The server. `script` is the JavaScript the `exec` call runs."""

    def __init__(self, script: str) -> None:
        self.requests: list[harness.Captured] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                data = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with owner._lock:
                    owner.requests.append(harness.Captured("POST", self.path, headers, data))
                body = json.loads(data)
                if "previous_response_id" in body:
                    error = {"error": {"message": "previous_response_id is not supported",
                                       "type": "invalid_request_error", "param": "previous_response_id"}}
                    self._send(400, "application/json", json.dumps(error).encode())
                    return
                last = body["input"][-1] if body.get("input") else {}
                if last.get("type") == "custom_tool_call_output":
                    item, delta = message(f"The tool returned: {output_text(last.get('output'))}")
                else:
                    item, delta = exec_call(script)
                if body.get("stream"):
                    self._send(200, "text/event-stream", _events(body["model"], [item], [delta]))
                    return
                reply = {"id": "resp_scripted", "object": "response", "created_at": 1, "status": "completed",
                         "model": body["model"], "output": [item],
                         "usage": {"input_tokens": 20, "output_tokens": 5, "total_tokens": 25}}
                self._send(200, "application/json", json.dumps(reply).encode())

            def _send(self, status: int, content_type: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def mark(self) -> int:
        with self._lock:
            return len(self.requests)

    def since(self, mark: int) -> list[harness.Captured]:
        with self._lock:
            return self.requests[mark:]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
