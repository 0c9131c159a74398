"""Background responses with the official SDK against the real binary, in
front of the demo upstream speaking Chat and speaking a Responses API that
keeps no state: `background: true` answered at once (`queued`), polled to
its end, streamed, resumed after a sequence number, kept running when the
client goes away, cancelled (the upstream request dropped), bounded per
credential, and refused where it cannot run. Every `Response` and event is
checked against the OpenAPI spec."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest

import harness
import schema

# The demo upstream's pause between chunks, for runs that must still be
# running when the test acts (its answers are about 12 chunks).
SLOW = "demo:slow 250"


@pytest.fixture(scope="module", params=["chat", "responses"])
def chain(request, log_dir, tmp_path_factory):
    config = tmp_path_factory.mktemp("background") / "bridge.toml"
    api = request.param
    settings = "max_background_runs_per_tenant = 2\n"
    if api == "chat":
        # A backend that takes a reasoning effort, so that the demo reasons.
        settings = 'profile = "reasoning"\n' + settings + "[profiles.reasoning]\nreasoning_effort = true\n"
    config.write_text(settings)
    chain = harness.start_chain(log_dir, f"background-{api}", api, extra=["--config", str(config)])
    chain.api = api
    yield chain
    harness.stop_checked(chain)


def client(chain, key: str = "sk-wirebridge-test") -> openai.OpenAI:
    return openai.OpenAI(base_url=chain.base_url, api_key=key, max_retries=0, timeout=20,
                         http_client=openai.DefaultHttpxClient(trust_env=False))


def poll(sdk: openai.OpenAI, response_id: str, timeout: float = 20.0):
    """The response once it is no longer queued or running."""
    deadline = time.monotonic() + timeout
    while True:
        response = sdk.responses.retrieve(response_id)
        if response.status not in ("queued", "in_progress"):
            return response
        assert time.monotonic() < deadline, f"{response_id} still {response.status}"
        time.sleep(0.05)


def sse(chain, path: str, body: dict | None = None, key: str = "sk-wirebridge-test") -> str:
    """The raw text of a stream the bridge sends (POST with `body`, else GET)."""
    headers = {"authorization": f"Bearer {key}"}
    with httpx.Client(trust_env=False, timeout=20) as http:
        if body is None:
            reply = http.get(chain.bridge.url + path, headers=headers)
        else:
            reply = http.post(chain.bridge.url + path, headers=headers, json=body)
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("text/event-stream")
    return reply.text


def test_a_background_response_is_queued_then_polled_to_its_end(chain, spec):
    sdk = client(chain)
    raw = sdk.responses.with_raw_response.create(model="demo", input="Hello in the background", background=True)
    queued = schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    assert queued["status"] == "queued" and queued["background"] is True
    assert queued["output"] == []
    done = poll(sdk, queued["id"])
    assert done.status == "completed"
    assert "Hello in the background" in done.output_text
    raw = sdk.responses.with_raw_response.retrieve(queued["id"])
    kept = schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    assert kept["background"] is True and kept["id"] == queued["id"]
    # A background response is kept like any other: it can be continued.
    again = sdk.responses.create(model="demo", input="And then?", previous_response_id=done.id)
    assert again.status == "completed"


def test_a_running_response_is_not_continued_before_it_ends(chain, spec):
    sdk = client(chain)
    running = sdk.responses.create(model="demo", input=f"Still thinking {SLOW}", background=True)
    raw = sdk.responses.with_raw_response.retrieve(running.id)
    polled = schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    assert polled["status"] in ("queued", "in_progress") and polled["output"] == []
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.responses.create(model="demo", input="Too soon", previous_response_id=running.id)
    assert refused.value.body["code"] == "previous_response_in_progress"
    assert refused.value.body["param"] == "previous_response_id"
    done = poll(sdk, running.id)
    assert done.status == "completed"
    later = sdk.responses.create(model="demo", input="Now", previous_response_id=running.id)
    assert later.status == "completed"


def test_a_streamed_background_response_is_resumed_after_a_sequence_number(chain, spec):
    text = sse(chain, "/v1/responses", {"model": "demo", "input": "Stream it", "background": True, "stream": True})
    events = schema.assert_valid_stream(spec, text, "responses")
    assert events[-1]["type"] == "response.completed"
    assert events[0]["response"]["background"] is True
    numbers = [e["sequence_number"] for e in events]
    assert numbers == list(range(len(events)))
    response_id = events[0]["response"]["id"]

    resumed = schema.assert_valid_stream(
        spec, sse(chain, f"/v1/responses/{response_id}?stream=true&starting_after=4"), "responses")
    assert [e["sequence_number"] for e in resumed] == numbers[5:]
    assert resumed == events[5:]
    # The SDK's own resumption.
    sdk = client(chain)
    tail = [e.type for e in sdk.responses.retrieve(response_id, stream=True, starting_after=len(events) - 2)]
    assert tail == ["response.completed"]


def test_a_run_goes_on_when_its_client_goes_away(chain):
    sdk = client(chain)
    stream = sdk.responses.create(model="demo", input=f"Keep going {SLOW}", background=True, stream=True)
    first = next(iter(stream))
    response_id = first.response.id
    stream.close()
    done = poll(sdk, response_id)
    assert done.status == "completed"
    assert "Keep going" in done.output_text


def test_a_cancelled_run_ends_cancelled_and_stops_the_upstream(chain, spec):
    sdk = client(chain)
    mark = chain.tap.mark()
    queued = sdk.responses.create(model="demo", input=f"A long answer {SLOW}", background=True, stream=False)
    deadline = time.monotonic() + 10
    while sdk.responses.retrieve(queued.id).status == "queued":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    started = time.monotonic()
    raw = sdk.responses.with_raw_response.cancel(queued.id)
    cancelled = schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    assert cancelled["status"] == "cancelled"
    # The answer would take 3 s more; the upstream request was dropped.
    assert time.monotonic() - started < 2.5
    assert sdk.responses.retrieve(queued.id).status == "cancelled"
    time.sleep(0.5)
    assert sdk.responses.retrieve(queued.id).status == "cancelled"
    assert len(chain.tap.since(mark)) == 1
    # Cancelling again answers the response as it ended.
    assert sdk.responses.cancel(queued.id).status == "cancelled"
    # A response that was not run in the background cannot be.
    plain = sdk.responses.create(model="demo", input="Not in the background")
    with pytest.raises(openai.BadRequestError):
        sdk.responses.cancel(plain.id)


def test_a_run_cancelled_mid_stream_keeps_the_items_it_finished(chain, spec):
    """Cancelled once its reasoning item is done and while its answer is
    being written: the response kept says `cancelled` and holds that
    item."""
    sdk = client(chain)
    stream = sdk.responses.create(model="demo", input=f"Think first {SLOW}", background=True, stream=True,
                                  reasoning={"effort": "low", "summary": "auto"})
    response_id, finished = None, None
    for event in stream:
        if event.type == "response.created":
            response_id = event.response.id
        if event.type == "response.output_item.done":
            finished = event.item
            break
    assert finished is not None and finished.type == "reasoning", finished
    assert sdk.responses.cancel(response_id).status == "cancelled"
    stream.close()
    raw = sdk.responses.with_raw_response.retrieve(response_id)
    kept = schema.assert_valid_body(spec, 200, raw.http_response.text, "responses")
    assert kept["status"] == "cancelled"
    assert [item["id"] for item in kept["output"]] == [finished.id]


def follow_until_created(http: httpx.Client, url: str, body: dict, key: str = "sk-wirebridge-test"):
    """Starts a streamed background run; returns the open stream, the text
    read so far (through `response.created`), and the response id."""
    reply = http.stream("POST", url + "/v1/responses", json=body, headers={"authorization": f"Bearer {key}"})
    response = reply.__enter__()
    assert response.status_code == 200, response.read()
    lines = response.iter_lines()
    text = ""
    for line in lines:
        text += line + "\n"
        if line.startswith("data:") and '"response.created"' in line:
            return reply, lines, text + "\n", json.loads(line[5:])["response"]["id"]
    raise AssertionError(f"no response.created: {text!r}")


def read_to_end(reply, lines, text: str) -> str:
    try:
        for line in lines:
            text += line + "\n"
    finally:
        reply.__exit__(None, None, None)
    return text


def sdk_accepts(event: dict):
    """The event as the official SDK's stream types read it, validated."""
    import pydantic
    from openai.types.responses import ResponseStreamEvent

    return pydantic.TypeAdapter(ResponseStreamEvent).validate_python(event)


