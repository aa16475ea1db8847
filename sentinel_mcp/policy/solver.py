"""The solver: prove, fetch what is missing (concurrently, through the gateway), prove again.

Stateless across calls. One *pass* is a Prolog proof that records needs instead of stopping at the first
missing fact; the solver fetches every new fetch need at once (duplicates merged, each fetch a guarded
call through ``GatewayPort.invoke`` with origin ``solver``), stores the extracted facts as ``observed``,
and runs another pass, until the proof succeeds or nothing new can be fetched. Only then does it report
questions (tools before questions).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any, Awaitable, Callable

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import argument_digest
from sentinel_mcp.core.port import Completed, GatewayPort, NeedsInput
from sentinel_mcp.core.repeated_keys import RepeatedKey, unique_object
from sentinel_mcp.policy.fact_bounds import kept_facts
from sentinel_mcp.policy.fact_rows import learned
from sentinel_mcp.policy.engine_thread import EngineError
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.rulebase import Rulebase

log = logging.getLogger(__name__)

# a pass whose mirror was dropped or reloaded while it ran (``Solver._pass``): its answer is not taken
RELOADED = "reloaded"

# where Sentinel's own error results name their kind (gateway/own_results.py)
SENTINEL_ERROR = "sentinel/error"

PassFn = Callable[[], Awaitable[dict[str, Any]]]
# (tool, arguments) -> why it may not be fetched now for the caller whose look this is, or None
FetchFilter = Callable[[str, dict[str, Any]], Awaitable["str | None"]]

# the longest error text a rulebase's absent_on_error([Text, ...]) is compared with (a longer one is no
# "not found" of any listed text): an upstream's error of megabytes is not made an atom of the engine's
_ERROR_TEXT_LIMIT = 4096


def _error_text(result: CallToolResult) -> str:
    """An error answer's text, as ``absent_on_error([Text, ...])`` compares it: its text items joined by line
    ends, surrounding blanks off; '' past ``_ERROR_TEXT_LIMIT`` (no listed text is empty)."""
    text = "\n".join(c.text for c in result.content if isinstance(c, TextContent)).strip()
    return text if len(text) <= _ERROR_TEXT_LIMIT else ""


class FetchRecord(BaseModel):
    tool: str
    arguments: dict[str, Any]
    ok: bool
    facts: int = 0
    error: str | None = None
    started: float
    ended: float


class SolverResult(BaseModel):
    status: str
    tree: Any = None
    solutions: list[dict[str, Any]] = Field(default_factory=list)
    questions: list[dict[str, Any]] = Field(
        default_factory=list
    )  # ask / confirm needs, after tools are exhausted
    unmet: list[str] = Field(default_factory=list)
    tentative: list[str] = Field(default_factory=list)  # failed only after something was assumed
    violations: list[dict[str, Any]] = Field(default_factory=list)  # unmet, with kind and citation
    missing: list[dict[str, Any]] = Field(default_factory=list)  # fetch needs that could not be fetched
    fetches: list[FetchRecord] = Field(default_factory=list)
    passes: int = 0
    error: str | None = None


# A text content's JSON, read as one value or not at all: the text itself goes on to the model and the client,
# and a name given twice in it is the first value to many of their readers, the last to Python's
_TEXT_JSON = json.JSONDecoder(object_pairs_hook=unique_object)


def result_json(result: CallToolResult) -> Any:
    """The JSON a binding extracts from: structured content, else the first text content parsed as JSON (a
    text whose JSON gives a name twice in one object stays a text, as one that is no JSON does: no fact is
    read from it)."""
    if result.structured_content is not None:
        return result.structured_content  # as the server sent it (non-object values sit under /result)
    for c in result.content:
        if isinstance(c, TextContent):
            try:
                return _TEXT_JSON.decode(c.text)
            except (ValueError, RecursionError, RepeatedKey):  # no JSON, nested past the reader, or two
                return c.text  # readings: a text
    return None


def _failed(need: dict[str, Any], e: BaseException | None) -> str:
    """What a look-up that raised says: a reference to Sentinel's log, where its details go (an engine error's
    text, its goals and stream addresses, once reached the client's deny, e.g. for a result holding NaN)."""
    ref = uuid.uuid4().hex[:10]
    log.error("look-up of %s failed (reference %s)", need["tool"], ref, exc_info=e)
    return f"the look-up failed with an internal error (reference {ref} in Sentinel's log)"


