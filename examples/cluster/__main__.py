"""``python -m examples.cluster [data dir]`` (``make cluster``): PostgreSQL, two replicas and haproxy,
locally."""

from __future__ import annotations

import secrets
import signal
import sys
import time
from pathlib import Path

from examples.cluster.recipe import Cluster


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".cluster").resolve()
    token = secrets.token_urlsafe(24)  # one owner token for the cluster (each replica would make its own)
    cluster = Cluster(
        root,
        {
            "sentinel": {
                "rulebases": ["rulebases/default.pl", "rulebases/airline.pl"],
                "builtins": [],
                "http": {"token": token},
            },
            "mcpServers": {"airline": {"command": sys.executable, "args": ["-m", "examples.airline"]}},
        },
    )
    print(f"starting PostgreSQL, 2 replicas and haproxy under {root} ...", flush=True)
    try:
        cluster.up()
    except BaseException:
        cluster.down()
        raise
    print(f"\nSentinel cluster up: connect MCP clients to http://127.0.0.1:{cluster.port}/mcp")
    for name, port in cluster.ports.items():
        print(f"  {name}: http://127.0.0.1:{port}/healthz   config {cluster.config_path(name)}")
    print(f"  database: {cluster.store_url}\n  seal key: in {root}/seal-key (the same on every replica)")
    (root / "seal-key").write_text(cluster.seal_key)
    (root / "seal-key").chmod(0o600)
    print(f"  token:    {token}  (send 'Authorization: Bearer <token>'; it is in each replica's config)")
    print("stop with Ctrl-C", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        while all(p.poll() is None for p in cluster.procs.values()):
            time.sleep(1)
        print("a replica ended; stopping the cluster", file=sys.stderr)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
