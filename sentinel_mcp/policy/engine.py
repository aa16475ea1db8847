"""The Prolog engine: what the policy asks of SWI-Prolog (rulebases, sessions' facts, decisions), on the
thread that owns it (``engine_thread.EngineThread``).

There is one engine per process (``shared_engine()``). Rulebases and sessions live in distinct Prolog modules,
so several guards (tests, reloads) share the engine without seeing each other's clauses or facts.

A decision runs on the caller's own thread when it may (``EngineThread.try_now``: nothing queued or running,
and the thread has a SWI-Prolog engine of its own), as one direct C call (``PrologCall``), and only when it is
bounded small: arguments up to ``INLINE_ARGUMENT_CHARS`` and under ``INLINE_INFERENCES`` (a pass that needs
more is decided again on the engine thread with the whole limit); so is the rendering of a proof decided so.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, TypeVar

from sentinel_mcp.core.log_cadence import worth_saying
from sentinel_mcp.policy.engine_thread import EngineError, EngineThread, settle_soon
from sentinel_mcp.policy.load_limit import LOAD_INFERENCE_LIMIT
from sentinel_mcp.policy.prolog_call import NOT_NATIVE, PrologCall, PrologCallError
from sentinel_mcp.policy.rulebase_includes import loader_files
from sentinel_mcp.policy.prolog_text import float_text, from_prolog_json, json_atom, json_text, quote_atom
from sentinel_mcp.policy.swipl_location import import_pyswip_core
from sentinel_mcp.policy.tagged_arguments import call_args_text

__all__ = ["DEFAULT_INFERENCE_LIMIT", "LOAD_INFERENCE_LIMIT", "EngineError", "KeptProof", "PrologEngine",
           "call_args_text", "shared_engine"]

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_INFERENCE_LIMIT = 2_000_000
_SN_DECIDE = PrologCall("sentinel_core", "sn_decide", 9)
_SN_DECIDE_COMPACT = PrologCall("sentinel_core", "sn_decide_compact", 9)
_SN_DECIDE_CAPPED = PrologCall("sentinel_core", "sn_decide_capped", 10)
_SN_DECIDE_INLINE = PrologCall("sentinel_core", "sn_decide_inline", 9)
_SN_RENDER_KEPT = PrologCall("sentinel_core", "sn_render_kept_proof", 2)
_SN_KEPT_TERM = PrologCall("sentinel_core", "sn_kept_proof_term", 2)
_SN_FORGET_KEPT = PrologCall("sentinel_core", "sn_forget_kept_proof", 2)
_SN_EXTRACT = PrologCall("sentinel_core", "sn_extract", 5)
_SN_EXTRACT_TERM = PrologCall("sentinel_core", "sn_extract_term", 5)
_SN_MIRROR = PrologCall("sentinel_core", "sn_mirror", 3)
_SN_EFFECTS = PrologCall("sentinel_core", "sn_effects", 4)
_SN_ABSENT = PrologCall("sentinel_core", "sn_absent", 5)
_SN_EFFECT_ACTIONS = PrologCall("sentinel_core", "sn_effect_actions", 6)
_SN_INVALIDATE = PrologCall("sentinel_core", "sn_invalidate", 4)
_SN_RETRACT = PrologCall("sentinel_core", "sn_retract", 3)
_SN_FACT_JSON = PrologCall("sentinel_core", "sn_fact_json", 2)


def _sn_decide_capped_written(*args: Any) -> str:
    """sn_decide_capped/10 writing the proof (a capped pass on the caller's thread, ``_pass_here``)."""
    return _SN_DECIDE_CAPPED("false", *args)


# A decision on the caller's thread (try_now) blocks that thread (an event loop's) while it runs: it is tried
# there only for arguments up to this many characters (their JSON is parsed in Prolog), and under this many
# inferences (about a millisecond; the airline cancel guard's allow takes ~1,400)
INLINE_ARGUMENT_CHARS = 4096
INLINE_INFERENCES = 20_000


@dataclass(frozen=True)
class GuardWalk:
    """What one of the checker's walks found in each guard, and the guards it could not finish."""

    found: list[dict[str, Any]]
    unfinished: list[dict[str, Any]]


GUARD_WALKS = (
    "sn_tautological_guards", "sn_negated_arguments", "sn_absent_negations", "sn_unsure_blind_reads",
    "sn_unconditional_guards",
)


@dataclass(frozen=True)
class KeptProof:
    """A proved call's proof tree, kept in the engine until it is rendered (``PrologEngine.render_kept``)."""

    id: int
    written: "asyncio.Future[Any] | None" = field(default=None, compare=False)  # the tree, written behind
    small: bool = False  # proved under INLINE_INFERENCES (its tree may be written on the caller's thread)


class PrologEngine(EngineThread):
    """The engine thread (``EngineThread``) and what the policy asks of Prolog: rulebases, sessions' facts,
    decisions."""

    # confirmations taken so far (``take_confirmation``): a decision that finds none to take, while this moved
    # since its proof began, may have been proved on one another call took (guard.py decides it again)
    confirmations_taken = 0
    # results not read for their size (fact_terms.pl's extract_inference_limit)
    results_too_large = 0


    # ---------------------------------------------------------------- queries
    @staticmethod
    def _first_row(prolog: Any, goal: str, failed: str) -> dict[str, Any]:
        """The first solution of ``goal``; a Prolog error or no solution is an ``EngineError``."""
        from pyswip.prolog import PrologError

        try:
            rows = list(prolog.query(goal, maxresult=1))
        except PrologError as e:
            raise EngineError(f"prolog error: {e}") from None
        if not rows:
            raise EngineError(f"{failed}: {goal[:200]}")
        return dict(rows[0])

    @staticmethod
    def _json_query(prolog: Any, goal: str) -> dict[str, Any]:
        """Run ``goal`` whose last argument is Out (a JSON atom); return the decoded object."""
        out = PrologEngine._first_row(prolog, goal, "query failed")["Out"]
        if isinstance(out, bytes):
            out = out.decode()
        return from_prolog_json(str(out))

    @staticmethod
    def _run_goal(prolog: Any, goal: str) -> None:
        PrologEngine._first_row(prolog, goal, "goal failed")

    async def json_query(self, goal: str) -> dict[str, Any]:
        return await self.run(lambda p: self._json_query(p, goal))

    async def goal(self, goal: str) -> None:
        await self.run(lambda p: self._run_goal(p, goal))

    async def direct(self, call: PrologCall, *args: str | float | int) -> dict[str, Any]:
        """``call(*args)`` on the engine thread, its JSON answer decoded: one direct call (``PrologCall``).
        pyswip's query text was quoted here, read by Prolog and answered through dozens of ctypes calls, each
        letting go of the interpreter and waiting for a busy event loop to give it back."""

        def job(_: Any) -> dict[str, Any]:
            try:
                out: dict[str, Any] = from_prolog_json(call(*args))
            except PrologCallError as e:
                raise EngineError(f"prolog error: {e}") from None
            return out

        return await self.run(job)

    # ---------------------------------------------------------------- typed calls
    async def load(self, module: str, files: list[str], limit: int = LOAD_INFERENCE_LIMIT) -> dict[str, Any]:
        """Load rulebase files into ``module`` and finish it, within ``limit`` inferences for the whole (a
        load that does not end is an error naming the file, never a held engine); returns {errors: [...],
        warnings: [...]}. The caller unloads the module when it has errors."""
        spec = await asyncio.to_thread(loader_files, files)  # and what they include (rulebase_includes.py)
        return await self.json_query(
            f"sentinel_core:sn_load_bounded({quote_atom(module)}, {json_atom(spec)}, {int(limit)}, Out)"
        )

    async def unload(self, module: str) -> None:
        await self.goal(f"sentinel_core:sn_unload({quote_atom(module)})")

    async def info(self, module: str) -> dict[str, Any]:
        return await self.json_query(f"sentinel_core:sn_info({quote_atom(module)}, Out)")

    async def citations(self, module: str) -> dict[str, Any]:
        """Every citation of a policy document (require/3, cites/2), and the requirements without one."""
        return await self.json_query(f"sentinel_core:sn_citations({quote_atom(module)}, Out)")

    async def confirmations(self, module: str) -> list[dict[str, Any]]:
        """For each guard with a confirmation: the call's arguments, those it shows, those it shows raw."""
        return list((await self.json_query(f"sentinel_core:sn_confirmations({quote_atom(module)}, Out)"))
                    ["confirmations"])

    async def guard_walk(self, predicate: str, module: str) -> GuardWalk:
        """One of the checker's walks over every guard (``sn_tautological_guards``: goals that hold for every
        call; ``sn_negated_arguments``: a negation over the caller's text; ``sn_absent_negations``: a negated
        fact read absent_on_error; ``sn_unsure_blind_reads``: an established fact read where an unsure one
        is not seen; ``sn_unconditional_guards``: every guard, whether it holds on nothing): its findings
        (tool, file, line and the walk's own fields) and the guards it could not finish (tool, file, line,
        unfinished: the reason; unfinished_walks.pl)."""
        if predicate not in GUARD_WALKS:
            raise ValueError(f"no such walk: {predicate}")
        answer = await self.json_query(f"sentinel_core:sn_check_walk({predicate}, {quote_atom(module)}, Out)")
        found = next(v for k, v in answer.items() if k != "unfinished")
        return GuardWalk(found=list(found), unfinished=list(answer["unfinished"]))

    async def unreached_rules(self, module: str) -> dict[str, Any]:
        """Unreached rules, undefined ``:- public`` names, unfinished ('' or why): unreachable_rules.pl"""
        return await self.json_query(f"sentinel_core:sn_check_walk(sn_unreached_rules, {quote_atom(module)}, "
                                     "Out)")

    async def tool_sites(self, module: str) -> list[dict[str, Any]]:
        out = await self.json_query(f"sentinel_core:sn_tool_sites({quote_atom(module)}, Out)")
        return list(out["sites"])

    async def decide(
        self,
        rb: str,
        session: str,
        now: float,
        tool: str,
        arguments: dict[str, Any],
        digest: str,
        version: str,
        limit: int = DEFAULT_INFERENCE_LIMIT,
        *,
        fast: bool = True,
    ) -> dict[str, Any]:
        """One proof pass of a call's guards. ``fast`` (the default): compiled rules, called directly through
        the C interface (on the caller's thread when it may: ``try_now``); otherwise the reference path (every
        rule interpreted, the goal sent as query text), which the benchmark and the differential tests compare
        it with."""
        if not fast:
            return await self.json_query(
                f"sentinel_core:sn_decide_interpreted({quote_atom(rb)}, {quote_atom(session)}, "
                f"{float_text(now)}, "
                f"{quote_atom(tool)}, {json_atom(arguments)}, {quote_atom(digest)}, {quote_atom(version)}, "
                f"{int(limit)}, Out)"
            )
        key = (rb, session, float(now), tool, call_args_text(arguments), digest, version)
        here = self._decide_now(False, key, int(limit))
        if here is not None:
            return here

        def job(_: Any) -> dict[str, Any]:
            try:
                out = _SN_DECIDE(*key, int(limit))
            except PrologCallError as e:
                raise EngineError(f"prolog error: {e}") from None
            return from_prolog_json(out)

        return await self.run(job)

    def _decide_now(self, compact: bool, key: tuple[Any, ...], limit: int) -> dict[str, Any] | None:
        """A pass on the caller's thread (see the module's docstring), or None: it is to run on the engine's.
        """
        ran, out = self._pass_here(compact, key, limit)
        return out if ran else None

    def _pass_here(
        self, compact: bool, key: tuple[Any, ...], limit: int
    ) -> tuple[bool, dict[str, Any] | None]:
        """(ran, answer) of a pass tried on the caller's thread: (False, None) when it did not run there (the
        engine is busy, the thread has no engine, the arguments are large); (True, None) when it ran but must
        be decided again on the engine thread (over the cap, or an error the cap may have caused)."""
        ran, text = self._text_here(compact, key, limit)
        if not ran or text is None:
            return False, None
        return self._read_here(text, limit)

    def _text_here(self, compact: bool, key: tuple[Any, ...], limit: int) -> tuple[bool, str | None]:
        """The answer text of a pass tried on the caller's thread, as ``_pass_here``'s (False, None) when it
        did not run there."""
        if len(key[4]) > INLINE_ARGUMENT_CHARS:
            return False, None
        cap = limit if limit < INLINE_INFERENCES else INLINE_INFERENCES
        if cap < limit:
            call = _SN_DECIDE_INLINE if compact else _sn_decide_capped_written
        else:
            call = _SN_DECIDE_COMPACT if compact else _SN_DECIDE
        try:
            return self.try_call(call, *key, cap)
        except PrologCallError as e:
            raise EngineError(f"prolog error: {e}") from None

    @staticmethod
    def _read_here(text: str, limit: int) -> tuple[bool, dict[str, Any] | None]:
        """``_pass_here``'s answer of a pass that ran on the caller's thread and answered ``text``."""
        out: dict[str, Any] = answer_of(text)
        cap = limit if limit < INLINE_INFERENCES else INLINE_INFERENCES
        # over the cap, or an error the cap may have caused: decided again on the engine thread
        if cap < limit and out.get("status") in ("over_limit", "error"):
            return True, None
        return True, out

    def decide_compact_here(
        self,
        rb: str,
        session: str,
        now: float,
        tool: str,
        arguments: dict[str, Any],
        digest: str,
        version: str,
        limit: int = DEFAULT_INFERENCE_LIMIT,
    ) -> tuple[bool, dict[str, Any] | None]:
        """``decide_compact`` (no proof written behind) as one call on the caller's thread, when it may run
        there: (ran, answer) as ``_pass_here``; a proved call's ``tree`` is then a small ``KeptProof``. A
        caller given (False, None) or (True, None) decides through ``decide_compact`` (with ``here=False``
        after (True, None): the engine thread, with the whole limit)."""
        key = (rb, session, float(now), tool, call_args_text(arguments), digest, version)
        ran, text = self._text_here(True, key, int(limit))
        if not ran or text is None:
            return False, None
        m = _KEPT_ANSWER.fullmatch(text)
        if m is not None:  # the common answer (an allow, its proof kept), read at once: answer_of's
            kept = KeptProof(int(m.group(1)), None, small=True)
            return True, {"status": "proved", "tree": kept, "needs": [], "unmet": [], "tentative": [],
                          "violations": []}
        ran, out = self._read_here(text, int(limit))
        if out is not None:
            kept_id = _kept_id(out)
            if kept_id is not None:
                out["tree"] = KeptProof(kept_id, None, small=True)
        return ran, out

    async def decide_compact(
        self,
        rb: str,
        session: str,
        now: float,
        tool: str,
        arguments: dict[str, Any],
        digest: str,
        version: str,
        limit: int = DEFAULT_INFERENCE_LIMIT,
        *,
        write_behind: bool = False,
        try_here: bool = True,
    ) -> dict[str, Any]:
        """``decide`` on the fast path, answered without writing a proved call's tree: its ``tree`` is then a
        ``KeptProof``, which ``render_kept`` writes when the proof is read (once). ``write_behind`` (a reader
        that always reads it, like the gateway's audit): the engine thread writes it right after answering, in
        the same job, while the caller goes on (no second hop). ``try_here=False``: on the engine thread (a
        pass ``decide_compact_here`` found over its cap)."""
        key = (rb, session, float(now), tool, call_args_text(arguments), digest, version)
        loop = asyncio.get_running_loop()
        written: asyncio.Future[Any] | None = loop.create_future() if write_behind else None
        if written is not None:
            written.add_done_callback(_retrieved)
        here = self._decide_now(True, key, int(limit)) if try_here else None
        if here is not None:
            kept_id = _kept_id(here)
            if isinstance(kept_id, int):
                here["tree"] = KeptProof(kept_id, written, small=True)
            if written is not None:  # written by the engine thread, after this decision
                self.submit(lambda _: _write_kept(loop, written, kept_id))
            return here
        answer: asyncio.Future[dict[str, Any]] = loop.create_future()

        def job(_: Any) -> None:
            try:
                out: Any = answer_of(_SN_DECIDE_COMPACT(*key, int(limit)))
                ok = True
            except PrologCallError as e:
                ok, out = False, EngineError(f"prolog error: {e}")
            except BaseException as e:  # noqa: BLE001 - the caller gets it
                ok, out = False, e
            kept_id = _kept_id(out) if ok else None
            if isinstance(kept_id, int):
                out["tree"] = KeptProof(kept_id, written)
            settle_soon(loop, answer, ok, out)
            if written is not None:
                _write_kept(loop, written, kept_id)

        self.submit(job)
        return await answer

    async def render_kept(self, kept: KeptProof) -> Any:
        """The JSON tree of a proof ``decide_compact`` kept (an EngineError if it was read already, or
        dropped: the engine keeps the last 1024)."""
        if kept.written is not None:
            return await kept.written

        def job(_: Any) -> Any:
            try:
                return _kept_tree(kept.id)
            except PrologCallError as e:
                raise EngineError(f"the proof could not be written: {e}") from None

        if kept.small:  # a proof of a bounded size: written on this thread when the engine is free
            try:
                ran, tree = self.try_now(job)
            except EngineError:  # more than this thread's stacks (engine_thread.py): the engine thread's
                ran = False
            if ran:
                return tree
        return await self.run(job)

    async def dump_session(
        self, session: str, hidden_predicates: Iterable[str] = (), hidden_tools: Iterable[str] = (),
        hidden_facts: Iterable[str] = (),
    ) -> str:
        """The session's facts as lines ``Fact<TAB>Expires<TAB>Provenance`` (for a query worker's copy),
        without the facts of ``hidden_predicates``, the fetch markers of ``hidden_tools`` and the facts whose
        text is in ``hidden_facts``."""
        preds = "[" + ",".join(quote_atom(p) for p in sorted(hidden_predicates)) + "]"
        tools = "[" + ",".join(quote_atom(t) for t in sorted(hidden_tools)) + "]"
        facts = "[" + ",".join(quote_atom(f) for f in sorted(hidden_facts)) + "]"

        def job(p: Any) -> str:
            rows = list(
                p.query(
                    f"sentinel_core:sn_dump_session({quote_atom(session)}, {preds}, {tools}, {facts}, Out)",
                    maxresult=1,
                )
            )
            out = rows[0]["Out"] if rows else ""
            return out.decode() if isinstance(out, bytes) else str(out)

        return await self.run(job)

    async def context_check(
        self, rb: str, session: str, now: float, name: str, value: Any, limit: int = DEFAULT_INFERENCE_LIMIT
    ) -> dict[str, Any]:
        return await self.json_query(
            f"sentinel_core:sn_context_check({quote_atom(rb)}, {quote_atom(session)}, {float_text(now)}, "
            f"{quote_atom(name)}, {json_atom(value)}, {int(limit)}, Out)"
        )

    async def extract(
        self, rb: str, tool: str, arguments: dict[str, Any], result: Any
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """The facts the bindings of ``tool`` yield from a result, and the bindings (``Name/Arity``) it could
        not be read for (``fact_terms.pl``: their facts stay unknown)."""
        args = json_text(arguments)

        def job(_: Any) -> dict[str, Any]:
            try:
                # the result and the facts as terms, built and read in C, else (not the C function's common
                # case) as JSON text, parsed and written by Prolog
                out: dict[str, Any] = _SN_EXTRACT_TERM.json_call(3, rb, tool, args, result)
                if out is NOT_NATIVE:
                    out = from_prolog_json(_SN_EXTRACT(rb, tool, args, json_text(result)))
            except PrologCallError as e:
                raise EngineError(f"prolog error: {e}") from None
            except RecursionError:  # nested past the C converter's 256 levels and the text's writer
                raise EngineError("the result is nested too deep to read") from None
            return out

        out = await self.run(job)
        if out.get("too_large"):  # fact_terms.pl: read within a bound of inferences, or not at all
            self.results_too_large += 1
            if worth_saying(self.results_too_large - 1, self.results_too_large):
                log.warning("a result of %s is too large to read within %s inferences: its bindings' facts "
                            "stay unknown (%d such results; a rulebase raises the bound with "
                            "option(extract_inference_limit(N)))",
                            tool, out["too_large"], self.results_too_large)
            return [], [f"{u} (the result is too large to read)" for u in out.get("unreadable", [])]
        return list(out["facts"]), [str(u) for u in out.get("unreadable", [])]

    async def absent(self, rb: str, tool: str, arguments: dict[str, Any], text: str) -> list[dict[str, Any]]:
        """For a call of ``tool`` answered with an error of ``text``: the fetched markers, and no fact, of its
        bindings it means "not found" for (``fact_terms.pl``, sn_absent/5); the text is only compared."""
        out = await self.direct(_SN_ABSENT, rb, tool, json_text(arguments), text)
        return list(out["facts"])

    async def effects(self, rb: str, tool: str, arguments: dict[str, Any]) -> list[str]:
        out = await self.direct(_SN_EFFECTS, rb, tool, json_text(arguments))
        return list(out["invalidate"])

    async def effect_actions(
        self, rb: str, session: str, tool: str, arguments: dict[str, Any], now: float
    ) -> dict[str, list[str]]:
        """After a completed call: fact patterns to invalidate and fact texts to establish (``establish``
        conditions are read from the session's facts as they are before the invalidations)."""
        out = await self.direct(_SN_EFFECT_ACTIONS, rb, session, tool, json_text(arguments), float(now))
        return {"invalidate": list(out["invalidate"]), "establish": list(out["establish"])}

    async def assert_facts(self, session: str, facts: list[tuple[str, float | None, str]]) -> None:
        """Mirror facts (text, expires_at or None, provenance) into the session module, in one call."""
        if not facts:
            return
        if any("\n" in text or "\t" in text for text, _, _ in facts):  # not one a line: written as a list
            items = ",".join(
                f"f({quote_atom(text)},{_expiry(exp)},{quote_atom(prov)})" for text, exp, prov in facts
            )
            await self.goal(f"sentinel_core:sn_assert_all({quote_atom(session)}, [{items}])")
            return
        lines = "\n".join(f"{text}\t{_expiry(exp)}\t{prov}" for text, exp, prov in facts)
        await self.direct(_SN_MIRROR, session, lines)

    async def retract(self, session: str, pattern: str) -> list[str]:
        out = await self.direct(_SN_RETRACT, session, pattern)
        return list(out["removed"])

    async def retract_observed(self, session: str, fact_texts: list[str]) -> None:
        """Remove these facts from the session's mirror where they are observed ones (each text exact)."""
        if fact_texts:
            items = ",".join(quote_atom(t) for t in fact_texts)
            await self.goal(f"sentinel_core:sn_retract_observed({quote_atom(session)}, [{items}])")

    async def take_confirmation(self, session: str, tool: str, digest: str, version: str) -> list[str]:
        """Remove the confirmations of this call from the session's facts (their texts; [] when none),
        atomically: of two callers only one gets them. ``confirmations_taken`` counts the takes, moved inside
        the same job."""
        goal = (f"sentinel_core:sn_take_confirmation({quote_atom(session)}, {quote_atom(tool)}, "
                f"{quote_atom(digest)}, {quote_atom(version)}, Out)")

        def job(p: Any) -> list[str]:
            taken = [str(t) for t in self._json_query(p, goal)["taken"]]
            if taken:
                self.confirmations_taken += 1
            return taken

        return await self.run(job)

    async def invalidate(self, rb: str, session: str, pattern: str) -> list[str]:
        out = await self.direct(_SN_INVALIDATE, rb, session, pattern)
        return list(out["removed"])

    async def drop_session(self, session: str) -> None:
        await self.goal(f"sentinel_core:sn_drop_session({quote_atom(session)})")

    async def fact_json(self, fact_text: str) -> dict[str, Any]:
        """{fact: canonical text, predicate, args} of a ground fact written as Prolog text."""
        return await self.direct(_SN_FACT_JSON, fact_text)

    async def purge(self, session: str, now: float) -> None:
        await self.goal(f"sentinel_core:sn_purge({quote_atom(session)}, {float_text(now)})")


def _expiry(exp: float | None) -> str:
    return float_text(exp if exp is not None else float("inf"))


# the answer of a proved pass whose proof is kept: one fixed text around its id (answer_text/2 in
# call_decisions.pl), read without a JSON parse; any other answer is parsed
_KEPT_ANSWER = re.compile(
    r'\{"status":"proved","tree":\{"kept":([1-9][0-9]{0,17})\},"needs":\[\],"unmet":\[\],"tentative":\[\],'
    r'"violations":\[\]\}'
)


def answer_of(text: str) -> dict[str, Any]:
    """A decision pass's answer (the engine's JSON text) as a dict."""
    m = _KEPT_ANSWER.fullmatch(text)
    if m is not None:
        return {"status": "proved", "tree": {"kept": int(m.group(1))}, "needs": [], "unmet": [],
                "tentative": [], "violations": []}
    out: dict[str, Any] = from_prolog_json(text)
    return out


def _kept_id(out: dict[str, Any]) -> int | None:
    """The id of a proved pass's kept proof ({"kept": Id} as its tree), or None."""
    tree = out.get("tree")
    kept = tree.get("kept") if out.get("status") == "proved" and isinstance(tree, dict) else None
    return kept if isinstance(kept, int) and not isinstance(kept, bool) else None


def _write_kept(loop: asyncio.AbstractEventLoop, written: asyncio.Future[Any], kept_id: int | None) -> None:
    """On the engine thread: settle ``written`` with the kept proof's tree (None when nothing was kept)."""
    if kept_id is None:
        settle_soon(loop, written, True, None)
        return
    try:
        settle_soon(loop, written, True, _kept_tree(kept_id))
    except BaseException as e:  # noqa: BLE001 - the proof's reader gets it
        settle_soon(loop, written, False, EngineError(f"the proof could not be written: {e}"))


def _kept_tree(kept_id: int) -> Any:
    """A kept proof's JSON tree, which is then forgotten: read as a term in C (``call_json``), else (not the
    C function's common case, or the C function off) written as JSON text and parsed."""
    out = _SN_KEPT_TERM.json_call(-1, kept_id)
    if out is NOT_NATIVE:
        return from_prolog_json(_SN_RENDER_KEPT(kept_id))["tree"]
    _SN_FORGET_KEPT(kept_id)
    return out["tree"]


def _retrieved(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()  # a proof nobody read: its error is not "never retrieved"


_shared: PrologEngine | None = None
_shared_lock = threading.Lock()


def shared_engine() -> PrologEngine:
    """The process's one Prolog engine (SWI-Prolog cannot be initialised twice)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = PrologEngine()
            # registers pyswip's exit hook first; SWI-Prolog's location told to it when kept (no subprocess)
            import_pyswip_core()

            # registered after pyswip's own exit hook, so it runs before it
            atexit.register(_shared.stop)
        return _shared