def test_a_follower_of_a_cancelled_run_gets_the_cancelled_response_as_its_last_event(chain, spec):
    sdk = client(chain)
    body = {"model": "demo", "input": f"Cancel me {SLOW}", "background": True, "stream": True}
    with httpx.Client(trust_env=False, timeout=20) as http:
        reply, lines, text, response_id = follow_until_created(http, chain.bridge.url, body)
        assert sdk.responses.cancel(response_id).status == "cancelled"
        text = read_to_end(reply, lines, text)
    events = schema.assert_valid_stream(spec, text, "responses")
    last = events[-1]
    assert last["type"] == "response.failed", [e["type"] for e in events]
    assert last["response"]["status"] == "cancelled" and last["response"]["id"] == response_id
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    parsed = sdk_accepts(last)
    assert parsed.type == "response.failed" and parsed.response.status == "cancelled"
    # What the follower was told is what is kept.
    assert sdk.responses.retrieve(response_id).status == "cancelled"


def test_every_follower_at_shutdown_gets_the_failed_response_as_its_last_event(log_dir, spec):
    """Four runs followed when the bridge is told to stop: each stream ends
    with `response.failed`, whichever of the run and its backend stream
    sees the shutdown first."""
    chain = harness.start_chain(log_dir, "background-shutdown", "chat", extra=["--shutdown-grace-secs", "1"])
    texts, ids = [], []
    try:
        with httpx.Client(trust_env=False, timeout=20) as http:
            followed = []
            for n in range(4):
                # About 12 chunks a second apart, against a 1 s grace period.
                body = {"model": "demo", "input": f"Cut short {n} demo:slow 1000", "background": True,
                        "stream": True}
                reply, lines, text, response_id = follow_until_created(http, chain.bridge.url, body)
                followed.append((reply, lines, text))
                ids.append(response_id)
            chain.bridge.proc.terminate()
            texts = [read_to_end(*each) for each in followed]
        assert chain.bridge.proc.wait(20) == 0, chain.bridge.log()[-4000:]
    finally:
        chain.stop()
    for text, response_id in zip(texts, ids):
        events = schema.assert_valid_stream(spec, text, "responses")
        last = events[-1]
        assert last["type"] == "response.failed", [e["type"] for e in events]
        assert last["response"]["status"] == "failed" and last["response"]["id"] == response_id
        assert "shut" in last["response"]["error"]["message"], last
        assert sdk_accepts(last).response.status == "failed"


