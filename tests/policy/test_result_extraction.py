"""What a bound read tool's result yields (``sn_extract``, fact_terms.pl), exactly: pointers walked through
objects and arrays, stars zipped by their prefix, ``key(...)`` giving the member's name or index, nulls and
missing fields giving nothing, ``required`` and results with nothing to walk naming the binding unreadable,
the fetched marker of each binding read, TTLs, duplicates once, and the call's arguments selecting the
bindings."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy import prolog_call
from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.engine_thread import EngineError
from sentinel_mcp.policy.rulebase import load_rulebase

pytestmark = pytest.mark.timeout(60)

RULES = """
binding(leg(R, F, D), tool('t__get', [id = R]),
        extract([F = '/legs/*/flight', D = '/legs/*/date']), [ttl(30)]).
binding(price(F, C, P), tool('t__get', [id = _]),
        extract([F = '/legs/*/flight', C = key('/legs/*/prices/*'), P = '/legs/*/prices/*']), [ttl(session)]).
binding(slot(R, I, S), tool('t__get', [id = R]), extract([I = key('/slots/*'), S = '/slots/*']), []).
binding(owner(R, U), tool('t__get', [id = R]), extract([U = '/owner']), [ttl(60), required]).
binding(note(R, N), tool('t__get', [id = R]), extract([N = '/note']), [ttl(60)]).
binding(whole(R, W), tool('t__get', [id = R]), extract([W = '/']), [ttl(60)]).
binding(other(X), tool('t__other', [a = X, b = 2]), extract([X = '/x']), [ttl(60)]).
"""

RESULT = {
    "owner": "u1",
    "note": None,
    "legs": [
        {"flight": "HAT1", "date": "2024-05-01", "prices": {"economy": 100, "business": 300}},
        {"flight": "HAT2", "date": "2024-05-02", "prices": {"economy": 120}},
        {"flight": "HAT1", "date": "2024-05-01", "prices": {}},  # the same leg again: its fact once
        {"flight": "HAT3"},  # no date: no leg fact for it
    ],
    "slots": ["a", None, "c"],
}


@pytest.fixture
async def engine(tmp_path: Path) -> Any:
    rules = tmp_path / "t.pl"
    rules.write_text(RULES)
    eng = PrologEngine()
    eng.start()
    rb = await load_rulebase(eng, [rules])
    yield eng, rb.module


def _facts(out: tuple[list[dict[str, Any]], list[str]]) -> dict[str, Any]:
    facts, unreadable = out
    return {f["fact"]: f["ttl"] for f in facts}, unreadable


async def test_a_result_yields_exactly_its_facts(engine: Any) -> None:
    eng, module = engine
    facts, unreadable = _facts(await eng.extract(module, "t__get", {"id": "R1"}, RESULT))
    assert unreadable == []
    whole = [f for f in facts if f.startswith("whole(")]
    assert len(whole) == 1
    assert whole[0].startswith("whole('R1',json([owner=u1,note= @(null),legs=[json([flight=")
    del facts[whole[0]]
    assert facts == {
        "'$fetched'(leg,3,t__get,json([id='R1']))": 30,
        "leg('R1','HAT1','2024-05-01')": 30,
        "leg('R1','HAT2','2024-05-02')": 30,
        "'$fetched'(price,3,t__get,json([id='R1']))": None,
        "price('HAT1',economy,100)": None,
        "price('HAT1',business,300)": None,
        "price('HAT2',economy,120)": None,
        "'$fetched'(slot,3,t__get,json([id='R1']))": 60,
        "slot('R1',0,a)": 60,
        "slot('R1',2,c)": 60,
        "'$fetched'(owner,2,t__get,json([id='R1']))": 60,
        "owner('R1',u1)": 60,
        "'$fetched'(note,2,t__get,json([id='R1']))": 60,
        "'$fetched'(whole,2,t__get,json([id='R1']))": 60,
    }


async def test_the_facts_come_in_the_bindings_order_marker_first(engine: Any) -> None:
    eng, module = engine
    facts, _ = await eng.extract(module, "t__get", {"id": "R1"}, RESULT)
    names = [f["fact"] for f in facts]
    assert names[:3] == ["'$fetched'(leg,3,t__get,json([id='R1']))", "leg('R1','HAT1','2024-05-01')",
                         "leg('R1','HAT2','2024-05-02')"]
    assert [f["predicate"] for f in facts if f["predicate"] == "price"] == ["price"] * 3


async def test_a_required_field_missing_makes_its_binding_unreadable(engine: Any) -> None:
    eng, module = engine
    facts, unreadable = _facts(await eng.extract(module, "t__get", {"id": "R1"}, {**RESULT, "owner": None}))
    assert unreadable == ["owner/2"]
    assert not any(f.startswith("owner(") or "(owner," in f for f in facts)
    assert "leg('R1','HAT2','2024-05-02')" in facts


@pytest.mark.parametrize("result", ["plain text", 42, None, True])
async def test_a_result_with_nothing_to_walk_is_unreadable_for_pointers_into_it(
    engine: Any, result: Any
) -> None:
    eng, module = engine
    facts, unreadable = _facts(await eng.extract(module, "t__get", {"id": "R1"}, result))
    assert sorted(unreadable) == ["leg/3", "note/2", "owner/2", "price/3", "slot/3"]
    assert set(facts) <= {"'$fetched'(whole,2,t__get,json([id='R1']))"} | {
        f"whole('R1',{w})" for w in ("'plain text'", "42", "true")}  # the root pointer reads any result


async def test_only_the_bindings_of_the_calls_own_arguments(engine: Any) -> None:
    eng, module = engine
    assert await eng.extract(module, "t__other", {"a": 1}, {"x": 5}) == ([], [])  # b missing
    assert await eng.extract(module, "t__other", {"a": 1, "b": 3}, {"x": 5}) == ([], [])  # b not 2
    assert await eng.extract(module, "t__other", {"a": 1, "b": 2, "c": 0}, {"x": 5}) == ([], [])  # extra c
    facts, unreadable = _facts(await eng.extract(module, "t__other", {"b": 2, "a": 5}, {"x": 5}))
    assert facts == {"'$fetched'(other,1,t__other,json([a=5,b=2]))": 60, "other(5)": 60}
    facts, _ = _facts(await eng.extract(module, "t__other", {"b": 2, "a": 5}, {"x": 6}))
    assert facts == {"'$fetched'(other,1,t__other,json([a=5,b=2]))": 60}  # x is not the call's a


async def test_a_star_walks_an_objects_members_as_an_arrays_items(engine: Any) -> None:
    eng, module = engine
    odd = {"owner": "u1", "legs": {"first": {"flight": "X", "date": "d"}}, "slots": {"k": "v"}}
    facts, unreadable = _facts(await eng.extract(module, "t__get", {"id": "R1"}, odd))
    assert unreadable == []
    assert "slot('R1',k,v)" in facts  # key() of an object's member is its name
    assert "leg('R1','X',d)" in facts
    assert not any(f.startswith("price(") for f in facts)  # no prices under that leg


HOSTILE = ["it's", '"quoted"', "back\\slash", "nul\x00byte", "tab\there", "line\nbreak", "caf\u00e9",
           "\U0001f600", "lone \ud800", "'), halt, foo('", "x" * 5000]


@pytest.mark.parametrize("text", HOSTILE)
async def test_a_hostile_text_in_a_result_comes_back_exactly_as_data(engine: Any, text: str) -> None:
    """A tool result is the upstream's words: whatever its texts hold, they reach Prolog as an atom (never as
    goal text) and come back in the facts unchanged."""
    eng, module = engine
    facts, unreadable = await eng.extract(module, "t__get", {"id": text}, {"owner": text, "note": text})
    assert unreadable == []
    owner = [f for f in facts if f["predicate"] == "owner"]
    assert [f["args"] for f in owner] == [[text, text]]
    assert (await eng.fact_json(owner[0]["fact"]))["args"] == [text, text]  # its text reads back the same


def _mutations(rng: random.Random, value: Any, odd: list[Any]) -> Any:
    """The value with some of its members dropped, nulled, retyped or swapped for odd values, at any depth."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            r = rng.random()
            if r < 0.1:
                continue
            out[k] = rng.choice(odd) if r < 0.25 else _mutations(rng, v, odd)
        return out
    if isinstance(value, list):
        items = [_mutations(rng, v, odd) for v in value if rng.random() > 0.1]
        return items if rng.random() > 0.1 else {str(i): v for i, v in enumerate(items)}
    return rng.choice(odd) if rng.random() < 0.2 else value


