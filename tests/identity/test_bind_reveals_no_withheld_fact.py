"""``sentinel_bind`` for a principal without consent answers the same whether or not a fact it may not see
(read
from personal data) is in its session: a context whose check reads such a fact is refused with one message,
before the fact exists, once the guard has read it while deciding, and whatever its value. With consent, the
same bind works. (Facts never cross sessions or principals: test_two_principals_http.py.)"""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.identity.identity_rig import (
    BOB,
    BOOKINGS_PL,
    User,
    env_for,
    http_client,
    http_sentinel,
    text,
    write_config,
)

pytestmark = pytest.mark.timeout(240)


def consent(cfg, *args: str) -> None:  # type: ignore[no-untyped-def]
    out = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "consent", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_for(cfg),
    )
    assert out.returncode == 0, out.stdout + out.stderr


async def test_bind_answers_alike_whether_or_not_the_withheld_fact_exists(tmp_path):
    rb = tmp_path / "bookings_confirmed.pl"
    # a context whose check reads booking_status (bk__get_booking is personal: "bookings")
    lines = BOOKINGS_PL.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("context(booking_of_interest, "))
    lines.insert(
        at + 1,
        "context(confirmed_booking, B, (current_user(U), user_booking(U, B), booking_status(B, confirmed))).",
    )
    rb.write_text("\n".join(lines) + "\n")
    cfg = write_config(tmp_path)
    body = cfg.read_text().replace(str(BOOKINGS_PL), str(rb))
    cfg.write_text(body)
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, BOB, "auto", User(remember=False)) as bob:

            async def bind(value: str) -> tuple[bool, str]:
                r = await bob.call_tool(
                    "sentinel__sentinel_bind", {"context": "confirmed_booking", "value": value}
                )
                return r.is_error, text(r)

            before = {b: await bind(b) for b in ("BK-789", "BK-456")}  # no booking read yet in this session
            # the guard reads both bookings (inside Sentinel) while deciding calls about them
            for b in ("BK-789", "BK-456"):
                why = await bob.call_tool(
                    "sentinel__sentinel_why_not",
                    {"tool": "bk__cancel_booking", "arguments": {"booking_id": b}},
                )
                assert not why.is_error, text(why)
            facts = text(await bob.call_tool("sentinel__sentinel_facts", {}))
            assert "booking_status(" not in facts, facts  # withheld from bob, but in his session
            after = {b: await bind(b) for b in ("BK-789", "BK-456")}
            answers = {*before.values(), *after.values()}
            assert len(answers) == 2 and all(err for err, _ in answers), (
                answers
            )  # refused, only the value differs
            for b in ("BK-789", "BK-456"):
                assert before[b] == after[b], (b, before[b], after[b])
            assert before["BK-789"][1].replace("BK-789", "BK-456") == before["BK-456"][1]
            assert "consent" in before["BK-789"][1], before
            assert not any(v in before["BK-789"][1] + after["BK-456"][1] for v in ("confirmed'", "pending"))

            # with consent the check reads the booking for bob, and the bind is what the data says
            consent(cfg, "grant", "bob", "bookings")
            refused, out = await bind("BK-789")
            assert not refused, out  # BK-789 is confirmed: bound
            refused, out = await bind("BK-456")
            assert refused and "pending" not in out, out  # BK-456 is pending: its check does not hold
