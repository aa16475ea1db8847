"""The inbox page: every question waiting for this principal, answered or denied here (provenance ``user``).

Items come from the front (calls of clients that cannot elicit, held open or waiting for their retry; 2026-era
calls between rounds) and from A2A tasks in ``input-required``. An item id names nothing guessable, and one
of another principal, or one already settled, is "not found" for everybody else. Other agents' help requests
are listed for the owner too, and answered here (``assist_pages``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from sentinel_mcp.console import assist_pages
from sentinel_mcp.console.agent_pages import DECISION_ID
from sentinel_mcp.console.approval_arguments import approval_arguments, look_alike_words, shown_whole
from sentinel_mcp.console.answer_form import MAX_TEXT, Field, approval_words, fields_of, read_answer
from sentinel_mcp.gateway.person_inbox import UPSTREAM_QUESTION
from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.web import HEADERS, Console
from sentinel_mcp.core.decision import Answer, Question
from sentinel_mcp.core.display_text import Marked, compose, safe_question
from sentinel_mcp.identity.http_auth import a2a_peer_names

log = logging.getLogger(__name__)
A2A_PREFIX = "a2a-"
# items listed on the page, the newest (the live count counts them all): a principal may have 200 waiting
# (inbox.MAX_OPEN_PER_PRINCIPAL), each with a form of up to 20 fields of up to 100 choices (answer_form)
MAX_LISTED = 50


@dataclass
class ShownQuestion:
    key: str
    message: str
    fields: list[Field]
    rule: str  # what asks: the askable's predicate, a confirmation, a consent
    decision_id: str = ""  # the gateway's decision the question belongs to (a tool's own question mid-call)
    approves: str = ""  # what "Approve" answers yes to, in the form's own words (answer_form.approval_words)


@dataclass
class ShownItem:
    id: str
    source: str  # what waits: "held call", "waiting for retry", "A2A task"
    tool: str
    arguments: Any
    session: str
    client: str | None
    reason: str
    questions: list[ShownQuestion]
    created: float | None
    expires: float | None
    risky: bool
    asked: str = ""  # what the form answers (``asked_digest``): an answer to other questions is not taken
    # whose call it is: the principal Sentinel established for the call that asked (the owner answers
    # agents' questions beside its own, and a card that did not say whose could be taken for its own)
    asker: str = ""

    # looked at when a card is shown (never for the live count, which lists every item each time)
    @functools.cached_property
    def whole(self) -> bool:
        """The card lists the arguments whole (approval_arguments.shown_whole): else no "Approve" is taken."""
        return shown_whole(self.arguments)

    @functools.cached_property
    def look_alikes(self) -> int:
        """Words of the arguments mixing scripts (approval_arguments.look_alike_words)."""
        return look_alike_words(self.arguments)


def asked_digest(questions: list[Question] | list[dict[str, Any]]) -> str:
    """The questions an item's form shows (keys, texts, forms): the form carries it back, and an approval is
    taken only for the questions it was shown with. The same call asked again refreshes its item in place
    (the policy's text may name data read since: "Buy lamp for 1?" became "Buy lamp for 2?"), and the
    person's yes to the page's "1" let the call go ahead at "2"."""
    shown = [
        [q.key, q.message, q.requested_schema] if isinstance(q, Question)
        else [q.get("key"), q.get("message"), q.get("requested_schema")]
        for q in questions
    ]
    # whole: the questions' texts quote what the caller wrote, and a yes is bound to them by this alone
    return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()


def _rule_of(meta: dict[str, Any]) -> str:
    kind = meta.get("kind") or "question"
    if kind in ("ask",) and meta.get("predicate"):
        arity = len(meta.get("inputs") or []) + (0 if meta.get("type") == "yes_no" else 1)
        return f"askable {meta['predicate']}/{arity}"
    if kind in ("confirm", "confirmation"):
        return f"confirmation of {meta.get('tool') or 'the call'}" + (
            " (the rulebase's confirmed/2)" if kind == "confirm" else " (the default policy: a write)"
        )
    if kind == "upstream_question":
        return (
            f"{meta.get('tool') or 'the call'}, while it runs (a tool's own question, such as the device's)"
        )
    if kind == "consent":
        return f"consent to {meta.get('consent') or meta.get('category') or 'personal data'}"
    return str(kind)


SOURCES = {
    "held": "held call (the client waits)",
    "blocked": "waiting for the client's retry",
    "retry": "2026-era call between rounds",
    "waiting": "waits for you (its caller cannot be asked)",
}


def _shown_questions(questions: list[Question]) -> list[ShownQuestion]:
    return [
        ShownQuestion(
            q.key,
            safe_question(Marked(q.message))[0],
            fields_of(i, q.requested_schema),
            _rule_of(q.meta),
            _decision_of(q.meta),
            # an upstream's form only: Sentinel's own questions say what they ask in their text
            approval_words(q.requested_schema) if q.meta.get("kind") == UPSTREAM_QUESTION else "",
        )
        for i, q in enumerate(questions)
    ]


def _decision_of(meta: dict[str, Any]) -> str:
    value = meta.get("decision_id")
    return value if isinstance(value, str) and DECISION_ID.fullmatch(value) else ""


def _a2a_questions(record: Any) -> list[dict[str, Any]]:
    message = record.task.status.message
    for part in (message.parts if message is not None else []) or []:
        if isinstance(part.data, dict) and part.data.get("type") == "input_request":
            return [q for q in part.data.get("questions") or [] if isinstance(q, dict)]
    return []


def a2a_asks(record: Any, shown: str) -> bool:
    """Whether an A2A task waiting for input asks what a page showed (``asked_digest``): the round shown, not
    a later one whose questions share its keys."""
    keys = record.pending.question_keys if record.pending is not None else []
    return asked_digest([q for q in _a2a_questions(record) if q.get("key") in keys]) == shown


def a2a_peers(console: Console) -> frozenset[str]:
    """The A2A peers' names (``identity.http_auth.a2a_peer_names``): their questions are the owner's."""
    rt = console.holder.runtime
    return a2a_peer_names(rt.config) if rt is not None else frozenset()


async def _a2a_waiting(console: Console, viewer_name: str, is_owner: bool) -> list[Any]:
    """The A2A tasks waiting for input this viewer answers: a person's own; the owner's own and every
    peer's (a peer cannot answer for the phone's user, not by signing in here either); a peer's, none."""
    service = console.holder.a2a_service
    if service is None:
        return []
    askers = _askers(console, viewer_name, is_owner)
    return list(await service.waiting_for(askers)) if askers else []  # one look for all of them


