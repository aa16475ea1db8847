"""What every console page shares: the templates (autoescaped), the viewer check, CSRF on POST, headers.

Everything a page shows came from somewhere hostile (tool names, arguments, results, question texts, audit
rows): Jinja2 escapes every value, ``shown`` also makes invisible and direction-changing characters visible,
and the Content-Security-Policy allows only the console's own script and style (no inline script runs).
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_mcp.console.approval_arguments import CARD_CHARS, CUT_NAME, CUT_VALUE, MAX_ARGUMENTS
from sentinel_mcp.console.form_body import FormRefused, read_form
from sentinel_mcp.core import process_clock
from sentinel_mcp.console.form_values import sent_value
from sentinel_mcp.console.query_params import declared_query, read_query
from sentinel_mcp.config import Config
from sentinel_mcp.console.auth import ConsoleAuth, Viewer, started_elsewhere
from sentinel_mcp.console.inbox import CHANGE_KINDS
from sentinel_mcp.console.links import segment
from sentinel_mcp.console.segment_routes import routable
from sentinel_mcp.core.builtin import Services
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.core.errors import ConsoleError
from sentinel_mcp.core.host import HostState, RunningHost
from sentinel_mcp.gateway.audit import AuditLog
from sentinel_mcp.gateway.core import Gateway
from sentinel_mcp.gateway.front import Front
from sentinel_mcp.gateway.catalog_health import CatalogHealth

if TYPE_CHECKING:
    from jinja2 import Environment

HERE = Path(__file__).resolve().parent
FORM_LIMIT = 256 * 1024  # bytes of a form body (a candidate rulebase is the largest)
HEADERS = {
    "content-security-policy": (
        # nothing but the console's own script, style and live stream: no page shows an image or media, so
        # none may load (a data: source let an injected SVG or tracking image in)
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on form posts, which the
    # HTTP host (rightly) refuses
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
}


class WithHeaders:
    """Every answer of the console app carries ``HEADERS`` (those it does not set itself): the ones Starlette
    makes (an unknown path, a wrong method, a static file) were framable, sniffable and cacheable."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k.encode(), v.encode()) for k, v in HEADERS.items() if k.encode() not in have]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, sending)


def shown(value: Any, limit: int = 2000) -> str:
    """Any value as a person should read it: JSON for structures, control, invisible and bracket-like
    characters marked (``core.display_text``); text the core already marked (a ``Marked`` question or
    warning) keeps its marks, so nothing is marked twice."""
    if value is None:
        return ""
    return safe_text(value, limit)


def shown_id(value: Any, limit: int = 120) -> str:
    """An id (a session's) as a person tells it from every other: ``shown``, and an id cut at ``limit`` ends
    with a digest of the whole (two ids alike up to the cut read alike)."""
    text = value if isinstance(value, str) else str(value)
    head = safe_text(text[:limit], limit)
    if len(text) <= limit:
        return head
    # whole: the id's writer (an A2A peer names its context) could make two long ids read alike to the cut
    # and share a 48-bit digest for 2^24 hashes, and a person would take one for the other
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{head}…⟨{len(text) - limit} more characters, whole id #{digest}⟩"


def _seconds(value: Any) -> float | None:
    """A stored time as a finite number of seconds, or None (a page shows it as no time, never fails)."""
    if isinstance(value, bool):
        return None
    try:  # a store's number of any type (a server store's Decimal too), or its text
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


_NOT_CSS_WORD = re.compile(r"[^A-Za-z0-9_-]")


def css_word(value: Any, limit: int = 40) -> str:
    """A value named in a class attribute (a run's status, a decision, a provenance) as one word of letters,
    digits, ``_`` and ``-``: escaping keeps a space, so a value "x skip" added the class ``skip`` (moved off
    the page) or ``approve``, and stored text decided how its own row looks."""
    text = value if isinstance(value, str) else str(value)
    return _NOT_CSS_WORD.sub("_", text[:limit])


def when(ts: Any) -> str:
    seconds = _seconds(ts)
    try:
        return "" if seconds is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))
    except (ValueError, OverflowError, OSError):  # past the platform's clock
        return ""


def remaining(expires: Any) -> str:
    if expires is None:
        return "session"
    seconds = _seconds(expires)
    if seconds is None:
        return "unknown"
    left = int(seconds - process_clock.now())  # times to live are on the process clock
    if left <= 0:
        return "expired"
    return f"{left // 3600}h {left % 3600 // 60}m" if left >= 3600 else f"{left // 60}m {left % 60}s"


def _environment() -> "Environment":
    # jinja2 is imported with the first page, not when the gateway starts
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(str(HERE / "templates")),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        shown=shown, shown_id=shown_id, when=when, remaining=remaining, segment=segment, routable=routable,
        css_word=css_word, sent_value=sent_value,
    )
    env.globals.update(max_arguments=MAX_ARGUMENTS, card_chars=CARD_CHARS, cut_value=CUT_VALUE,
                       cut_name=CUT_NAME)
    return env


