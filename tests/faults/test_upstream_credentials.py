"""Credentials in the upstream URL (`http://user:pass@host/v1`) are sent as
`Authorization: Basic`, and never appear in the bridge's output, its log
(even at debug level) or any error body; error bodies name the upstream by
its configured label, never by its address."""

from __future__ import annotations

import base64
import json
import subprocess

import openai
import pytest

import harness
import probe

USER, PASSWORD = "wbuser", "s3cr3t-pa55"
LABEL = "the model gateway"


def assert_no_secrets(text: str, where: str) -> None:
    assert PASSWORD not in text, f"the password is in {where}:\n{text}"
    assert f"{USER}:" not in text and f"{USER}@" not in text, f"the user is in {where}:\n{text}"


def everything_said(bridge: harness.Process) -> str:
    return b"".join(bridge.output).decode("utf-8", "replace") + bridge.log()


def test_url_credentials_become_basic_auth_and_stay_out_of_the_log(wirebridge, log_dir):
    static = harness.StaticUpstream(200, json.dumps(probe.chat_completion("authorized")).encode())
    upstream = static.url.replace("http://", f"http://{USER}:{PASSWORD}@") + "/v1"
    bridge = harness.start_bridge(log_dir, "credentials-sent", upstream, "chat", env={"RUST_LOG": "debug"})
    chain = harness.Chain("credentials-sent", bridge, static)
    try:
        with harness.client(chain, timeout=probe.DEADLINE) as client:
            completion = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert completion.choices[0].message.content == "authorized"
        sent = static.requests[-1]
        expected = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        assert sent.headers["authorization"] == f"Basic {expected}"
        assert sent.path == "/v1/chat/completions"
        assert "@" not in sent.headers["host"]
    finally:
        harness.stop_checked(chain)
    assert_no_secrets(everything_said(bridge), "the output")


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_an_unreachable_upstream_is_named_by_its_label(wirebridge, log_dir, stream):
    port = probe.closed_port()
    upstream = f"http://{USER}:{PASSWORD}@127.0.0.1:{port}/v1"
    name = f"unreachable-{'stream' if stream else 'body'}"
    bridge = harness.start_bridge(log_dir, name, upstream, "chat", env={"RUST_LOG": "debug"},
                                  extra=["--upstream-label", LABEL, "--upstream-connect-timeout", "2s"])
    chain = harness.Chain(name, bridge, harness.StaticUpstream(200, b"{}"))
    bodies = []
    try:
        with harness.client(chain, timeout=probe.DEADLINE) as client:
            calls = [
                lambda: client.responses.create(model="m", input="translated", stream=stream),
                lambda: client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "passed through"}], stream=stream),
                lambda: client.models.list(),
            ]
            for call in calls:
                with pytest.raises(openai.APIStatusError) as raised:
                    call()
                assert raised.value.status_code == 502
                bodies.append(raised.value.response.text)
    finally:
        harness.stop_checked(chain)
    for body in bodies:
        error = json.loads(body)["error"]
        assert error["message"] == f"{LABEL} could not be reached (connection refused)", body
        assert error["code"] == "upstream_unreachable"
        assert_no_secrets(body, "an error body")
        assert str(port) not in body and "127.0.0.1" not in body, f"the address is in an error body: {body}"
    said = everything_said(bridge)
    assert_no_secrets(said, "the output")
    # The log may name the upstream's address, for the operator.
    assert f"127.0.0.1:{port}" in probe.plain_log(bridge)


def test_a_bad_upstream_url_is_refused_without_repeating_its_credentials(wirebridge):
    result = subprocess.run(
        [str(wirebridge), "serve", "--upstream", f"http://{USER}:{PASSWORD}@bad host:1/v1"],
        capture_output=True, text=True, timeout=10,
    )
    assert result.returncode == 2, result
    assert "upstream" in result.stderr
    assert_no_secrets(result.stdout + result.stderr, "the error message")
