"""``check`` of a guard whose proof negates a fact fed by an ``absent_on_error`` binding: the upstream's
error answer reads as "nothing there", so ``\\+ user_by_email(E, _)`` holds on ANY error the upstream
sends (a hostile or failing upstream grants it). Such a negation may choose the next source (in the guard of
that source's look-up) but never gate a permission; ``check`` said nothing about it, in any spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]

HEAD = (
    "binding(user_by_email(E, U), tool('shop__find_by_email', [email = E]), extract([U = '/id']),"
    " [absent_on_error]).\n"
    "binding(user_by_name(N, U), tool('shop__find_by_name', [name = N]), extract([U = '/id']),"
    " [absent_on_error]).\n"
    "binding(account_status(E, S), tool('shop__status', [email = E]), extract([S = '/status']), []).\n"
    "fact(account_email/1).\n"
)
ABSENT = "absent_on_error"


async def _warnings(tmp_path: Path, text: str) -> list[str]:
    f = tmp_path / "rb.pl"
    f.write_text(HEAD + text)
    problems = await check_files(shared_engine(), [f])
    assert not [p for p in problems if p.severity == "error"], problems
    return [f"{p.line} {p.tool} {p.message}" for p in problems if ABSENT in p.message]


@pytest.mark.parametrize(
    ("guard", "shown"),
    [
        ("guard('shop__refund', [email = E], \\+ user_by_email(E, _)).\n", "user_by_email"),
        ("guard('shop__refund', [email = E], require(\\+ user_by_email(E, _), 'known')).\n", "user_by_email"),
        ("guard('shop__refund', [email = E], ( user_by_email(E, _) -> fail ; true )).\n", "user_by_email"),
        (
            "guard('shop__refund', [], ( account_email(E), new_user(E) )).\n"
            "new_user(E) :- \\+ user_by_email(E, _).\n",
            "user_by_email",
        ),
        ("guard('shop__refund', [email = E], forall(user_by_email(E, U), U \\== admin)).\n", "user_by_email"),
        ("guard('shop__refund', [email = E], findall(U, user_by_email(E, U), [])).\n", "user_by_email"),
        ("guard('shop__refund', [email = E], aggregate_all(count, user_by_email(E, _), 0)).\n",
         "user_by_email"),
        ("guard('shop__refund', [name = N], \\+ \\+ \\+ user_by_name(N, _)).\n", "user_by_name"),
        # a wildcard guard covers writes too: it is no look-up's own guard
        ("guard('shop__*', [email = E], \\+ user_by_email(E, _)).\n", "user_by_email"),
    ],
)
async def test_a_negation_of_a_fact_read_absent_on_error_is_warned_about(
    tmp_path: Path, guard: str, shown: str
) -> None:
    warned = await _warnings(tmp_path, guard)
    assert len(warned) == 1 and warned[0].startswith("5 shop__"), warned
    assert shown in warned[0] and "holds on any error" in warned[0], warned


@pytest.mark.parametrize(
    "guard",
    [
        "guard('shop__refund', [email = E], user_by_email(E, _)).\n",
        "guard('shop__refund', [email = E], \\+ \\+ user_by_email(E, _)).\n",
        # a binding without the option: an error is a failed look-up, never "nothing there"
        "guard('shop__refund', [email = E], \\+ account_status(E, frozen)).\n",
        # the absence leads to the next source, which must then answer
        "guard('shop__refund', [email = E, name = N],"
        " ( user_by_email(E, U) -> true ; user_by_name(N, U) )).\n",
        # the guard of the next source's own look-up: the negation chooses where to look next (retail.pl)
        "guard('shop__find_by_name', [name = _], ( account_email(E), \\+ user_by_email(E, _) )).\n",
    ],
)
async def test_no_permission_resting_on_such_a_negation_is_not(tmp_path: Path, guard: str) -> None:
    assert await _warnings(tmp_path, guard) == []


async def test_the_shipped_rulebases_negate_such_facts_only_to_choose_the_next_source() -> None:
    """retail.pl's name_zip_asked negates user_id_by_email/2 (absent_on_error) in the guard of
    retail__find_user_id_by_name_zip, the look-up of the next source: not warned."""
    files = sorted((ROOT / "rulebases").glob("*.pl"))
    problems = await check_files(shared_engine(), files)
    assert [p for p in problems if p.severity == "error"] == []
    assert [p for p in problems if ABSENT in p.message] == []
