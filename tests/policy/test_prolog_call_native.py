"""A predicate called through the C function (``prolog_call_native.c``) is called exactly as through the
ctypes steps: the same terms reach Prolog for every kind of input (the C function takes texts without a lone
surrogate, floats and 64-bit integers, and hands everything else back to ctypes), the same answers and the
same errors come back, its frames are discarded, and other Python threads run while Prolog works. A JSON
value it puts as a term (call_json) is the term its text reads as. Every comparison runs real
SWI-Prolog twice, the C function on and off."""

from __future__ import annotations

import ctypes
import enum
import math
import os
import random
import re
import shutil
import sysconfig
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from sentinel_mcp.policy import prolog_call
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.prolog_call import NOT_NATIVE, PrologCall
from sentinel_mcp.policy.prolog_text import from_prolog_json, json_text
from tests.policy.test_lazy_proofs import HOSTILE

ECHO = PrologCall("user", "sn_test_echo", 5)


@pytest.fixture(scope="module", autouse=True)
def predicates() -> Iterator[None]:
    engine = shared_engine()
    engine.run_sync(lambda p: list(p.query(
        "forall(member(C, ["
        "(user:sn_test_echo(A, B, C0, D, Out) :- "
        "format(atom(Out), '~q|~q|~q|~q', [A, B, C0, D])),"
        "(user:sn_test_fail(_, _) :- fail),"
        "(user:sn_test_raise(A, _) :- "
        "throw(error(type_error(thing, A), context(here, 'd\u00e9j\u00e0 vu')))),"
        "(user:sn_test_big_raise(A, _) :- length(L, 5000), maplist(=(A), L), throw(big(L))),"
        "(user:sn_test_compound(A, f(A))),"
        "(user:sn_test_number(_, 42)),"
        "(user:sn_test_string(A, S) :- atom_string(A, S)),"
        "(user:sn_test_sleep(T, done) :- sleep(T))"
        "]), assertz(C))")))
    was = prolog_call.native_in_use()
    yield
    prolog_call.use_native(was)


@pytest.fixture()
def native_module() -> Iterator[Any]:
    """The C function's module, the C function on during the test (and as it was after)."""
    module = pytest.importorskip("sentinel_mcp.policy.prolog_call_native")
    was = prolog_call.native_in_use()
    assert prolog_call.use_native(True)
    yield module
    prolog_call.use_native(was)


def both(fn: Callable[[], Any]) -> tuple[Any, Any]:
    """``fn`` on the engine thread with the C function, then with the ctypes steps: its value or its error."""
    engine = shared_engine()

    def outcome() -> Any:
        try:
            return ("value", engine.run_sync(lambda _: fn()))
        except Exception as e:  # noqa: BLE001 - compared
            # a variable's name in an exception's text differs from run to run
            return ("error", type(e).__name__, re.sub(r"\b_[0-9]+", "_G", str(e)))

    was = prolog_call.native_in_use()
    try:
        assert prolog_call.use_native(True)
        native = outcome()
        prolog_call.use_native(False)
        assert not prolog_call.native_in_use()
        plain = outcome()
    finally:
        prolog_call.use_native(was)
    return native, plain


def test_the_package_calls_prolog_through_its_c_function() -> None:
    """Where a C compiler and Python's headers are (this machine, CI's), the install compiled it and uses it:
    a build that silently fell back to ctypes would lose the decision's time without anyone noticing."""
    shared_engine().start()
    if os.environ.get("SENTINEL_PROLOG_CALL") == "ctypes":  # turned off by whoever runs the tests
        assert not prolog_call.native_in_use()
        return
    if shutil.which("cc") is None or not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        pytest.skip("no C compiler or no Python headers here: the install uses the ctypes steps")
    assert prolog_call.native_in_use()


class Colour(enum.IntEnum):
    RED = 3


class Text(str):
    pass


class Real(float):
    pass


