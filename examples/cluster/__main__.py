"""``python -m examples.cluster [data dir]`` (``make cluster``): PostgreSQL, two replicas and haproxy,
locally."""

from __future__ import annotations

import secrets
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Callable

from examples.cluster.recipe import Cluster


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".cluster").resolve()
    root.mkdir(parents=True, exist_ok=True)
    # one owner token and one seal key for the cluster, kept in the data dir: a client configured once, and a
    # conversation or answer sealed before a restart, keep working after it
    token = _kept(root / "token", lambda: secrets.token_urlsafe(24))
    cluster = Cluster(
        root,
        {
            "sentinel": {
                "rulebases": ["shipped:rulebases/default.pl", "shipped:rulebases/airline.pl"],
                "builtins": [],
                "http": {"token": token},
            },
            "mcpServers": {"airline": {"command": sys.executable, "args": ["-m", "examples.airline"]}},
        },
        seal_key=_kept(root / "seal-key", lambda: secrets.token_hex(32)),
    )
    print(f"starting PostgreSQL, 2 replicas and haproxy under {root} ...", flush=True)
    try:
        cluster.up()
    except BaseException:
        _stop(cluster)
        raise
    try:  # from here a Ctrl-C at any moment (even while the banner prints) stops what was started
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        print(f"\nSentinel cluster up: connect MCP clients to http://127.0.0.1:{cluster.port}/mcp")
        for name, port in cluster.ports.items():
            print(f"  {name}: http://127.0.0.1:{port}/healthz   config {cluster.config_path(name)}")
        print(f"  database: {cluster.store_url}\n  seal key: in {root}/seal-key (the same on every replica)")
        print(f"  token:    {token}  (send 'Authorization: Bearer <token>'; it is in each replica's config)")
        # a replica's config reads its seal key from the environment: the CLI on it needs the same
        first = shlex.quote(str(cluster.config_path(next(iter(cluster.ports)))))
        print(f"  commands: SENTINEL_SEAL_KEY=$(cat {shlex.quote(str(root / 'seal-key'))}) "
              f"sentinel-mcp -c {first} audit verify   (audit, facts, replay, ... alike)")
        print("stop with Ctrl-C", flush=True)
        while all(p.poll() is None for p in cluster.procs.values()):
            time.sleep(1)
        print("a replica ended; stopping the cluster", file=sys.stderr)
    except KeyboardInterrupt:
        pass
    finally:
        _stop(cluster)
    return 0


def _stop(cluster: Cluster) -> None:
    """Stop everything; a second Ctrl-C while stopping must not leave a replica or the database running."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("\nstopping haproxy, the replicas and PostgreSQL ...", flush=True)
    cluster.down()
    print("stopped", flush=True)


def _kept(path: Path, make: Callable[[], str]) -> str:
    """A secret kept in the data dir (mode 600), made on the first start."""
    if path.exists():
        return path.read_text().strip()
    value = make()
    path.touch(mode=0o600)
    path.write_text(value)
    return value


if __name__ == "__main__":
    sys.exit(main())
