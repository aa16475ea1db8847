"""The web console, mounted at /console by ``serve --http``: sign-in, the pages, static files, live updates.

    console = build_console(holder, authenticator, settings, console_secrets)   # a Starlette app
    app.router.routes.append(SegmentMount("/console", app=console))
    holder.runtime.front.inbox = ...                           # done here, once the runtime runs

Each page is its own module (inbox_pages, activity_pages, session_pages, policy_pages, system_pages); this one
only wires them.
"""

from __future__ import annotations

import asyncio
import functools
import math
import secrets
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse

from sentinel_mcp.console.form_body import FormRefused, read_form
from sentinel_mcp.console.query_params import read_query
from sentinel_mcp.console import (activity_pages, agent_pages, assist_pages, builds_pages, inbox_pages,
                                  model_pages, pins_pages, policy_pages, session_pages, system_pages)
from sentinel_mcp.console.asking import InboxAsking
from sentinel_mcp.console.cluster_inbox import ClusterInbox
from sentinel_mcp.console.auth import ConsoleAuth, Viewer, sign_in_name, started_elsewhere
from sentinel_mcp.console.inbox import CHANGE_KINDS, Inbox
from sentinel_mcp.console.person_questions import PersonQuestions
from sentinel_mcp.console.segment_routes import SegmentMount, SegmentRoute
from sentinel_mcp.console.sign_in_limit import SignInLimit
from sentinel_mcp.console.static_files import StaticRoute
from sentinel_mcp.identity.http_auth import a2a_peer_names
from sentinel_mcp.identity.principal import OWNER_NAME
from sentinel_mcp.console.web import HEADERS, HERE, Console, ConsoleHost, WithHeaders, page
from sentinel_mcp.core.host import HostState
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.resolver import Authenticator, TokenResolver
from sentinel_mcp.policy import check_process, spare_child

HEARTBEAT_SECONDS = 15.0
ASSIST_POLL_SECONDS = 2.0  # how often an open stream looks for new or settled help requests
LOGIN_FORM_LIMIT = 8192  # bytes of the sign-in form (a console secret and its CSRF nonce)
NOT_A_SECRET = (
    "That is not a console secret. Sign in with your console secret, never a token (a client holds that); "
    "a principal without a console secret signs in only by a client certificate."
)


class ConsoleSettings:
    """``sentinel.console``: ``enabled`` (true), ``hold_seconds`` (60: how long a non-eliciting client's call
    waits for an answer given here), ``hold_when`` ("watched": while a console of that principal is open;
    "always"; "never"), ``question_ttl`` (600: how long a question and its answer stay valid), ``ask_seconds``
    (120: how long a
    question no caller can be asked, an A2A peer's, a non-eliciting client's device confirmation, their agent
    runs', waits here before the call is refused; 0: refused at once)"""

    def __init__(self, section: dict[str, Any] | None) -> None:
        section = section or {}
        self.enabled = bool(section.get("enabled", True))
        self.hold_seconds = float(section.get("hold_seconds", 60))
        self.hold_when = str(section.get("hold_when", "watched"))
        self.question_ttl = float(section.get("question_ttl", 600))
        self.ask_seconds = float(section.get("ask_seconds", 120))
        if (
            self.hold_when not in ("watched", "always", "never")
            or not 0 <= self.hold_seconds <= 3600
            or not 10 <= self.question_ttl <= 86400
            or not 0 <= self.ask_seconds <= 3600
        ):
            from sentinel_mcp.config import ConfigError

            raise ConfigError(
                "sentinel.console: hold_when is watched|always|never, hold_seconds 0..3600, "
                "question_ttl 10..86400, ask_seconds 0..3600"
            )


def attach(holder: HostState[ConsoleHost], inbox: Inbox, ask_seconds: float = 120.0) -> None:
    """Give the running front its inbox (called when the runtime has started)."""
    rt = holder.runtime
    if rt is not None and rt.front.inbox is None:
        rt.front.inbox = InboxAsking(inbox, rt.gateway)
        rt.gateway.person_inbox = PersonQuestions(inbox, rt.gateway, ask_seconds)
        agent_pages.watch(rt, inbox)
        # every audited call may change what the Activity page shows: tell the principal's open consoles; a
        # peer's call may have a question for the owner (inbox_pages: peers answer none)
        peers = a2a_peer_names(rt.config)
        # another agent's MCP calls ask nothing of its client: their questions are the owner's (held while the
        # owner's console is open, listed and answered there)
        inbox.answerer = lambda principal: OWNER_NAME if principal in peers else principal

        def tell(entry: Any) -> None:
            inbox.notify(entry.principal, "activity")
            if entry.principal in peers:
                inbox.notify(OWNER_NAME, "inbox")

        rt.gateway.observers.append(tell)