class Solver:
    def __init__(
        self,
        knowledge: Knowledge,
        port: GatewayPort | None,
        *,
        max_passes: int = 8,
        max_depth: int = 3,
        fetch_timeout: float = 8.0,
        is_read_only: Callable[[str], bool] | None = None,
        max_concurrent_fetches: int = 16,
        max_fetches: int = 128,
    ):
        self.knowledge = knowledge
        self.port = port
        self.max_passes = max_passes
        self.max_depth = max_depth
        self.fetch_timeout = fetch_timeout
        self.is_read_only = is_read_only or (lambda name: False)
        self.max_concurrent_fetches = max(1, max_concurrent_fetches)
        self.max_fetches = max(1, max_fetches)  # per decision, all passes together

    async def solve(
        self,
        run_pass: PassFn,
        rb: Rulebase,
        session: str,
        *,
        depth: int = 0,
        deadline: float | None = None,
        may_fetch: FetchFilter | None = None,
    ) -> SolverResult:
        attempted: dict[tuple[str, str], FetchRecord] = {}
        fetches: list[FetchRecord] = []
        out: dict[str, Any] = {}
        passes = 0
        while passes < self.max_passes:
            passes += 1
            out = await self._pass(run_pass, rb, session, passes)
            status = out.get("status")
            if status == "proved":
                return SolverResult(
                    status="proved",
                    tree=out.get("tree"),
                    solutions=out.get("solutions", []),
                    fetches=fetches,
                    passes=passes,
                )
            if status == RELOADED:
                continue  # its answer is not taken: the next pass runs on the mirror as loaded now
            if status in ("error", "inference_limit", "refused", "time_limit", "memory_limit"):
                msg = out.get("message") or (
                    "the proof exceeded its inference limit (a looping rule?)"
                    if status == "inference_limit"
                    else "error"
                )
                # a client goal's refusal or exhausted budget keeps its name; everything else is an error
                kept = status if status in ("refused", "time_limit", "memory_limit") else "error"
                return SolverResult(status=kept, error=str(msg), fetches=fetches, passes=passes)
            needs = out.get("needs", [])
            todo: dict[tuple[str, str], dict[str, Any]] = {}
            for n in needs:
                if n["kind"] == "fetch":
                    key = (n["tool"], argument_digest(n["arguments"]))
                    if key not in attempted and key not in todo:
                        todo[key] = n
            if not todo or depth >= self.max_depth or (deadline is not None and time.monotonic() >= deadline):
                break
            if len(attempted) + len(todo) > self.max_fetches:  # bounded before any of them is made
                return SolverResult(
                    status="error",
                    error=f"deciding it would take more than {self.max_fetches} look-ups "
                    f"({len(attempted) + len(todo)} so far; sentinel.policy.max_fetches)",
                    fetches=fetches,
                    passes=passes,
                )
            remaining = None if deadline is None else max(0.1, deadline - time.monotonic())
            records = await self._fetch_all(list(todo.values()), rb, session, depth, remaining, may_fetch)
            for key, rec in zip(todo, records):
                attempted[key] = rec
            fetches.extend(records)
        if out.get("status") == RELOADED:  # fail closed: no pass ran on a mirror that stayed as it was
            return SolverResult(status="error", error="the conversation's facts were reloaded during every "
                                "pass of this decision; call again", fetches=fetches, passes=passes)
        needs = out.get("needs", [])
        missing = [
            n | {"error": attempted[(n["tool"], argument_digest(n["arguments"]))].error}
            for n in needs
            if n["kind"] == "fetch" and (n["tool"], argument_digest(n["arguments"])) in attempted
        ]
        missing += [
            n
            for n in needs
            if n["kind"] == "fetch" and (n["tool"], argument_digest(n["arguments"])) not in attempted
        ]
        questions = [n for n in needs if n["kind"] in ("ask", "confirm")]
        status = "blocked" if questions and not missing else "failed"
        # no solutions: those of a pass that assumed something rest on unknown values, not on facts
        return SolverResult(
            status=status,
            questions=questions,
            unmet=out.get("unmet", []),
            tentative=out.get("tentative", []),
            missing=missing,
            violations=out.get("violations", []),
            fetches=fetches,
            passes=passes,
        )

    async def _pass(self, run_pass: PassFn, rb: Rulebase, session: str, n: int) -> dict[str, Any]:
        """One pass on the session's mirror as it is in the store now. The mirror is dropped and loaded again
        from the store at any moment (another conversation pushes it out, a clear of a kept fact, a replica's
        change): a pass after look-ups on a dropped mirror proved without what they had just taught (denied:
        "... did not tell (not fetched)"). So every pass after the first loads it if needed, and a pass
        during which it was dropped or reloaded does not count (``RELOADED``): its answer may stand on facts
        the store no longer holds, or miss some it does."""
        k = self.knowledge
        if n > 1 or not k.is_loaded(session):
            await k.ensure(session, rb)
        mark = k.mirror(session)
        out = await run_pass()
        if mark is None or k.mirror(session) != mark:
            return {"status": RELOADED}
        return out

    async def _fetch_all(
        self,
        needs: list[dict[str, Any]],
        rb: Rulebase,
        session: str,
        depth: int,
        timeout: float | None,
        may_fetch: FetchFilter | None = None,
    ) -> list[FetchRecord]:
        gate = asyncio.Semaphore(self.max_concurrent_fetches)

        async def gated(n: dict[str, Any]) -> FetchRecord:
            async with gate:
                return await self._fetch(n["tool"], n["arguments"], rb, session, depth, may_fetch)

        tasks = [asyncio.create_task(gated(n)) for n in needs]
        done, pending = await asyncio.wait(tasks, timeout=timeout or self.fetch_timeout)
        for t in pending:
            t.cancel()
        records = []
        now = time.time()
        for n, t in zip(needs, tasks):
            if t in done and not t.cancelled() and t.exception() is None:
                records.append(t.result())
            else:
                err = "timed out" if t in pending else "cancelled" if t.cancelled() else None
                err = err or _failed(n, t.exception())
                records.append(
                    FetchRecord(
                        tool=n["tool"], arguments=n["arguments"], ok=False, error=err, started=now, ended=now
                    )
                )
        return records

    async def _fetch(
        self,
        tool: str,
        arguments: dict[str, Any],
        rb: Rulebase,
        session: str,
        depth: int,
        may_fetch: FetchFilter | None = None,
    ) -> FetchRecord:
        started = time.time()

        def fail(msg: str) -> FetchRecord:
            return FetchRecord(
                tool=tool, arguments=arguments, ok=False, error=msg, started=started, ended=time.time()
            )

        if self.port is None:
            return fail("no gateway to fetch through")
        refusal = await may_fetch(tool, arguments) if may_fetch is not None else None
        if refusal:
            return fail(refusal)
        if not self.is_read_only(tool):
            # bindings are only ever served by read-only tools (the checker reports the others)
            return fail(
                f"{tool} is not a read-only tool (or not in the catalog); it is never called by the solver"
            )
        outcome = await self.port.invoke(
            tool, arguments, session_id=session, origin="solver", depth=depth + 1
        )
        if isinstance(outcome, NeedsInput):
            return fail(f"{tool} needs input: {outcome.reason}")
        if not isinstance(outcome, Completed):
            return fail(f"{tool} refused: {outcome.reason}")
        if outcome.result.is_error:
            # ok: a binding took it as "not found" (its next source is tried); the others' facts stay unknown,
            # and a decision that needs them is denied with this error
            taken = await self.store_error(rb, session, tool, arguments, outcome.result)
            text = " ".join(c.text for c in outcome.result.content if isinstance(c, TextContent))[:300]
            return fail(f"{tool} returned an error: {text}").model_copy(update={"ok": taken})
        n, unreadable = await self.store_result(rb, session, tool, arguments, outcome.result)
        if unreadable:
            # what it gave for the other bindings is stored; these stay unknown (a decision that needs them
            # fails closed, saying so), never "looked up, nothing there"
            return FetchRecord(
                tool=tool, arguments=arguments, ok=False, facts=n, started=started, ended=time.time(),
                error=f"{tool} answered, but its result could not be read for {', '.join(unreadable)} "
                "(no JSON object or array to read, or a required field missing, renamed or null)",
            )
        return FetchRecord(
            tool=tool, arguments=arguments, ok=True, facts=n, started=started, ended=time.time()
        )

    async def store_error(
        self, rb: Rulebase, session: str, tool: str, arguments: dict[str, Any], result: CallToolResult
    ) -> bool:
        """A read answered with an error: what it said before no longer holds (``Knowledge.unlearn``), and for
        the bindings marked ``absent_on_error`` it is looked up with nothing there (their fetched markers, no
        fact: the error's text is never read, so a hostile upstream's error establishes nothing). Whether any
        binding took it so (else the look-up failed: the facts stay unknown, a decision on them is denied).
        Only the upstream's own answer says "not found": Sentinel's own errors (the upstream unreachable,
        timed out, its outcome unknown, a refusal) name their kind under ``_meta["sentinel/error"]`` and say
        nothing about what is there."""
        digest = argument_digest(arguments)
        markers: list[dict[str, Any]] = []
        if not (result.meta or {}).get(SENTINEL_ERROR):
            try:
                markers = await self.knowledge.engine.absent(rb.module, tool, arguments, _error_text(result))
            except (EngineError, ValueError) as e:
                log.warning("the error answer of %s could not be taken as nothing found: %s", tool, e)
        if not markers:
            await self.knowledge.unlearn(session, tool, digest)
            return False
        await self.knowledge.learn(learned(session, tool, digest, markers, process_clock.now()))
        return True

    async def store_result(
        self, rb: Rulebase, session: str, tool: str, arguments: dict[str, Any], result: CallToolResult
    ) -> tuple[int, list[str]]:
        """Extract the facts the bindings of ``tool`` yield from a result, store them as observed; how many,
        and the bindings the result could not be read for."""
        try:
            extracted, unreadable = await self.knowledge.engine.extract(
                rb.module, tool, arguments, result_json(result)
            )
        except (EngineError, ValueError, RecursionError) as e:
            log.warning("the result of %s could not be read by the engine: %s", tool, e)  # never the client's
            # no reading at all (a number JSON has no value for, NaN or Infinity, which an upstream's JSON may
            # carry; JSON nested past the readers' depth): a read answered with nothing to read, as an error
            # is; raising kept the older answer's facts
            extracted = []
            unreadable = [f"{b.predicate}/{b.arity} (the result cannot be read)" for b in rb.info.bindings
                          if b.tool == tool]
        extracted, over = kept_facts(extracted)  # a binding with a fact too large to keep: not read
        unreadable = [*unreadable, *over]
        digest = argument_digest(arguments)
        if not extracted:  # what this read said before no longer holds (``Knowledge.unlearn``)
            await self.knowledge.unlearn(session, tool, digest)
            return 0, unreadable
        facts = learned(session, tool, digest, extracted, process_clock.now())
        await self.knowledge.learn(facts)
        return facts.shown, unreadable
