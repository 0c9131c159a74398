"""A TLS front for a plain upstream: what a bridge sees of an `https://`
upstream, with a certificate a CA of the test's own signed
(`redis_servers.Certificates`)."""

from __future__ import annotations

import asyncio
import ssl
import threading
from urllib.parse import urlsplit

from redis_servers import Certificates


class TlsFront:
    """Takes TLS connections on loopback and relays what they carry, in the
    clear, to `target_url`. Records, for each connection whose handshake
    succeeded, whether it resumed an earlier session."""

    def __init__(self, certs: Certificates, target_url: str, client_ca: str | None = None) -> None:
        target = urlsplit(target_url)
        self.target = (target.hostname, target.port)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(certs.path("server.crt"), certs.path("server.key"))
        if client_ca is not None:
            # Asks for the client's certificate, and takes only one this CA signed.
            self.context.verify_mode = ssl.CERT_REQUIRED
            self.context.load_verify_locations(client_ca)
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
