"""The fact an accepted answer becomes: what the person said, with its provenance, in the session's store.

A "don't know" is kept as ``'$dont_know'`` (what it leads to is the rulebase's ``unknown/1`` option); a
confirmation only for JSON ``true``, only for the rulebase version that asked it and only for the text it
showed (``'$confirmed'(Tool, Digest, Version, Shown, yes)``, ``Shown`` the SHA-256 of that text, with the
confirmation's time to live: a proof whose confirmation now reads otherwise asks again); a yes/no question
as its predicate or ``'$answered_no'``; any other answer as the predicate with the value as its last argument.
"""

from __future__ import annotations

import re

from sentinel_mcp.core.decision import Answer, Question
from sentinel_mcp.core.given_fact_size import size_problem
from sentinel_mcp.policy.agent_answer_bound import (
    MAX_AGENT_ANSWERS,
    MAX_PRINCIPAL_AGENT_ANSWERS,
    own_conversation,
    principal_agent_answers,
    standing_agent_answers,
)
from sentinel_mcp.policy.answered_askable import judging_askable
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.questions import DONT_KNOW_ANSWER, AnswerRefused, answer_value, chosen_term
from sentinel_mcp.policy.rulebase import Rulebase

_SHOWN = re.compile("[0-9a-f]{64}")  # proof_interpreter.pl shown_digest/2
NO = "$answered_no"  # a yes/no question answered no: NO(Predicate, Inputs)
DONT_KNOW_FACT = "$dont_know"  # any question answered "I don't know": DONT_KNOW_FACT(Predicate, Inputs)
# the answers the user's answer replaces (a read's fact or a seed is no one's answer: left as it is)
OUTRANKED_BY_USER = frozenset({"agent"})


async def answer_fact(
    knowledge: Knowledge,
    rb: Rulebase,
    session: str,
    question: Question,
    answer: Answer,
    *,
    confirm_ttl: float,
    contexts: list[str] | None = None,
) -> Fact | None:
    """The fact to store, or None when nothing is (a confirmation that was not given). Raises
    ``AnswerRefused`` for a confirmation asked under another rulebase version."""
    value = answer_value(question, answer)
    meta = question.meta
    # the fact whole: its inputs come from the call's arguments, or the agent's sentinel_answer
    kept = None if value is DONT_KNOW_ANSWER else value  # a "don't know" keeps no value
    if (too_large := size_problem([meta.get("inputs"), kept], "the answer's fact")) is not None:
        raise AnswerRefused(too_large)
    # every kind of answer expires as the askable a proof asks it by says (its ttl(Seconds); None: the
    # session's), found by what it covers, not by name and arity (two askables of one name may differ)
    ttl = None
    if meta["kind"] != "confirm":
        ttl = (await judging_askable(knowledge.engine, rb, meta["predicate"], list(meta["inputs"]))).ttl
    if value is DONT_KNOW_ANSWER:  # typed: a text reading i_dont_know is a text
        args = [meta["predicate"], list(meta["inputs"])]
        return await knowledge.new_fact(session, DONT_KNOW_FACT, args, answer.provenance, ttl=ttl,
                                        contexts=contexts)
    if meta["kind"] == "confirm":
        if meta.get("version") != rb.version:
            raise AnswerRefused("the rulebase changed since this confirmation was asked; ask again")
        shown = meta.get("shown")
        if not isinstance(shown, str) or not _SHOWN.fullmatch(shown):
            raise AnswerRefused("this confirmation does not say which text it showed; ask again")
        if value is not True:
            return None
        return await knowledge.new_fact(
            session,
            "$confirmed",
            [meta["tool"], meta["digest"], meta["version"], shown, "yes"],
            answer.provenance,
            ttl=confirm_ttl,
            source_tool=meta["tool"],
            source_digest=meta["digest"],
        )
    if meta["type"] == "yes_no":
        pred, args = (
            (meta["predicate"], list(meta["inputs"]))
            if value == "yes"
            else (NO, [meta["predicate"], list(meta["inputs"])])
        )
        return await knowledge.new_fact(session, pred, args, answer.provenance, ttl=ttl, contexts=contexts)
    type_ = meta.get("type")
    value = chosen_term(type_, value)  # a choice: the term declared (its "1" a string, '1' an atom)
    return await knowledge.new_fact(
        session, meta["predicate"], [*meta["inputs"], value], answer.provenance, ttl=ttl, contexts=contexts
    )


