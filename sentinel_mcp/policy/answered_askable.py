"""The askable that judges an answer the agent gives through ``sentinel_answer`` (``answered_askables.pl``).

A proof judges a stored answer by the first askable whose head covers its goal: its type, who may answer
it. The agent names only a predicate and inputs; taking the first askable of that name let it write a fact
no askable covers (``approved(big, X)`` beside ``askable(approved(small, X), ...)``, which a proof then takes
as a plain stored fact, whoever gave it) or answer under one askable's type and provenance what a proof
judges by another's (a text where the askable covering it offers choices). The answer is judged by the
askable a proof asks its question by, or refused.
"""

from __future__ import annotations

import math
from typing import Any

from sentinel_mcp.core.given_fact_size import size_problem
from sentinel_mcp.policy.engine import EngineError, PrologEngine
from sentinel_mcp.policy.prolog_call import PrologCall
from sentinel_mcp.policy.prolog_text import fact_text
from sentinel_mcp.policy.questions import AnswerRefused
from sentinel_mcp.policy.rulebase import AskableInfo, Rulebase

_SN_ASKABLE_INDEX = PrologCall("sentinel_core", "sn_askable_index", 4)


async def judging_askable(
    engine: PrologEngine, rb: Rulebase, predicate: str, inputs: list[Any]
) -> AskableInfo:
    """The askable a proof asks ``predicate`` about ``inputs`` by (and judges their answer by): of those of
    the name whose arity fits the inputs, the first the engine finds covering the question whatever its
    answer. Raises ``AnswerRefused`` when none does."""
    named = [(i, a) for i, a in enumerate(rb.info.askables) if a.predicate == predicate]
    if not named:
        raise AnswerRefused(
            f"{predicate} is not askable; askables: " + ", ".join(a.predicate for a in rb.info.askables)
        )
    if (too_large := size_problem(inputs, "the answer's inputs")) is not None:  # before the engine reads them
        raise AnswerRefused(too_large)
    if odd := [i for i in inputs if not _plain_input(i)]:
        raise AnswerRefused(f"an input must be a string, a number or a boolean, as a call's argument is; got "
                            f"{type(odd[0]).__name__}")
    n = len(inputs)
    fitting = [(i, a) for i, a in named if a.arity == (n if a.type == "yes_no" else n + 1)]
    if not fitting:
        first = named[0][1]
        expected = first.arity if first.type == "yes_no" else first.arity - 1
        raise AnswerRefused(f"{predicate} takes {expected} input argument(s), got {n}")
    for i, a in fitting:
        yes_no = a.type == "yes_no"
        # the question's fact: a yes/no question's inputs are all its arguments; the others' answer is left
        # free by the engine (the 0 only holds its place)
        text = fact_text(predicate, list(inputs) if yes_no else [*inputs, 0])
        try:
            out = await engine.direct(_SN_ASKABLE_INDEX, rb.module, text, "false" if yes_no else "true")
        except EngineError:
            continue  # not a fact the engine reads (it refuses it as any answer's): covered by no askable
        if out.get("index") == i:
            return a
    raise AnswerRefused(
        f"no askable of {predicate} covers a question with these inputs: only a question the rulebase asks "
        "can be answered"
    )


def _plain_input(value: Any) -> bool:
    """An input as ``sentinel_answer`` declares them (a string, a number, a boolean; a JSON number, a text
    of Unicode characters): what reaches the engine in process, past the tool's schema, is held to it too
    (``None`` read as the atom ``null``, ``nan`` as an atom, a lone surrogate garbled in the fact)."""
    if type(value) in (bool, int):
        return True
    if type(value) is float:
        return math.isfinite(value)
    return type(value) is str and _unicode(value)


def _unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no character, and the fact would hold another text
        return False
    return True
