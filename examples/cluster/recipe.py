"""A local cluster: PostgreSQL in a data directory, N Sentinel replicas on it, haproxy in front.

``python -m examples.cluster`` (``make cluster``) runs it in the foreground and stops everything on Ctrl-C.
The
tests start the same pieces (``Cluster``). Everything binds 127.0.0.1; the database trusts local connections,
so
this is a development recipe: the README's deployment section says what to change for production.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sentinel_mcp.storage.local_server import LocalServer, free_port

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def render_haproxy(bind_port: int, replica_ports: list[int]) -> str:
    servers = "\n".join(f"    server r{i} 127.0.0.1:{p}" for i, p in enumerate(replica_ports))
    console = "\n".join(f"    server r{i} 127.0.0.1:{p} cookie r{i}" for i, p in enumerate(replica_ports))
    text = (HERE / "haproxy.cfg.in").read_text()
    return (
        text.replace("@BIND@", f"127.0.0.1:{bind_port}")
        .replace("@CONSOLE_SERVERS@", console)
        .replace("@SERVERS@", servers)
    )


def replica_config(
    base: dict[str, Any], store_url: str, replica: str, data_dir: Path, balancer: str | None = None
) -> dict[str, Any]:
    """One replica's config: the shared store and cluster settings, its own data dir, and the balancer's
    address
    among the Host names it answers (clients address the balancer, not the replica)."""
    cfg = json.loads(json.dumps(base))
    s = cfg.setdefault("sentinel", {})
    if balancer:
        http = s.setdefault("http", {})
        http["allowed_hosts"] = [*http.get("allowed_hosts", []), balancer]
    s["store"] = store_url
    s["data_dir"] = str(data_dir)
    s.setdefault("cluster", {})["replica"] = replica
    s["cluster"].setdefault("seal_key", "${SENTINEL_SEAL_KEY}")
    return cfg


def wait_ok(
    port: int,
    timeout: float = 60.0,
    proc: subprocess.Popen | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process ended with {proc.returncode} before it was ready")
        try:
            req = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers=headers or {})
            with urllib.request.urlopen(req, timeout=5) as r:
                last = json.loads(r.read())
            if last.get("status") == "ok":
                return last
        except Exception as e:  # noqa: BLE001 - not up yet
            last = e
        time.sleep(0.2)
    raise TimeoutError(f"127.0.0.1:{port} not ready: {last}")


@dataclass
class Cluster:
    root: Path
    base_config: dict[str, Any]
    replicas: int = 2
    store_url: str | None = None  # an existing database; None: a local server under root/pg
    seal_key: str = field(default_factory=lambda: secrets.token_hex(32))
    server: LocalServer | None = None
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    haproxy: subprocess.Popen | None = None
    port: int = 0

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SENTINEL_SEAL_KEY": self.seal_key}

    def start_database(self) -> str:
        if self.store_url is None:
            self.server = LocalServer(self.root / "pg", free_port()).init().start()
            self.store_url = self.server.url
        return self.store_url

    def config_path(self, name: str) -> Path:
        return self.root / f"{name}.json"

    def start_replica(self, name: str, port: int | None = None) -> int:
        assert self.store_url is not None
        path = self.config_path(name)
        self.port = self.port or free_port()  # the balancer's, known before the replicas start
        path.write_text(
            json.dumps(
                replica_config(
                    self.base_config,
                    self.store_url,
                    name,
                    self.root / name,
                    balancer=f"127.0.0.1:{self.port}",
                )
            )
        )
        port = port or self.ports.get(name) or free_port()
        log = open(self.root / f"{name}.log", "ab")
        proc = subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(path), "serve", "--http", f"127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=ROOT,
            env=self.env,
            start_new_session=True,
        )
        self.procs[name], self.ports[name] = proc, port
        return port

    def start_balancer(self) -> int:
        self.port = self.port or free_port()
        cfg = self.root / "haproxy.cfg"
        cfg.write_text(render_haproxy(self.port, list(self.ports.values())))
        self.haproxy = subprocess.Popen(
            ["haproxy", "-f", str(cfg), "-db"],
            stdin=subprocess.DEVNULL,
            stdout=open(self.root / "haproxy.log", "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self.port

    def up(self, headers: dict[str, str] | None = None) -> "Cluster":
        self.root.mkdir(parents=True, exist_ok=True)
        self.start_database()
        for i in range(self.replicas):
            self.start_replica(f"replica-{chr(ord('a') + i)}")
        for name, port in self.ports.items():
            wait_ok(port, proc=self.procs[name], headers=headers)
        self.start_balancer()
        wait_ok(self.port, proc=self.haproxy)
        return self

    def down(self) -> None:
        for proc in [*self.procs.values(), *([self.haproxy] if self.haproxy else [])]:
            if proc.poll() is None:
                proc.terminate()
        for proc in [*self.procs.values(), *([self.haproxy] if self.haproxy else [])]:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self.server is not None:
            self.server.stop()
