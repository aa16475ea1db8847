"""Who is using the console, and proof that a form was sent by the console's own page.

The HTTP host's ``CallerGuard`` checks Host and Origin on /console like everywhere, and leaves authentication
to this module. A browser cannot send a bearer header, so the person signs in once with their principal's
*console secret* (``identity/console_secret.py``), never a token: the MCP or A2A client holds its principal's
token, and a client that could sign in with it would answer the question its own call waits on. With mutual
TLS the browser's client certificate is that principal already, to read pages (no sign-in), and a session
never outlives a change of certificate to someone else; a certificate is a client's credential as much as a
token (the MCP client and the A2A peer present theirs to /console as to /mcp), so by itself it sends no form:
the person answers from a session signed in with the console secret. Signing in gives an
opaque, random, server-side session (cookie ``HttpOnly; SameSite=Strict``); the secret itself is never stored
in the browser. Scripts may send their bearer token instead of the cookie to read pages, never to send a
form (``web.page``): a client holds its principal's token, and answered its own call's question so.

The cookies' names follow the request's scheme: over TLS ``__Host-sentinel_console`` (and
``__Host-sentinel_console_login``), which a browser takes only from this very origin (Secure, ``Path=/``, no
``Domain``), so neither a plain page of this host nor a sibling subdomain can plant or shadow one (cookie
tossing); over plain HTTP (loopback) ``sentinel_console`` under ``Path=/console``, as a ``__Host-`` cookie
needs Secure. A cookie under the other scheme's name, or any other spelling, is never read.

Every form POST carries a CSRF token: an HMAC over the principal and the console session (or the bearer
token's
digest), so a token from one principal or sign-in never counts for another; and a request another origin's
page started (``Sec-Fetch-Site`` other than ``same-origin``), other than a top-level navigation to a page, is
refused before anything else.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from collections import OrderedDict
from dataclasses import dataclass

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from sentinel_mcp.console.sign_in_devices import DEVICE_SECONDS, SignInDevices
from sentinel_mcp.console.sign_in_limit import SignInLimit
from sentinel_mcp.core import process_clock
from sentinel_mcp.identity import console_link
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, AuthFailed, TokenResolver

COOKIE = "sentinel_console"
LOGIN_COOKIE = "sentinel_console_login"
DEVICE_COOKIE = "sentinel_console_device"  # a browser its principal signed in on (``sign_in_devices.py``)
HOST_PREFIX = "__Host-"
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 1000
# one principal's console sessions: past it that principal's oldest goes, never another's (a principal that
# signs in a thousand times must not sign the others out)
MAX_SESSIONS_PER_PRINCIPAL = 20


@dataclass
class Viewer:
    """The principal using the console, and what its CSRF token is bound to."""

    principal: Principal
    binding: str  # the console session id, or "bearer:" + the token's digest
    session_id: str | None = None
    # came by a token in a header (a script's: a client holds its principal's token): it reads pages, and
    # sends no form (``web.page``), so a client never answers the question its own call waits on
    by_header: bool = False
    # came by a client certificate alone: the MCP client or A2A peer that presents it on /mcp presents the
    # same one here, so it reads pages and sends no form either
    by_certificate: bool = False

    @property
    def answers(self) -> bool:
        """Whether this viewer may send the person's forms: a console session's (signed in with the console
        secret or the owner's link), or anyone's under ``"auth": "none"``; never a client's credential."""
        return not (self.by_header or self.by_certificate)


class ConsoleAuth:
    def __init__(self, authenticator: Authenticator, console_secrets: TokenResolver | None = None,
                 data_dir: Path | None = None, limit: SignInLimit | None = None) -> None:
        """``data_dir``: where the owner's one-time sign-in links are (``identity/console_link.py``; None:
        no links). ``limit``: how many wrong secrets are taken (``sign_in_limit.py``)."""
        self.authenticator = authenticator
        self.data_dir = data_dir
        self.limit = limit or SignInLimit()
        self.devices = SignInDevices(data_dir)
        # the sign-in form's only credentials (none: nobody signs in by the form, certificates still do)
        self.console_secrets = console_secrets or TokenResolver()
        self.secret = secrets.token_bytes(32)  # per process: a restart signs everyone out
        # sid -> (principal, until by the process clock: a wall clock set back kept a session for the step)
        self._sessions: OrderedDict[str, tuple[Principal, float]] = OrderedDict()
        for source, principal in self.console_secrets.followed():
            # a replaced secret (``config console-secret --rotate``): whoever signed in with the old one
            # is signed out, a leaked secret's sessions with it
            source.on_change.append(functools.partial(self._end_sessions_of, principal.name))

    def _end_sessions_of(self, name: str) -> None:
        for sid in [sid for sid, (p, _) in self._sessions.items() if p.name == name]:
            del self._sessions[sid]

    # ---------------------------------------------------------------- who
    def viewer(self, request: Request) -> Viewer | None:
        self.console_secrets.refresh()  # a replaced secret ends its sessions before any is looked at
        creds = Credentials.from_scope(request.scope)
        chain = (creds.tls or {}).get("client_cert_chain") or []
        try:
            # mutual TLS: the browser's client certificate is the person, no sign-in needed; a session cookie
            # then counts only for that same principal (as a token and a certificate must agree on the front)
            by_certificate = (
                self.authenticator.authenticate(Credentials(peer=creds.peer, tls=creds.tls))
                if chain
                else None
            )
        except AuthFailed:
            return None
        sid, several = self._session_of(request)
        if several:
            return None  # two live sessions (another page of this host set one beside): whose is it?
        if sid:
            found = self._sessions.get(sid)
            if found is not None:
                if by_certificate is not None and by_certificate.name != found[0].name:
                    return None
                # a header credential beside the session must name the same principal, as a token and a
                # certificate must: a session with another's token, or one no principal's, is nobody's
                if _header_credential(request) and self._header_principal(creds) != found[0].name:
                    return None
                return Viewer(found[0], "session:" + sid, sid)
        if creds.presented:
            try:
                principal = self.authenticator.authenticate(creds)
            except AuthFailed:
                return None
            if principal.kind == "anonymous":
                # "auth": "none" names every local process so, the one that made the call too: it reads
                # and answers nothing here; the person signs in with the console secret
                return None
            secret = creds.bearer or creds.api_key or ""
            return Viewer(
                principal, "bearer:" + hashlib.sha256(secret.encode()).hexdigest(), by_header=creds.presented
            )
        if by_certificate is not None:
            return Viewer(by_certificate, "certificate:" + hashlib.sha256(str(chain[0]).encode()).hexdigest(),
                          by_certificate=True)
        return None

    def _session_of(self, request: Request) -> tuple[str | None, bool]:
        """The live console session the request's cookies name, and whether they name more than one.

        A page on another port of this host (cookies ignore ports), or under plain HTTP any sibling, can set
        a cookie of this name beside the person's own, under another path; Starlette keeps the last one. A
        planted value that is no live session is passed over (else a junk cookie signed the person out for
        good); two live ones are nobody's (one may be another principal's, planted to have the person act as
        it: which is the person's cannot be told), until signing in again ends both (``end_held``)."""
        now = process_clock.now()
        live: set[str] = set()
        for sid in _cookie_values(request, self.cookie(request)):
            found = self._sessions.get(sid)
            if found is None:
                continue
            if found[1] > now:
                live.add(sid)
            else:
                del self._sessions[sid]
        return (next(iter(live)) if len(live) == 1 else None), len(live) > 1

    def _header_principal(self, creds: Credentials) -> str | None:
        """The principal a request's header token names (None: no token Sentinel accepts, or none given)."""
        if not creds.presented:
            return None
        try:
            return self.authenticator.authenticate(creds).name
        except AuthFailed:
            return None

    # ---------------------------------------------------------------- signing in and out
    def sign_in(self, secret: str, presented: Credentials | None = None, name: str | None = None,
                device: str | None = None) -> tuple[str, Principal] | None:
        """A new console session for the principal whose console secret this is (None: not one). A token
        the fronts accept is never one (``http_auth`` refuses a console secret equal to a token at start).
        ``presented``: the sign-in request's own credentials, for its client certificate (a front that
        requires one, or one that must agree with the secret). ``name`` (``sign_in_name``): the principal
        the person named, whose secret this must be; a wrong one counts against that name
        (``sign_in_limit``); from ``device`` (a browser it signed in on), against that device. The same work
        whatever the name: whether one is a principal's is never looked at."""
        now = process_clock.now()
        secret = secret.strip()
        principal = (
            self.console_secrets.resolve(Credentials(bearer=secret))
            if secret
            else None
        )
        if principal is not None and name is not None and principal.name != name:
            principal = None  # another's secret under this name: a wrong one for this name
        if principal is not None and not self._certificate_agrees(principal, presented):
            principal = None
        if principal is None:
            self.limit.failed(presented.peer if presented else None, name, device)
            return None
        return self._open_session(principal, now)

    def device(self, request: Request, name: str | None) -> str | None:
        """The device id of the request's device cookie, when it is one of ``name``'s (None: not)."""
        # the first of its cookies that is (a planted one beside it, junk or another's, is passed over)
        for value in _cookie_values(request, self.device_cookie(request))[:MAX_SAME_NAMED]:
            if (found := self.devices.device(value, name)) is not None:
                return found
        return None

    def device_cookie(self, request: Request) -> str:
        return HOST_PREFIX + DEVICE_COOKIE if over_tls(request) else DEVICE_COOKIE

    def set_device(self, response: Response, request: Request, principal: Principal) -> None:
        """Mark this browser as one ``principal`` signed in on (a cookie for the form's next sign-ins)."""
        response.set_cookie(self.device_cookie(request), self.devices.issue(principal.name),
                            max_age=DEVICE_SECONDS, **self.cookie_args(request))  # type: ignore[arg-type]

    def sign_in_once(self, token: object, presented: Credentials | None = None
                     ) -> tuple[str, Principal] | None:
        """A console session for the owner by a one-time link made on this machine (None: not a link made
        here, used, expired, or no owner signs in here; counted as a wrong secret). Taken whatever the
        form's blocks: it is 256 random bits, not a guess."""
        owner = self._owner()
        # the certificate first: a browser presenting another's must not spend the owner's link
        if owner is None or not self._certificate_agrees(owner, presented) or not console_link.claim(
            self.data_dir, token
        ):
            self.limit.failed(presented.peer if presented else None)
            return None
        return self._open_session(owner, process_clock.now())

    def _owner(self) -> Principal | None:
        """The principal the owner's console secret signs in (the owner's; ``anonymous`` under "auth":
        "none"), if the owner has one here (else nobody signs in by a link)."""
        return next((p for _, p in self.console_secrets.followed() if _owners(p)), None) or next(
            (p for p in self.console_secrets.principals() if _owners(p)), None
        )

    def _open_session(self, principal: Principal, now: float) -> tuple[str, Principal]:
        sid = secrets.token_urlsafe(32)
        mine = [k for k, (p, _) in self._sessions.items() if p.name == principal.name]
        for old in mine[: max(0, len(mine) + 1 - MAX_SESSIONS_PER_PRINCIPAL)]:
            del self._sessions[old]  # this principal's oldest
        self._sessions[sid] = (principal, now + SESSION_SECONDS)
        for gone in [k for k, (_, until) in self._sessions.items() if until <= now]:
            del self._sessions[gone]
        while len(self._sessions) > MAX_SESSIONS:  # many principals at their cap: the oldest expiring first
            self._sessions.pop(min(self._sessions, key=lambda k: self._sessions[k][1]))
        return sid, principal

    def _certificate_agrees(self, principal: Principal, presented: Credentials | None) -> bool:
        """Whether the sign-in request's client certificate (if any) is this same principal, and a front
        that requires one got one: every resolver asked with the connection's certificate alone (a token
        resolver answers None to no token; a certificate resolver refuses what it must)."""
        creds = Credentials(peer=presented.peer, tls=presented.tls) if presented else Credentials()
        try:
            for resolver in self.authenticator.resolvers:
                found = resolver.resolve(creds)
                if found is not None:
                    return found.name == principal.name
        except AuthFailed:
            return False
        return True

    def still_signed_in(self, viewer: Viewer) -> bool:
        """Whether a viewer's console session is still open (a bearer or certificate viewer has none)."""
        if viewer.session_id is None:
            return True
        found = self._sessions.get(viewer.session_id)
        return found is not None and found[1] > process_clock.now()

    def still_viewing(self, viewer: Viewer, request: Request) -> bool:
        """Whether a long request's credentials still give this same viewer: its session open, and its
        client certificate (by which it came in, or which its session must agree with) neither revoked nor
        expired since the request began (a live stream lasts as long as the page is open)."""
        now = self.viewer(request)
        same = (viewer.principal.name, viewer.binding)
        return now is not None and (now.principal.name, now.binding) == same

    def end_held(self, request: Request) -> list[str]:
        """End every console session the request's cookie names (signing in rotates: the id this browser
        held before, its own principal's or another's, must not stay good for its hours beside the new one,
        and a copy of it with it). The session ids ended."""
        ended = [sid for sid in _cookie_values(request, self.cookie(request)) if sid in self._sessions]
        for sid in ended:
            del self._sessions[sid]
        return ended

    def sign_out(self, viewer: Viewer, *, everywhere: bool = False) -> list[str]:
        """End the viewer's console session, or (``everywhere``) every console session of its principal (a
        cookie copied off another browser then counts for nothing). The session ids ended."""
        ended = [viewer.session_id] if viewer.session_id else []
        if everywhere:
            name = viewer.principal.name
            ended = [sid for sid, (p, _) in self._sessions.items() if p.name == name]
        for sid in ended:
            self._sessions.pop(sid, None)
        return ended

    def cookie_args(self, request: Request) -> dict[str, object]:
        """How the console's cookies are set (and deleted) for this request's scheme: a ``__Host-`` cookie
        must be Secure with ``Path=/`` and no ``Domain`` (a browser refuses it otherwise)."""
        tls = over_tls(request)
        return {"httponly": True, "samesite": "strict", "path": "/" if tls else "/console", "secure": tls}

    def cookie(self, request: Request) -> str:
        """The session cookie's name for this request's scheme (cookies do not tell ports apart, and a
        sibling subdomain may set one for the parent domain: only a ``__Host-`` cookie is surely this
        origin's own, and only the name of the request's own scheme is read)."""
        return HOST_PREFIX + COOKIE if over_tls(request) else COOKIE

    def login_cookie(self, request: Request) -> str:
        return HOST_PREFIX + LOGIN_COOKIE if over_tls(request) else LOGIN_COOKIE

    # ---------------------------------------------------------------- CSRF
    def csrf_token(self, viewer: Viewer) -> str:
        msg = f"csrf|{viewer.principal.name}|{viewer.binding}".encode()
        return hmac.new(self.secret, msg, hashlib.sha256).hexdigest()

    def csrf_ok(self, viewer: Viewer, presented: object) -> bool:
        return isinstance(presented, str) and hmac.compare_digest(
            self.csrf_token(viewer).encode(), presented.encode("utf-8", "replace")
        )

    def login_csrf(self, nonce: str) -> str:
        """The sign-in form's token: bound to a random cookie set with the form (double submit)."""
        return hmac.new(self.secret, f"login|{nonce}".encode(), hashlib.sha256).hexdigest()

    def login_csrf_ok(self, request: Request, presented: object) -> bool:
        """Whether ``presented`` is the token of one of the request's sign-in cookies (a cookie planted
        beside the form's own, by a page of another port, must not make the person's sign-in fail; a planted
        one verifies only with a token made for it, which its planter could have sent as well)."""
        if not isinstance(presented, str):
            return False
        token = presented.encode("utf-8", "replace")
        return any(
            hmac.compare_digest(self.login_csrf(nonce).encode(), token)
            for nonce in _cookie_values(request, self.login_cookie(request))[:MAX_SAME_NAMED]
            if nonce
        )


def _owners(principal: Principal) -> bool:
    """Whether the owner's console secret signs in as ``principal``: the owner, or under "auth": "none" the
    principal every caller of the fronts is."""
    return principal.is_owner or principal.kind == "anonymous"


MAX_NAME = 200  # characters of a principal's name on the sign-in form (a longer one is one no principal has)


def sign_in_name(value: object) -> str | None:
    """The principal a sign-in form names (None: none named, the unnamed form). Spaces around it are the
    typing's; a name past ``MAX_NAME`` is kept as its digest (remembered in the limit's table, not whole)."""
    if not isinstance(value, str) or not value.strip():
        return None
    name = value.strip()
    if len(name) <= MAX_NAME:
        return name
    return "#" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()


def over_tls(request: Request) -> bool:
    """Whether this request came over TLS (the front's own socket: uvicorn trusts no forwarded scheme)."""
    return request.scope.get("scheme") in ("https", "wss")


def started_elsewhere(request: Request, *, navigation: bool = True) -> bool:
    """Whether another origin's page started this request, as the browser says (``Sec-Fetch-Site``), and it
    is not the person opening a console page (a top-level GET navigation, when ``navigation``).

    Another port of this host is the same *site*: its pages' requests carry the console's ``SameSite=Strict``
    cookie. An image on such a page reloading ``/console/events`` every 2 s kept the person "watching" (calls
    of clients that cannot be asked were held instead of told to answer in the console) and told the page
    whether the person was signed in. No page but the console's own has a reason to load a console URL."""
    site = request.headers.get("sec-fetch-site", "").lower()
    if site in ("", "same-origin", "none"):  # no header: not a browser (or an old one); none: typed in
        return False
    return not (
        navigation
        and request.method in ("GET", "HEAD")
        and request.headers.get("sec-fetch-mode", "").lower() == "navigate"
        and request.headers.get("sec-fetch-dest", "").lower() == "document"
    )


def _header_credential(request: Request) -> bool:
    """Whether the request carries a credential header of any scheme (``Basic`` too: one not understood is
    not one that agrees)."""
    return "authorization" in request.headers or "x-api-key" in request.headers


# values of one cookie name looked at (each an HMAC for the sign-in's; the head's 16 KiB bound holds the rest)
MAX_SAME_NAMED = 64


def _cookie_values(request: Request, name: str) -> list[str]:
    """Every value the request's Cookie headers give under ``name``, as sent (a client may send the header
    more than once; Starlette reads the first)."""
    raw = "; ".join(request.headers.getlist("cookie"))
    pairs = (part.strip().split("=", 1) for part in raw.split(";"))
    return [pair[1].strip() for pair in pairs if len(pair) == 2 and pair[0].strip() == name]
