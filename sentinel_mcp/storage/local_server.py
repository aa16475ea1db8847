"""A local PostgreSQL in a data directory: for the cluster recipe (``examples/cluster``) and the tests.

Debian's server binaries live in ``/usr/lib/postgresql/<major>/bin``. The server refuses to run as root, so
when run as root the cluster belongs to the ``postgres`` system user (``runuser``). It listens on 127.0.0.1
only and trusts local connections: a throwaway or development server, never a production one (the README's
deployment section says what to run there).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from sentinel_mcp.storage.database import StorageError


class ServerUnavailable(StorageError, RuntimeError):
    """PostgreSQL's server programs are not installed (``make system`` installs them)."""


def server_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb") or shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).parent
    raise ServerUnavailable(
        "PostgreSQL's server is not installed (apt-get install postgresql; `make system` does it)"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalServer:
    root: Path  # holds data/, log and the socket; reachable by the server's user
    port: int
    database: str = "sentinel"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{self.database}"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [str(server_bin() / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=60)

    def init(self) -> "LocalServer":
        self.root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:  # the server's user must reach the directory and own the cluster
            for parent in [self.root, *self.root.parents]:
                if parent == Path("/"):
                    break
                mode = parent.stat().st_mode
                if not mode & 0o001:
                    os.chmod(parent, mode | 0o011)
            shutil.chown(self.root, user="postgres")
        if not (self.data / "PG_VERSION").exists():
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")
        return self

    def start(self) -> "LocalServer":
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-w",
            "-t",
            "30",
            "-o",
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200",
            "start",
        )
        deadline = time.monotonic() + 20
        while True:  # createdb once; an existing database is fine
            r = self._run(
                "createdb",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                self.database,
                check=False,
            )
            if r.returncode == 0 or "already exists" in r.stderr:
                return self
            if time.monotonic() > deadline:
                raise RuntimeError(f"createdb failed: {r.stderr.strip()}")
            time.sleep(0.2)

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def running(self) -> bool:
        return self._run("pg_ctl", "-D", str(self.data), "status", check=False).returncode == 0
