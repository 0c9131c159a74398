"""The official anthropic SDK consumes every golden Messages output of the
translator: its typed event models (validated strictly with pydantic), its
stream accumulator (`messages.stream().get_final_message()`, which applies
each delta to `content[index]` by type and raises on an `error` event) and
its `Message` model are the judges.

The goldens are served byte for byte by a plain HTTP server on loopback.
"""

import json
import pathlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anthropic
import pydantic
import pytest
from anthropic.types import Message, RawMessageStreamEvent

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "crates/wirebridge-convert/tests/golden"
STREAMS = sorted(GOLDEN.glob("*.messages-stream.sse"))
BODIES = sorted(GOLDEN.glob("*.message.json"))
EVENT = pydantic.TypeAdapter(RawMessageStreamEvent)


class GoldenHandler(BaseHTTPRequestHandler):
    """POST /<golden file name>/v1/messages answers with that file."""

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
    return anthropic.Anthropic(
        base_url=f"http://127.0.0.1:{port}/{golden.name}", api_key="test", max_retries=0, timeout=10
    )


def frames(golden):
    """The `data` of each event of a golden stream, parsed."""
    out = []
    for block in golden.read_text().split("\n\n"):
        data = [line[len("data: ") :] for line in block.splitlines() if line.startswith("data: ")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


ASK = {"model": "a-model", "max_tokens": 1024, "messages": [{"role": "user", "content": "Hi"}]}


def test_there_are_goldens():
    assert len(STREAMS) >= 2 and BODIES


@pytest.mark.parametrize("golden", STREAMS, ids=lambda p: p.name)
def test_every_event_is_a_typed_sdk_event(golden):
    for event in frames(golden):
        if event["type"] == "ping":
            # The SDKs skip keep-alives; they are not in the event union.
            assert event == {"type": "ping"}
            continue
        if event["type"] == "error":
            assert event["error"]["type"] in {"api_error", "overloaded_error", "rate_limit_error", "invalid_request_error"}
            assert isinstance(event["error"]["message"], str)
            continue
        EVENT.validate_python(event, strict=False)


@pytest.mark.parametrize("golden", STREAMS, ids=lambda p: p.name)
def test_the_sdk_accumulates_every_stream(server, golden):
    client = client_for(server, golden)
    failed = any(event["type"] == "error" for event in frames(golden))
    if failed:
        with pytest.raises(anthropic.APIStatusError) as raised:
            with client.messages.stream(**ASK) as stream:
                for _ in stream:
                    pass
        assert "ended before" in str(raised.value)
        return
    with client.messages.stream(**ASK) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()
    Message.model_validate(final.model_dump())
    assert "".join(texts) == "".join(b.text for b in final.content if b.type == "text")
    body = GOLDEN / golden.name.replace(".messages-stream.sse", ".message.json")
    if body.is_file():
        expected = json.loads(body.read_text())
        assert [b.model_dump(exclude_none=True) for b in final.content] == expected["content"]
        assert final.stop_reason == expected["stop_reason"]
        assert final.usage.model_dump(exclude_none=True) == expected["usage"]


@pytest.mark.parametrize("golden", BODIES, ids=lambda p: p.name)
def test_the_sdk_reads_every_body(server, golden):
    message = client_for(server, golden).messages.create(**ASK)
    assert isinstance(message, Message)
    Message.model_validate_json(golden.read_text(), strict=False)
    assert message.stop_reason in {"end_turn", "tool_use", "max_tokens", "refusal"}
    for block in message.content:
        if block.type == "tool_use":
            assert isinstance(block.input, dict)
        if block.type == "thinking":
            assert isinstance(block.signature, str)
