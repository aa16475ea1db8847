"""What the cluster's write turns cost (``policy/kept_turns.py``, ``storage/server_turn.py``): a write with
effects through a real gateway on a PostgreSQL store, one after another, wall time per call (median, p90)
over ``--rounds``. ``--kept``: the write establishes a kept fact (its kept facts' turn as well).
``--turn-only``: the cluster's turn alone (``server_turn``: connect, take two locks, give back), this tree.

Run it against each tree (``--tree``, default the tree it sits in), alternated; the upstream is this tree's
``tests/cluster/slow_upstream.py`` for both. Starts its own throwaway PostgreSQL (as root the server runs as
the ``postgres`` user):
``python benchmarks/harness/pg_write_turns.py --tree /work/main [--rounds 300] [--kept]``
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
SLOW = HERE / "tests" / "cluster" / "slow_upstream.py"
RULES = """
fact(did/1).
guard('slow__keep', [mark = M], require(\\+ did(M), 'again')).
effect('slow__keep', [mark = M], [establish(did(M))]).
"""


async def turn_only(url: str, rounds: int) -> list[float]:
    from sentinel_mcp.storage.location import server_location
    from sentinel_mcp.storage.server_turn import server_turn

    location, walls = server_location(url), []
    for i in range(20 + rounds):
        t0 = time.perf_counter()
        async with server_turn(location, ("sentinel.turn.kept:", "sentinel.turn.server:a"), wait=5) as no:
            assert no is None, no
        if i >= 20:
            walls.append(time.perf_counter() - t0)
    return walls


async def run(url: str, rounds: int, kept: bool, tmp: Path) -> list[float]:
    from mcp import Client

    from sentinel_mcp.app.runtime import running_gateway
    from sentinel_mcp.config import parse_config

    rules = tmp / "turns.pl"
    rules.write_text(RULES + ("option(kept(did/1)).\n" if kept else ""))
    upstream = {"command": sys.executable, "args": [str(SLOW)], "env": {"SLOW_LOG": str(tmp / "work.log")}}
    cfg = parse_config({"mcpServers": {"slow": upstream}, "sentinel": {
        "data_dir": str(tmp), "builtins": [], "store": url, "rulebases": [str(rules)],
        "cluster": {"replica": "bench", "seal_key": "bench-seal-key-0123456789abcdef0123"}}},
        source="<bench>", base_dir=tmp)
    walls: list[float] = []
    async with running_gateway(cfg) as rt, Client(rt.front.server, mode="auto") as c:
        for i in range(20 + rounds):  # the first 20 warm: connections, statement caches, the rulebase
            t0 = time.perf_counter()
            r = await c.call_tool("slow__keep", {"mark": f"m{i}"})
            if i >= 20:
                walls.append(time.perf_counter() - t0)
            assert not r.is_error, r.content
    return walls


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=str(HERE))
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--kept", action="store_true")
    ap.add_argument("--turn-only", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, args.tree)
    from sentinel_mcp.storage.local_server import LocalServer, free_port

    tmp = Path(tempfile.mkdtemp(prefix="bench-turns-"))
    server = LocalServer(tmp / "pg", free_port()).init().start()
    try:
        walls = asyncio.run(turn_only(server.url, args.rounds) if args.turn_only
                            else run(server.url, args.rounds, args.kept, tmp))
    finally:
        server.stop("immediate")
        shutil.rmtree(tmp, ignore_errors=True)
    walls.sort()
    import sentinel_mcp
    assert sentinel_mcp.__file__.startswith(args.tree), sentinel_mcp.__file__
    print(f"{args.tree} kept={args.kept} turn-only={args.turn_only}: "
          f"wall median {statistics.median(walls) * 1e3:.2f} ms, "
          f"p90 {walls[len(walls) * 9 // 10] * 1e3:.2f} ms over {len(walls)}")


if __name__ == "__main__":
    main()