def build_console(
    holder: HostState[ConsoleHost],
    authenticator: Authenticator,
    settings: ConsoleSettings,
    console_secrets: TokenResolver | None = None,
    data_dir: Path | None = None,
    limit: SignInLimit | None = None,
) -> tuple[Starlette, Inbox]:
    """The console's app and inbox. ``data_dir``: where the owner's one-time sign-in links are; ``limit``: the
    sign-in form's (``sign_in_limit.py``; a test's with its own clock)."""
    inbox = Inbox(ttl=settings.question_ttl, hold_seconds=settings.hold_seconds, hold_when=settings.hold_when)
    console = Console(holder, ConsoleAuth(authenticator, console_secrets, data_dir, limit), inbox)
    routes: list[Any] = [
        SegmentRoute("/", functools.partial(_home, console), methods=["GET"]),
        SegmentRoute("/login", functools.partial(_login_form, console), methods=["GET"]),
        SegmentRoute("/login", functools.partial(_login, console), methods=["POST"]),
        # the link: the page, its token after "#" (console_link.LINK_PATH); in the path, a link made before
        SegmentRoute("/login/once", functools.partial(_link_page, console), methods=["GET"]),
        SegmentRoute("/login/once/{token}", functools.partial(_link_page, console), methods=["GET"]),
        SegmentRoute("/login/once", functools.partial(_login_once, console), methods=["POST"]),
        SegmentRoute(
            "/logout", page(console, lambda r, v: _logout(console, r, v), form=True), methods=["POST"]
        ),
        # the live stream is the console script's own (never a page to open): it makes the person "watching"
        SegmentRoute(
            "/events", page(console, lambda r, v: _events(console, r, v), navigable=False), methods=["GET"]
        ),
        StaticRoute("static", HERE / "static"),  # by exact name as sent, the files there at start
        *page_routes(console, lambda handler, form: page(console, handler, form=form)),
    ]
    return Starlette(routes=routes, middleware=[Middleware(WithHeaders)]), inbox


PAGE_MODULES = (
    inbox_pages,
    activity_pages,
    session_pages,
    policy_pages,
    system_pages,
    pins_pages,
    builds_pages,
    agent_pages,
    model_pages,
)


def page_routes(console: Console, endpoint: Callable[[Any, bool], Any]) -> list[Any]:
    """Every page's route; ``endpoint(handler, form)`` makes the ASGI endpoint of a page's handler (``page``;
    the routing tests give one that says which route was reached, with which ids). Routed on the path as it
    was sent (segment_routes): an id holding an encoded ``/`` is one id, never two segments."""
    return [
        SegmentRoute(path, endpoint(handler, form), methods=methods)
        for module in PAGE_MODULES
        for path, handler, methods, form in module.routes(console)
    ]


async def _home(console: Console, request: Request) -> Response:
    if started_elsewhere(request):  # as every page: no other site's image or fetch (only a link to it)
        return console.problem(request, None, 403, "refused: this was asked for by another site's page")
    return RedirectResponse("/console/inbox", status_code=303, headers=HEADERS)


def _query_refused(console: Console, request: Request) -> Response | None:
    """The sign-in page takes no query parameter, as no page that declares none does (query_params)."""
    try:
        read_query(request, {})
    except FormRefused as e:
        return console.problem(request, None, e.status, e.reason)
    return None


async def _login_form(
    console: Console, request: Request, error: str | None = None, status: int = 200, *,
    template: str = "login.html", signed_in_goes_home: bool = True, **values: Any,
) -> Response:
    if error is None:
        # as every page: another site's image or fetch learnt whether the person is signed in (a redirect or
        # the form), and replaced the sign-in cookie under a person signing in ("the form expired")
        if started_elsewhere(request):
            return console.problem(request, None, 403, "refused: this was asked for by another site's page")
        if (refused := _query_refused(console, request)) is not None:
            return refused
    viewer = console.auth.viewer(request)
    # a certificate's viewer reads only: this form is how its person signs in to answer
    if signed_in_goes_home and viewer is not None and viewer.answers:
        return RedirectResponse("/console/inbox", status_code=303, headers=HEADERS)
    nonce = secrets.token_urlsafe(24)
    response = console.render(
        request, None, template, status=status, login_csrf=console.auth.login_csrf(nonce), error=error,
        **values,
    )
    args = console.auth.cookie_args(request)
    response.set_cookie(console.auth.login_cookie(request), nonce, max_age=3600, **args)  # type: ignore[arg-type]
    return response


