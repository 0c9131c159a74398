"""Operating the bridge: `/metrics` after a scripted run (parsed with the
Prometheus project's own OpenMetrics parser), `/readyz` following a real
Redis that stops and comes back, `/metrics` on a listener of its own, W3C
trace context continued and forwarded to the upstream, and the exchange log
line (numbers as numbers, the trace id, no colour codes in a file).

Each test runs its own bridge in front of the demo upstream, so that the
counters start at zero."""

from __future__ import annotations

import json
import re
import signal
import time
import urllib.error
import urllib.request

import openai
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

import harness
from redis_servers import RedisCluster, RedisServer, free_port

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, object, str]:
    """GET on loopback (no proxy): status, headers, body."""
    request = urllib.request.Request(url, headers=headers or {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def post(url: str, body: dict, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"content-type": "application/json", "authorization": "Bearer sk-test", **headers},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=20) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def scrape(url: str) -> dict[tuple[str, frozenset], float]:
    """Every sample of `url`'s metrics, keyed by name and labels."""
    status, headers, text = get(url)
    assert status == 200, text
    assert headers["Content-Type"].startswith("application/openmetrics-text"), headers
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def sample(samples, name: str, **labels) -> float:
    """One sample's value; 0 when the series does not exist."""
    return samples.get((name, frozenset((k, str(v)) for k, v in labels.items())), 0.0)


def total(samples, name: str, **labels) -> float:
    """The sum of the series of `name` whose labels include `labels`."""
    wanted = {(k, str(v)) for k, v in labels.items()}
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


@pytest.fixture
def chain(wirebridge, log_dir, request):
    chain = harness.start_chain(
        log_dir, request.node.name, "chat",
        extra=["--metrics-max-models", "1", "--log-format", "json"],
    )
    yield chain
    harness.stop_checked(chain)


def test_a_scripted_run_moves_the_counters_and_histograms(chain):
    client = harness.client(chain)
    first = client.responses.create(model="demo", input="Hello there")
    with_tool = client.responses.create(model="demo", input="call get_weather with city=Paris", tools=[WEATHER])
    assert [item.type for item in with_tool.output] == ["function_call"]
    # A hosted tool the backend cannot run: dropped, and reported as a loss.
    lossy = client.responses.create(model="demo", input="Hello", tools=[{"type": "web_search"}])
    streamed = None
    for event in client.responses.create(model="demo", input="Hello again", stream=True):
        if event.type == "response.completed":
            streamed = event.response
    assert streamed is not None
    with pytest.raises(openai.APIStatusError) as failed:
        client.responses.create(model="demo", input="demo:error 503")
    assert failed.value.status_code == 503
    # Refused by the bridge: a model past the cap of one name, an input
    # item of no known type.
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="another-model", input=[{"type": "no_such_item"}])
    status, _, _ = get(chain.bridge.url + "/v1/models")

    samples = scrape(chain.bridge.url + "/metrics")
    exchanges = "wirebridge_exchanges_total"
    common = {"endpoint": "responses", "transport": "http", "direction": "responses_to_chat"}
    assert sample(samples, exchanges, **common, model="demo", stream="false", status=200, outcome="completed") == 3
    assert sample(samples, exchanges, **common, model="demo", stream="true", status=200, outcome="completed") == 1
    assert sample(samples, exchanges, **common, model="demo", stream="false", status=503, outcome="error") == 1
    assert sample(samples, exchanges, **common, model="other", stream="false", status=400, outcome="error") == 1
    assert total(samples, exchanges) == 6

    # Tokens: what the SDK was told, summed.
    replies = [first, with_tool, lossy, streamed]
    tokens = "wirebridge_tokens_total"
    labels = {"direction": "responses_to_chat", "model": "demo"}
    assert sample(samples, tokens, **labels, kind="input") == sum(r.usage.input_tokens for r in replies) > 0
    assert sample(samples, tokens, **labels, kind="output") == sum(r.usage.output_tokens for r in replies) > 0

    assert sample(samples, "wirebridge_losses_total", direction="responses_to_chat", kind="hosted_tool") == 1
    assert sample(samples, "wirebridge_upstream_errors_total", kind="status_5xx") == 1
    assert sample(samples, "wirebridge_forwarded_requests_total", status=status) == 1

    # Every exchange was timed; the refused one never reached the upstream,
    # so it has no time to first byte.
    timing = {"direction": "responses_to_chat"}
    assert sample(samples, "wirebridge_exchange_duration_seconds_count", **timing, stream="false") == 5
    assert sample(samples, "wirebridge_exchange_duration_seconds_count", **timing, stream="true") == 1
    assert sample(samples, "wirebridge_exchange_time_to_first_byte_seconds_count", **timing, stream="false") == 4
    assert sample(samples, "wirebridge_exchange_translation_seconds_count", **timing, stream="false") == 5
    assert 0 < sample(samples, "wirebridge_exchange_translation_seconds_sum", **timing, stream="false") \
        < sample(samples, "wirebridge_exchange_duration_seconds_sum", **timing, stream="false")
    assert sample(samples, "wirebridge_exchange_duration_seconds_bucket", **timing, stream="false", le="+Inf") == 5

    # The four answered responses were kept in the memory store.
    assert sample(samples, "wirebridge_store_operations_total", operation="save", result="ok") == 4
    assert sample(samples, "wirebridge_store_operation_duration_seconds_count", operation="save") == 4

    # Nothing streams now; the scrape's own connection is open.
    assert sample(samples, "wirebridge_open_streams") == 0
    assert sample(samples, "wirebridge_open_connections") >= 1