def inputs() -> list[Any]:
    rng = random.Random(4121)
    texts = [*HOSTILE, "", "a", "'", "\\", "\x00", "\x00x", "é", "日本", "\ud800", "a\udfffb", "\U0001f600",
             "x" * 5000, "ab\x00cd" * 100, "\x1e\x1f", "0", "1.5", "[]", "_", "A", "Var", "f(x)"]
    numbers: list[Any] = [0, -1, 1, 2**31, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**200, 0.0, -0.0, 1.5,
                          -2.25e-308, 1e308, math.inf, -math.inf, math.nan, 5e-324]
    odd: list[Any] = [True, False, None, b"bytes", Colour.RED, Text("sub"), Text("日"), Real(2.5), [1], (1,),
                      {"k": 1}, object()]
    pool = texts + numbers + odd
    rows = [(a, "b", 1.0, 2) for a in pool]
    rows += [tuple(rng.choice(pool) for _ in range(4)) for _ in range(300)]
    return rows


def test_every_kind_of_input_reaches_prolog_as_through_ctypes(native_module: Any) -> None:
    """ASCII and other texts (control characters, NUL, lone surrogates, long ones), integers at and past 64
    bits, every special float, subclasses, and values that are not inputs at all: the same written terms, or
    the same error, both ways."""
    kinds: set[str] = set()
    for row in inputs():
        native, plain = both(lambda row=row: ECHO(*row))
        assert native == plain, row
        kinds.add(native[0])
    assert kinds == {"value", "error"}


def test_failure_exception_and_answers_that_are_not_text_are_the_same_errors(native_module: Any) -> None:
    """A predicate that fails, one that raises (its exception as text, cut when long, and cleared: the next
    call answers), an answer that is a compound or a number, and a predicate that does not exist."""
    cases: list[tuple[str, tuple[Any, ...]]] = [
        ("sn_test_fail", ("a",)),
        ("sn_test_raise", ("abc",)),
        ("sn_test_raise", ("日本",)),
        ("sn_test_compound", ("x",)),
        ("sn_test_number", ("x",)),
        ("sn_test_string", ("some text",)),
        ("sn_test_string", ("texte é",)),
        ("sn_test_nowhere", ("x",)),
        ("sn_test_big_raise", ("abc",)),
        ("sn_test_string", ("after a raise",)),
    ]
    seen = []
    for name, args in cases:
        call = PrologCall("user", name, 2)
        native, plain = both(lambda call=call, args=args: call(*args))
        assert native == plain, (name, args)
        seen.append(native)
    assert seen[0] == ("error", "PrologCallError", "sn_test_fail failed")
    assert seen[1] == ("error", "PrologCallError",
                       "sn_test_raise raised error(type_error(thing,abc),context(here,'déjà vu'))")
    assert seen[2][2].startswith("sn_test_raise raised error(type_error(thing,日本)")
    assert seen[3] == ("error", "PrologCallError", "sn_test_compound: the answer is not text")
    assert seen[4] == ("error", "PrologCallError", "sn_test_number: the answer is not text")
    assert seen[5] == ("value", "some text") and seen[6] == ("value", "texte é")
    assert seen[7][0] == "error" and "existence_error(procedure,sn_test_nowhere/2)" in seen[7][2], seen[7]
    # an exception holding a big term is cut (the whole of it would be 20,000 characters), and cleared: the
    # next call answers
    assert seen[8][2].startswith("sn_test_big_raise raised big([abc,abc,") and len(seen[8][2]) < 2100
    assert seen[8][2].endswith(" characters)")
    assert seen[9] == ("value", "after a raise")


def test_the_c_function_checks_what_it_is_given(native_module: Any) -> None:
    """Called directly with the wrong shape it raises; it never calls Prolog with a wrong arity."""
    native = native_module
    with pytest.raises(TypeError):
        native.call(1, 2)
    with pytest.raises(TypeError):
        native.call("1", 2, ())
    with pytest.raises(TypeError):
        native.call(1, 2, ["a"])
    with pytest.raises(ValueError):
        native.call(1, 5, ("a",))  # four inputs for arity 5
    with pytest.raises(ValueError):
        native.call(0, 2, ("a",))  # no predicate
    with pytest.raises(ValueError):
        native.call(1, 40, tuple("a" * 39))
    with pytest.raises(ValueError):
        native.bind(*([0] * 14))
    with pytest.raises(ValueError):
        ECHO("a", "b")


