"""Size and concurrency, both directions, against the demo upstream: a
1 MB token (one SSE event of that size each way) comes back whole, and
concurrent streams on one bridge each get their own answer."""

from __future__ import annotations

import concurrent.futures

import pytest

import harness

BIG = "x" * 1_000_000
CONCURRENT = 16


def demo_answer(text: str) -> str:
    return f'You said: "{text}". This is the wirebridge demo upstream.'


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
def test_responses_client_one_megabyte_token(chat_upstream, stream):
    client = harness.client(chat_upstream)
    if stream:
        with client.responses.stream(model="demo", input=f"big {BIG}") as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(model="demo", input=f"big {BIG}")
    assert response.output_text == demo_answer(f"big {BIG}")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
def test_chat_client_one_megabyte_token(responses_upstream, stream):
    client = harness.client(responses_upstream)
    request = {"model": "demo", "messages": [{"role": "user", "content": f"big {BIG}"}]}
    if stream:
        with client.chat.completions.stream(**request) as events:
            completion = events.get_final_completion()
    else:
        completion = client.chat.completions.create(**request)
    assert completion.choices[0].message.content == demo_answer(f"big {BIG}")


def test_responses_client_concurrent_streams(chat_upstream):
    def one(n: int) -> str:
        with harness.client(chat_upstream).responses.stream(model="demo", input=f"client {n} demo:slow 10") as s:
            return s.get_final_response().output_text

    with concurrent.futures.ThreadPoolExecutor(CONCURRENT) as pool:
        answers = list(pool.map(one, range(CONCURRENT)))
    assert answers == [demo_answer(f"client {n} demo:slow 10") for n in range(CONCURRENT)]


def test_chat_client_concurrent_streams(responses_upstream):
    def one(n: int) -> str:
        messages = [{"role": "user", "content": f"client {n} demo:slow 10"}]
        with harness.client(responses_upstream).chat.completions.stream(model="demo", messages=messages) as s:
            return s.get_final_completion().choices[0].message.content

    with concurrent.futures.ThreadPoolExecutor(CONCURRENT) as pool:
        answers = list(pool.map(one, range(CONCURRENT)))
    assert answers == [demo_answer(f"client {n} demo:slow 10") for n in range(CONCURRENT)]
