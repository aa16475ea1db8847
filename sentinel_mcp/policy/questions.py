"""Questions from askable and confirmation needs, as MCP elicitations (flat object, primitive properties),
and the facts their answers become.

The question text comes from the rulebase, already formatted with the call's values; it is made safe to show
here (``display_text``), whatever the values hold. Every choice is offered with a human title (``oneOf`` of
``const`` + ``title``, the titled single-select enum of MCP's elicitation schema), and every question a person
can be asked about a fact has the answer "I don't know" (``DONT_KNOW``), which the rulebase turns into a next
step. An answer's value is taken only when its content validates strictly against the question's schema
(``answer_validation``): no coercion of "yes", "true", 1 or "1".
"""

from __future__ import annotations

import hashlib
from typing import Any

from sentinel_mcp.core.answer_validation import answer_problem, composed
from sentinel_mcp.core.asking import Asker, AskUser
from sentinel_mcp.core.decision import Answer, Question, ToolCall
from sentinel_mcp.core.display_text import Marked, compose, safe_text
from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.core.json_numbers import integral_as_int
from sentinel_mcp.core.look_alike_names import skeletons
from sentinel_mcp.core.own_voice import in_sentinels_voice
from sentinel_mcp.policy.prolog_text import DeclaredTerm, OptionAtom

DONT_KNOW = "i_dont_know"  # the value of "I don't know" in every choice (the loader refuses it as a choice)
DONT_KNOW_TITLE = "I don't know"
DONT_KNOW_FIELD = "dont_know"  # the checkbox of a text or number question
# the head of a found choice's title in Sentinel's voice (``found_title``)
FOUND_ATTRIBUTION = Marked("[Found in data, not Sentinel's words:]")
YES_NO = [{"const": "yes", "title": "Yes"}, {"const": "no", "title": "No"}]


