"""``check`` of a guard that reads a fact some effect establishes where an unsure one (a write whose outcome
is unknown) is not seen: an if-then-else's condition, once/1, ignore/1, a collection whose result is compared
afterwards, a predicate with a cut. A "not yet" written there lets a second write through after an unknown
outcome; the negations (\\+, ( G -> fail ; E ), forall/2, findall(_, G, []), aggregate_all(count, G, 0)) and
plain positive reads are not warned about. The shipped rulebases have none."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]

HEAD = (
    "fact(changed/1). fact(open/1).\n"
    "effect('shop__modify', [order = O], [establish(changed(O))]).\n"
)
MARK = "which an effect establishes"


async def _warnings(tmp_path: Path, text: str) -> list[str]:
    f = tmp_path / "rb.pl"
    f.write_text(HEAD + text)
    problems = await check_files(shared_engine(), [f])
    assert not [p for p in problems if p.severity == "error"], problems
    return [f"{p.line} {p.tool} {p.message}" for p in problems if MARK in p.message]


@pytest.mark.parametrize(
    "guard",
    [
        "guard('shop__modify', [order = O], ( changed(O) -> O == none ; open(O) )).\n",
        "guard('shop__modify', [order = O], ( aggregate_all(count, changed(O), N), N =:= 0 )).\n",
        "guard('shop__modify', [order = O], ( findall(x, changed(O), L), L == [] )).\n",
        "guard('shop__modify', [order = O], \\+ once(changed(O))).\n",
        "guard('shop__modify', [order = O], ( open(O), \\+ done(O) )).\ndone(O) :- changed(O), !.\n",
        "guard('shop__modify', [order = O], require(( ignore(changed(O)), open(O) ), 'x')).\n",
    ],
)
async def test_a_read_where_an_unsure_fact_is_not_seen_is_warned_about(tmp_path: Path, guard: str) -> None:
    warned = await _warnings(tmp_path, guard)
    assert warned and "changed/1" in warned[0] and "\\+ G" in warned[0], warned


@pytest.mark.parametrize(
    "guard",
    [
        "guard('shop__modify', [order = O], ( open(O), \\+ changed(O) )).\n",
        "guard('shop__modify', [order = O], ( open(O), ( changed(O) -> fail ; true ) )).\n",
        "guard('shop__modify', [order = O], ( open(O), forall(changed(O), fail) )).\n",
        "guard('shop__modify', [order = O], ( open(O), findall(x, changed(O), []) )).\n",
        "guard('shop__modify', [order = O], ( open(O), aggregate_all(count, changed(O), 0) )).\n",
        "guard('shop__modify', [order = O], ( open(O), changed(O) )).\n",
        "guard('shop__modify', [order = O], ( open(O) -> true ; fail )).\n",
    ],
)
async def test_negations_and_positive_reads_are_not_warned_about(tmp_path: Path, guard: str) -> None:
    assert await _warnings(tmp_path, guard) == []


@pytest.mark.parametrize("name", ["retail.pl", "airline.pl"])
async def test_the_shipped_rulebases_have_no_such_read(name: str) -> None:
    problems = await check_files(shared_engine(), [ROOT / "rulebases" / name])
    assert not [p for p in problems if MARK in p.message]