def test_runs_are_bounded_per_credential(chain):
    sdk = client(chain, "sk-busy")
    running = [sdk.responses.create(model="demo", input=f"Run {n} {SLOW}", background=True) for n in range(2)]
    with pytest.raises(openai.RateLimitError) as refused:
        sdk.responses.create(model="demo", input="One too many", background=True)
    assert refused.value.body["code"] == "too_many_background_responses"
    assert refused.value.response.headers.get("retry-after") == "1"
    with httpx.Client(trust_env=False, timeout=20) as http:
        metrics = http.get(chain.bridge.url + "/metrics").text
    refusals = [line for line in metrics.splitlines()
                if line.startswith('wirebridge_budget_refusals_total{kind="background_runs"}')]
    assert refusals and float(refusals[0].split()[-1]) >= 1, refusals
    # Another credential is not held back by this one.
    other = client(chain, "sk-idle").responses.create(model="demo", input="Mine", background=True)
    assert other.status == "queued"
    for run in running:
        sdk.responses.cancel(run.id)
    assert sdk.responses.create(model="demo", input="Room again", background=True).status == "queued"


def test_one_credential_cannot_take_every_run_the_server_allows(log_dir):
    """Four runs at once, as many allowed a credential: one alone holds
    half, and the next credential still finds room."""
    chain = harness.start_chain(log_dir, "background-share", "chat",
                                extra=["--max-background-runs", "4", "--max-background-runs-per-tenant", "4"])
    try:
        greedy, modest = client(chain, "sk-greedy"), client(chain, "sk-modest")
        held = []
        for n in range(2):
            held.append(greedy.responses.create(model="demo", input=f"Mine {n} {SLOW}", background=True))
        with pytest.raises(openai.RateLimitError) as refused:
            greedy.responses.create(model="demo", input=f"All of it {SLOW}", background=True)
        assert refused.value.body["code"] == "too_many_background_responses"
        assert "share" in refused.value.body["message"], refused.value.body
        assert refused.value.response.headers.get("retry-after") == "1"
        other = modest.responses.create(model="demo", input=f"Room for me {SLOW}", background=True)
        assert other.status == "queued"
        for run in held:
            greedy.responses.cancel(run.id)
        modest.responses.cancel(other.id)
    finally:
        harness.stop_checked(chain)