async def test_a_result_built_as_a_term_in_c_yields_what_its_json_text_does(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The result reaches Prolog as a term built from the parsed value (prolog_call_native.c) or, with the C
    function off or outside its common case (a lone surrogate, an integer past 64 bits, NaN), as JSON text
    Prolog parses: 300 mutated results (fields dropped, nulled, retyped, arrays turned objects, hostile
    texts, big and odd numbers) yield the same facts and unreadable bindings both ways."""
    eng, module = engine
    rng = random.Random(3313)
    odd: list[Any] = [*HOSTILE, None, True, False, 0, -1, 2**63 - 1, 2**64, 1.5, -0.0, 1e300, float("nan"),
                      [], {}, "true", "null", "[]", [None], {"flight": None}]
    results = [RESULT, *(_mutations(rng, RESULT, odd) for _ in range(300))]
    was = prolog_call.native_in_use()
    native = pytest.importorskip("sentinel_mcp.policy.prolog_call_native")
    built = {"term": 0, "text": 0}
    call_json = native.call_json

    def counted(*args: Any) -> Any:
        out = call_json(*args)
        built["text" if out is NotImplemented else "term"] += 1
        return out

    monkeypatch.setattr(native, "call_json", counted)
    try:
        for result in results:
            answers = []
            for on in (True, False):
                prolog_call.use_native(on)
                try:
                    answers.append(await eng.extract(module, "t__get", {"id": "R1"}, result))
                except EngineError as e:  # NaN is no JSON: the text path refuses it, and so must both
                    answers.append(("error", str(e)[:80]))
            assert answers[0] == answers[1], repr(result)[:300]
        assert built["term"] >= 100 and built["text"] >= 30, built  # both paths taken
    finally:
        prolog_call.use_native(was)


async def test_a_long_array_is_read_whole_each_key_with_its_own_value(engine: Any) -> None:
    """Two pointers through one star (a key and its value) take the element the first one found, at every
    index of 10,000 slots, within the extraction's bound of inferences. (Finding the element again by its
    index made such a read n^2/2 list steps, in C, uncounted by the bound: 100,000 items held the engine
    thread for two minutes; benchmarks/README.md has the figures.)"""
    eng, module = engine
    slots = [f"s{i}" for i in range(10_000)]
    facts, unreadable = _facts(await eng.extract(module, "t__get", {"id": "R1"}, {**RESULT, "slots": slots}))
    assert unreadable == []
    assert {f for f in facts if f.startswith("slot(")} == {f"slot('R1',{i},s{i})" for i in range(10_000)}


async def test_a_result_too_large_to_read_teaches_nothing_and_says_so(
    engine: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A result whose reading passes the bound of inferences (fact_terms.pl, extract_inference_limit) is not
    read at all, on either path: no fact, not even a fetched marker, every binding of the call unreadable and
    saying why, a warning (not one a result: at the 1st, 10th, 100th...), and the engine reads the next result
    as before."""
    eng, module = engine
    huge = {**RESULT, "slots": [f"s{i}" for i in range(40_000)]}
    was = prolog_call.native_in_use()
    try:
        for on in (True, False):
            prolog_call.use_native(on)
            with caplog.at_level("WARNING", logger="sentinel_mcp.policy.engine"):
                facts, unreadable = await eng.extract(module, "t__get", {"id": "R1"}, huge)
            assert facts == []
            assert sorted(unreadable) == sorted(f"{b} (the result is too large to read)" for b in (
                "leg/3", "price/3", "slot/3", "owner/2", "note/2", "whole/2"))
            small, _ = _facts(await eng.extract(module, "t__get", {"id": "R1"}, RESULT))
            assert "owner('R1',u1)" in small
    finally:
        prolog_call.use_native(was)
    said = [r for r in caplog.records if "too large to read" in r.getMessage()]
    assert len(said) == 1 and "t__get" in said[0].getMessage()
    assert eng.results_too_large == 2