async def _sign_in_form(console: Console, request: Request, **page: Any) -> FormData | Response:
    """A sign-in form's fields, once it is the console's own (same origin, no query, bounded, the page's
    double-submit token); else the answer that refuses it (the form again, as ``page`` says)."""
    if started_elsewhere(request, navigation=False):
        return console.problem(request, None, 403, "refused: the form was sent from another site")
    if (refused := _query_refused(console, request)) is not None:
        return refused
    try:  # before a secret is checked: the bound must hold for anyone who can reach the page
        form = await read_form(request, LOGIN_FORM_LIMIT, max_fields=10)
    except FormRefused as e:
        return await _login_form(console, request, e.reason, e.status, **page)
    if not console.auth.login_csrf_ok(request, form.get("csrf")):
        return await _login_form(console, request, "The sign-in form expired; try again.", 403, **page)
    return form


async def _login(console: Console, request: Request) -> Response:
    form = await _sign_in_form(console, request)
    if isinstance(form, Response):
        return form
    secret = form.get("secret")
    name = sign_in_name(form.get("name"))  # named: counted and blocked under that name only
    presented = Credentials.from_scope(request.scope)
    device = console.auth.device(request, name)  # a browser this name's principal signed in on: its own count
    if wait := console.auth.limit.wait(presented.peer, name, device):  # refused unchecked, the right one too
        return await _login_form(console, request, _blocked(wait, name), 429)
    signed = console.auth.sign_in(secret if isinstance(secret, str) else "", presented, name, device)
    if signed is None:
        if wait := console.auth.limit.wait(presented.peer, name, device):
            return await _login_form(console, request, _blocked(wait, name), 429)
        return await _login_form(console, request, NOT_A_SECRET, 401)
    response = _signed_in(console, request, signed[0])
    console.auth.set_device(response, request, signed[1])
    return response


def _blocked(wait: float, name: str | None) -> str:
    if name is not None:
        return (f"Too many wrong secrets under this name: signing in as it by this form is closed for "
                f"{math.ceil(wait)} s, but from a browser its principal signed in on before. On the machine "
                "Sentinel runs on, `sentinel-mcp config console-link` prints a one-time sign-in link for the "
                "owner.")
    return (f"Too many wrong secrets: signing in by this form without a name is closed for {math.ceil(wait)} "
            "s. Type your principal's name beside your secret: a sign-in under your own name is counted "
            "apart. On the machine Sentinel runs on, `sentinel-mcp config console-link` prints a one-time "
            "sign-in link for the owner.")


# the link's page: its path (a link in the old spelling has the token there) never in a Referer, even to the
# console's own style sheet; not no-referrer, under which a browser sends "Origin: null" with the page's form,
# which the HTTP host refuses
LINK_REFERRER = "strict-origin"


async def _link_page(console: Console, request: Request) -> Response:
    """The owner's one-time sign-in link (``identity/console_link.py``), opened: a page whose button signs
    in (a POST). Nothing is claimed by opening it: a link preview, a mail scanner or a browser's prefetch
    fetches the link before the person does, and a GET that signed in spent the link on them (and gave
    them the session). The token comes after "#", which the browser keeps to itself (``static/link.js``
    puts it into the form); a link in the old spelling has it in the path, put into the form here."""
    if started_elsewhere(request):  # only a top-level navigation: no other site's image or fetch
        return console.problem(request, None, 403, "refused: this was asked for by another site's page")
    if (refused := _query_refused(console, request)) is not None:
        return refused
    token = request.path_params.get("token")
    # shown to a browser signed in as another principal too: the owner's link is how the owner gets in there
    response = await _login_form(console, request, None, 200, template="login_once.html",
                                 signed_in_goes_home=False, token=token if isinstance(token, str) else "")
    response.headers["referrer-policy"] = LINK_REFERRER
    return response


async def _login_once(console: Console, request: Request) -> Response:
    """The link page's button: the token in the form's body, never in a URL. Refused, the link's page again
    (at this same address: a next link pasted there differs only after "#", which reloads no page, so the
    page there must be one whose script takes it)."""
    page: dict[str, Any] = {"template": "login_once.html", "signed_in_goes_home": False, "token": ""}
    form = await _sign_in_form(console, request, **page)
    if isinstance(form, Response):
        return form
    presented = Credentials.from_scope(request.scope)
    signed = console.auth.sign_in_once(form.get("token"), presented)
    if signed is None:
        return await _login_form(
            console, request, "That sign-in link is used, expired or not one made here: on the machine "
            "Sentinel runs on, `sentinel-mcp config console-link` prints a new one.", 401, **page)
    response = _signed_in(console, request, signed[0])
    console.auth.set_device(response, request, signed[1])
    return response


def _signed_in(console: Console, request: Request, sid: str) -> Response:
    for held in console.auth.end_held(request):  # the session this browser had before: ended, its streams too
        console.inbox.end_session_streams(held)
    response = RedirectResponse("/console/inbox", status_code=303, headers=HEADERS)
    args = console.auth.cookie_args(request)
    response.set_cookie(console.auth.cookie(request), sid, max_age=12 * 3600, **args)  # type: ignore[arg-type]
    response.delete_cookie(console.auth.login_cookie(request), **args)  # type: ignore[arg-type]
    return response


