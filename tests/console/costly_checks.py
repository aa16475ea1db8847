"""A candidate rulebase costly to check, and the console's live check of it: the tests of check places and of
checks off the guard's engine need a check that still runs when their next request comes."""

from __future__ import annotations

from tests.identity.identity_rig import BOOKINGS_PL


def _costly(guards: int = 60, width: int = 40, depth: int = 7) -> str:
    """Many guards, each calling a rule whose walk branches width**depth ways: the check spends its budget."""
    out = "".join(f"guard('bk__t{i}', [order = O], p0(O)).\n" for i in range(guards))
    for level in range(depth):
        out += f"p{level}(X) :- " + ", ".join([f"p{level + 1}(X)"] * width) + ".\n"
    return out + f"p{depth}(X) :- X \\== a.\n"


CANDIDATE = BOOKINGS_PL.read_text() + _costly()
# the check's inference budget raised past what the candidate can spend (``costly_bounds`` before the gateway
# starts), so its check runs to the time bound (CHECK_SECONDS): a check of the default budget is over in ~1 s
# with a warm spare child, before the next request; the tests assert answers, never the time
COSTLY_BUDGET = ("SENTINEL_CAP_CHECK_INFERENCES", "4000000000")
# the time bound those checks run to, lowered from 10 s (a deployment cap the checker reads): still far past
# the head start and the requests each test makes while one runs, which wait on events, never on its end
COSTLY_SECONDS = ("SENTINEL_CAP_CHECK_SECONDS", "5")


def costly_bounds(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A costly check's bounds for the gateway a test starts next: its budget past the candidate's cost, its
    time bound lowered."""
    monkeypatch.setenv(*COSTLY_BUDGET)
    monkeypatch.setenv(*COSTLY_SECONDS)


async def live_check(who, base: str, csrf: str):
    """The console script's live check of ``CANDIDATE`` by ``who`` (a signed-in console client)."""
    return await who.http.post(
        f"{base}/console/policy/check",
        data={"csrf": csrf, "file": "bookings.pl", "candidate": CANDIDATE},
        headers={"origin": base, "x-console-live": "check"},
    )
