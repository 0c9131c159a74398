#!/usr/bin/env python3
"""Replica affinity against round-robin, with real model servers.

Starts three llama-server replicas (scripts/llama_server.sh's build, Gemma 3
270M, two slots each) and drives N concurrent multi-turn conversations to
them through `wirebridge serve`, two ways, side by side in one run:

* affinity:    one bridge given the three URLs (`--upstream` three times):
               the bridge keeps each conversation on one replica;
* round-robin: three bridges, each given one replica's URL, and the client
               sending each request to the next bridge in turn, as a
               round-robin balancer in front of the replicas would.

Every conversation is a Responses client resending its whole history each
turn (`store: false`), streamed, so both routings send the replicas exactly
the same requests; only where each lands differs. Two workloads: a distinct
~900-token system prompt per conversation, and one shared ~900-token system
prompt and one shared tool list for every conversation (the sessions of one
agent). The replicas are started afresh for each routing of each workload,
their caches empty.

What the replicas did is read from their own counters: a relay in front of
each replica keeps every answer, whose last chunk carries llama-server's
`timings` (`prompt_n`: prompt tokens evaluated, `cache_n`: prompt tokens
served from its cache); `/metrics` (`llamacpp:prompt_tokens_total`) is read
as a check. The client times each turn's first text token.

* minimum:  each token of each conversation's final history evaluated once
            (the sum over conversations of the last turn's prompt);
* reusable: for a turn after the first, what the turn before left in its
            replica's cache (its prompt and its answer); `from cache` is the
            share of it the replicas served from cache;
* moved:    turns served by another replica than the turn before.

    cargo build --release -p wirebridge-cli && bash scripts/llama_server.sh
    WIREBRIDGE_BIN=target/release/wirebridge .venv/bin/python scripts/replica_bench.py \\
        [--conversations 6] [--turns 6] [--tokens 24] [--turn-words 18]

`--turn-words` sets each user message's length: an agent's turn often
carries a command's output or a file's part, hundreds of tokens, where the
default is a short question.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "clients"))
sys.path.insert(0, str(REPO / "tests" / "live"))

import harness  # noqa: E402
import llama  # noqa: E402

TEMPLATE = "meta-llama-Llama-3.1-8B-Instruct.jinja"
REPLICAS = 3
SLOTS = 2
# Each replica's context: `SLOTS` slots of 4,096 tokens, room for the
# longest history (about 1,900 tokens at 6 turns).
CONTEXT = SLOTS * 4096
# About 900 tokens of the model's tokenizer (measured: 1.1 tokens a word
# for the words below).
SYSTEM_WORDS = 820
USER_WORDS = 18
# A turn's generous bound: a cold prompt on a busy 2-core machine takes tens
# of seconds.
TURN_TIMEOUT = 900.0

WORDS = (
    "the of and to in is that for it as with was on be by this are at from or an have not which but they "
    "all were when we there can more if will one about up out so what their time would other into has "
    "some could them these than then its two like only new also after first way well because any over "
    "through back years work where much before must use good each those right still three high most "
    "small large number part place case point group problem fact hand order system program question "
    "government company service level report result change state area water money story book word "
    "process line power field court market example value method design model file request answer "
    "server client network record table index branch commit review build release version module "
    "function argument error message header stream buffer socket thread memory cache replica session "
    "token prompt context history window schedule deploy rollback config setting option default "
    "careful clear short long simple exact quick slow early late always never often rarely"
).split()

TOOLS = [
    {"type": "function", "name": "shell", "description": "Runs a shell command in the workspace and returns "
     "its standard output, its standard error and its exit status.",
     "parameters": {"type": "object", "properties": {
         "command": {"type": "array", "items": {"type": "string"}, "description": "The program and its arguments."},
         "workdir": {"type": "string", "description": "The directory to run it in."},
         "timeout_ms": {"type": "integer", "description": "How long to wait before it is stopped."}},
         "required": ["command"]}},
    {"type": "function", "name": "apply_patch", "description": "Applies a patch to files of the workspace: "
     "adds, deletes or updates files, with context lines around each change.",
     "parameters": {"type": "object", "properties": {
         "patch": {"type": "string", "description": "The patch, from its begin line to its end line."}},
         "required": ["patch"]}},
    {"type": "function", "name": "read_file", "description": "Reads a range of lines of a file of the workspace.",
     "parameters": {"type": "object", "properties": {
         "path": {"type": "string", "description": "The file, relative to the workspace."},
         "offset": {"type": "integer", "description": "The first line to read, from 1."},
         "limit": {"type": "integer", "description": "How many lines to read at most."}},
         "required": ["path"]}},
    {"type": "function", "name": "update_plan", "description": "Records the plan of the task: its steps and "
     "which of them is in progress, done or pending.",
     "parameters": {"type": "object", "properties": {
         "explanation": {"type": "string"},
         "plan": {"type": "array", "items": {"type": "object", "properties": {
             "step": {"type": "string"},
             "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}},
             "required": ["step", "status"]}}},
         "required": ["plan"]}},
]


def text(rng: random.Random, words: int) -> str:
    """`words` words in sentences of 8 to 16, from a seeded generator."""
    sentences = []
    left = words
    while left > 0:
        length = min(left, rng.randint(8, 16))
        sentence = " ".join(rng.choice(WORDS) for _ in range(length))
        sentences.append(sentence[0].upper() + sentence[1:] + ".")
        left -= length
    return " ".join(sentences)


@dataclass
class Conversation:
    """One client's conversation: its system prompt, tools, and the user
    message of each turn."""

    index: int
    instructions: str
    tools: list | None
    questions: list[str]


def conversations(workload: str, count: int, turns: int, seed: int,
                  turn_words: int = USER_WORDS) -> list[Conversation]:
    rng = random.Random(f"{workload}-{seed}")
    shared = "You are a careful assistant. " + text(rng, SYSTEM_WORDS)
    out = []
    for index in range(count):
        instructions = shared if workload == "shared" else (
            "You are a careful assistant. " + text(rng, SYSTEM_WORDS))
        questions = [f"Task {index + 1}, step {turn + 1}: " + text(rng, turn_words) for turn in range(turns)]
        out.append(Conversation(index, instructions, TOOLS if workload == "shared" else None, questions))
    return out


@dataclass
class Turn:
    """One turn as the client saw it."""

    conversation: int
    turn: int
    first_token: float
    seconds: float


def stream_turn(url: str, body: dict) -> tuple[float, float, list]:
    """POSTs a streamed Responses request; returns (seconds to the first
    text delta, seconds to the end, the output items of the completed
    response)."""
    target = urlsplit(url)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=TURN_TIMEOUT)
    start = time.perf_counter()
    connection.request("POST", target.path + "/responses", body=json.dumps(body).encode(),
                       headers={"content-type": "application/json", "authorization": "Bearer sk-bench"})
    answer = connection.getresponse()
    if answer.status != 200:
        raise RuntimeError(f"status {answer.status}: {answer.read()[:500]!r}")
    first = None
    output = None
    buffer = b""
    while True:
        piece = answer.read1(65536)
        if not piece:
            break
        buffer += piece
        while b"\n\n" in buffer:
            frame, buffer = buffer.split(b"\n\n", 1)
            data = b"".join(line[5:].strip() for line in frame.split(b"\n") if line.startswith(b"data:"))
            if not data:
                continue
            event = json.loads(data)
            kind = event.get("type")
            if kind in ("response.output_text.delta", "response.function_call_arguments.delta") and first is None:
                first = time.perf_counter() - start
            elif kind in ("response.completed", "response.incomplete"):
                # `incomplete`: the answer reached `max_output_tokens`, as most do.
                output = event["response"]["output"]
            elif kind in ("response.failed", "error"):
                raise RuntimeError(f"the turn failed: {data[:500]!r}")
    end = time.perf_counter() - start
    connection.close()
    if output is None:
        raise RuntimeError("the stream ended without its response")
    return (first if first is not None else end), end, output


def next_input(output: list) -> list:
    """The items a stateless client sends back after an answer: its message
    as an assistant message, and any tool call with a result."""
    items = []
    for item in output:
        if item.get("type") == "message":
            said = "".join(part.get("text", "") for part in item.get("content", []))
            items.append({"role": "assistant", "content": said})
        elif item.get("type") == "function_call":
            items.append({"type": "function_call", "call_id": item["call_id"], "name": item["name"],
                          "arguments": item["arguments"]})
            items.append({"type": "function_call_output", "call_id": item["call_id"], "output": "done"})
    return items


def converse(conversation: Conversation, route, tokens: int, turns: list[Turn], lock: threading.Lock,
             start: threading.Barrier) -> None:
    history: list = []
    start.wait()
    for number, question in enumerate(conversation.questions, 1):
        history.append({"role": "user", "content": question})
        body = {"model": "gemma-3-270m", "instructions": conversation.instructions, "input": history,
                "max_output_tokens": tokens, "stream": True, "store": False}
        if conversation.tools is not None:
            # The tools are in the prompt as with "auto" (llama-server renders
            # them alike), but "none" keeps an answer cut at `tokens` from
            # being parsed as a tool call, which fails when it is cut short.
            body["tools"] = conversation.tools
            body["tool_choice"] = "none"
        first, end, output = stream_turn(route(), body)
        history.extend(next_input(output))
        with lock:
            turns.append(Turn(conversation.index, number, first, end))


@dataclass
class Served:
    """One answer as a replica gave it: whose turn, and its `timings`."""

    replica: int
    conversation: int
    turn: int
    prompt_n: int
    cache_n: int
    predicted_n: int


def timings_of(exchange: llama.Exchange) -> dict:
    """The `timings` of a streamed Chat answer (in its last chunk that has them)."""
    found = None
    for line in exchange.response.split(b"\n"):
        if line.startswith(b"data:") and b'"timings"' in line:
            found = json.loads(line[5:])["timings"]
    if found is None:
        raise RuntimeError(f"an answer without timings: {exchange.response[-500:]!r}")
    return found


def prompt_tokens_total(server: llama.LlamaServer) -> int:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(server.url + "/metrics", timeout=10) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith("llamacpp:prompt_tokens_total "):
                return int(float(line.split()[1]))
    raise RuntimeError("no llamacpp:prompt_tokens_total in /metrics")


@dataclass
class Run:
    """One routing of one workload."""

    workload: str
    routing: str
    turns: list[Turn] = field(default_factory=list)
    served: list[Served] = field(default_factory=list)
    metrics_prompt_tokens: int = 0
    seconds: float = 0.0


def run(workload: str, routing: str, args, logs: Path) -> Run:
    chats = conversations(workload, args.conversations, args.turns, args.seed, args.turn_words)
    first_questions = {chat.questions[0]: chat.index for chat in chats}
    servers, relays, bridges = [], [], []
    result = Run(workload, routing)
    try:
        for index in range(REPLICAS):
            servers.append(llama.LlamaServer(f"{workload}-{routing}-{index}", TEMPLATE, logs, CONTEXT,
                                             predict=args.tokens, slots=SLOTS, threads=args.threads,
                                             metrics=True))
            relays.append(llama.Relay(servers[-1].url))
            # A bridge that stops resets its idle connections to the relay:
            # not worth a traceback.
            relays[-1].server.handle_error = lambda request, address: None
        urls = [relay.url + "/v1" for relay in relays]
        env = {"RUST_LOG": args.log}
        if routing == "affinity":
            extra = [flag for url in urls[1:] for flag in ("--upstream", url)]
            bridges.append(harness.start_bridge(logs, f"{workload}-{routing}", urls[0], "chat", "llama-cpp",
                                                extra=extra, env=env))
        else:
            for index, url in enumerate(urls):
                bridges.append(harness.start_bridge(logs, f"{workload}-{routing}-{index}", url, "chat",
                                                    "llama-cpp", env=env))
        cycle = itertools.cycle([bridge.url + "/v1" for bridge in bridges])
        cycle_lock = threading.Lock()

        def route() -> str:
            with cycle_lock:
                return next(cycle)

        lock = threading.Lock()
        barrier = threading.Barrier(len(chats))
        errors: list[BaseException] = []

        def worker(chat: Conversation) -> None:
            try:
                converse(chat, route, args.tokens, result.turns, lock, barrier)
            except BaseException as error:  # reported below, after the others finish
                errors.append(error)
                barrier.abort()

        threads = [threading.Thread(target=worker, args=(chat,)) for chat in chats]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        result.seconds = time.perf_counter() - started
        if errors:
            raise RuntimeError(f"{workload}/{routing}: {errors[0]}") from errors[0]

        for replica, relay in enumerate(relays):
            for exchange in relay.exchanges:
                if not exchange.path.endswith("/chat/completions"):
                    continue
                exchange.wait()
                messages = exchange.json()["messages"]
                users = [m for m in messages if m["role"] == "user"]
                first = users[0]["content"]
                first = first if isinstance(first, str) else "".join(p.get("text", "") for p in first)
                conversation = next(index for question, index in first_questions.items() if question in first)
                timings = timings_of(exchange)
                result.served.append(Served(replica, conversation, len(users), timings["prompt_n"],
                                            timings.get("cache_n", 0), timings["predicted_n"]))
        result.metrics_prompt_tokens = sum(prompt_tokens_total(server) for server in servers)
    finally:
        for bridge in bridges:
            bridge.stop()
        for relay in relays:
            relay.close()
        for server in servers:
            server.stop()
    return result


@dataclass
class Summary:
    evaluated: int
    metrics: int
    minimum: int
    from_cache: float
    first_turn_cached: int
    per_replica: list[int]
    moved: int
    first_token_1: float
    first_token_later: float
    seconds: float


def summarize(result: Run) -> Summary:
    by_turn = {(s.conversation, s.turn): s for s in result.served}
    last = {}
    for s in result.served:
        if s.turn > last.get(s.conversation, (0, None))[0]:
            last[s.conversation] = (s.turn, s)
    minimum = sum(s.prompt_n + s.cache_n for _, s in last.values())
    reusable = cached = moved = 0
    for s in result.served:
        before = by_turn.get((s.conversation, s.turn - 1))
        if before is not None:
            reusable += before.prompt_n + before.cache_n + before.predicted_n
            cached += s.cache_n
            moved += before.replica != s.replica
    per_replica = [sum(1 for s in result.served if s.replica == r) for r in range(REPLICAS)]
    return Summary(
        evaluated=sum(s.prompt_n for s in result.served),
        metrics=result.metrics_prompt_tokens,
        minimum=minimum,
        from_cache=cached / reusable if reusable else 0.0,
        first_turn_cached=sum(s.cache_n for s in result.served if s.turn == 1),
        per_replica=per_replica,
        moved=moved,
        first_token_1=statistics.median(t.first_token for t in result.turns if t.turn == 1),
        first_token_later=statistics.median(t.first_token for t in result.turns if t.turn >= 2),
        seconds=result.seconds,
    )


def report(results: list[Run], args) -> None:
    print(f"{REPLICAS} replicas x {SLOTS} slots, {args.conversations} conversations x {args.turns} turns, "
          f"{args.tokens} tokens an answer, {args.turn_words} words a user message")
    print("| workload | routing | prompt tokens evaluated | (/metrics) | minimum | ratio | from cache "
          "| turn 1 cached | turns per replica | max/even | moved | first token, turn 1 (s) | turn >= 2 (s) "
          "| wall (s) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    summaries = {}
    for result in results:
        s = summarize(result)
        summaries[(result.workload, result.routing)] = s
        even = sum(s.per_replica) / REPLICAS
        print(f"| {result.workload} | {result.routing} | {s.evaluated:,} | {s.metrics:,} | {s.minimum:,} "
              f"| {s.evaluated / s.minimum:.2f}x | {s.from_cache:.1%} | {s.first_turn_cached:,} "
              f"| {' / '.join(map(str, s.per_replica))} | {max(s.per_replica) / even:.2f}x | {s.moved} "
              f"| {s.first_token_1:.2f} | {s.first_token_later:.2f} | {s.seconds:.0f} |")
    for workload in dict.fromkeys(r.workload for r in results):
        affinity = summaries.get((workload, "affinity"))
        robin = summaries.get((workload, "round-robin"))
        if affinity and robin:
            print(f"{workload}: turn >= 2 first token, affinity / round-robin = "
                  f"{affinity.first_token_later / robin.first_token_later:.2f}; prompt tokens, "
                  f"affinity / round-robin = {affinity.evaluated / robin.evaluated:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=6)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--tokens", type=int, default=24, help="the most tokens of each answer")
    parser.add_argument("--threads", type=int, default=1, help="each replica's threads")
    parser.add_argument("--turn-words", type=int, default=USER_WORDS,
                        help="words in each user message (about 1.1 tokens a word)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workload", choices=["distinct", "shared", "both"], default="both")
    parser.add_argument("--routing", choices=["affinity", "round-robin", "both"], default="both")
    parser.add_argument("--log", default="warn", help="the bridges' RUST_LOG (`info` shows each spill)")
    parser.add_argument("--json", type=Path, help="also write every turn and answer to this file")
    args = parser.parse_args()

    logs = Path(tempfile.mkdtemp(prefix="wirebridge-replicas-"))
    workloads = ["distinct", "shared"] if args.workload == "both" else [args.workload]
    routings = ["affinity", "round-robin"] if args.routing == "both" else [args.routing]
    results = []
    for workload in workloads:
        for routing in routings:
            print(f"running {workload} / {routing} ...", file=sys.stderr, flush=True)
            results.append(run(workload, routing, args, logs))
    report(results, args)
    if args.json:
        args.json.write_text(json.dumps([
            {"workload": r.workload, "routing": r.routing, "seconds": r.seconds,
             "metrics_prompt_tokens": r.metrics_prompt_tokens,
             "turns": [t.__dict__ for t in r.turns], "served": [s.__dict__ for s in r.served]}
            for r in results], indent=1))
    print(f"logs: {logs}", file=sys.stderr)


if __name__ == "__main__":
    main()