def test_the_exchange_log_line_has_numbers_and_the_trace(chain):
    client = harness.client(chain)
    client.responses.create(model="demo", input="Hello", extra_headers={"traceparent": TRACEPARENT})
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="named-model", input=[{"type": "no_such_item"}])
    time.sleep(0.2)  # the line is written when the reply ends
    lines = [json.loads(line) for line in chain.bridge.log().splitlines() if line.startswith("{")]
    exchanges = [line for line in lines if line.get("message") == "exchange"]
    assert len(exchanges) == 2, lines
    ok, refused = exchanges
    for field in ("total_us", "ttfb_us", "translation_us", "input_tokens", "output_tokens", "status"):
        assert isinstance(ok[field], int), (field, ok)
    assert ok["ttfb_us"] <= ok["total_us"]
    assert ok["trace_id"] == TRACE_ID
    # A refused request names the model it asked for, and has no first byte.
    assert refused["status"] == 400
    assert refused["model"] == "named-model"
    assert "ttfb_us" not in refused
    assert re.fullmatch(r"[0-9a-f]{32}", refused["trace_id"]) and refused["trace_id"] != TRACE_ID


def test_trace_context_is_continued_and_forwarded(wirebridge, log_dir):
    chain = harness.start_chain(log_dir, "trace", "chat")
    try:
        url = chain.base_url + "/responses"
        body = {"model": "demo", "input": "Hello"}

        mark = chain.tap.mark()
        status, _ = post(url, body, {"traceparent": TRACEPARENT, "tracestate": "vendor=opaque"})
        assert status == 200
        sent = chain.tap.since(mark)[0].headers
        version, trace_id, span_id, flags = sent["traceparent"].split("-")
        assert (version, trace_id, flags) == ("00", TRACE_ID, "01")
        assert re.fullmatch(r"[0-9a-f]{16}", span_id) and span_id != "00f067aa0ba902b7"
        assert sent["tracestate"] == "vendor=opaque"

        # None, or one that is not valid: a new trace, without the state.
        for headers in ({}, {"traceparent": "00-not-a-trace-01", "tracestate": "vendor=opaque"}):
            mark = chain.tap.mark()
            status, _ = post(url, body, headers)
            assert status == 200
            sent = chain.tap.since(mark)[0].headers
            assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-01", sent["traceparent"]), sent
            assert TRACE_ID not in sent["traceparent"]
            assert "tracestate" not in sent

        # Requests that pass through untranslated are part of the trace too.
        mark = chain.tap.mark()
        get(chain.base_url + "/models", {"traceparent": TRACEPARENT})
        sent = chain.tap.since(mark)[0].headers
        assert sent["traceparent"].startswith(f"00-{TRACE_ID}-")

        time.sleep(0.2)
        log = chain.bridge.log()
        assert f"trace_id={TRACE_ID}" in log, log
        # stderr is a file here: no colour codes.
        assert "\x1b[" not in log
    finally:
        harness.stop_checked(chain)