def test_frames_are_discarded_and_other_threads_run_during_a_call(native_module: Any) -> None:
    """Ten thousand calls leave no term reference behind (the next one made is the one made before them), and
    a Python thread keeps running while Prolog sleeps inside a call."""
    engine = shared_engine()
    lib = prolog_call._bind()

    def refs_after(n: int) -> int:
        for i in range(n):
            ECHO(f"a{i}", "b", float(i), i)
        fid = lib.PL_open_foreign_frame()
        try:
            return int(lib.PL_new_term_refs(1))
        finally:
            lib.PL_discard_foreign_frame(fid)

    assert prolog_call.native_in_use()
    before = engine.run_sync(lambda _: refs_after(0))
    assert engine.run_sync(lambda _: refs_after(10_000)) == before

    ticks = 0
    stop = threading.Event()

    def tick() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    sleeper = PrologCall("user", "sn_test_sleep", 2)
    t = threading.Thread(target=tick)
    t.start()
    try:
        start = ticks
        assert engine.run_sync(lambda _: sleeper(0.3)) == "done"
        assert ticks - start >= 20, ticks - start
    finally:
        stop.set()
        t.join()


def test_a_c_function_that_cannot_be_bound_leaves_the_ctypes_steps(native_module: Any, monkeypatch) -> None:
    """A library the C function cannot be bound to (an address missing) turns it off with a warning; calls go
    on through ctypes, with the same answers."""
    def refuse(*_: Any) -> None:
        raise ValueError("a null function address")

    expected = shared_engine().run_sync(lambda _: ECHO("a", "b", 1.0, 2))
    monkeypatch.setattr(native_module, "bind", refuse)
    try:
        assert prolog_call.use_native(True) is False and not prolog_call.native_in_use()
        assert shared_engine().run_sync(lambda _: ECHO("a", "b", 1.0, 2)) == expected
    finally:
        monkeypatch.undo()
        assert prolog_call.use_native(True)


# ---------------------------------------------------------------- a JSON value put as a term (call_json)

SAME_TERM = PrologCall("user", "sn_test_json_same", 3)


def json_pool() -> list[Any]:
    """Values of parsed JSON at the edges of the C function's common case."""
    hostile = [t for t in HOSTILE if not re.search("[\ud800-\udfff]", t)]  # a lone surrogate: the text's
    texts = [*hostile, "", "a", "é", "日本", "\U0001f600", "\x00", "a\x00b", "\x7f", "\u2028", "\U0010f800",
             "true", "false", "null", "@", "json", "=", "[]", "{}", "json([])", "0", "-1", "1.5", "1e5", " 1",
             "\\u0041", '"', "\\", "x" * 5000]
    numbers: list[Any] = [0, -1, 1, 7, 2**31, 2**62, 2**63 - 1, -(2**63), 0.0, -0.0, 1.5, 0.1, -2.25e-308,
                          5e-324, 1e16, 1e22, 1e-7, 1.7976931348623157e308, 123456789.123456789, -3.0]
    return [*texts, *numbers, True, False, None, [], {}, [[]], {"": None}]


def random_json(rng: random.Random, pool: list[Any], depth: int = 0) -> Any:
    r = rng.random()
    if depth > 5 or r < 0.5:
        return rng.choice(pool)
    if r < 0.75:
        return [random_json(rng, pool, depth + 1) for _ in range(rng.randint(0, 6))]
    keys = [k for k in pool if isinstance(k, str) and len(k) < 100]
    return {rng.choice(keys) if rng.random() < 0.6 else f"k{i}": random_json(rng, pool, depth + 1)
            for i in range(rng.randint(0, 6))}


def deep(levels: int) -> Any:
    value: Any = "bottom"
    for i in range(levels):
        value = [value] if i % 2 else {"down": value}
    return value


@pytest.fixture(scope="module")
def same_term() -> None:
    shared_engine().run_sync(lambda p: list(p.query(
        "assertz((user:sn_test_json_same(Text, Term, Out) :- "
        "sentinel_core:from_result_json(Text, Read), "
        "( Read == Term -> Out = same ; format(atom(Out), '~q <> ~q', [Read, Term]) )))")))


def built_and_read(value: Any) -> str | None:
    """What the term built in C is, against the term the value's JSON text reads as: "same", their texts, or
    None when the C function left the value to the text."""
    text = json_text(value)
    out = shared_engine().run_sync(lambda _: SAME_TERM.json_call(1, text, value))
    return None if out is NOT_NATIVE else out