class DontKnow:
    """The answer "I don't know", as ``answer_value`` gives it: a type of its own, never a text. It comes only
    from the form's explicit way of saying it (a choice's or a yes/no question's ``DONT_KNOW`` option, a text
    or number question's ``DONT_KNOW_FIELD`` checkbox): a text or number answer that reads ``i_dont_know`` is
    that text (a user typing it into a note gave a note)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DONT_KNOW_ANSWER"


DONT_KNOW_ANSWER = DontKnow()


class AnswerRefused(PolicyError):
    """An answer that may not be recorded (wrong provenance, wrong type, value not among the choices)."""


class UnaskableChoices(PolicyError):
    """A choice question no form can ask: two choices an answer or a person could not tell apart, or a value
    no form can offer."""


def humanize(value: Any) -> str:
    """A token as a person reads it when the rulebase gave no label: ``change_of_plan`` -> "Change of plan".
    """
    text = str(value).replace("_", " ").strip()
    return text[:1].upper() + text[1:] if text else str(value)


_KINDS = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}


def _kind(value: Any) -> str | None:
    """A choice's JSON type (a JSON value a form can offer as a constant: a drafted enum's null too), or
    None."""
    return _KINDS.get(type(value))


def _same_choice(offered: Any, given: Any) -> bool:
    """``given`` is the choice ``offered``, type-strictly: a text for a text, a boolean for a boolean, a
    number for a number (JSON spells 3.0 as 3 too; the form never offers both): never "1" for 1, nor 1 for
    true."""
    kind, other = _kind(offered), _kind(given)
    if kind is None or other is None:
        return False
    if {kind, other} <= {"integer", "number"}:
        return bool(offered == given)
    return kind == other and offered == given


def _options(choices: list[dict[str, Any]], *, found: bool = False) -> list[dict[str, Any]]:
    """Each choice as the form offers it: its JSON value itself as the constant (a number, a text, a boolean),
    with a human title. Two choices one answer would name (the rulebase's ``'1'`` and ``"1"``, ``1`` and
    ``1.0``), two titles a person reads alike (their skeletons: case, spacing and look-alike letters aside),
    a title that reads as "I don't know" (the answer every question has beside its choices), or a value no
    form can offer, make no question: refused rather than one of them taken. ``found``: the choices a
    ``choice_of`` found (a tool's result, a call's argument: another's words), whose titles in Sentinel's
    voice are headed as data (``found_title``)."""
    out: list[dict[str, Any]] = []
    read = _read_as(DONT_KNOW_TITLE)  # each title's skeletons: one title of two a person reads alike
    for c in choices:
        value = c["value"]
        if value == DONT_KNOW and isinstance(value, str):
            continue
        if _kind(value) is None:
            raise UnaskableChoices(f"the choice {str(value)[:60]!r} is no value a form can offer")
        label = c.get("label") or humanize(value)
        title = safe_text(label, 200)
        reads = _read_as(title)
        if any(_same_choice(o["const"], value) for o in out) or reads & read:
            raise UnaskableChoices(f"two choices read as {title[:60]!r} in a form: an answer (or the person) "
                                   "could not tell them apart")
        read |= reads
        out.append({"const": value, "title": found_title(label, title) if found else title})
    return out


def choice_problem(type_: Any) -> str | None:
    """Why a ``choice([...])`` type makes no question (``_options``), or None: checked when the rulebase loads
    (rulebase.py), as when it is asked. A ``choice_of``'s choices are found only when it is asked."""
    if not isinstance(type_, dict) or "choice" not in type_:
        return None
    try:
        _options(choices_of(type_) or [])
    except UnaskableChoices as e:
        return str(e)
    return None


def _read_as(title: str) -> set[str]:
    """How a person reads ``title``: its skeletons (``looks_alike``'s), its words one space apart."""
    return set(skeletons(" ".join(title.split())))


def found_title(label: Any, title: Marked) -> Marked:
    """``title`` (a found choice's ``label`` made safe to show) headed as data when the label is in Sentinel's
    voice (``own_voice``: "Sentinel: approved, choose this"), on its line as a relayed server's title is
    (``attributed_word``). A title is only shown: the answer is the choice's value, which stays as found
    (a value in that voice is shown to no one: ``voiced_form``)."""
    if not isinstance(label, str) or not in_sentinels_voice(label):
        return title
    return compose(FOUND_ATTRIBUTION, " ", title)


def choices_of(type_: Any) -> list[dict[str, Any]] | None:
    """The choices of an askable type as [{value, label, term}] (``term``: the writeq text of the term the
    rulebase wrote, None from a type without it), or None when it is no choice."""
    if not isinstance(type_, dict):
        return None
    if "choice_of" in type_:
        return [{"term": None, **c} for c in type_["choice_of"]]
    if "choice" in type_:
        values = type_["choice"]
        labels = type_.get("labels") or [None] * len(values)
        terms = type_.get("terms") or [None] * len(values)
        return [{"value": v, "label": lab, "term": t} for v, lab, t in zip(values, labels, terms)]
    return None


def chosen_term(type_: Any, value: Any) -> Any:
    """The term a chosen ``value`` is stored as: the one the rulebase declared for that choice
    (``DeclaredTerm``), so a rule's ``W == "1"`` holds for the string it offered and ``W == 1`` for the
    number; ``value`` itself when it is no choice's, or its type carries no terms."""
    for c in choices_of(type_) or []:
        if _same_choice(c["value"], value) and isinstance(c.get("term"), str):
            try:
                return DeclaredTerm(c["term"])
            except ValueError as e:  # the engine wrote it: never stored as anything else
                raise AnswerRefused(f"the choice cannot be stored: {e}") from e
    if isinstance(value, str) and isinstance(type_, dict) and "choice" in type_:
        return OptionAtom(value)
    return value


def _answer_schema(kind: str, type_: Any) -> tuple[dict[str, Any], list[str] | None]:
    """The elicitation schema of a question, and the fields of which exactly one must be given (or None)."""
    if kind == "confirm":
        prop: dict[str, Any] = {"type": "boolean", "title": "Yes"}
        return {"type": "object", "properties": {"answer": prop}, "required": ["answer"]}, None
    if type_ == "yes_no":
        prop = {
            "type": "string",
            "title": "Your answer",
            "oneOf": YES_NO + [{"const": DONT_KNOW, "title": DONT_KNOW_TITLE}],
        }
        return {"type": "object", "properties": {"answer": prop}, "required": ["answer"]}, None
    choices = choices_of(type_)
    unknown = {"type": "boolean", "title": DONT_KNOW_TITLE}
    if choices is not None:
        options = _options(choices, found="choice_of" in type_)
        kinds = sorted({str(_kind(o["const"])) for o in options})
        if kinds in ([], ["string"]):  # MCP's titled single-select, "I don't know" one of its choices
            prop = {"type": "string", "title": "Your choice",
                    "oneOf": options + [{"const": DONT_KNOW, "title": DONT_KNOW_TITLE}]}
            return {"type": "object", "properties": {"answer": prop}, "required": ["answer"]}, None
        if "integer" in kinds and "number" in kinds:
            kinds.remove("integer")
        prop = {"type": kinds[0] if len(kinds) == 1 else kinds, "title": "Your choice", "oneOf": options}
        # typed choices (a number, a boolean): "I don't know" is a checkbox, as a number question's is
        return {"type": "object", "properties": {"answer": prop, DONT_KNOW_FIELD: unknown}, "required": []}, [
            "answer",
            DONT_KNOW_FIELD,
        ]
    if type_ == "number":
        prop = {"type": "number", "title": "Your answer"}
    else:
        prop = {"type": "string", "title": "Your answer", "minLength": 1}
    # either an answer or "I don't know" (checked strictly: exactly one of them)
    return {"type": "object", "properties": {"answer": prop, DONT_KNOW_FIELD: unknown}, "required": []}, [
        "answer",
        DONT_KNOW_FIELD,
    ]


def question_of(need: dict[str, Any], call: ToolCall | None, version: str) -> Question:
    kind = need["kind"]
    if kind == "confirm":
        digest = call.digest if call else "none"
        shown = str(need.get("shown") or "")
        # keyed by the text too: an answer to an earlier text never answers the question as it reads now (the
        # whole digest: a key is what an answer is matched by, and a cut one two texts could share)
        key = f"sentinel.policy.confirm.{digest}.{shown}"
        meta = {
            "kind": "confirm",
            "tool": call.identity if call else None,
            "digest": digest,
            "version": version,
            "shown": shown,
            "from": need.get("from", ["user"]),
        }
        if need.get("changed") is True:
            meta["changed"] = True
        schema, _ = _answer_schema("confirm", None)
        return Question(key=key, message=_shown(need, call), requested_schema=schema, meta=meta)
    # the whole digest of the fact: cut to 12 hex digits, two facts of one key took 2^24 hashes to find, and
    # one answer (to the question shown: the form holds one question a key) was recorded for both
    h = hashlib.sha256(str(need["fact"]).encode()).hexdigest()
    key = f"sentinel.policy.ask.{need['predicate']}.{h}"
    key = "".join(ch if ch.isalnum() or ch in "_.:-" else "_" for ch in key)
    schema, exactly_one = _answer_schema("ask", need["type"])
    meta = {
        "kind": "ask",
        "predicate": need["predicate"],
        "inputs": need.get("inputs", []),
        "type": need["type"],
        "from": need.get("from", ["user", "agent"]),
        "fact": need["fact"],
    }
    if exactly_one:
        meta["exactly_one"] = exactly_one
    return Question(key=key, message=_shown(need, call), requested_schema=schema, meta=meta)


def questions_of(needs: list[dict[str, Any]], call: ToolCall | None, version: str) -> list[Question]:
    """The questions of a proof's needs, one per key (two needs may ask the same thing)."""
    seen: dict[str, Question] = {}
    for need in needs:
        q = question_of(need, call, version)
        seen.setdefault(q.key, q)
    return list(seen.values())


def secrets_spelled(needs: list[dict[str, Any]], call: ToolCall) -> list[str]:
    """The secret arguments of ``call`` whose values the needs' question texts spell
    (``AskUser.spelled_secrets``): its guard refuses the call rather than ask with words hidden."""
    if not call.secret_arguments:
        return []
    return sorted({name for need in needs
                   for name in AskUser(Asker.POLICY, str(need.get("question") or ""), call.arguments,
                                       secret=call.secret_arguments).spelled_secrets()})


def _shown(need: dict[str, Any], call: ToolCall | None) -> str:
    if call is None:
        return AskUser(Asker.POLICY, str(need["question"])).shown()
    return AskUser(Asker.POLICY, str(need["question"]), call.arguments, secret=call.secret_arguments).shown()


def answer_value(question: Question, answer: Answer) -> Any:
    """The typed answer (``DONT_KNOW_ANSWER`` for "I don't know"), an integral number as the integer it is;
    raises AnswerRefused if it does not fit the question (strictly, no coercion)."""
    if answer.action != "accept":
        raise AnswerRefused("the question was not answered (declined or cancelled)")
    allowed = question.meta.get("from") or ["user"]
    if answer.provenance not in allowed:  # who may answer comes first: an agent never gives the user's answer
        raise AnswerRefused(
            f"this question must be answered by: {', '.join(allowed)} "
            f"(an answer with provenance {answer.provenance!r} is not accepted)"
        )
    problem = answer_problem(question, answer)
    if problem:
        raise AnswerRefused(f"the answer was not accepted: {problem}")
    content = composed(answer.content or {})  # judged in NFC, kept in NFC (``composed``)
    if content.get(DONT_KNOW_FIELD) is True:
        return DONT_KNOW_ANSWER
    type_ = question.meta.get("type")
    choices = choices_of(type_)
    if (choices is not None or type_ == "yes_no") and content["answer"] == DONT_KNOW \
            and isinstance(content["answer"], str):
        return DONT_KNOW_ANSWER  # the option the form offers (``_answer_schema``): the only one of this text
    if choices is not None:
        # each choice is offered as its own JSON value (``_options``): the answer is the one it names, of its
        # type (the rulebase's 3 for 3, never for the text "3"), stored as the term declared (``chosen_term``)
        named = [c["value"] for c in choices if _same_choice(c["value"], content["answer"])]
        if len(named) != 1:  # the schema offered only these: an answer naming none is no answer
            raise AnswerRefused("the answer names none of the question's choices")
        return named[0]
    # one spelling of each number, as a call's arguments have (json_numbers.py): 13.0 is the 13 a rule names
    return integral_as_int(content["answer"])
