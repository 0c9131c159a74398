"""The official openai SDK consumes every golden Responses output of the
translator: its typed event parsing, its stream accumulator
(`responses.stream().get_final_response()`, which raises on any grammar
error) and its non-streaming `Response` model are the judges.

The goldens are served byte for byte by a plain HTTP server on loopback.
"""

import json
import pathlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "crates/wirebridge-convert/tests/golden"
STREAMS = sorted(GOLDEN.glob("*.responses-stream.sse"))
BODIES = sorted(GOLDEN.glob("*.responses-response.json"))


class GoldenHandler(BaseHTTPRequestHandler):
    """POST /<golden file name>/v1/responses answers with that file."""

    def do_POST(self):  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        name = self.path.strip("/").split("/")[0]
        path = GOLDEN / name
        if not path.is_file():
            self.send_error(404)
            return
        body = path.read_bytes()
        content_type = "text/event-stream" if name.endswith(".sse") else "application/json"
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), GoldenHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()


def client_for(port, golden):
    return openai.OpenAI(
        base_url=f"http://127.0.0.1:{port}/{golden.name}/v1", api_key="test", max_retries=0, timeout=10
    )


def terminal_response(golden):
    """The `response` of the golden's terminal event: what the SDK must end with."""
    frames = [line[len("data: "):] for line in golden.read_text().splitlines() if line.startswith("data: ")]
    last = json.loads(frames[-1])
    assert last["type"] in ("response.completed", "response.incomplete", "response.failed")
    return last["type"], last["response"]


def expected_text(response):
    return "".join(
        part["text"]
        for item in response["output"]
        if item["type"] == "message"
        for part in item["content"]
        if part["type"] == "output_text"
    )


@pytest.mark.parametrize("golden", STREAMS, ids=lambda p: p.name)
def test_stream_events_parse_into_typed_classes(server, golden):
    kind, _ = terminal_response(golden)
    client = client_for(server, golden)
    if kind == "response.failed":
        with pytest.raises(openai.APIError):
            for _ in client.responses.create(model="m", input="x", stream=True):
                pass
        return
    events = list(client.responses.create(model="m", input="x", stream=True))
    assert events[0].type == "response.created"
    assert events[-1].type == kind
    for event in events:
        # An event the SDK does not know stays a plain, untyped object.
        assert type(event).__module__.startswith("openai.types.responses"), event


@pytest.mark.parametrize("golden", STREAMS, ids=lambda p: p.name)
def test_stream_accumulator_builds_the_final_response(server, golden):
    kind, response = terminal_response(golden)
    client = client_for(server, golden)
    if kind == "response.failed":
        with pytest.raises(openai.APIError):
            with client.responses.stream(model="m", input="x") as stream:
                stream.get_final_response()
        return
    if kind == "response.incomplete":
        # The SDK records a final response only on `response.completed`; an
        # incomplete stream (as OpenAI itself sends for max_output_tokens) is
        # read event by event, each one through the SDK's accumulator.
        with client.responses.stream(model="m", input="x") as stream:
            events = list(stream)
        final = events[-1].response
        assert events[-1].type == "response.incomplete"
        assert final.incomplete_details.reason == response["incomplete_details"]["reason"]
    else:
        with client.responses.stream(model="m", input="x") as stream:
            final = stream.get_final_response()
    assert final.id == response["id"]
    assert final.status == response["status"]
    assert final.output_text == expected_text(response)
    calls = [(i.name, i.call_id, i.arguments) for i in final.output if i.type == "function_call"]
    expected_calls = [(i["name"], i["call_id"], i["arguments"]) for i in response["output"] if i["type"] == "function_call"]
    assert calls == expected_calls
    if response.get("usage"):
        assert final.usage.total_tokens == response["usage"]["total_tokens"]


@pytest.mark.parametrize("golden", BODIES, ids=lambda p: p.name)
def test_bodies_parse_as_responses(server, golden):
    expected = json.loads(golden.read_text())
    response = client_for(server, golden).responses.create(model="m", input="x")
    assert response.id == expected["id"]
    assert response.status == expected["status"]
    assert response.output_text == expected_text(expected)
    assert len(response.output) == len(expected["output"])


