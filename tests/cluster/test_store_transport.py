"""A server store across the network is reached over verified TLS or not at all (real PostgreSQL, a real
replica). libpq's default ``sslmode=prefer`` falls back to plaintext when the server (or anyone on the path)
offers no TLS, and no mode short of ``verify-ca`` checks whose certificate it is: a replica named with
``postgresql://...@db.internal/...`` (docs/cluster.md's own example) served over plaintext to whoever
answered. The server here is the session's PostgreSQL, reached through a forwarder on this machine's
non-loopback address (so the replica's connection leaves the loopback)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Iterator

import pytest

from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port
from sentinel_mcp.storage.location import server_location
from sentinel_mcp.storage.server_transport import InsecureTransport, check
from tests.console.console_rig import ALICE, console_config, mcp_client, text
from tests.identity.identity_rig import env_for, http_sentinel

pytestmark = pytest.mark.timeout(240)
KEY = "transport-test-seal-key-0123456789abcdef0123"


def outside_address() -> str:
    """This machine's address on its network (not loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.254", 9))  # no packet is sent: only the route is chosen
        address = str(s.getsockname()[0])
    assert not address.startswith("127."), address
    return address


def forward(port: int) -> Iterator[str]:
    """``host:port`` on the outside address whose connections are relayed to 127.0.0.1:``port``."""
    listener = socket.create_server((outside_address(), 0))
    host, outside_port = listener.getsockname()[:2]
    stop = threading.Event()

    def pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def accept() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", port))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=pipe, args=(a, b), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"{host}:{outside_port}"
    finally:
        stop.set()
        listener.close()


@pytest.fixture
def forwarded(pg_server: LocalServer) -> Iterator[str]:
    yield from forward(pg_server.port)


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


@pytest.fixture
def tls_server() -> Iterator[tuple[LocalServer, Path]]:
    """A server of this test's own with TLS on (a certificate for the outside address, signed by a CA made
    here), and the CA's file."""
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-tls-"))
    srv = LocalServer(root / "pg", free_port())
    try:
        srv.init().start()
        ca, host = root / "ca", outside_address()
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
                "-keyout", f"{ca}.key", "-out", f"{ca}.pem")
        key, csr, cert = srv.data / "server.key", root / "server.csr", srv.data / "server.crt"
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={host}", "-keyout", str(key),
                "-out", str(csr))
        ext = root / "san.cnf"
        ext.write_text(f"subjectAltName=IP:{host}\n")
        openssl("x509", "-req", "-in", str(csr), "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
                "-days", "2", "-extfile", str(ext), "-out", str(cert))
        if os.geteuid() == 0:
            for f in (key, cert):
                shutil.chown(f, user="postgres")
        os.chmod(key, 0o600)
        import psycopg

        with psycopg.connect(srv.url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET ssl = on")
            conn.execute("SELECT pg_reload_conf()")
        yield srv, Path(f"{ca}.pem")
    finally:
        srv.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


async def test_a_replica_serves_on_a_store_across_the_network_over_verified_tls(
    tmp_path: Path, tls_server: tuple[LocalServer, Path]
) -> None:
    srv, ca = tls_server
    for where in forward(srv.port):
        url = f"postgresql://postgres@{where}/{srv.database}?sslmode=verify-full&sslrootcert={ca}"
        with http_sentinel(replica_config(tmp_path, url)) as (base, _):
            async with mcp_client(base, ALICE) as alice:
                result = await alice.call_tool("tb__echo", {"text": "over-tls"})
                assert not result.is_error and "over-tls" in text(result), text(result)
            import psycopg

            with psycopg.connect(srv.url, sslmode="disable") as conn:  # the replica's sessions: all TLS
                rows = conn.execute(
                    "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
                    "WHERE a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()").fetchall()
                assert rows and all(r[0] for r in rows), rows
                assert conn.execute("SELECT count(*) FROM audit").fetchone()[0] > 0  # type: ignore[index]


def replica_config(tmp: Path, url: str) -> Path:
    tmp.mkdir(exist_ok=True)
    cfg = console_config(tmp, hold_when="never")
    body = json.loads(cfg.read_text())
    body["sentinel"].update(store=url, cluster={"replica": "replica-a", "seal_key": KEY})
    cfg.write_text(json.dumps(body))
    return cfg


def refused_at_start(cfg: Path) -> str:
    env = {k: v for k, v in env_for(cfg).items() if not k.startswith("PG")}  # the URL alone decides
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http",
                             "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=env)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail("the replica served on a store reached across the network without verified TLS:\n"
                    + err[-3000:])
    assert proc.returncode != 0, err[-3000:]
    return err


@pytest.mark.parametrize("mode", ["", "?sslmode=prefer", "?sslmode=require", "?sslmode=disable",
                                  "?sslmode=allow"])
def test_a_replica_refuses_a_store_across_the_network_without_verified_tls(
    tmp_path: Path, forwarded: str, mode: str
) -> None:
    url = f"postgresql://postgres:pw-not-shown@{forwarded}/postgres{mode}"
    err = refused_at_start(replica_config(tmp_path, url))
    assert "sslmode=verify-full" in err and "across the network" in err, err[-3000:]
    assert "pw-not-shown" not in err


OUT = "db.internal"
REMOTE = [
    f"postgresql://u@{OUT}/db", f"postgresql://u@{OUT}/db?sslmode=require", f"postgresql://u@{OUT}/db?sslmode=prefer",
    f"postgresql://u@{OUT}/db?sslmode=disable", "postgresql://u@10.0.0.5:5432/db", "postgresql://u@[2001:db8::1]/db",
    f"postgresql:///db?host={OUT}", f"postgresql://u@localhost,{OUT}/db", "postgresql://u@localhost/db?hostaddr=10.0.0.5",
    f"postgresql://u@127.0.0.1.{OUT}/db", "postgresql://u@127.0.0.1/db?service=prod",
]
LOCAL = [
    "postgresql://u@127.0.0.1/db", "postgresql://u@127.9.9.9:5433/db", "postgresql://u@localhost/db",
    "postgresql://u@[::1]/db", "postgresql:///db", "postgresql://u@%2Fvar%2Frun%2Fpostgresql/db",
    "postgresql:///db?host=/tmp", f"postgresql://u@{OUT}/db?hostaddr=127.0.0.1",
    f"postgresql://u@{OUT}/db?sslmode=verify-full", f"postgresql://u@{OUT}/db?sslmode=verify-ca",
    "postgresql://u@127.0.0.1/db?service=prod&sslmode=verify-full",
]


@pytest.mark.parametrize("url", REMOTE)
def test_spellings_that_reach_across_the_network_unverified_are_refused(url: str) -> None:
    with pytest.raises(InsecureTransport):
        check(server_location(url), env={})


@pytest.mark.parametrize("url", LOCAL)
def test_loopback_sockets_and_verified_tls_pass(url: str) -> None:
    check(server_location(url), env={})


def test_the_environment_libpq_reads_counts() -> None:
    with pytest.raises(InsecureTransport):
        check(server_location("postgresql:///db"), env={"PGHOST": OUT})
    check(server_location("postgresql:///db"), env={"PGHOST": OUT, "PGSSLMODE": "verify-full"})
    with pytest.raises(InsecureTransport):  # the URL's own word wins over the environment's, as in libpq
        check(server_location(f"postgresql://u@{OUT}/db?sslmode=require"), env={"PGSSLMODE": "verify-full"})
