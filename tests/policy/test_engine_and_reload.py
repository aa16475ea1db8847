"""Engine limits, rulebase errors with file and line, hot reload that keeps the old rulebase."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.guard import PolicyGuard, PolicySettings
from sentinel_mcp.policy.rulebase import RulebaseError, RulebaseHolder, load_rulebase

pytestmark = pytest.mark.timeout(60)


def call(name: str, args: dict | None = None, session: str = "s1") -> ToolCall:
    server, _, tool = name.partition("__")
    return ToolCall(name=name, server=server, tool=tool, arguments=args or {}, session_id=session)


LOOPING = """
loop(X) :- loop(X).
grow(X) :- grow(f(X)).
guard('t__loop', [], loop(1)).
guard('t__grow', [], grow(a)).
guard('t__error', [n = N], (X is N + 1, X > 0)).
guard('t__ok', [n = N], (integer(N), N =< 10)).
"""


async def test_looping_and_erroring_guards_deny(tmp_path: Path) -> None:
    rb = tmp_path / "loop.pl"
    rb.write_text(LOOPING)
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], inference_limit=200_000)
    try:
        for name in ("t__loop", "t__grow"):
            d = await g.decide(call(name))
            assert isinstance(d, Deny) and "inference limit" in d.reason, d
        d = await g.decide(call("t__error", {"n": "abc"}))  # arithmetic on an atom: a Prolog error
        assert isinstance(d, Deny) and "could not be evaluated" in d.reason
        d = await g.decide(call("t__error", {"n": {"nested": [1, 2]}}))  # malformed argument shape
        assert isinstance(d, Deny)
        assert isinstance(await g.decide(call("t__ok", {"n": 3})), Allow)
        d = await g.decide(call("t__ok", {"n": 11}))
        assert isinstance(d, Deny)
        d = await g.decide(call("t__ok", {}))  # missing argument
        assert isinstance(d, Deny) and "missing argument n" in d.unmet
        # the engine still answers after all that
        assert isinstance(await g.decide(call("t__ok", {"n": 1})), Allow)
    finally:
        await g.close()


BROKEN = """ok(1).
bad(X) :- foo(X.
guard('t__x', [], undefined_thing(1)).
askable(q(X), "", yes_no, []).
binding(b(X, Y), tool('t__read', [id = X]), extract([Z = '/a']), []).
askable(r(X, Y), "Pick for ~w", colour, []).
"""


async def test_rulebase_errors_have_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "broken.pl"
    f.write_text(BROKEN)
    with pytest.raises(RulebaseError) as ei:
        await load_rulebase(shared_engine(), [f])
    got = {
        (p.line, p.message.split(":")[0].split(" (")[0]) for p in ei.value.problems if p.severity == "error"
    }
    assert all(p.file == str(f) for p in ei.value.problems)
    assert (2, "syntax error") in got
    assert (3, "call to undefined predicate undefined_thing/1") in got
    assert any(line == 4 and "askable without a question" in m for line, m in got)
    assert any(line == 5 and "extraction" in m for line, m in got)
    assert any(line == 6 and "askable type" in m for line, m in got)


async def test_hot_reload_keeps_old_rulebase_on_broken_file(tmp_path: Path) -> None:
    f = tmp_path / "p.pl"
    f.write_text("guard('t__ok', [n = N], N =< 10).\n")
    g = await make_guard(None, tmp_path / "facts.db", files=[f])
    try:
        v1 = g.version
        assert isinstance(await g.decide(call("t__ok", {"n": 5})), Allow)
        f.write_text("guard('t__ok', [n = N], N =< 1.\n")  # broken: missing parenthesis
        assert await g.rulebases.check_for_changes() is False
        assert g.version == v1
        assert g.rulebases.last_error is not None and f"{f}:1:" in g.rulebases.last_error
        assert isinstance(await g.decide(call("t__ok", {"n": 5})), Allow)  # old policy still active
        f.write_text("guard('t__ok', [n = N], N =< 1).\n")
        assert await g.rulebases.check_for_changes() is True
        assert g.version != v1 and g.rulebases.last_error is None
        assert isinstance(await g.decide(call("t__ok", {"n": 5})), Deny)
    finally:
        await g.close()


async def test_watcher_picks_up_changes(tmp_path: Path) -> None:
    f = tmp_path / "p.pl"
    f.write_text("guard('t__ok', [], true).\n")
    holder = RulebaseHolder(shared_engine(), [f], poll_interval=0.05)
    await holder.reload()
    v1 = holder.current.version
    holder.start_watching()
    try:
        f.write_text("guard('t__ok', [], fail).\n")
        for _ in range(200):
            if holder.current.version != v1:
                break
            await asyncio.sleep(0.05)
        assert holder.current.version != v1
    finally:
        await holder.stop_watching()


async def test_shipped_rulebases_compose_and_cap_llm_tokens(tmp_path: Path) -> None:
    from sentinel_mcp.paths import RULEBASES_DIR

    files = sorted(RULEBASES_DIR.glob("*.pl"))
    assert RULEBASES_DIR / "default.pl" in files and RULEBASES_DIR / "airline.pl" in files
    g = await make_guard(None, tmp_path / "facts.db", files=files)
    try:
        assert g.rulebases.loaded, g.load_error
        assert isinstance(
            await g.decide(call("llm__llm_generate", {"prompt": "hi", "max_tokens": 512})), Allow
        )
        assert isinstance(await g.decide(call("llm__llm_generate", {"prompt": "hi"})), Allow)  # default 256
        d = await g.decide(call("llm__llm_generate", {"prompt": "hi", "max_tokens": 4096}))
        assert isinstance(d, Deny) and "max_tokens must be between 1 and 1024" in d.unmet
        d = await g.decide(call("llm__llm_generate", {"prompt": "hi", "max_tokens": "lots"}))
        assert isinstance(d, Deny)
        assert isinstance(await g.decide(call("sentinel__sentinel_query", {"goal": "x"})), Allow)
    finally:
        await g.close()


async def test_blocking_or_stopping_builtins_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "bad.pl"
    f.write_text("guard('t__a', [], sleep(100)).\nslow :- findall(X, (read(X)), _).\nstop :- halt.\n")
    with pytest.raises(RulebaseError) as ei:
        await load_rulebase(shared_engine(), [f])
    got = {(p.line, p.message.split(" is ")[0]) for p in ei.value.problems}
    assert {(1, "sleep/1"), (2, "read/1"), (3, "halt/0")} <= got



HEAVY = """guard('t__power', [n = N], (X is 7^N, X > 0)).
guard('t__star', [n = N], (X is 7**(N*10), X > 0)).
guard('t__shift', [n = N], (X is 1 << N, X > 0)).
guard('t__square', [n = N], squared(N, 40)).
squared(_, 0) :- !.
squared(X, K) :- Y is X * X + 2, K1 is K - 1, squared(Y, K1).
guard('t__ok', [n = N], (integer(N), N =< 40, X is 2^64, Y is 10^300, Y > X)).
"""


async def test_one_inference_of_unbounded_work_is_bounded(tmp_path: Path) -> None:
    """One inference can be minutes of work (red team "draft", finding 7): an integer from 7^N with N = 10^8
    from the call's arguments (seconds of GMP, then a minute to write into the proof, which no alarm can
    interrupt), a shift, a squaring loop. Integers are bounded (100,000 bits; a power or shift is refused
    before it is computed): each denies at once, and the engine answers the next decision."""
    rb = tmp_path / "heavy.pl"
    rb.write_text(HEAVY)
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db", seeds={},
                    settings=PolicySettings(guard_timeout=20.0, confirm_ttl=300.0))
    await g.start(watch=False)
    try:
        assert g.load_error is None, g.load_error
        for name, n in [("t__power", 10**8), ("t__star", 10**8), ("t__shift", 10**9), ("t__square", 3)]:
            d = await g.decide(call(name, {"n": n}))
            assert isinstance(d, Deny) and "could not be evaluated" in d.reason, (name, d)
        # the engine did none of that work: the next decision is answered
        assert isinstance(await g.decide(call("t__ok", {"n": 3})), Allow)
    finally:
        await g.close()


async def test_a_rulebase_whose_own_arithmetic_makes_a_huge_integer_is_refused_with_its_line(tmp_path):
    rb = tmp_path / "huge.pl"
    rb.write_text("guard('t__ok', [n = N], integer(N)).\nguard('t__huge', [], (X is 7^(10^8), X > 0)).\n")
    said = r"huge\.pl:2: error: arithmetic in a rulebase makes integers of at most"
    with pytest.raises(RulebaseError, match=said):
        await load_rulebase(shared_engine(), [rb])


class EditsDuringLoad:
    """The real engine, but each of its first ``times`` loads finds the file edited first (an editor saving
    while the holder loads): the interleaving forced, the engine unchanged."""

    def __init__(self, engine: object, f: Path, texts: list[str]) -> None:
        self.engine, self.f, self.texts = engine, f, list(texts)

    def __getattr__(self, name: str) -> object:
        return getattr(self.engine, name)

    async def load(self, module: str, files: list[str]) -> object:
        if self.texts:
            self.f.write_text(self.texts.pop(0))
        return await self.engine.load(module, files)  # type: ignore[attr-defined]


async def test_a_file_edited_while_it_loads_is_loaded_again_under_its_texts_name(tmp_path: Path) -> None:
    """A version is named by the digest of its files, taken before the engine reads them: an edit landing
    between had the engine decide on the new text under the old text's name (the audit's policy_version then
    names rules that did not decide). Now the load is started again, so name and text agree."""
    from sentinel_mcp.policy.rulebase import content_version

    f = tmp_path / "p.pl"
    f.write_text("guard('t__ok', [], true).\n")
    holder = RulebaseHolder(EditsDuringLoad(shared_engine(), f, ["guard('t__ok', [], fail).\n"]), [f])  # type: ignore[arg-type]
    try:
        await holder.reload()
        assert holder.current.version == content_version([f])
        assert "fail" in f.read_text()
    finally:
        await holder.unload_all()


async def test_a_file_that_keeps_changing_while_it_loads_is_not_taken(tmp_path: Path) -> None:
    f = tmp_path / "p.pl"
    f.write_text("guard('t__ok', [], true).\n")
    engine = EditsDuringLoad(shared_engine(), f, [])
    holder = RulebaseHolder(engine, [f])  # type: ignore[arg-type]
    try:
        await holder.reload()
        v1 = holder.current.version
        engine.texts = [f"guard('t__ok', [], fail). % {i}\n" for i in range(10)]
        f.write_text("guard('t__ok', [], fail).\n")
        assert await holder.reload(cause="hot reload: changed p.pl") is False
        assert holder.current.version == v1 and "changed while it loaded" in (holder.last_error or "")
        assert len(engine.texts) == 10 - 3  # three tries, then said
    finally:
        await holder.unload_all()