def test_readyz_follows_redis(wirebridge, log_dir):
    redis = RedisServer().start()
    chain = harness.start_chain(
        log_dir, "readyz", "chat", extra=["--store", redis.url(), "--store-timeout", "500ms"],
    )
    try:
        ready = chain.bridge.url + "/readyz"
        status, _, body = get(ready)
        assert (status, json.loads(body)) == (200, {"status": "ready", "draining": False, "store": "ok"})

        redis.kill()
        # Still ready: what needs no stored state is served, and says so.
        status, _, body = get(ready)
        assert (status, json.loads(body)) == (200, {"status": "degraded", "draining": False, "store": "unavailable"})
        client = harness.client(chain)
        assert client.responses.create(model="demo", input="Hello", store=False).status == "completed"
        with pytest.raises(openai.APIStatusError) as chained:
            client.responses.create(model="demo", input="Hello", previous_response_id="resp_earlier")
        assert chained.value.status_code == 503 and chained.value.code == "store_unavailable"
        assert get(chain.bridge.url + "/healthz")[:1] == (200,)

        redis.start()
        deadline = time.monotonic() + 10
        while json.loads(get(ready)[2])["status"] != "ready" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert json.loads(get(ready)[2]) == {"status": "ready", "draining": False, "store": "ok"}
    finally:
        harness.stop_checked(chain)
        redis.stop()


def test_readyz_reads_the_same_whether_a_cluster_node_is_stopped_or_dead(wirebridge, log_dir):
    """On a Redis Cluster, a node that stops answering (SIGSTOP) and one
    that is gone (killed) are the same outage to the bridge: degraded, and
    ready again once the node is back, never not-ready for one and ready
    for the other."""
    cluster = RedisCluster()
    chain = harness.start_chain(
        log_dir, "readyz-cluster", "chat", extra=["--store", cluster.url(), "--store-timeout", "500ms"],
    )
    ready = chain.bridge.url + "/readyz"

    def readiness() -> tuple[int, dict]:
        status, _, body = get(ready)
        return status, json.loads(body)

    def settles_at(expected: tuple[int, dict]) -> tuple[int, dict]:
        deadline = time.monotonic() + 20
        seen = readiness()
        while seen != expected and time.monotonic() < deadline:
            time.sleep(0.1)
            seen = readiness()
        return seen

    healthy = (200, {"status": "ready", "draining": False, "store": "ok"})
    degraded = (200, {"status": "degraded", "draining": False, "store": "unavailable"})
    node = cluster.nodes[1]
    try:
        assert settles_at(healthy) == healthy

        node.signal(signal.SIGSTOP)
        assert settles_at(degraded) == degraded
        node.signal(signal.SIGCONT)
        assert settles_at(healthy) == healthy

        node.kill()
        assert settles_at(degraded) == degraded
        # Stateless traffic is still served meanwhile.
        client = harness.client(chain)
        assert client.responses.create(model="demo", input="Hello", store=False).status == "completed"
    finally:
        harness.stop_checked(chain)
        cluster.stop()


def test_metrics_on_a_listener_of_their_own(wirebridge, log_dir):
    port = free_port()
    chain = harness.start_chain(log_dir, "metrics-listen", "chat", extra=["--metrics-listen", f"127.0.0.1:{port}"])
    try:
        harness.client(chain).responses.create(model="demo", input="Hello")
        samples = scrape(f"http://127.0.0.1:{port}/metrics")
        assert total(samples, "wirebridge_exchanges_total", status=200) == 1
        assert get(f"http://127.0.0.1:{port}/readyz")[0] == 200
        assert get(f"http://127.0.0.1:{port}/nothing")[0] == 404
        # The main listener's /metrics is the upstream's now.
        mark = chain.tap.mark()
        get(chain.bridge.url + "/metrics")
        assert [r.path for r in chain.tap.since(mark)] == ["/v1/metrics"]
    finally:
        harness.stop_checked(chain)
