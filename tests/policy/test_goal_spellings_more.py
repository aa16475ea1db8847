"""More spellings of "run code from a goal" than test_goal_containment's corpus: the meta-predicates of
SWI-Prolog's libraries that call a goal argument (coroutines, cleanup, solution sequences, tabling,
transactions, messages, closures of sorts and folds), dict functional notation, and goals hidden behind
``^`` outside bagof/setof. Through the real gateway and engine: each is refused before anything runs, the
marker file never appears, and the write still needs the user afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from mcp import Client
from tests.policy.test_goal_containment import airline_config, data, reservation_status
from tests.support.held_context import held

from sentinel_mcp.app.runtime import running_gateway

pytestmark = [pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    async for rt in held(running_gateway(airline_config(tmp_path_factory.mktemp("spellings") / "state"))):
        yield rt


def library_meta_calls(marker: Path) -> list[str]:
    """Each calls ``shell`` (or another goal) through a library meta-predicate or a data spelling."""
    t = f"shell('touch {str(marker).replace(chr(39), '')}')"
    return [
        f"freeze(X, {t}), X = 1",
        f"when(nonvar(X), {t}), X = 1",
        f"put_attr(X, user, 1), X = {t}",
        f"call_cleanup(true, {t})",
        f"setup_call_cleanup({t}, true, true)",
        f"setup_call_cleanup(true, true, {t})",
        f"findnsols(1, x, {t}, _)",
        f"limit(1, {t})",
        f"offset(0, {t})",
        f"order_by([asc(X)], ({t}, X = 1))",
        f"distinct({t})",
        f"call_nth({t}, 1)",
        f"snapshot({t})",
        f"transaction({t})",
        f"tnot({t})",
        f"assertion({t})",
        f"print_message(error, format(\"~@\", [{t}]))",
        f"message_to_codes(format(\"~@\", [{t}]), _, _)",
        "predsort(shell, [a, b], _)",
        "max_member(shell, _, [a])",
        "foldl(shell, [a], 0, _)",
        "partition(shell, [a], _, _)",
        "aggregate(count, shell(x), _)",
        f"aggregate_all(count, Y^{t}, _)",
        f"findall(X, Y^{t}, _)",
        f"forall(member(X, [1]), X^{t})",
        f"Y^{t}",
        f"setof(X, Y^Z^user:{t}, _)",
        f"atom_to_term('{t.replace(chr(39), chr(39) * 2)}', G, _), G",
        f"term_string(G, \"{t}\"), G",
        f"read_term_from_atom('{t.replace(chr(39), chr(39) * 2)}', G, []), G",
        f"X = _{{a: 1}}.put(b, 2), {t}",
        "X = m{a: 1}.shell(), X == 1",
        "'\\x73\\hell'('touch x')",
        f"catch_with_backtrace({t}, _, true)",
        f"call_with_depth_limit({t}, 10, _)",
        f"call_with_inference_limit({t}, 1000, _)",
        f"call_with_time_limit(5, {t})",
        f"not({t})",
        f"\\+ (true, {t})",
        f"( true -> {t} ; true )",
        f"( fail *-> true ; {t} )",
        f"apply({t}, [])",
        f"tabled_call({t})",
        f"thread_signal(main, {t})",
        f"prolog_listen(assert, {t})",
        "b_setval(sn_negated, off), b_getval(sn_negated, _)",
        "nb_current(K, V)",
    ]


async def test_library_meta_calls_are_refused_and_run_nothing(gateway: Any, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    goals = library_meta_calls(marker)
    assert len(goals) == len(set(goals))
    async with Client(gateway.front.server) as c:
        got_through = []
        for goal in goals:
            r = await c.call_tool("sentinel__sentinel_query", {"goal": goal})
            out = data(r)
            if not (r.is_error and out.get("status") in ("refused", "error")):
                got_through.append((goal, out))
            assert not marker.exists(), goal
        assert got_through == []
        # nothing was approved on the way: the write still needs the user, and plain goals still work
        r = await c.call_tool("airline__cancel_reservation", {"reservation_id": "NO6JO3"})
        assert r.is_error and await reservation_status(c) == "active"
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "X = 1, Y is X + 1"})
        assert data(r)["status"] == "proved", data(r)
