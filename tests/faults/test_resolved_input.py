"""What a small request can make the bridge take in from its store: one
stored 1 MiB item named by hundreds of `item_reference`s in a 16 KB body
would be a request of hundreds of MB, built, held and sent upstream. The
bound on a request's resolved input (`--max-resolved-input`, twice the body
limit by default) refuses it before anything is built: a 400 naming
`input`, nothing sent upstream, the bridge's peak memory barely moved. The
same holds for `POST /v1/responses/input_tokens`, which resolves the
request the same way; a request within the bound is answered with each
reference replaced by its item."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import probe

# The stored item, and how many times the refused requests name it: 200
# MiB of input from a 16 KB body, three times the default bound of 64 MiB.
ITEM_BYTES = 1 << 20
REFERENCES = 200

# What refusing them may add to the bridge's peak memory: under one
# request body (32 MiB). Resolving them would add hundreds of MB.
PEAK_GROWTH_KB = 32 << 10


def request(bridge, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    url = urlsplit(bridge.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=20)
    data = json.dumps(body).encode() if body is not None else b""
    conn.request(method, "/v1" + path, body=data,
                 headers={"content-type": "application/json", "authorization": "Bearer k1"})
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    return response.status, json.loads(raw) if raw else {}


def stored_item(bridge, text: str) -> str:
    """Stores a turn whose one input item is a message of `text`: its id."""
    status, response = request(bridge, "POST", "/responses", {"model": "m", "input": text})
    assert status == 200, response
    status, items = request(bridge, "GET", f"/responses/{response['id']}/input_items")
    assert status == 200, items
    [item] = items["data"]
    return item["id"]


def referring(item: str, times: int, then: str | None = None) -> dict:
    refs = [{"type": "item_reference", "id": item} for _ in range(times)]
    if then is not None:
        refs.append({"role": "user", "content": then})
    return {"model": "m", "store": False, "input": refs}


def test_many_references_to_a_large_item_are_refused_before_they_are_built(chain):
    bridge = chain()
    text = "x" * ITEM_BYTES
    item = stored_item(bridge, text)
    pid = bridge.bridge.proc.pid
    body = referring(item, REFERENCES)
    assert len(json.dumps(body)) < 17_000
    before = probe.peak_kb(pid)
    mark = bridge.tap.mark()

    for path in ["/responses", "/responses/input_tokens"]:
        status, error = request(bridge, "POST", path, body)
        assert status == 400, (path, error)
        assert error["error"]["param"] == "input", error
        assert error["error"]["code"] == "resolved_input_too_large", error
        assert "67108864-byte limit" in error["error"]["message"], error

    assert bridge.tap.since(mark) == [], "the upstream was sent the refused requests"
    growth = probe.peak_kb(pid) - before
    print(f"peak resident memory {before} KB -> {before + growth} KB")
    assert growth < PEAK_GROWTH_KB, f"refusing grew the bridge's peak memory by {growth} KB"
    assert probe.metric(bridge, 'wirebridge_budget_refusals_total{kind="resolved_input"}').endswith(" 2")

    # Within the bound, each reference is its item, exactly.
    status, response = request(bridge, "POST", "/responses", referring(item, 3, then="and?"))
    assert status == 200, response
    [sent] = bridge.tap.since(mark)
    messages = [(m["role"], m["content"]) for m in sent.json()["messages"]]
    assert messages == [("user", text)] * 3 + [("user", "and?")]


def test_the_bound_is_a_setting_and_names_the_history_that_passes_it(chain):
    bridge = chain("--max-resolved-input", "100000")
    mark = bridge.tap.mark()
    # The demo upstream repeats what it was told: a turn of N bytes of
    # input keeps about 2N.
    status, first = request(bridge, "POST", "/responses", {"model": "m", "input": "y" * 30_000})
    assert status == 200, first
    item = request(bridge, "GET", f"/responses/{first['id']}/input_items")[1]["data"][0]["id"]

    # A conversation of 60 KB, then of 110 KB: the second passes the bound.
    status, second = request(bridge, "POST", "/responses",
                             {"model": "m", "input": "w" * 25_000, "previous_response_id": first["id"]})
    assert status == 200, second
    status, error = request(bridge, "POST", "/responses",
                            {"model": "m", "input": "u", "previous_response_id": second["id"]})
    assert status == 400 and error["error"]["param"] == "previous_response_id", error
    assert error["error"]["code"] == "resolved_input_too_large", error
    assert "100000-byte limit" in error["error"]["message"], error

    # The 30 KB item named three times fits, four times does not.
    status, response = request(bridge, "POST", "/responses", referring(item, 3))
    assert status == 200, response
    status, error = request(bridge, "POST", "/responses", referring(item, 4))
    assert status == 400 and error["error"]["param"] == "input", error
    assert len(bridge.tap.since(mark)) == 3, "a refused request reached the upstream"