async def _a2a_items(console: Console, principal: str, is_owner: bool = False) -> list[ShownItem]:
    out = []
    tool_of = console.runtime.gateway.find_tool
    for record in await _a2a_waiting(console, principal, is_owner):
        qs = [q for q in _a2a_questions(record) if q.get("key") in record.pending.question_keys]
        out.append(
            ShownItem(
                A2A_PREFIX + record.task.id,
                "A2A task (input required)",
                record.pending.tool,
                # as a held call's card lists them: the tool's own secrets masked (its schema says which),
                # the rest as sent; before, a password the peer's call carried was on the page
                approval_arguments(tool_of(record.pending.tool), record.pending.arguments),
                record.session_id,
                record.owner,
                f"A2A task {record.task.id}",
                [
                    ShownQuestion(
                        str(q.get("key")),
                        # marked where the task asked it (a guard's question): its marks are kept, and
                        # a hidden character that reached it raw is still marked here
                        safe_question(Marked(str(q.get("message") or "")))[0],
                        fields_of(i, q.get("requested_schema")),
                        "a question of the policy",
                    )
                    for i, q in enumerate(qs)
                ],
                None,
                None,
                False,
                asked_digest(qs),
                record.owner,
            )
        )
    return out


def _askers(console: Console, viewer: str, is_owner: bool) -> list[str]:
    """Whose questions this viewer answers: its own; the owner also every peer's (an agent answers no
    question in the user's name, its own MCP calls' neither); a peer, nobody's."""
    peers = a2a_peers(console)
    if viewer in peers:
        return []
    return [viewer, *sorted(peers)] if is_owner else [viewer]


async def items_for(console: Console, principal: str, is_owner: bool = False) -> list[ShownItem]:
    if principal in a2a_peers(console):
        return []  # an agent answers no question in the user's name, its own MCP calls' neither
    items = [
        ShownItem(
            i.id,
            SOURCES.get(i.kind, i.kind),
            i.tool,
            i.arguments,
            i.session,
            i.client,
            i.reason,
            _shown_questions(i.questions),
            i.created,
            i.expires,
            i.risky,
            asked_digest(i.questions),
            i.asked_by,
        )
        for asker in _askers(console, principal, is_owner)
        for i in console.inbox.open_items(asker)
    ]
    return items + await _a2a_items(console, principal, is_owner)


