"""A replica's side of the build-lease tests, in its own process (own connections, killable).

``sweep URL``: end lapsed builds a few at a time until none is left, print the ids this process ended.
``build URL ROOT REPLICA``: start a build (its model never answers) on a short lease, print its id, then keep
renewing until killed."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

SPEC = {"app_name": "Notes", "package_name": "com.example.notes", "features": ["write a note"]}
LEASE, RENEW = 3.0, 0.3
SEAL = "k" * 32  # the cluster's seal key in these tests (replicas started with a config name it too)


def swarm_key() -> bytes:
    """What every replica signs its builds' rows with (``SharedStore.key("swarm build")`` of ``SEAL``)."""
    from sentinel_mcp.gateway.replica import SharedStore

    return SharedStore("", "", "", SEAL.encode()).key("swarm build") or b""


class SilentModel:
    """A model that never answers (a build stays mid-run until it is stopped)."""

    name = "silent"

    async def complete(self, request: Any, on_error: Any) -> Any:
        await asyncio.Event().wait()

    async def aclose(self) -> None:
        pass


async def sweep(url: str, go: Path) -> list[str]:
    from sentinel_mcp.swarm.build_lease import end_lapsed
    from sentinel_mcp.swarm.state import SwarmStore

    store = await SwarmStore(url, key=swarm_key()).open()
    while not go.exists():  # both sweepers start together (bounded by the test's timeout)
        await asyncio.sleep(0.01)
    ended: list[str] = []
    for _ in range(1000):
        batch = await end_lapsed(store.db, limit=3, key=store.key)
        if not batch:
            break
        ended += [tid for tid, _ in batch]
    await store.close()
    return ended


async def build(url: str, root: Path, replica: str) -> None:
    from sentinel_mcp.swarm.build_service import BuildService
    from sentinel_mcp.swarm.settings import SwarmSettings

    service = BuildService(
        root, SwarmSettings(), store=url, replica=replica, lease_seconds=LEASE, renew_every=RENEW,
        key=swarm_key(),
    )
    await service.start(sweep=False)

    async def backend() -> SilentModel:
        return SilentModel()

    task_id = await service.submit(SPEC, backend)
    print(task_id, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    if sys.argv[1] == "sweep":
        print(json.dumps(asyncio.run(sweep(sys.argv[2], Path(sys.argv[3])))))
    else:
        asyncio.run(build(sys.argv[2], Path(sys.argv[3]), sys.argv[4]))