def test_a_json_value_built_in_c_is_the_term_its_text_reads_as(native_module: Any, same_term: None) -> None:
    """Objects in their order (keys of every kind of text), arrays, hostile and non-ASCII texts, NUL, the
    texts "true", "null" and "[]" apart from true, null and [], integers to 64 bits, floats at their limits
    and -0.0, nested 255 levels: the term built from the parsed value is exactly (==) the one Prolog reads
    from the value's JSON text (``from_result_json/2``: a text value spelling a literal a string, a key an
    atom), for the edge values and 400 random documents."""
    rng = random.Random(5171)
    pool = json_pool()
    values = [*pool, *([v] for v in pool), {str(i): v for i, v in enumerate(pool)}, deep(255),
              *(random_json(rng, pool) for _ in range(400))]
    for value in values:
        assert built_and_read(value) == "same", repr(value)[:300]


def test_values_outside_the_common_case_are_left_to_the_text(native_module: Any, same_term: None) -> None:
    """A lone surrogate (or the escape character its stand-in begins with), an integer past 64 bits, NaN and
    the infinities, a tuple, bytes, a subclass of a text, number or dict, a key that is not text, nesting past
    256 levels, and any of these deep inside an object after members already built: the C function answers
    None (nothing built, nothing called) and the next value is built as before; with the C function off every
    value is left to the text."""
    odd: list[Any] = ["a\ud800b", "a\U0010f7ffb",
                      2**63, -(2**63) - 1, 2**200, math.nan, math.inf, -math.inf, (1, 2), b"x",
                      Text("t"), Real(1.5), Colour.RED, {1: "a"}, {None: 1}, object(), deep(257)]
    for value in odd:
        for wrapped in (value, [1, "a", value], {"a": [1, 2], "b": {"c": value}, "d": 3}):
            assert built_and_read(wrapped) is None, repr(wrapped)[:200]
        assert built_and_read({"after": [1, "x"]}) == "same"
    prolog_call.use_native(False)
    assert built_and_read({"a": 1}) is None
    prolog_call.use_native(True)
    assert built_and_read({"a": 1}) == "same"


def test_a_call_with_a_json_term_leaves_no_term_reference_behind(native_module: Any, same_term: None) -> None:
    """Built, left to the text half-way, or failed: the frame is discarded each time (the next term reference
    made is the one made before), and a predicate that raises is reported as through call()."""
    engine = shared_engine()
    lib = prolog_call._bind()
    doc = {"a": [1, 2.5, None, True, "x" * 100], "b": {"c": []}}
    half = {"a": [1, 2.5], "b": {"c": 2**70}}
    raises = PrologCall("user", "sn_test_raise", 2)

    def refs_after(n: int) -> int:
        for _ in range(n):
            assert SAME_TERM.json_call(1, "{}", doc) is not NOT_NATIVE
            assert SAME_TERM.json_call(1, "{}", half) is NOT_NATIVE
            with pytest.raises(prolog_call.PrologCallError, match="sn_test_raise raised error"):
                raises.json_call(0, doc)
        fid = lib.PL_open_foreign_frame()
        try:
            return int(lib.PL_new_term_refs(1))
        finally:
            lib.PL_discard_foreign_frame(fid)

    before = engine.run_sync(lambda _: refs_after(0))
    assert engine.run_sync(lambda _: refs_after(3_000)) == before
    with pytest.raises(TypeError):
        native_module.call_json(1, 2, ("a",), 0)
    with pytest.raises(TypeError):
        native_module.call_json(1, 2, ("a",), 0, 1)  # answer_json is a bool
    with pytest.raises(ValueError):
        native_module.call_json(1, 3, ("a", "b"), 2, True)  # the JSON argument past the inputs
    with pytest.raises(ValueError):
        native_module.call_json(1, 3, ("a", "b"), -2, True)
    with pytest.raises(ValueError):
        native_module.bind_json(*([0] * 17))


TERM_OF = PrologCall("user", "sn_test_term_of", 2)
WRITEQ = PrologCall("user", "sn_test_json_writeq", 2)
TEXT_OF = PrologCall("user", "sn_test_text_of", 2)