async def inbox_page(
    console: Console, request: Request, viewer: Viewer, *, error: str | None = None, status: int = 200
) -> Response:
    name = viewer.principal.name
    waiting = await items_for(console, name, viewer.principal.is_owner)
    answered = [i for asker in _askers(console, name, viewer.principal.is_owner)
                for i in console.inbox.answered_items(asker)]
    return console.render(
        request,
        viewer,
        "inbox.html",
        status=status,
        items=waiting[:MAX_LISTED],
        unlisted=max(0, len(waiting) - MAX_LISTED),
        answered=answered,
        error=error,
        assists=await assist_pages.open_for(console, viewer),
        max_reply=assist_pages.MAX_REPLY,
        max_text=MAX_TEXT,
    )


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    async def show(request: Request, viewer: Viewer) -> Response:
        return await inbox_page(console, request, viewer)

    async def decide(request: Request, viewer: Viewer) -> Response:
        form = request.state.form
        item_id = str(request.path_params["item"])
        approve = form.get("decision") == "approve"
        if form.get("decision") not in ("approve", "deny"):
            return await inbox_page(console, request, viewer, error="choose Approve or Deny", status=400)
        if item_id.startswith(A2A_PREFIX):
            return await _decide_a2a(console, request, viewer, item_id[len(A2A_PREFIX) :], approve)
        askers = _askers(console, viewer.principal.name, viewer.principal.is_owner)
        item = next((i for i in (console.inbox.get(a, item_id) for a in askers) if i is not None), None)
        if item is None:  # another principal's, settled, expired, made up, or a peer's: the same for all
            return await _gone(console, request, viewer)
        if _unshown(form):
            return await _unshown_page(console, request, viewer)
        if approve and _changed(form, item.questions):
            return await _changed_page(console, request, viewer)
        if approve and not shown_whole(item.arguments):
            return await _not_whole_page(console, request, viewer)
        answers: dict[str, Answer] = {}
        if not approve:
            answers = console.inbox.denial(item)
        else:
            for i, q in enumerate(item.questions):
                answer, problem = read_answer(i, q, form, approve=True)
                if answer is None:
                    return await inbox_page(
                        console,
                        request,
                        viewer,
                        status=400,
                        # the question marked when it was asked, the problem (a field's title) marked here
                        error=compose("\u201c", safe_question(Marked(q.message))[0], "\u201d: ", problem),
                    )
                answers[q.key] = answer
        if not await console.inbox.give(item, answers):  # counted once, whichever replica it was given on
            return await _gone(console, request, viewer)
        return RedirectResponse("/console/inbox", status_code=303, headers=HEADERS)

    async def reply(request: Request, viewer: Viewer) -> Response:
        """The owner's reply to another agent's help request (it goes back to that agent)."""
        status, error = await assist_pages.reply(
            console, viewer, str(request.path_params["request"]), request.state.form
        )
        if error is not None:
            return await inbox_page(console, request, viewer, error=error, status=status)
        return RedirectResponse("/console/inbox", status_code=303, headers=HEADERS)

    return [
        ("/inbox", show, ["GET"], False),
        ("/inbox/{item}", decide, ["POST"], True),
        ("/inbox/assist/{request}", reply, ["POST"], True),
    ]


def _unshown(form: Any) -> bool:
    """Whether the form does not say which questions it was shown with (no ``asked`` field). Such a form was
    taken as answering whatever the item asked when it arrived: a form filled in for an older question (a
    script's, a page's without the field) answered a newer one its sender never read."""
    return not isinstance(form.get("asked"), str)


def _changed(form: Any, questions: list[Question] | list[dict[str, Any]]) -> bool:
    """Whether the form was shown with other questions than the item asks now."""
    return form.get("asked") != asked_digest(questions)


async def _unshown_page(console: Console, request: Request, viewer: Viewer) -> Response:
    error = "the answer does not say which question it answers: answer from the question's own form"
    return await inbox_page(console, request, viewer, status=400, error=error)


async def _changed_page(console: Console, request: Request, viewer: Viewer) -> Response:
    error = "the question changed while you read it (it now reads as below): read it again, then answer"
    return await inbox_page(console, request, viewer, status=409, error=error)


async def _not_whole_page(console: Console, request: Request, viewer: Viewer) -> Response:
    error = ("this call's arguments are longer than a page lists whole, so what it would run cannot be read "
             "here: it is not approved (deny it, or answer it from a client that shows the whole call)")
    return await inbox_page(console, request, viewer, status=409, error=error)


async def _gone(console: Console, request: Request, viewer: Viewer) -> Response:
    """Another principal's question, a settled or expired one, or a made-up id: the same answer for all."""
    error = "no such question waiting for you (answered already, or expired)"
    return await inbox_page(console, request, viewer, status=404, error=error)


async def _decide_a2a(
    console: Console, request: Request, viewer: Viewer, task_id: str, approve: bool
) -> Response:
    service = console.holder.a2a_service
    waiting = await _a2a_waiting(console, viewer.principal.name, viewer.principal.is_owner)
    record = next((r for r in waiting if r.task.id == task_id), None)
    if record is None or service is None:
        return await _gone(console, request, viewer)
    asked = [q for q in _a2a_questions(record) if q.get("key") in record.pending.question_keys]
    if _unshown(request.state.form):
        return await _unshown_page(console, request, viewer)
    if approve and _changed(request.state.form, asked):
        return await _changed_page(console, request, viewer)
    if approve and not shown_whole(record.pending.arguments):
        return await _not_whole_page(console, request, viewer)
    answers: dict[str, Answer] = {}
    for i, q in enumerate(asked):
        answer, problem = read_answer(i, q, request.state.form, approve=approve)
        if answer is None:
            return await inbox_page(console, request, viewer, status=400, error=str(problem))
        answers[str(q.get("key"))] = answer
    shown = asked_digest(asked)
    try:  # the task's, answered by this viewer, if it still asks what was shown
        await service.answer_as_user(task_id, record.owner, answers, lambda now: a2a_asks(now, shown))
    except Exception as e:  # noqa: BLE001 - the task moved on meanwhile (canceled, answered by the peer)
        log.info("A2A answer from the console not taken: %s", e)
        return await inbox_page(console, request, viewer, status=409, error="that task takes no answer now")
    console.inbox.notify(viewer.principal.name, "inbox")
    return RedirectResponse("/console/inbox", status_code=303, headers=HEADERS)
