"""Client goals are contained: through the real gateway (both protocol eras, stdio and HTTP, and A2A), a
corpus of escape attempts is refused and leaves no side effect, a runaway goal never delays another
session's guarded call, and nothing a client types changes the engine for anyone else. The tests that only
query and are refused share one gateway (``shared``: each runs after the others' attempts, which it must not
see); a test with bounds of its own, or one that counts audit rows, starts its own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from mcp import Client
from mcp.types import ElicitResult
from tests.support.forked_upstreams import forked_spec
from tests.support.held_context import held

from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = [pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]
ROOT = Path(__file__).resolve().parents[2]


def airline_config(data_dir: Path, **policy: Any) -> Any:
    return parse_config({
        "mcpServers": {"airline": {**forked_spec("-m", "examples.airline"),  # support/forked_upstreams.py
                                   "cwd": str(ROOT), "protocol": "auto"}},
        "sentinel": {"rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "airline.pl")],
                     "builtins": ["sentinel"], "data_dir": str(data_dir),
                     "seeds": {"current_user": "mia_li_3668", "today": "2024-05-15"},
                     "policy": policy},
    }, source="<test>", base_dir=str(data_dir))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    """One gateway of the default bounds for the tests whose every attempt is refused."""
    async for rt in held(running_gateway(airline_config(tmp_path_factory.mktemp("shared") / "state"))):
        yield rt


def escape_corpus(marker: Path) -> list[str]:
    """Goals that try to run code, touch files, the OS, threads or the engine's shared state. Each must be
    refused before anything runs; ``marker`` must never appear."""
    m = str(marker).replace("'", "")
    touch = f"'touch {m}'"
    return [
        f"shell({touch})",
        f"shell({touch}, _)",
        f"call(shell, {touch})",
        f"call(shell({touch}))",
        f"G = shell({touch}), call(G)",
        f"G = shell({touch}), G",
        f"G =.. [shell, {touch}], G",
        f"findall(_, shell({touch}), _)",
        f"forall(true, shell({touch}))",
        f"aggregate_all(count, shell({touch}), _)",
        f"catch(shell({touch}), _, true)",
        f"\\+ \\+ shell({touch})",
        f"once(shell({touch}))",
        f"ignore(shell({touch}))",
        f"not(shell({touch}))",
        f"apply(shell, [{touch}])",
        f"system:shell({touch})",
        f"user:shell({touch})",
        f"'$syspreds':shell({touch})",
        f"setof(X, shell({touch}), X)",
        f"bagof(X, Y^shell({touch}), X)",
        f"findall(X, (member(X, [1]), call(shell, {touch})), _)",
        f"maplist(shell, [{touch}])",
        f"foldl([A,_,_]>>shell(A), [{touch}], 0, _)",
        f"include(shell, [{touch}], _)",
        f"forall(member(C, [{touch}]), shell(C))",
        f"process_create(path(touch), ['{m}'], [])",
        f"open('{m}', write, S), close(S)",
        f"tell('{m}'), told",
        f"append('{m}'), told",
        f"delete_file('{m}')",
        "read_file_to_string('/etc/passwd', S, [])",
        "exists_file('/etc/passwd')",
        f"thread_create(shell({touch}), _, [])",
        f"with_output_to(string(_), shell({touch}))",
        f"format('~@', [shell({touch})])",
        f"format(atom(_), '~@', [shell({touch})])",
        f"assertz((foo :- shell({touch}))), foo",
        "asserta(current_user(attacker))",
        "retractall(current_user(_))",
        "sentinel_core:cur(session, S), call(assertz, S:'$fact'('$confirmed'(t, d, v, yes), 1.0e18, user))",
        "'$fact'(F, E, P)",
        "'$src'(K, T, F, L)",
        "abolish(current_user/1)",
        "set_prolog_flag(unknown, fail)",
        "op(700, xfx, ===)",
        "op(0, xfx, =)",
        "nb_setval(k, v)",
        "b_setval(k, v)",
        "nb_getval(k, _)",
        "setenv(x, y)",
        "getenv('HOME', _)",
        "current_prolog_flag(argv, _)",
        "prolog_load_context(directory, _)",
        "halt",
        "halt(0)",
        "sleep(25)",
        "consult('/etc/passwd')",
        "use_module(library(process))",
        "load_files('/etc/passwd', [])",
        "term_to_atom(T, 'shell(x)'), T",
        "table(foo/1)",
        "phrase(shell, _)",
        "tab(1000000000)",
        "char_conversion(a, b)",
        "garbage_collect",
        "statistics(cputime, _)",
        f"{{|shell||touch {m}|}}",
    ]


def data(result: Any) -> dict[str, Any]:
    if result.structured_content is not None:
        return result.structured_content
    try:
        return json.loads(result.content[0].text)
    except ValueError:
        return {"text": result.content[0].text}


async def reservation_status(c: Client, rid: str = "NO6JO3") -> str:
    """``active`` or ``cancelled`` (the airline marks only cancelled reservations)."""
    r = await c.call_tool("airline__get_reservation_details", {"reservation_id": rid})
    assert not r.is_error, r.content[0].text
    return data(r).get("status") or "active"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_escape_corpus_is_refused_without_side_effects(shared: Any, tmp_path: Path, mode: str) -> None:
    marker = tmp_path / "pwned"
    async with Client(shared.front.server, mode=mode) as c:
        for goal in escape_corpus(marker):
            r = await c.call_tool("sentinel__sentinel_query", {"goal": goal})
            out = data(r)
            assert r.is_error, (goal, out)
            assert out.get("status") in ("refused", "error"), (goal, out)
            assert "sentinel_core" not in str(out.get("error")) or "module-qualified" in str(out), out
            assert not marker.exists(), goal
        # nothing was approved behind the user's back: the write still needs the user
        assert await reservation_status(c) == "active"
        r = await c.call_tool("airline__cancel_reservation", {"reservation_id": "NO6JO3"})
        assert r.is_error and await reservation_status(c) == "active"
        # and the engine works as before for everyone: plain goals, standard operators
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "X = 1, Y is X + 1, 1 =:= 1"})
        assert data(r)["status"] == "proved", data(r)
        assert data(r)["solutions"][0]["bindings"] == {"X": 1, "Y": 2}


async def test_refusals_name_what_was_refused_and_not_internal_goals(shared: Any) -> None:
    async with Client(shared.front.server) as c:
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "call(shell, 'id')"})
        text = r.content[0].text
        assert r.is_error and "call/2 is not allowed" in text
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "own_reservation(R), shell(R)"})
        assert "shell/1 is not allowed" in r.content[0].text
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "foo(("})
        assert r.is_error and "yntax error" in r.content[0].text
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "no_such_predicate(1)"})
        assert r.is_error and "undefined predicate no_such_predicate/1" in r.content[0].text
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "atom_length(X, 3)"})
        assert r.is_error and "not instantiated enough" in r.content[0].text
        assert "_G" not in r.content[0].text and "sentinel_core" not in r.content[0].text


BOMBS = {
    "loop": "between(1, 1000000000000000, _), fail",
    "long_list": "length(L, 400000000)",
    "numlist": "numlist(1, 300000000, L)",
    "big_integer": "X is 7 ** (10 ** 9)",
    "long_atom": "atom_concat(a, a, A1), "
    + ", ".join(f"atom_concat(A{i}, A{i}, A{i + 1})" for i in range(1, 31))
    + ", atom_length(A31, N)",
    "long_string": "string_concat(a, a, S1), "
    + ", ".join(f"string_concat(S{i}, S{i}, S{i + 1})" for i in range(1, 31))
    + ", string_length(S31, N)",
    "long_text_from_list": "numlist(1, 40000000, L), atomic_list_concat(L, A), atom_length(A, N)",
    "deep_term": "length(L, 30000000), L = [x|_], msort(L, M)",
    "many_solutions": "findall(X, between(1, 200000000, X), L)",
    "sort_bomb": "findall(X-Y, (between(1, 6000, X), between(1, 6000, Y)), L), msort(L, M)",
}


@pytest.mark.parametrize("bomb", sorted(BOMBS))
async def test_a_bomb_leaves_other_sessions_decisions_on_time(tmp_path: Path, bomb: str) -> None:
    """While one session's goal burns its budget (time, inferences or memory), another session's guarded
    call is decided: when the bomb was still running as the other call started, the other call finishes
    first (an ordering, not a timing threshold); the bomb ends with a limit, and the next goal is served."""
    asked: list[str] = []

    async def user(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"answer": "mia_li_3668"})

    cfg = airline_config(tmp_path / "state", query_seconds=6, query_inferences=10**12)
    async with running_gateway(cfg) as rt:
        async with (
            Client(rt.front.server, mode="legacy") as attacker,
            Client(rt.front.server, mode="legacy", elicitation_callback=user) as other,
        ):
            await attacker.call_tool("sentinel__sentinel_query", {"goal": "true"})  # worker up
            bomb_task = asyncio.create_task(
                attacker.call_tool(
                    "sentinel__sentinel_query", {"goal": BOMBS[bomb]}, meta={"sentinel/session": "attacker"}
                )
            )
            await asyncio.sleep(0.3)
            # a guarded write in another session: a full decision (the solver fetches the reservation and
            # the user through the gateway, the user is asked for their id) while the bomb runs
            running_at_start = not bomb_task.done()
            r = await other.call_tool(
                "airline__cancel_reservation",
                {"reservation_id": "NO6JO3"},
                meta={"sentinel/session": "victim"},
            )
            finished_first = not bomb_task.done()
            out = await bomb_task
            if running_at_start and data(out).get("status") == "time_limit":
                assert finished_first, f"{bomb}: the other session waited for the bomb"
            assert r.content, r
            status = data(out).get("status")
            assert out.is_error and status in ("time_limit", "memory_limit", "error", "refused"), (
                bomb,
                data(out),
            )
            # the next client goal is served by a fresh or surviving worker
            ok = await attacker.call_tool("sentinel__sentinel_query", {"goal": "X = 1"})
            assert data(ok)["status"] == "proved"


async def test_looping_query_does_not_delay_guards_of_another_session(tmp_path: Path) -> None:
    cfg = airline_config(tmp_path / "state", query_seconds=8, query_inferences=10**12)
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode="auto") as a, Client(rt.front.server, mode="auto") as b:
            loop = asyncio.create_task(
                a.call_tool(
                    "sentinel__sentinel_query",
                    {"goal": "between(1, 1000000000000000, _), fail"},
                    meta={"sentinel/session": "looper"},
                )
            )
            await asyncio.sleep(0.5)
            for rid in ("NO6JO3", "AIXC49", "4WQ150"):
                r = await b.call_tool(
                    "airline__get_reservation_details",
                    {"reservation_id": rid},
                    meta={"sentinel/session": "reader"},
                )
                assert not r.is_error
                r = await b.call_tool(
                    "sentinel__sentinel_why_not",
                    {"tool": "airline__cancel_reservation", "arguments": {"reservation_id": rid}},
                    meta={"sentinel/session": "reader"},
                )
                assert not r.is_error and data(r)["decision"] in ("ask", "deny", "allow")
            assert not loop.done()
            out = await loop
            assert data(out)["status"] == "time_limit", data(out)


async def test_shared_engine_state_is_out_of_reach(shared: Any) -> None:
    """After every attempt to change operators, flags or globals, another session's plain goals mean what
    they meant."""
    async with Client(shared.front.server) as c:
        for goal in [
            "op(700, xfx, =)",
            "op(0, xfx, =)",
            "op(1200, fx, X)",
            "set_prolog_flag(double_quotes, atom)",
            "nb_setval(sentinel, x)",
            "char_conversion('1', '2')",
        ]:
            r = await c.call_tool(
                "sentinel__sentinel_query", {"goal": goal}, meta={"sentinel/session": "one"}
            )
            assert r.is_error
        r = await c.call_tool(
            "sentinel__sentinel_query",
            {"goal": 'X = 1, atom_length("abc", N)'},
            meta={"sentinel/session": "two"},
        )
        assert data(r)["status"] == "proved" and data(r)["solutions"][0]["bindings"] == {"X": 1, "N": 3}
        # and the guards: the fail-safe read still works and the write still asks (a reservation's
        # details:
        # a read that needs no consent, unlike a traveller's profile)
        r = await c.call_tool("airline__get_reservation_details", {"reservation_id": "NO6JO3"})
        assert not r.is_error, r.content[0].text


async def test_any_text_reaches_rules_as_data(tmp_path: Path) -> None:
    """Arguments with emoji, bidi controls, NUL, lone surrogates and quotes: decided (never a guard error),
    and a query about such text comes back intact."""
    texts = [
        "😀🚀",
        "a\u202eb\u2066c",
        "nul\x00byte",
        "lone\ud800surrogate",
        "low\udc00",
        'it\'s "quoted" \\',
        "\U0010f800stand-in",
        "'), shell(id), ('",
        "x\ny\tz",
        "中文 العربية",
    ]
    async with running_gateway(airline_config(tmp_path / "state")) as rt:
        async with Client(rt.front.server) as c:
            for t in texts:
                r = await c.call_tool("airline__cancel_reservation", {"reservation_id": t})
                assert r.is_error, t
                text = r.content[0].text
                assert "could not be evaluated" not in text and "failed (" not in text, (t, text)
                assert "sentinel_core" not in text and "prove(" not in text, text
                r = await c.call_tool(
                    "sentinel__sentinel_query",
                    {"goal": "X = " + json.dumps(t, ensure_ascii=False) + ", string_length(X, N)"},
                )
                if any(0xD800 <= ord(ch) <= 0xDFFF for ch in t):  # not Unicode: refused before any guard
                    assert r.is_error and "lone surrogate" in r.content[0].text, (t, r.content[0].text)
                    continue
                assert data(r)["status"] == "proved", (t, data(r))
            await rt.audit.flush()
            rows = [
                row
                for row in await read_audit(rt.config.store_path, tail=200)
                if row.get("tool") == "airline__cancel_reservation"
            ]
            # the two lone surrogates are refused as bad arguments before the guard; every other text denied
            seen = [(row["decision"], row.get("outcome")) for row in rows]
            assert sorted(seen).count(("error", "bad_arguments")) == 2, seen
            assert all(d == ("deny", "denied") for d in seen if d != ("error", "bad_arguments")), seen
            assert not any("guard_error" in json.dumps(row) for row in rows)


async def test_a_value_json_has_no_number_for_is_answered_as_its_text(shared: Any) -> None:
    """The goal reader takes floats JSON has no number for (1.0Inf, 1.5NaN), and a goal may bind them or
    ask for a fact about one: the worker's answer was then no JSON, and the client got a JSON parser's
    message ("Expecting ',' delimiter ..."). Such a value is shown as its text, as any term JSON has no
    value for, and a look-up for it is made with that text."""
    async with Client(shared.front.server) as c:
        for goal, shown in [("X = 1.0Inf", "1.0Inf"), ("X = -1.0Inf", "-1.0Inf"),
                            ("X = 1.5NaN", "1.5NaN"), ("X = [1.0Inf, 2]", ["1.0Inf", 2])]:
            r = await c.call_tool("sentinel__sentinel_query", {"goal": goal})
            assert not r.is_error, (goal, r.content[0].text)
            assert data(r)["solutions"][0]["bindings"]["X"] == shown, (goal, data(r))
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "reservation_cabin(1.0Inf, C)"})
        assert data(r)["status"] == "failed", data(r)
        assert "1.0Inf" in " ".join(data(r)["missing"]), data(r)