class NotStarted(ConsoleError):
    """A page's handler ran before the gateway started (``page`` answers 503 before it gets there)."""


class ConsoleHost(RunningHost, Protocol):
    """The running gateway as the console uses it (``app.runtime.Runtime`` is one; the console sits below the
    application floor and cannot name it): the engine (its guard, consent gate, observers), the front (its
    inbox), a read-only view of the upstreams and the catalog (what a candidate policy is checked against),
    the config and the audit log."""

    @property
    def gateway(self) -> Gateway: ...

    @property
    def front(self) -> Front: ...

    @property
    def catalog_health(self) -> CatalogHealth: ...  # read-only: the upstreams' states and the tool routes

    @property
    def config(self) -> Config: ...

    @property
    def services(self) -> Services: ...

    @property
    def audit(self) -> AuditLog: ...  # on a shared store: the cluster's one audit table, every replica's rows


class Console:
    """The console's shared state: the running gateway (``holder.runtime``), its inbox, sign-in."""

    def __init__(self, holder: HostState[ConsoleHost], auth: ConsoleAuth, inbox: Any) -> None:
        self.holder = holder
        self.auth = auth
        self.inbox = inbox
        self._templates: "Environment | None" = None

    @property
    def templates(self) -> "Environment":
        if self._templates is None:
            self._templates = _environment()
        return self._templates

    @property
    def started(self) -> bool:
        return self.holder.runtime is not None

    @property
    def runtime(self) -> ConsoleHost:
        """The running gateway (``page`` answers 503 until it runs, so a page's handler always has one)."""
        rt = self.holder.runtime
        if rt is None:
            raise NotStarted("Sentinel is starting; reload in a moment")
        return rt

    def render(
        self, request: Request, viewer: Viewer | None, name: str, status: int = 200, **values: Any
    ) -> HTMLResponse:
        changes = (
            {kind: self.inbox.changes(viewer.principal.name, kind) for kind in CHANGE_KINDS}
            if viewer is not None
            else {}
        )
        page = self.templates.get_template(name).render(
            viewer=viewer,
            csrf=self.auth.csrf_token(viewer) if viewer else "",
            # encoded: an id in the path may hold control or direction characters (a session id's)
            path=quote(request.url.path, safe="/"),
            changes=changes,
            **values,
        )
        return HTMLResponse(page, status_code=status, headers=HEADERS)

    def problem(self, request: Request, viewer: Viewer | None, status: int, message: str) -> HTMLResponse:
        return self.render(request, viewer, "problem.html", status=status, message=message)


Handler = Callable[[Request, Viewer], Awaitable[Response]]


def page(
    console: Console, handler: Handler, *, form: bool = False, navigable: bool = True
) -> Callable[[Request], Awaitable[Response]]:
    """A console endpoint: signed-in viewers only; for a form, same-site and a valid CSRF token first. Nothing
    another origin's page started counts but a top-level navigation to a page (``navigable``)."""

    async def endpoint(request: Request) -> Response:
        # HEAD is answered as GET is (a HEAD answered 401 where GET sent the person to sign in)
        reading = request.method in ("GET", "HEAD")
        if started_elsewhere(request, navigation=navigable and reading):
            said = "the form was sent from" if request.method == "POST" else "this was asked for by"
            return console.problem(request, None, 403, f"refused: {said} another site's page")
        viewer = console.auth.viewer(request)
        if viewer is None:
            if reading:
                return RedirectResponse("/console/login", status_code=303, headers=HEADERS)
            return console.problem(request, None, 401, "sign in first")
        if not console.started:
            return console.problem(request, viewer, 503, "Sentinel is starting; reload in a moment")
        try:  # the page's own parameters, strictly, before anything else is read (query_params)
            read_query(request, declared_query(handler))
        except FormRefused as e:
            return console.problem(request, viewer, e.status, e.reason)
        if request.method == "POST":
            if not viewer.answers:  # a client holds its token or certificate: it answers nothing for anyone
                held = "a token in a header" if viewer.by_header else "a client certificate alone"
                return console.problem(
                    request, viewer, 403, "refused: a form is the person's, sent from a console signed in "
                    f"with the console secret ({held} reads pages only)"
                )
            try:
                data = await read_form(request, FORM_LIMIT, max_fields=200)
            except FormRefused as e:
                return console.problem(request, viewer, e.status, e.reason)
            if not console.auth.csrf_ok(viewer, data.get("csrf")):
                return console.problem(
                    request,
                    viewer,
                    403,
                    "refused: the form's token is missing or not yours (reload the page and try again)",
                )
            request.state.form = data
        try:
            return await handler(request, viewer)
        except FormRefused as e:  # a field or query parameter past its bound (form_body.bounded)
            return console.problem(request, viewer, e.status, e.reason)

    return endpoint
