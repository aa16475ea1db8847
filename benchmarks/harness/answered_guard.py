"""The guard ``guard_ab.py`` and ``work_counts.py`` measure, for any source tree: the airline cancel guard
with its questions and confirmation answered (the call is allowed), 100k other facts in the store, the fast
path and lazy proofs on. ``gl`` is that tree's ``guard_latency`` module (this file is always the running
tree's: the harness folder is the script's own, first on the path)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

MAX_ROUNDS = 6  # questions, then the confirmation: a guard still asking after this many rounds is a failure


@asynccontextmanager
async def answered_cancel_guard(gl: Any, folder: Path) -> AsyncIterator[tuple[Any, Any]]:
    """(guard, call) while open; the guard closed after."""
    from mcp import Client

    async with Client(gl.airline_server(), mode="auto") as client:
        port = gl.DirectPort(client, "airline")
        await port.refresh()
        guard = gl.PolicyGuard([gl.RULEBASES_DIR / "airline.pl"], port, store_path=folder / "airline.db",
                               settings=gl.PolicySettings(guard_timeout=30),
                               seeds={"current_user": "amelia_davis_8890"})
        await guard.start(watch=False)
        getattr(gl, "looking", lambda g: g)(guard)  # a tree from before ``spend``: as it is
        try:
            c = gl.call("airline__cancel_reservation", {"reservation_id": "8C8K4E"}, "bench")
            dec = await guard.decide(c)
            for _ in range(MAX_ROUNDS):
                if not isinstance(dec, gl.Ask):
                    break
                for q in dec.questions:
                    value = True if q.meta["kind"] == "confirm" else "change_of_plan"
                    await guard.record_answer(c, q, gl.Answer(action="accept", content={"answer": value}))
                dec = await guard.decide(c)
            assert isinstance(dec, gl.Allow), dec
            await guard.knowledge.add(gl.filler("bench", 0, 100_000))
            guard.fast_path = guard.lazy_proofs = True
            yield guard, c
        finally:
            await guard.close()
