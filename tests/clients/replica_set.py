"""Three replicas of one backend behind `wirebridge serve`, for the replica
tests: each replica a `wirebridge demo` behind a tap that records which
replica got which request, the bridge given every replica's URL, and the
official openai SDK pointed at it."""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path

import openai
import pytest

import harness

REPLICAS = 3
INSTRUCTIONS = "You are a careful coding agent. Answer briefly."
TOOLS = [{
    "type": "function",
    "name": "shell",
    "description": "Runs a command.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
}]
ENDPOINTS = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}


class Replica:
    """`wirebridge demo --api API` behind a tap."""

    def __init__(self, log_dir: Path, name: str, api: str = "chat") -> None:
        self.demo = harness.start_demo(log_dir, name, api)
        self.tap = harness.Tap(self.demo.url)
        self.url = self.tap.url + "/v1"
        self.endpoint = ENDPOINTS[api]

    def chats(self, mark: int) -> list[harness.Captured]:
        """The generation requests it got since `mark`."""
        return [r for r in self.tap.since(mark) if r.method == "POST" and r.path == self.endpoint]

    def kill(self) -> None:
        """Gone as a crashed host is: the demo killed, the tap's port
        refusing connections."""
        self.demo.proc.kill()
        self.demo.stop()
        self.tap.close()

    def stop(self) -> None:
        self.tap.close()
        self.demo.stop()


class Replicas:
    """The replicas, with what each got since a mark."""

    def __init__(self, replicas: list) -> None:
        self.replicas = replicas

    def mark(self) -> list[int]:
        return [r.tap.mark() if isinstance(r, Replica) else r.mark() for r in self.replicas]

    def served(self, marks: list[int]) -> list[list[dict]]:
        """Each replica's chat request bodies since `marks`."""
        out = []
        for replica, mark in zip(self.replicas, marks):
            captured = replica.chats(mark) if isinstance(replica, Replica) else [
                r for r in replica.since(mark) if r.method == "POST"]
            out.append([r.json() for r in captured])
        return out


def first_user_text(body: dict) -> str:
    messages = body.get("messages") or body["input"]
    if isinstance(messages, str):
        return messages
    for message in messages:
        if message.get("role") == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in content)
    raise AssertionError(f"no user message: {body}")


def where(replicas: Replicas, marks: list[int]) -> dict[str, list[int]]:
    """For each conversation (by its first user message), the replicas its
    requests went to, in the order they were received by each."""
    placed: dict[str, list[int]] = {}
    for index, bodies in enumerate(replicas.served(marks)):
        for body in bodies:
            placed.setdefault(first_user_text(body), []).append(index)
    return placed


def bridge(log_dir: Path, name: str, upstreams: list[str], extra: list[str] | None = None,
           api: str = "chat", store: str = "memory") -> harness.Process:
    args = ["serve", "--listen", "127.0.0.1:0", "--upstream-api", api, "--store", store]
    for url in upstreams:
        args += ["--upstream", url]
    return harness.Process(args + (extra or []), log_dir / f"{name}.bridge.log")


def sdk(process: harness.Process) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=process.url + "/v1",
        api_key="sk-wirebridge-test",
        max_retries=0,
        timeout=openai.Timeout(20.0, connect=5.0),
        http_client=openai.DefaultHttpxClient(trust_env=False),
    )


def turn(client: openai.OpenAI, said: str, previous: str | None, stream: bool) -> str:
    """One turn of a session: its id."""
    kwargs = {"model": "demo", "instructions": INSTRUCTIONS, "tools": TOOLS, "input": said}
    if previous is not None:
        kwargs["previous_response_id"] = previous
    if not stream:
        response = client.responses.create(**kwargs)
        assert response.status == "completed", response
        return response.id
    with client.responses.stream(**kwargs) as events:
        for _ in events:
            pass
        final = events.get_final_response()
    assert final.status == "completed", final
    return final.id


def fetch(url: str) -> tuple[int, str]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def metric(process: harness.Process, name: str, replica: int) -> float:
    """A replica's series: a counter (`_total`) or a gauge."""
    _, text = fetch(process.url + "/metrics")
    prefixes = [f'wirebridge_{name}{suffix}{{replica="{replica}"}} ' for suffix in ("_total", "")]
    for line in text.splitlines():
        for prefix in prefixes:
            if line.startswith(prefix):
                return float(line[len(prefix):])
    raise AssertionError(f"no {prefixes} in /metrics:\n{text}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def checked_stop(process: harness.Process) -> None:
    alive = process.alive()
    code = process.stop()
    log = process.log()
    assert alive, f"the bridge exited during the test (code {code}):\n{log[-4000:]}"
    assert "panicked" not in log, log[-4000:]
    assert code == 0, f"exit {code}:\n{log[-4000:]}"


@pytest.fixture(scope="module")
def three(wirebridge, log_dir):
    replicas = [Replica(log_dir, f"replica-{n}") for n in range(REPLICAS)]
    yield Replicas(replicas)
    for replica in replicas:
        replica.stop()


@pytest.fixture(scope="module")
def bridged(three, log_dir):
    process = bridge(log_dir, "replicas", [r.url for r in three.replicas])
    yield process
    checked_stop(process)