@pytest.fixture(scope="module")
def term_answers() -> None:
    shared_engine().run_sync(lambda p: list(p.query(
        "forall(member(C, ["
        "(user:sn_test_term_of(Text, T) :- term_string(T, Text)),"
        "(user:sn_test_text_of(Text, A) :- term_string(T, Text), sentinel_core:to_json_atom(T, A)),"
        "(user:sn_test_term_of_json(Text, T) :- "
        "sentinel_core:atom_json_term(Text, T, [true(true), false(false), null(@(null))])),"
        "(user:sn_test_json_writeq(J, Q) :- "
        "sentinel_core:atom_json_term(J, T, [true(true), false(false), null(@(null))]), "
        "format(atom(Q), '~k', [T]))"
        "]), assertz(C))")))


def read_both(prolog_text: str) -> tuple[Any, Any]:
    """The answer term of ``prolog_text`` read in C (NOT_NATIVE when left to the text), and what the text path
    gives: from_prolog_json of json_text.pl's text, or ("error", ...) when it refuses the term."""
    engine = shared_engine()
    native = engine.run_sync(lambda _: TERM_OF.json_call(-1, prolog_text))
    try:
        plain = from_prolog_json(engine.run_sync(lambda _: TEXT_OF(prolog_text)))
    except Exception as e:  # noqa: BLE001 - compared
        plain = ("error", type(e).__name__)
    return native, plain


def test_an_answer_term_read_in_c_is_the_value_of_its_json_text(
    native_module: Any, term_answers: None
) -> None:
    """Objects (K = V and K - V, keys atoms or strings, a key twice: the last value at the first place),
    lists, @(true), @(false), @(null), the atoms true, null and '[]' (texts), strings, texts that need
    escapes, non-ASCII and NUL, 64-bit integers, floats at their limits and -0.0, 255 levels: the value read
    in C equals what json.loads reads from the text json_text.pl writes, for these and for the answer terms
    of 200 random JSON documents read by Prolog."""
    cases = [
        "json([a=1, b-2, 'c d'=\"s\", \"k\"=x])", "json([a=1, b=2, a=3])", "json([])", "[]", "'[]'", "'{}'",
        "[@(true), @(false), @(null), true, false, null]", "'it''s \"q\" \\\\ \\n'", "\"str\\x00\\ing\"",
        "'caf\u00e9 \U0001f600 \u2028'", "9223372036854775807", "-9223372036854775808", "0.1", "-0.0",
        "1.0e300", "5.0e-324", "1.7976931348623157e308",
        "json([facts=[json([fact='p(a)', args=[a, 1, 2.5]])]])",
        "[[[[[]]]]]",
    ]
    for text in cases:
        native, plain = read_both(text)
        assert native is not NOT_NATIVE and native == plain, (text, native, plain)
        assert [type(x) for x in _leaves(native)] == [type(x) for x in _leaves(plain)], text
    nested = "x"
    for i in range(255):
        nested = f"[{nested}]" if i % 2 else f"json([k={nested}])"
    native, plain = read_both(nested)
    assert native == plain and native is not NOT_NATIVE
    rng = random.Random(6143)
    pool = json_pool()
    engine = shared_engine()
    reader = PrologCall("user", "sn_test_term_of_json", 2)
    read = 0
    for _ in range(200):
        value = random_json(rng, pool)
        text = json_text(value)
        native = engine.run_sync(lambda _: reader.json_call(-1, text))
        written = engine.run_sync(lambda _: TEXT_OF(WRITEQ(text)))  # the term, as Prolog text
        if native is NOT_NATIVE:  # a lone surrogate's escape (U+10F7FF): from_prolog_json's to map
            assert "\U0010f7ff" in text, repr(value)[:300]
            continue
        read += 1
        assert native == from_prolog_json(written), repr(value)[:300]
    assert read >= 100, read


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in (k, *_leaves(v))]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def test_answer_terms_outside_the_common_case_are_left_to_the_text(
    native_module: Any, term_answers: None
) -> None:
    """A variable, a compound that is no JSON, @(other), a key that is a number, a pair of another functor, a
    partial list, json/1 of no list, an integer past 64 bits, a rational, a float NaN or infinite, a stand-in
    of a lone surrogate (its escape character), 257 levels, and a cyclic term: NOT_NATIVE (nothing returned
    half-read), and the next answer is read."""
    engine = shared_engine()
    odd = ["_", "f(x)", "@(maybe)", "json([1=a])", "json([a:b])", "[a|_]", "json(x)", "json([a=1|_])",
           "123456789012345678901234567890", "1r3", "1.5NaN", "1.0Inf", "-1.0Inf", "'\U0010f7ff\U0010f800'",
           "[1, 2, f(x)]",
           "json([a=1, b=g(y)])"]
    deep257 = "x"
    for _ in range(257):
        deep257 = f"[{deep257}]"
    for text in [*odd, deep257]:
        native, _ = read_both(text)
        assert native is NOT_NATIVE, text
        assert read_both("json([after=1])")[0] == {"after": 1}
    engine.run_sync(lambda p: list(p.query(
        "assertz((user:sn_test_cyclic(_, X) :- X = [a|X])), assertz((user:sn_test_cyclic2(_, json([k=X])) :- "
        "X = f(X)))")))
    for name in ("sn_test_cyclic", "sn_test_cyclic2"):
        assert engine.run_sync(lambda _, n=name: PrologCall("user", n, 2).json_call(-1, "x")) is NOT_NATIVE