def test_what_cannot_run_in_the_background_is_refused(chain):
    sdk = client(chain)
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.responses.create(model="demo", input="x", background=True, store=False)
    assert refused.value.body["param"] == "background"
    queued = sdk.responses.create(model="demo", input="Mine", background=True)
    stranger = client(chain, "sk-stranger")
    with pytest.raises(openai.NotFoundError):
        stranger.responses.retrieve(queued.id)
    with pytest.raises(openai.NotFoundError):
        stranger.responses.cancel(queued.id)
    with pytest.raises(openai.NotFoundError):
        list(stranger.responses.retrieve(queued.id, stream=True))
    with pytest.raises(openai.BadRequestError) as refused:
        list(sdk.responses.retrieve(queued.id, stream=True, starting_after="x"))  # type: ignore[arg-type]
    assert refused.value.body["param"] == "starting_after"
    # Without a credential nothing is kept, so nothing can run.
    with httpx.Client(trust_env=False, timeout=20) as http:
        reply = http.post(chain.bridge.url + "/v1/responses",
                          json={"model": "demo", "input": "x", "background": True})
    assert reply.status_code == 400, reply.text
    assert json.loads(reply.text)["error"]["param"] == "background"


def test_a_cursor_past_the_last_event_is_refused_naming_it(chain):
    """A `starting_after` past every event the run made names none of them:
    a 400 naming it, never a stream that starts over (the largest number
    must not wrap around to the first event)."""
    text = sse(chain, "/v1/responses", {"model": "demo", "input": "Count them", "background": True, "stream": True})
    events = harness.sse_payloads(text)
    last = events[-1]["sequence_number"]
    response_id = events[0]["response"]["id"]
    sdk = client(chain)
    for after in (last + 1, 2**64 - 1):
        with pytest.raises(openai.BadRequestError) as refused:
            list(sdk.responses.retrieve(response_id, stream=True, starting_after=after))
        assert refused.value.body["param"] == "starting_after", refused.value.body
        assert str(last) in refused.value.body["message"]
    tail = [e.type for e in sdk.responses.retrieve(response_id, stream=True, starting_after=last - 1)]
    assert tail == ["response.completed"], "the last event itself may still be asked for"


def test_a_run_made_without_a_stream_cannot_be_followed(chain):
    """A run created without `stream` makes no events: following it is a
    400 naming `stream`, not a connection held open that ends with none."""
    sdk = client(chain)
    queued = sdk.responses.create(model="demo", input=f"Quietly {SLOW}", background=True)
    with pytest.raises(openai.BadRequestError) as refused:
        list(sdk.responses.retrieve(queued.id, stream=True))
    assert refused.value.body["param"] == "stream", refused.value.body
    sdk.responses.cancel(queued.id)
