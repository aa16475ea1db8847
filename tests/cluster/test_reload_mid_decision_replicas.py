"""A shared (PostgreSQL) fact store: another replica keeps a fact while a decision here waits for its look-up,
and this replica's mirrors are reloaded (``Knowledge._follow_kept``) before the look-up's facts are learned.
The decision's next pass proved on a mirror without them ("... did not tell (not fetched)"); it stands on the
store now (``Solver._pass``). Forced by a hook on the upstream's answer: no sleeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client
from tests.policy.bookings_server import create
from tests.policy.policy_rig import BOOKINGS_PL, ClientPort, make_guard

from sentinel_mcp.core.decision import Ask
from sentinel_mcp.policy.fact_store import Fact
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE


async def test_a_fact_kept_by_another_replica_between_the_fetch_and_the_next_pass(tmp_path: Path,
                                                                                 pg_url: str) -> None:
    rb = tmp_path / "bookings_kept.pl"
    rb.write_text(BOOKINGS_PL.read_text() + "\nfact(redeemed/1).\noption(kept(redeemed/1)).\n")
    server, _ = create()
    async with Client(server, mode="auto") as client:
        port = ClientPort(client)
        await port.refresh()
        here = await make_guard(port, pg_url, files=[rb])  # type: ignore[arg-type]
        there = await make_guard(None, pg_url, files=[rb])  # type: ignore[arg-type]
        try:
            plain, seen = client.call_tool, []

            async def call_tool(name: str, arguments: dict[str, Any], *a: Any, **kw: Any) -> Any:
                out = await plain(name, arguments, *a, **kw)
                if name == "get_booking" and not seen:
                    seen.append(name)
                    await there.knowledge.keep([Fact(session=KEPT_SCOPE, predicate="redeemed", args=["x"],
                                                     fact="redeemed(x)", provenance="observed")])
                    followed = here.knowledge._seen.get(KEPT_SCOPE)
                    await here.knowledge.ensure("other", here.rulebases.active)  # another decision here
                    # it followed the kept facts: every mirror, s1's too, was dropped (whether s1 is loaded
                    # again by now depends on the decision's own concurrent work: on a busy machine it was)
                    assert here.knowledge._seen.get(KEPT_SCOPE) != followed
                return out

            client.call_tool = call_tool  # type: ignore[method-assign]
            d = await here.decide(port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}))
            assert seen and isinstance(d, Ask), d
        finally:
            await there.close()
            await here.close()
