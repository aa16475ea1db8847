"""The output-schema check of an outside server's result asks no coroutine it does not need (issue 21): the
gateway asks ``ResultCheck.binds`` first (a tool without an output schema, or an error result: ``problem``
would say None without looking), and ``problem`` takes the compiled validator of the very tool object it
compiled without awaiting ``_compiled``. The verdicts are the same: over tools with and without schemas,
flat and not, results fitting and not, error results, a tool object replaced by one of another schema (then
compiled anew, and judged by its new schema)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.types import CallToolResult, TextContent, Tool

from sentinel_mcp.gateway.result_check import COMPILE, Later, ResultCheck

FLAT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
NESTED = {"type": "object",
          "properties": {"a": {"type": "array", "items": {"type": "string", "pattern": "^x"}}}}


def _tool(schema: Any, name: str = "t") -> Tool:
    return Tool(name=name, input_schema={"type": "object"}, output_schema=schema)


def _result(structured: Any, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="r")], structured_content=structured,
                          is_error=error)


RESULTS = [_result({"n": 1}), _result({"n": "1"}), _result({}), _result(None), _result({"n": 1}, error=True),
           _result({"a": ["x1", "x2"]}), _result({"a": ["y"]}), _result({"a": "x"}), _result({"n": 2 ** 70})]


def test_binds_is_exactly_when_problem_looks() -> None:
    async def run() -> None:
        check = ResultCheck()
        for schema in (None, FLAT, NESTED):
            tool = _tool(schema)
            for result in RESULTS:
                verdict = await check.problem(tool, result)
                if not ResultCheck.binds(tool, result):
                    assert verdict is None
                assert ResultCheck.binds(tool, result) == (schema is not None and not result.is_error)

    asyncio.run(run())


def test_a_compiled_tool_is_judged_without_awaiting_its_compilation_and_alike() -> None:
    async def run() -> None:
        check = ResultCheck()
        awaited: list[str] = []
        real = check._compiled

        async def counted(tool: Tool) -> Any:
            awaited.append(tool.name)
            return await real(tool)

        check._compiled = counted  # type: ignore[method-assign]
        fresh = ResultCheck()  # a check that compiles for every verdict: main's answers
        for schema in (FLAT, NESTED):
            tool = _tool(schema)
            first = [await check.problem(tool, r) for r in RESULTS]
            count = len(awaited)
            again = [await check.problem(tool, r) for r in RESULTS]
            assert len(awaited) == count  # compiled once, then read without a coroutine
            assert again == first == [await ResultCheck().problem(tool, r) for r in RESULTS]
            assert first == [await fresh.problem(_tool(schema), r) for r in RESULTS]
        # the same name, another tool object of another schema: compiled anew, judged by its own schema
        before = len(awaited)
        replaced = _tool(FLAT)
        verdicts = [await check.problem(replaced, r) for r in RESULTS]
        assert len(awaited) > before
        assert verdicts == [await ResultCheck().problem(_tool(FLAT), r) for r in RESULTS]
        assert verdicts[0] is None and verdicts[1] is not None  # {"n": 1} fits FLAT, {"n": "1"} does not

    asyncio.run(run())


def test_at_once_says_problems_verdict_without_a_wait_or_later_when_it_needs_one() -> None:
    """The gateway enters its cancel shield only on ``Later`` (issue 21: a cancel scope on every call cost ~31
    Python calls); what ``at_once`` says itself is ``problem``'s verdict, and it says ``Later`` exactly when
    a wait is needed: a tool object not compiled yet, or a value past ``INLINE_BYTES`` (checked in a thread,
    and judged by the same schema there)."""
    async def run() -> None:
        check = ResultCheck()
        long_bad = _result({"a": ["x" * 1000] * 70 + ["y"]})  # ~70 KB, its last item does not fit NESTED
        for schema in (None, FLAT, NESTED):
            tool = _tool(schema, name=f"t{schema is None}{schema is FLAT}")
            compiled = False
            for result in [*RESULTS, long_bad]:
                first = check.at_once(tool, result)
                binds = ResultCheck.binds(tool, result)
                if not compiled:  # nothing compiled for this tool object yet
                    assert (first is COMPILE) == binds
                verdict = await check.problem(tool, result)
                compiled = compiled or binds
                assert verdict == await ResultCheck().problem(tool, result)
                now = check.at_once(tool, result)
                assert isinstance(now, Later) == (binds and result is long_bad)  # FLAT: no fit, a walk
                if not isinstance(now, Later):
                    assert now == verdict
        nested = _tool(NESTED, name="n")
        assert await check.problem(nested, long_bad) is not None  # the thread's verdict: the "y" at the end
        assert check.at_once(_tool(FLAT, name="n"), RESULTS[0]) is COMPILE  # another object: compiled anew

    asyncio.run(run())