@pytest.mark.parametrize("limit, read_whole", [(5_000_000, True), (1_000, False)])
async def test_a_rulebase_sets_its_own_bound_of_inferences(
    tmp_path: Path, limit: int, read_whole: bool
) -> None:
    """``option(extract_inference_limit(N))``: a rulebase whose tools answer long lists raises the bound (the
    40,000 slots above are read whole), one that wants it tighter lowers it (the small result is then too
    large to read), on both paths."""
    rules = tmp_path / "t.pl"
    rules.write_text(RULES + f"option(extract_inference_limit({limit})).\n")
    eng = PrologEngine()
    eng.start()
    rb = await load_rulebase(eng, [rules])
    result = {**RESULT, "slots": [f"s{i}" for i in range(40_000)]} if read_whole else RESULT
    was = prolog_call.native_in_use()
    try:
        for on in (True, False):
            prolog_call.use_native(on)
            facts, unreadable = _facts(await eng.extract(rb.module, "t__get", {"id": "R1"}, result))
            if read_whole:
                assert unreadable == [] and "slot('R1',39999,s39999)" in facts
            else:
                assert facts == {} and all("too large to read" in u for u in unreadable) and unreadable
    finally:
        prolog_call.use_native(was)


@pytest.mark.parametrize("native", [True, False])
async def test_a_text_spelling_a_literal_is_a_string_the_literal_an_atom(engine: Any, native: bool) -> None:
    """An upstream's text ``"true"``, ``"false"`` or ``"null"`` (a value at any depth, or a member's name read
    with ``key(...)``) is a string in the fact, its text in the fact's arguments; the JSON literals are the
    atoms ``true``/``false`` (null gives no fact) as before; other spellings (``"TRUE"``) are atoms. Built in
    C or read from the JSON text by Prolog (the C function off), the same facts."""
    eng, module = engine
    result = {"owner": "true", "note": "null", "slots": ["false", True, None, "TRUE"],
              "legs": [{"flight": "null", "date": "false", "prices": {"true": False, "null": "true"}}]}
    was = prolog_call.native_in_use()
    try:
        prolog_call.use_native(native)
        facts, unreadable = await eng.extract(module, "t__get", {"id": "R1"}, result)
    finally:
        prolog_call.use_native(was)
    assert unreadable == []
    got = {f["fact"]: f["args"] for f in facts if not f["fact"].startswith(("'$fetched'", "whole("))}
    assert got == {
        'owner(\'R1\',"true")': ["R1", "true"],
        'note(\'R1\',"null")': ["R1", "null"],
        'slot(\'R1\',0,"false")': ["R1", 0, "false"],
        "slot('R1',1,true)": ["R1", 1, True],
        "slot('R1',3,'TRUE')": ["R1", 3, "TRUE"],
        'leg(\'R1\',"null","false")': ["R1", "null", "false"],
        'price("null","true",false)': ["null", "true", False],
        'price("null","null","true")': ["null", "null", "true"],
    }
    whole = next(f for f in facts if f["fact"].startswith("whole("))
    assert {k: whole["args"][1][k] for k in ("owner", "note", "legs")} == {
        k: result[k] for k in ("owner", "note", "legs")}