async def _logout(console: Console, request: Request, viewer: Viewer) -> Response:
    everywhere = request.state.form.get("everywhere") == "1"
    for sid in console.auth.sign_out(viewer, everywhere=everywhere):
        console.inbox.end_session_streams(sid)
    response = RedirectResponse("/console/login", status_code=303, headers=HEADERS)
    response.delete_cookie(console.auth.cookie(request), **console.auth.cookie_args(request))  # type: ignore[arg-type]
    return response


async def _events(console: Console, request: Request, viewer: Viewer) -> Response:
    """Server-sent events: ``inbox`` (the number waiting: questions and, for the owner, other agents' help
    requests) and ``activity``, for this principal only.

    A help request has no event to push: it lives in a SQLite file the A2A service, ``sentinel-mcp chat`` and
    other processes write, so the stream looks at that count every ``ASSIST_POLL_SECONDS`` (one small query).
    """
    name = viewer.principal.name
    watching = console.inbox.watch(name, viewer.session_id)
    if watching is None:
        return console.problem(request, viewer, 429, "too many live console pages are open; close some")
    queue = watching

    async def stream() -> AsyncIterator[bytes]:
        try:
            assists = await assist_pages.count_for(console, viewer)
            yield _sse("inbox", await _inbox_count(console, name, assists, viewer.principal.is_owner))
            for kind in CHANGE_KINDS:  # what changed since the page was rendered, before this stream opened
                yield _sse(kind, str(console.inbox.changes(name, kind)))
            quiet = 0.0
            while True:
                try:
                    what = await asyncio.wait_for(queue.get(), ASSIST_POLL_SECONDS)
                except asyncio.TimeoutError:
                    now = await assist_pages.count_for(console, viewer)
                    if not console.auth.still_viewing(viewer, request):
                        return  # signed out, or its certificate revoked or expired since the stream began
                    if now == assists:
                        quiet += ASSIST_POLL_SECONDS
                        if quiet >= HEARTBEAT_SECONDS:
                            quiet = 0.0
                            if await request.is_disconnected():
                                return
                            yield b": keep-alive\n\n"
                        continue
                    what = "inbox"
                if what == "end" or not console.auth.still_viewing(viewer, request):
                    return  # the server stops, or this session was signed out: its stream ends too
                if what == "inbox":
                    assists = await assist_pages.count_for(console, viewer)
                    yield _sse(what, await _inbox_count(console, name, assists, viewer.principal.is_owner))
                elif what in CHANGE_KINDS:
                    yield _sse(what, str(console.inbox.changes(name, what)))
                else:
                    yield _sse(what, "1")
        finally:
            console.inbox.unwatch(name, queue)

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={**HEADERS, "x-accel-buffering": "no"}
    )


async def _inbox_count(console: Console, name: str, assists: int, is_owner: bool = False) -> str:
    """``<number waiting> <1 if a risky call is among them>`` (a help request is not a call: never risky)."""
    items = await inbox_pages.items_for(console, name, is_owner)
    return f"{len(items) + assists} {int(any(i.risky for i in items))}"


def _sse(event: str, data: str) -> bytes:
    return f"event: {event}\ndata: {data}\n\n".encode()


def mount_console(
    app: Any,
    holder: HostState[ConsoleHost],
    authenticator: Authenticator,
    config: Any,
    console_secrets: TokenResolver | None = None,
) -> None:
    """Mount the console at /console of the gateway's Starlette app; give the front its inbox once it runs.
    ``console_secrets``: what the sign-in form accepts (``HttpAuth.console_secrets``; none: only client
    certificates sign a browser in)."""
    import contextlib

    settings = ConsoleSettings(config.sentinel.builtin_settings("console"))
    if not settings.enabled:
        return
    data_dir = getattr(config, "data_dir", None)
    console, inbox = build_console(holder, authenticator, settings, console_secrets, data_dir)
    app.router.routes.append(SegmentMount("/console", app=console))
    holder.console_inbox = inbox

    @contextlib.asynccontextmanager
    async def lifespan(_rt: Any) -> AsyncIterator[None]:
        attach(holder, inbox, settings.ask_seconds)
        # one warm check child ready while the console runs (spare_child), killed with its group at the end
        spare_child.enable(check_process.CHILD, check_process.WALL_SECONDS)
        rt = holder.runtime
        shared = None
        if rt is not None and rt.services.store_url and rt.services.replica:  # every replica's questions
            shared = await ClusterInbox(
                inbox, rt.services.store_url, rt.services.replica, key=rt.services.inbox_key
            ).start()
        try:
            yield
        finally:
            await spare_child.stop()
            if shared is not None:
                await shared.stop()

    holder.add_lifespan(lifespan)
