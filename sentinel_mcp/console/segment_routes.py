"""The console's routes, matched on the path as it was sent: split on its literal ``/`` first, then each
segment percent-decoded once.

The server decodes the whole path before routing (``scope["path"]``), so an id holding an encoded ``/``
became two segments: ``/console/agent/audit%2Fx`` (the run ``audit/x``) reached the audit-row page with the
id ``x``, ``/console/inbox/assist%2Fx`` the help-request reply. Here the path is read from
``scope["raw_path"]``: a route's fixed words and its ids are whole segments as sent (``links.segment``
encodes each value whole, so a link and its route agree), and ``%252F`` is the id ``%2F``, never ``/``.

    SegmentRoute("/sessions/{sid:key}/revoke", endpoint, methods=["POST"])
    # {name}: an id, one segment; {name:with_slash}: an id that may hold "/", its slashes encoded (a link's
    # one segment: alice%2Fhttp-1) or not (alice/http-1, each segment checked as an id's), the same id;
    # {name:key}: one that may hold "/" and that is only ever looked up, never a path (a session id): it may
    # also hold control characters
    SegmentMount("/console", app=console)   # the console under the gateway, its word whole as well

An id is refused (400) when it is no id any page has and a reader along the way may take it for a path:
``.`` or ``..`` (however its dots were spelled), empty, a lone ``/`` or ``\\``, any control character (NUL,
newline, C1; in a key, NUL only), or a path that is not UTF-8; a plain id holding ``/`` or ``\\`` at all. An
id that may hold ``/`` sent with its slashes as they are has each of its segments checked so. A server that
gives no raw path routes nothing (404), rather than falling back on the decoded one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Match, Mount, NoMatchFound, request_response
from starlette.types import Receive, Scope, Send

PARAM = re.compile(r"\{(\w+)(?::(\w+))?\}")
# with_slash: a file's path inside a build; key: a session id (``alice/http-…``), which a store holds as any
# text and the page only looks up: a control character in it is no path's, so the person's link reaches it
KINDS = ("id", "with_slash", "key")
SPREAD = ("with_slash", "key")  # kinds that may take several segments of the path (slashes sent as they are)
REFUSED = "sentinel.console.refused_id"  # the scope key saying why a matched route's id is refused
SEPARATORS = ("/", "\\")  # a browser reads ``\`` as ``/``


def route_segments(scope: Scope) -> list[str | None] | None:
    """The path under the app's root (its mount), one item per segment as sent, each decoded once (None:
    not UTF-8); None when the raw path is missing or its root is not the decoded root's segments."""
    raw = scope.get("raw_path")
    if not isinstance(raw, bytes):
        return None
    decoded: list[str | None] = []
    for part in raw.split(b"/"):
        try:
            decoded.append(unquote_to_bytes(part).decode("utf-8"))
        except UnicodeDecodeError:
            decoded.append(None)
    root = str(scope.get("root_path", "")).split("/")  # "/console" -> ["", "console"]; "" -> [""]
    if decoded[: len(root)] != root:  # e.g. "/console%2Fsessions/…": the mount's word split in two
        return None
    return decoded[len(root) :]


def refusal(value: str | None, kind: str) -> str | None:
    """Why ``value`` is no id of ``kind`` (None: it is one)."""
    if value is None:
        return "an id in the path is not UTF-8"
    if value in ("", ".", "..", *SEPARATORS):
        return "an id in the path is empty, a dot segment or a lone slash"
    if "\x00" in value:  # no id of any kind: a C reader's end of string, and the link of a dot segment
        return "an id in the path holds NUL"
    if kind != "key" and any(unicodedata.category(c) == "Cc" for c in value):
        return "an id in the path holds a control character"
    if kind == "id" and any(s in value for s in SEPARATORS):
        return "an id in the path holds a slash"
    return None


def routable(value: object, kind: str = "id") -> bool:
    """Whether a link to ``value`` reaches its page (a page lists an id it cannot link without a link)."""
    return refusal(value if isinstance(value, str) else str(value), kind) is None


class SegmentRoute(BaseRoute):
    """A route whose path is fixed words and ids, each one whole segment of the raw path."""

    def __init__(
        self, path: str, endpoint: Callable[..., Any], methods: Collection[str] | None = None
    ) -> None:
        assert path.startswith("/"), path
        self.path = path
        self.parts: list[str | tuple[str, str]] = []
        for word in path.split("/")[1:]:
            param = PARAM.fullmatch(word)
            if param is None:
                assert "{" not in word and "}" not in word, f"an id is a whole segment: {path}"
                self.parts.append(word)
            else:
                kind = param.group(2) or "id"
                assert kind in KINDS, f"no such id kind {kind!r}: {path}"
                self.parts.append((param.group(1), kind))
        kinds = [p[1] for p in self.parts if not isinstance(p, str)]
        assert sum(k in SPREAD for k in kinds) <= 1, f"one id of a route may hold slashes: {path}"
        self.spread = any(k in SPREAD for k in kinds)
        self.app = request_response(endpoint)
        wanted = {m.upper() for m in (methods or ["GET"])}
        self.methods = wanted | ({"HEAD"} if "GET" in wanted else set())

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http":
            return Match.NONE, {}
        got = route_segments(scope)
        extra = -1 if got is None else len(got) - len(self.parts)  # segments a with_slash id takes beyond one
        if got is None or extra < 0 or (extra and not self.spread):
            return Match.NONE, {}
        params: dict[str, Any] = {}
        refused: str | None = None
        at = 0
        for part in self.parts:
            if isinstance(part, str):
                if got[at] != part:
                    return Match.NONE, {}
                at += 1
                continue
            pieces = got[at : at + 1 + (extra if part[1] in SPREAD else 0)]
            at += len(pieces)
            if "" in pieces:  # no id there ("/console/inbox/", "a//b"): no route, as before
                return Match.NONE, {}
            refused = refused or next((r for r in (refusal(p, part[1]) for p in pieces) if r), None)
            params[part[0]] = "/".join(p or "" for p in pieces)
        child = {
            "endpoint": self.app,
            "path_params": {**scope.get("path_params", {}), **params},
            REFUSED: refused,
        }
        return (Match.FULL if scope["method"] in self.methods else Match.PARTIAL), child

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in self.methods:
            response = PlainTextResponse(
                "Method Not Allowed", status_code=405, headers={"Allow": ", ".join(sorted(self.methods))}
            )
        elif scope.get(REFUSED):
            response = PlainTextResponse(f"refused: {scope[REFUSED]}", status_code=400)
        else:
            return await self.app(scope, receive, send)
        await response(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)  # the console builds its links itself (links.py)

    def __repr__(self) -> str:
        return f"SegmentRoute(path={self.path!r}, methods={sorted(self.methods)!r})"


class SegmentMount(Mount):
    """A mount whose prefix is whole segments of the raw path. Starlette's matches the decoded path with a
    regex whose ``.`` stops at a newline, so a path with an id holding ``%0A`` never reached the console (the
    gateway's 404, not its 400); and ``/console%2Finbox`` reached it."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http":
            return super().matches(scope)
        got = route_segments(scope)
        words = self.path.split("/")[1:]
        if got is None or got[: len(words)] != words:
            return Match.NONE, {}
        if len(got) == len(words):  # the mount itself ("/console"): the router's redirect to "/console/"
            return super().matches(scope)
        root = str(scope.get("root_path", ""))
        return Match.FULL, {
            "path_params": dict(scope.get("path_params", {})),
            "app_root_path": scope.get("app_root_path", root),
            "root_path": root + self.path,
            "endpoint": self.app,
        }