def _nested(depth: int, leaf: Any) -> Any:
    for i in range(depth):
        leaf = [leaf] if i % 2 else {"m": leaf}
    return leaf


@pytest.mark.parametrize("depth", [255, 256, 257, 300, 900])
async def test_a_result_past_the_c_converters_depth_is_read_as_its_text(engine: Any, depth: int) -> None:
    """Past the C converter's 256 levels the result goes the text path: the same facts."""
    eng, module = engine
    facts, unreadable = _facts(await eng.extract(module, "t__get", {"id": "R1"},
                                                 {"owner": "u1", "note": _nested(depth, "n")}))
    assert unreadable == [] and facts["owner('R1',u1)"] == 60
    note = next(f for f in facts if f.startswith("note("))
    assert note.count("json([m=") == (depth + 1) // 2


@pytest.mark.parametrize("depth", [1_100, 5_000, 100_000])
async def test_a_result_past_every_readers_depth_is_an_engine_error(engine: Any, depth: int) -> None:
    """Deeper than the text path's writer recurses: an EngineError (the solver takes it as a result that
    cannot be read), never Python's RecursionError, which nothing above caught: the read's older facts
    were kept."""
    eng, module = engine
    with pytest.raises(EngineError):
        await eng.extract(module, "t__get", {"id": "R1"}, {"owner": "u1", "note": _nested(depth, "n")})
    # the engine goes on
    facts, _ = _facts(await eng.extract(module, "t__get", {"id": "R1"}, {"owner": "u2"}))
    assert "owner('R1',u2)" in facts
