"""Several replicas of one backend behind one bridge, driven by the real
clients (the official openai SDK, Claude Code): which replica each
conversation goes to.

What must hold: every turn of a `previous_response_id` chain goes to one
replica, streaming or not, as does every turn of a conversation, of a
WebSocket session, and of a Claude Code session (a stateless Messages
client, keyed by its prompt's stable prefix); six chains that share their
instructions and tools (as every session of one agent does) spread over
the three, two on each; two bridge processes, the replicas listed in other
orders, send the same conversation to the same replica, and so do two
sharing a Redis store for a chain continued on each in turn.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from replica_set import (  # noqa: F401 (the fixtures three and bridged)
    INSTRUCTIONS,
    REPLICAS,
    TOOLS,
    Replica,
    Replicas,
    bridge,
    bridged,
    checked_stop,
    metric,
    sdk,
    three,
    turn,
    where,
)
from redis_servers import RedisServer
from test_claude_code import ANSWER, PROMPT, Run, claude  # noqa: F401 (a fixture)

# --------------------------------------------------------------------------
# Affinity and spread
# --------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_chain_stays_on_one_replica(three, bridged, stream):
    client = sdk(bridged)
    marks = three.mark()
    previous = None
    opening = f"chain kept in place ({'stream' if stream else 'body'})"
    for n in range(6):
        previous = turn(client, opening if n == 0 else f"turn {n}", previous, stream)
    placed = where(three, marks)
    assert list(placed) == [opening], placed
    assert len(placed[opening]) == 6 and len(set(placed[opening])) == 1, placed
    # The replica's request counter says so too.
    home = placed[opening][0]
    assert metric(bridged, "replica_requests", home) >= 6


def test_prompt_tokens_are_counted_to_the_replica_that_answered(three, log_dir):
    """Each answer's prompt tokens (its usage, as the client gets it) go to
    the series of the replica that gave it, and to no other."""
    process = bridge(log_dir, "replica-tokens", [r.url for r in three.replicas])
    try:
        client = sdk(process)
        marks = three.mark()
        previous, used = None, 0
        for n in range(3):
            kwargs = {"model": "demo", "instructions": INSTRUCTIONS, "input": f"count me {n}"}
            if previous is not None:
                kwargs["previous_response_id"] = previous
            response = client.responses.create(**kwargs)
            previous, used = response.id, used + response.usage.input_tokens
        [home] = set(where(three, marks)["count me 0"])
        counted = [metric(process, "replica_prompt_tokens", r) for r in range(REPLICAS)]
        assert counted[home] == used > 0, counted
        assert sum(counted) == used, counted
        assert 'replica=' in process.log()
    finally:
        checked_stop(process)


def test_a_chain_stays_on_one_replica_of_a_responses_backend(wirebridge, log_dir):
    # A Responses backend that keeps no state: the bridge sends it the
    # whole conversation each turn, to one replica.
    replicas = Replicas([Replica(log_dir, f"responses-{n}", "responses") for n in range(REPLICAS)])
    process = bridge(log_dir, "responses", [r.url for r in replicas.replicas], api="responses")
    try:
        client = sdk(process)
        for session in range(3):
            marks = replicas.mark()
            previous = None
            opening = f"responses session {session}"
            for n in range(4):
                previous = turn(client, opening if n == 0 else f"turn {n}", previous, n % 2 == 1)
            placed = where(replicas, marks)
            assert list(placed) == [opening], placed
            assert len(placed[opening]) == 4 and len(set(placed[opening])) == 1, placed
    finally:
        checked_stop(process)
        for replica in replicas.replicas:
            replica.stop()


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_chat_client_passed_through_stays_on_one_replica(three, bridged, stream):
    # A Chat client on a Chat backend is not translated: the bridge reads
    # its request to key it, and sends it on as it came.
    client = sdk(bridged)
    marks = three.mark()
    opening = f"a chat conversation ({'stream' if stream else 'body'})"
    messages = [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": opening}]
    for n in range(4):
        if stream:
            chunks = client.chat.completions.create(model="demo", messages=messages, stream=True)
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            text = client.chat.completions.create(model="demo", messages=messages).choices[0].message.content
        messages += [{"role": "assistant", "content": text or "ok"}, {"role": "user", "content": f"more {n}"}]
    placed = where(three, marks)
    assert list(placed) == [opening], placed
    assert len(placed[opening]) == 4 and len(set(placed[opening])) == 1, placed
    # Passed on as the client wrote it.
    assert three.served(marks)[placed[opening][0]][0]["messages"][1]["content"] == opening


def test_a_conversation_stays_on_one_replica(three, bridged):
    # Keyed by its `conversation` id: every turn of it on one replica.
    client = sdk(bridged)
    marks = three.mark()
    for n in range(3):
        conversation = client.conversations.create()
        for said in (f"conversation {n}: fix the tests", "then the docs", "then commit"):
            response = client.responses.create(model="demo", instructions=INSTRUCTIONS, tools=TOOLS,
                                               input=said, conversation=conversation.id)
            assert response.status == "completed", response
    placed = where(three, marks)
    assert sorted(placed) == [f"conversation {n}: fix the tests" for n in range(3)], placed
    assert all(len(replicas) == 3 and len(set(replicas)) == 1 for replicas in placed.values()), placed


def test_websocket_sessions_stay_on_one_replica_each(three, bridged):
    # Codex's WebSocket mode: each session continues its own turns with
    # `previous_response_id` and `store: false`, from the connection's
    # cache; every turn of a session is one conversation, on one replica.
    marks = three.mark()
    for n in range(4):
        client = sdk(bridged)
        with client.responses.connect() as connection:
            previous = None
            for said in (f"socket {n}: list the files", "now read the first", "and summarize it"):
                kwargs = {"model": "demo", "instructions": INSTRUCTIONS, "tools": TOOLS,
                          "input": said, "store": False}
                if previous is not None:
                    kwargs["previous_response_id"] = previous
                connection.response.create(**kwargs)
                while True:
                    event = json.loads(connection.recv_bytes())
                    assert event["type"] != "error", event
                    if event["type"] == "response.completed":
                        previous = event["response"]["id"]
                        break
    placed = where(three, marks)
    assert sorted(placed) == [f"socket {n}: list the files" for n in range(4)], placed
    # Three turns each, all of a session's on one replica.
    assert all(len(replicas) == 3 and len(set(replicas)) == 1 for replicas in placed.values()), placed


def test_a_claude_code_session_stays_on_one_replica(three, bridged, claude, tmp_path):
    # A stateless Messages client: Claude Code sends its whole
    # conversation every turn, so its key is the stable prefix (system
    # prompt, tools, first turn) and both requests of its tool loop go to
    # the replica that holds that prefix.
    marks = three.mark()
    run = Run(claude, bridged.url, tmp_path / "home", tmp_path / "work", PROMPT)
    assert run.code == 0 and run.result.get("result") == ANSWER, run.report()
    placed = where(three, marks)
    assert len(placed) == 1, placed
    [replicas] = placed.values()
    assert len(replicas) == 2 and len(set(replicas)) == 1, placed


def test_six_chains_of_one_agent_spread_over_the_replicas(three, log_dir):
    # A bridge of its own: no pins from other tests.
    process = bridge(log_dir, "spread", [r.url for r in three.replicas])
    try:
        client = sdk(process)
        marks = three.mark()
        sessions = [turn(client, f"session {n}: fix the failing test", None, False) for n in range(6)]
        for n, previous in enumerate(sessions):
            turn(client, f"session {n}: and run it again", previous, False)
        placed = where(three, marks)
        assert len(placed) == 6, placed
        # Each session's two turns on one replica.
        assert all(len(set(replicas)) == 1 for replicas in placed.values()), placed
        per_replica = Counter(replicas[0] for replicas in placed.values())
        # Each first turn placed within its replica's share of the pins.
        assert sorted(per_replica.values()) == [2, 2, 2], per_replica
    finally:
        checked_stop(process)


def test_two_bridges_choose_the_same_replica(three, log_dir):
    # The replicas listed in another order by each: they agree by the
    # replicas' names, not their places in the list.
    urls = [r.url for r in three.replicas]
    one = bridge(log_dir, "agree-1", urls)
    other = bridge(log_dir, "agree-2", list(reversed(urls)))
    try:
        clients = [sdk(one), sdk(other)]
        for n in range(4):
            marks = three.mark()
            # A stateless client sends its whole conversation each turn;
            # the turns alternate between the two bridges.
            history = [{"role": "user", "content": f"shared session {n}"}]
            for t in range(4):
                response = clients[t % 2].responses.create(
                    model="demo", instructions=INSTRUCTIONS, tools=TOOLS, input=history, store=False)
                assert response.status == "completed"
                history += [{"role": "assistant", "content": response.output_text or "ok"},
                            {"role": "user", "content": f"step {t}"}]
            placed = where(three, marks)
            assert len(placed) == 1 and len(set(next(iter(placed.values())))) == 1, placed
    finally:
        checked_stop(one)
        checked_stop(other)


def test_two_bridges_sharing_redis_keep_a_chain_on_one_replica(three, log_dir):
    # A chain started on one bridge and continued on the other, turn by
    # turn: each resolves the chain's root from the shared store, and
    # both put the conversation on the replica its key orders first.
    server = RedisServer().start()
    urls = [r.url for r in three.replicas]
    one = bridge(log_dir, "redis-1", urls, store=server.url())
    other = bridge(log_dir, "redis-2", list(reversed(urls)), store=server.url())
    try:
        clients = [sdk(one), sdk(other)]
        marks = three.mark()
        for n in range(3):
            previous = None
            for t in range(4):
                said = f"redis chain {n}: fix the build" if t == 0 else f"step {t}"
                previous = turn(clients[t % 2], said, previous, False)
        placed = where(three, marks)
        assert sorted(placed) == [f"redis chain {n}: fix the build" for n in range(3)], placed
        assert all(len(replicas) == 4 and len(set(replicas)) == 1 for replicas in placed.values()), placed
    finally:
        checked_stop(one)
        checked_stop(other)
        server.stop()
