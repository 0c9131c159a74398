"""An https:// upstream: the demo upstream behind a TLS front whose
certificate a CA of the test's own signed. The bridge trusts that CA with
--upstream-ca-file, keeps one TLS connection for sequential requests
(translated streams and bodies, passed-through ones), resumes its TLS
session on the next connection, and refuses to talk to an upstream whose
certificate it cannot check."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import threading
import time
from urllib.parse import urlsplit

import openai
import pytest

import harness
from redis_servers import Certificates


class TlsFront:
    """Takes TLS connections on loopback and relays what they carry, in the
    clear, to `target_url`. Records, for each connection whose handshake
    succeeded, whether it resumed an earlier session."""

    def __init__(self, certs: Certificates, target_url: str) -> None:
        target = urlsplit(target_url)
        self.target = (target.hostname, target.port)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(certs.path("server.crt"), certs.path("server.key"))
        self.resumed: list[bool] = []
        self.writers: list[asyncio.StreamWriter] = []
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)
        self.url = f"https://127.0.0.1:{self.port}/v1"

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._relay, "127.0.0.1", 0, ssl=self.context))
        self.port = self.server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _relay(self, client_reader, client_writer) -> None:
        # Called once the handshake succeeded.
        self.resumed.append(client_writer.get_extra_info("ssl_object").session_reused)
        self.writers.append(client_writer)
        upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)

        async def pump(reader, writer):
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, ssl.SSLError):
                pass
            finally:
                writer.close()

        await asyncio.gather(pump(client_reader, upstream_writer), pump(upstream_reader, client_writer))

    @property
    def connections(self) -> int:
        return len(self.resumed)

    def close_connections(self) -> None:
        """Closes every connection taken so far, as a server that restarts."""
        def close_all():
            for writer in self.writers:
                writer.close()
        self.loop.call_soon_threadsafe(close_all)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def front(log_dir):
    certs = Certificates()
    demo = harness.start_demo(log_dir, "tls-front", "chat")
    tls = TlsFront(certs, demo.url)
    yield certs, tls
    tls.close()
    demo.stop()
    certs.remove()


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


def test_a_ca_file_it_cannot_use_stops_it_naming_the_file(front, wirebridge):
    certs, tls = front
    for path, says in ((certs.path("server.key"), "holds no PEM certificate"),
                       ("/nonexistent/ca.pem", "cannot read upstream_ca_file /nonexistent/ca.pem")):
        done = subprocess.run([str(wirebridge), "serve", "--listen", "127.0.0.1:0", "--upstream", tls.url,
                               "--upstream-ca-file", path], capture_output=True, text=True, timeout=20)
        assert done.returncode != 0, done
        assert says in done.stderr, done.stderr