def golden_responses(golden):
    """Every `Response` a golden holds: the body, or each lifecycle event's."""
    if golden.name.endswith(".json"):
        return [json.loads(golden.read_text())]
    frames = [json.loads(line[len("data: "):]) for line in golden.read_text().splitlines() if line.startswith("data: ")]
    return [frame["response"] for frame in frames if "response" in frame]


@pytest.mark.parametrize("golden", STREAMS + BODIES, ids=lambda p: p.name)
def test_withheld_reasoning_is_listed_as_the_sdk_types_it(golden):
    """`input_transformations` is in neither spec; the SDK's `Response`
    defines it: each entry must validate, strictly, as its
    `InputTransformation` (closed lists of actions, reasons and types), and
    a `Response` the SDK builds from the body keeps them."""
    from openai.types.responses.response import InputTransformation

    for response in golden_responses(golden):
        for entry in response.get("input_transformations", []):
            InputTransformation.model_validate(entry, strict=True)


def test_the_sdk_reads_withheld_reasoning_from_a_body_and_a_stream(server):
    body = GOLDEN / "withheld-reasoning.responses-response.json"
    response = client_for(server, body).responses.create(model="m", input="x")
    assert [(t.id, t.reason) for t in response.input_transformations] == [
        ("rs_earlier", "turn_boundary"),
        ("rs_other_server", "model_mismatch"),
        ("rs_other_tenant", "organization_mismatch"),
    ]
    stream = GOLDEN / "withheld-reasoning.responses-stream.sse"
    with client_for(server, stream).responses.stream(model="m", input="x") as events:
        final = events.get_final_response()
    assert [t.reason for t in final.input_transformations] == ["turn_boundary", "model_mismatch", "organization_mismatch"]


CHAT_STREAMS = sorted(GOLDEN.glob("*.chat-stream.sse"))
CHAT_BODIES = sorted(GOLDEN.glob("*.chat-response.json"))


def chat_frames(golden):
    return [
        json.loads(line[len("data: "):])
        for line in golden.read_text().splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


@pytest.mark.parametrize("golden", CHAT_STREAMS, ids=lambda p: p.name)
def test_chat_stream_accumulates(server, golden):
    frames = chat_frames(golden)
    client = client_for(server, golden)
    if "error" in frames[-1]:
        with pytest.raises(openai.APIError) as raised:
            with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "x"}]) as stream:
                stream.get_final_completion()
        assert frames[-1]["error"]["message"] in str(raised.value)
        return
    text = "".join(f["choices"][0]["delta"].get("content") or "" for f in frames if f["choices"])
    with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "x"}]) as stream:
        completion = stream.get_final_completion()
    message = completion.choices[0].message
    assert (message.content or "") == text
    names = [c.function.name for c in message.tool_calls or []]
    expected = [
        call["function"]["name"]
        for f in frames
        if f["choices"]
        for call in f["choices"][0]["delta"].get("tool_calls") or []
        if call.get("function", {}).get("name")
    ]
    assert names == expected
    for call in message.tool_calls or []:
        json.loads(call.function.arguments)  # complete, valid JSON arguments
    usage = [f["usage"] for f in frames if not f["choices"] and f.get("usage")]
    if usage:
        assert completion.usage.total_tokens == usage[0]["total_tokens"]


@pytest.mark.parametrize("golden", CHAT_STREAMS, ids=lambda p: p.name)
def test_chat_stream_chunks_parse(server, golden):
    frames = chat_frames(golden)
    client = client_for(server, golden)
    if "error" in frames[-1]:
        with pytest.raises(openai.APIError):
            list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True))
        return
    chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True))
    assert len(chunks) == len(frames)
    assert all(type(c).__name__ == "ChatCompletionChunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1


@pytest.mark.parametrize("golden", CHAT_BODIES, ids=lambda p: p.name)
def test_chat_bodies_parse(server, golden):
    expected = json.loads(golden.read_text())
    completion = client_for(server, golden).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert completion.choices[0].message.content == expected["choices"][0]["message"]["content"]
    assert completion.choices[0].finish_reason == expected["choices"][0]["finish_reason"]
    assert completion.usage.total_tokens == expected["usage"]["total_tokens"]