async def keep_answer(knowledge: Knowledge, question: Question, fact: Fact,
                      max_agent: int = MAX_AGENT_ANSWERS, principal: str | None = None,
                      max_principal: int = MAX_PRINCIPAL_AGENT_ANSWERS) -> Fact:
    """Store an answer's fact by who gave it, against the answers its question holds already:

    - the user's answer replaces every answer the question holds from the agent (its value, no or "don't
      know", given through a context or not): the user's word is what counts;
    - an answer never replaces the user's: the same word changes nothing (the user's stays as given, with
      its time to live and contexts), another one is refused (``AnswerRefused``);
    - between two answers of one giver (two forms, two agent calls that raced) the first holds the same way.

    A fact of another provenance the question does not take (a read's) is no answer: the user's same word
    replaces it, another word is refused as before (the question is not the user's to contradict a read).
    Restating the user's "no" through a context made it the agent's, tied to that context: rebinding the
    context deleted it, and the agent's "yes" then went through; the agent's first answer held over the
    user's later one, so an agent answering while the user's form was open decided for the user."""
    held = await question_answers(knowledge.store, question, fact)
    accepted = question.meta.get("from") or ["user"]
    by_user = fact.provenance == "user"
    # what this answer replaces: the user's replaces the agent's (whether the question takes the agent's now
    # or took it when it was given)
    replaced = [h for h in held if by_user and h.provenance in OUTRANKED_BY_USER]
    standing = [h for h in held if h not in replaced]
    if (other := next((h for h in standing if h.fact != fact.fact), None)) is not None:
        raise AnswerRefused(
            f"this question was already answered in this conversation ({other.fact}); a second, "
            "different answer is not taken while that one holds"
        )
    for same in standing:  # the same answer, from someone the question takes it from: it stands as given
        if same.provenance in accepted:
            return same
    if fact.provenance == "agent" and await standing_agent_answers(
        knowledge.store, fact.session, max_agent
    ) >= max_agent:  # a new fact the agent writes: within the conversation's bound (agent_answer_bound.py)
        raise AnswerRefused(
            f"this conversation holds {max_agent} answers the agent gave, as many as it keeps; no further "
            "one is taken (a new conversation starts afresh, and the user can answer Sentinel's own question)"
        )
    if fact.provenance == "agent" and principal is not None:  # and within the principal's, in all
        if await principal_agent_answers(knowledge.store, principal, max_principal) >= max_principal:
            raise AnswerRefused(
                f"this principal's conversations hold {max_principal} answers the agent gave, as many as are "
                "kept; no further one is taken until some lapse (the user can answer Sentinel's own question)"
            )
        await own_conversation(knowledge.store, fact.session, principal)
    if replaced:
        await knowledge.delete(fact.session, [h.fact for h in replaced])
    await knowledge.add([fact])
    return fact


async def question_answers(store: FactStore, question: Question, fact: Fact) -> list[Fact]:
    """The valid answers already stored for the same question (its predicate and inputs), whatever their
    value. A question is open only while it has no answer, so a second, different one comes from two calls
    that asked it at once (or a stale form): taking both would leave two users, two emails, in one
    conversation, and a rule without ``require`` would accept either. Every answer a question can have
    counts, whatever its shape: a value (or a yes/no question's yes, its predicate), a no
    (``'$answered_no'``) and an "I don't know" (``'$dont_know'``). A proof takes a stored value over a no or a
    "don't know" (``base_facts.pl`` askable_solve/4): an agent's yes after the user's no, or its value after
    the user's "I don't know", let a call go ahead on the agent's word against the user's."""
    meta = question.meta
    if meta.get("kind") != "ask":
        return []
    return await held_answers(store, fact.session, meta["predicate"], list(meta["inputs"]),
                              yes_no=meta.get("type") == "yes_no")


async def held_answers(store: FactStore, session: str, predicate: str, inputs: list[object], *,
                       yes_no: bool) -> list[Fact]:
    """The valid answers of every shape stored for one question (a predicate and its inputs)."""
    marked = [predicate, inputs]  # '$answered_no' and '$dont_know' name the question so
    held = [f for f in await store.valid(session, predicate=DONT_KNOW_FACT) if f.args == marked]
    if yes_no:
        held += [f for f in await store.valid(session, predicate=NO) if f.args == marked]
    own = await store.valid(session, predicate=predicate)
    return held + [f for f in own if (f.args if yes_no else f.args[:-1]) == inputs]