def test_answers_leave_no_text_on_prologs_stack_of_strings(native_module: Any, term_answers: None) -> None:
    """Every text read from Prolog with BUF_STACK (an answer, an exception's text, each text of an answer
    term) is released after the call: the thread's mark of its stack of strings is where it was after
    thousands of calls through the C function, through ctypes and with JSON terms. Before, one text a call
    stayed, and about a million calls on one thread aborted the process ("Too many stacked strings"; a
    gateway's engine thread makes a few calls a tool call)."""
    engine = shared_engine()
    lib = prolog_call._bind()
    raises = PrologCall("user", "sn_test_raise", 2)
    facts = ("json([facts=[json([fact='p(a)', predicate=p, args=[a, \"b\", 1, 2.5, @(null)]])], "
             "unreadable=[]])")

    def mark() -> int:
        m = ctypes.c_size_t()
        lib.PL_mark_string_buffers(ctypes.byref(m))
        return m.value

    def calls(n: int) -> int:
        for i in range(n):
            assert ECHO(f"a{i}", "b", 1.0, 2)
            assert (TERM_OF.json_call(-1, facts) is NOT_NATIVE) is not prolog_call.native_in_use()
            with pytest.raises(prolog_call.PrologCallError):
                raises("x")
        return mark()

    for on in (True, False):
        prolog_call.use_native(on)
        before = engine.run_sync(lambda _: calls(0))
        assert engine.run_sync(lambda _: calls(2_000)) == before, f"native {on}"
    prolog_call.use_native(True)


def test_texts_passed_as_atoms_are_collected(native_module: Any, same_term: None) -> None:
    """A text argument (and each text of a JSON term built in C) becomes an atom that atom garbage collection
    takes once the call is over, on both paths. PL_put_chars(PL_ATOM) left every such atom registered: each
    distinct text any call passed (a session's facts mirrored, a result's strings, an extraction's arguments)
    stayed in the atom table for good, ~7 KB a call of the airline's guarded path."""
    engine = shared_engine()

    def left(marker: str) -> int:
        q = (f"garbage_collect_atoms, aggregate_all(count, (current_atom(A), A \\== '{marker}', "
             f"sub_atom(A, _, _, _, '{marker}')), N)")  # (the marker itself: this query's own atom)
        return int(engine.run_sync(lambda p: next(iter(p.query(q, maxresult=1))))["N"])

    for on in (True, False):
        prolog_call.use_native(on)
        marker = f"collected{int(on)}x{random.getrandbits(40):x}"

        def calls() -> None:
            for i in range(500):
                assert ECHO(f"{marker}-{i}-é", f"{marker}/{i}", 1.0, 2)
                doc = {"k": f"{marker}:{i}", "l": [f"{marker};{i}", {f"{marker}+{i}": None}]}
                SAME_TERM.json_call(1, json_text(doc), doc)

        engine.run_sync(lambda _: calls())
        assert left(marker) == 0, f"native {on}"
    prolog_call.use_native(True)
