"""Real Redis servers for the stateful tests: `redis-server` (or
`valkey-server`) on free loopback ports in temporary directories, persisting
nothing; over TLS with certificates `openssl` makes at test time; or three
nodes joined into a Redis Cluster by `redis-cli --cluster create`."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"{names[0]} is not installed (apt-get install -y redis-server redis-tools)")


class RedisServer:
    """One server on `port`, plain or TLS-only, with `args` added to its
    command line. `start()` again after `kill()` brings it back empty."""

    def __init__(self, port: int | None = None, args: tuple[str, ...] = (), certs: Certificates | None = None):
        self.port = port or free_port()
        self.args = args
        self.certs = certs
        self.dir = tempfile.mkdtemp(prefix="wirebridge-redis-")
        self.proc: subprocess.Popen | None = None

    def start(self) -> RedisServer:
        listen = ["--port", str(self.port)]
        if self.certs:
            listen = [
                "--port", "0", "--tls-port", str(self.port),
                "--tls-cert-file", self.certs.path("server.crt"),
                "--tls-key-file", self.certs.path("server.key"),
                "--tls-ca-cert-file", self.certs.path("ca.crt"),
                "--tls-auth-clients", "no",
            ]
        log = open(Path(self.dir) / "server.log", "wb")
        self.proc = subprocess.Popen(
            [_binary("redis-server", "valkey-server"), *listen, "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", self.dir, *self.args],
            cwd=self.dir, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
        )
        log.close()
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"redis-server exited: {self.log()}")
            if "Ready to accept connections" in self.log():
                return self
            time.sleep(0.02)
        self.kill()
        pytest.fail(f"redis-server did not start: {self.log()}")

    def log(self) -> str:
        path = Path(self.dir) / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def url(self, userinfo: str = "") -> str:
        scheme = "rediss" if self.certs else "redis"
        at = f"{userinfo}@" if userinfo else ""
        return f"{scheme}://{at}127.0.0.1:{self.port}/0"

    def signal(self, sig: int):
        self.proc.send_signal(sig)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class Certificates:
    """A CA, a server certificate it signed for 127.0.0.1, and an unrelated
    CA, as PEM files in a directory of their own."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="wirebridge-certs-")
        for ca in ("ca", "other-ca"):
            self._openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                          "-nodes", "-days", "2", "-subj", f"/CN=wirebridge test {ca}",
                          "-addext", "basicConstraints=critical,CA:TRUE",
                          "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                          "-keyout", f"{ca}.key", "-out", f"{ca}.crt")
        Path(self.path("server.ext")).write_text(
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
        self._openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                      "-subj", "/CN=wirebridge test server", "-keyout", "server.key", "-out", "server.csr")
        self._openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                      "-CAcreateserial", "-days", "2", "-extfile", "server.ext", "-out", "server.crt")

    def _openssl(self, *args: str):
        if shutil.which("openssl") is None:
            pytest.fail("openssl is not installed (apt-get install -y openssl)")
        subprocess.run(["openssl", *args], cwd=self.dir, check=True, capture_output=True)

    def path(self, name: str) -> str:
        return str(Path(self.dir) / name)

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class RedisCluster:
    """Three nodes, every slot assigned, no replicas."""

    def __init__(self):
        self.nodes = []
        for _ in range(3):
            # The bus on a free port of its own: port + 10000 may be taken.
            args = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-port", str(free_port()))
            self.nodes.append(RedisServer(args=args).start())
        cli = _binary("redis-cli", "valkey-cli")
        subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes),
             "--cluster-replicas", "0", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )
        deadline = time.time() + 20
        for node in self.nodes:
            while "cluster_state:ok" not in subprocess.run(
                [cli, "-p", str(node.port), "cluster", "info"], capture_output=True, text=True
            ).stdout:
                assert time.time() < deadline, f"node {node.port} does not see the cluster as ok"
                time.sleep(0.05)

    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def stop(self):
        for node in self.nodes:
            node.stop()
