"""An https:// upstream: the demo upstream behind a TLS front whose
certificate a CA of the test's own signed. The bridge trusts that CA with
--upstream-ca-file, keeps one TLS connection for sequential requests
(translated streams and bodies, passed-through ones), resumes its TLS
session on the next connection, and refuses to talk to an upstream whose
certificate it cannot check. An upstream that asks for the bridge's own
certificate gets the one --upstream-client-cert-file names."""

from __future__ import annotations

import subprocess
import time

import openai
import pytest

import harness
from redis_servers import Certificates
from tls_front import TlsFront


@pytest.fixture(scope="module")
def front(log_dir):
    certs = Certificates()
    demo = harness.start_demo(log_dir, "tls-front", "chat")
    tls = TlsFront(certs, demo.url)
    yield certs, tls
    tls.close()
    demo.stop()
    certs.remove()


def client_certificate(certs: Certificates) -> tuple[str, str]:
    """A client certificate the test CA signed: its file and its key's."""
    with open(certs.path("client.ext"), "w") as ext:
        ext.write("extendedKeyUsage=clientAuth\n")
    certs._openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                   "-subj", "/CN=wirebridge test client", "-keyout", "client.key", "-out", "client.csr")
    certs._openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                   "-CAcreateserial", "-days", "2", "-extfile", "client.ext", "-out", "client.crt")
    return certs.path("client.crt"), certs.path("client.key")


def bridge(log_dir, name: str, tls: TlsFront, *extra: str) -> harness.Process:
    return harness.start_bridge(log_dir, name, tls.url, "chat", extra=list(extra))


def test_sequential_requests_share_one_tls_connection(front, log_dir):
    certs, tls = front
    proxy = bridge(log_dir, "tls-trusted", tls, "--upstream-ca-file", certs.path("ca.crt"))
    try:
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
        before = tls.connections
        for turn in range(3):
            events = list(client.responses.create(model="demo", input=f"Stream {turn}.", stream=True))
            assert events[-1].type == "response.completed", events[-1]
            assert events[-1].response.output_text
            body = client.responses.create(model="demo", input=f"Body {turn}.")
            assert body.status == "completed" and body.output_text
            chunks = list(client.chat.completions.create(
                model="demo", messages=[{"role": "user", "content": f"Chat {turn}."}], stream=True))
            assert chunks[-1].choices == [] or chunks[-1].choices[0].finish_reason == "stop"
        assert tls.connections - before == 1, f"{tls.connections - before} TLS connections for 9 requests"
        assert tls.resumed[-1] is False, "the first connection is a full handshake"
        # The front closes it: the next connection resumes the session.
        tls.close_connections()
        time.sleep(1)
        assert client.responses.create(model="demo", input="Again.").status == "completed"
        assert tls.connections - before == 2
        assert tls.resumed[-1] is True, "the TLS session was not resumed"
    finally:
        proxy.stop()


@pytest.mark.parametrize("trust", [[], ["--upstream-ca-file", "other-ca.crt"]],
                         ids=["public-roots", "another-ca"])
def test_an_upstream_it_cannot_check_is_a_502_naming_neither_address_nor_key(front, log_dir, trust):
    certs, tls = front
    args = [certs.path(a) if a.endswith(".crt") else a for a in trust]
    proxy = bridge(log_dir, "tls-untrusted", tls, *args)
    try:
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-secret-key", max_retries=0)
        with pytest.raises(openai.APIStatusError) as raised:
            client.responses.create(model="demo", input="Hello?")
        assert raised.value.status_code == 502, raised.value
        body = raised.value.body
        assert body["code"] == "upstream_unreachable", body
        assert "certificate" in body["message"].lower(), body
        text = str(body)
        assert str(tls.port) not in text and "sk-secret-key" not in text, text
    finally:
        proxy.stop()
    assert "sk-secret-key" not in proxy.log()


def test_an_upstream_that_asks_for_a_client_certificate_gets_the_configured_one(front, log_dir):
    certs, _ = front
    cert, key = client_certificate(certs)
    demo = harness.start_demo(log_dir, "tls-mutual", "chat")
    mutual = TlsFront(certs, demo.url, client_ca=certs.path("ca.crt"))
    ca = ["--upstream-ca-file", certs.path("ca.crt")]
    with_certificate = bridge(log_dir, "tls-client-cert", mutual, *ca,
                              "--upstream-client-cert-file", cert, "--upstream-client-key-file", key)
    without = bridge(log_dir, "tls-no-client-cert", mutual, *ca)
    try:
        client = openai.OpenAI(base_url=with_certificate.url + "/v1", api_key="sk-test", max_retries=0)
        events = list(client.responses.create(model="demo", input="Who are you?", stream=True))
        assert events[-1].type == "response.completed", events[-1]
        assert client.responses.create(model="demo", input="And now?").status == "completed"
        assert mutual.connections == 1
        # Without it, the upstream refuses the handshake (no connection is
        # relayed), and the client gets a 502. Under TLS 1.3 the refusal
        # comes after the bridge's side of the handshake ended, and this
        # front closes without an alert, so the bridge can tell only that
        # the connection closed.
        client = openai.OpenAI(base_url=without.url + "/v1", api_key="sk-test", max_retries=0)
        with pytest.raises(openai.APIStatusError) as raised:
            client.responses.create(model="demo", input="Hello?")
        assert raised.value.status_code == 502, raised.value
        assert raised.value.body["code"] == "upstream_unreachable", raised.value.body
        assert str(mutual.port) not in str(raised.value.body), raised.value.body
        assert mutual.connections == 1
    finally:
        with_certificate.stop()
        without.stop()
        mutual.close()
        demo.stop()


def test_tls_files_it_cannot_use_stop_it_naming_them(front, wirebridge):
    certs, tls = front
    cert, key = client_certificate(certs)
    for args, says in (
        (["--upstream-ca-file", certs.path("server.key")], "upstream_ca_file"),
        (["--upstream-ca-file", "/nonexistent/ca.pem"], "cannot read upstream_ca_file /nonexistent/ca.pem"),
        (["--upstream-client-cert-file", cert, "--upstream-client-key-file", certs.path("server.key")],
         "upstream_client_cert_file and upstream_client_key_file cannot be used together"),
        (["--upstream-client-cert-file", cert, "--upstream-client-key-file", cert],
         "holds no PEM private key"),
    ):
        done = subprocess.run([str(wirebridge), "serve", "--listen", "127.0.0.1:0", "--upstream", tls.url, *args],
                              capture_output=True, text=True, timeout=20)
        assert done.returncode != 0, done
        assert says in done.stderr, done.stderr
