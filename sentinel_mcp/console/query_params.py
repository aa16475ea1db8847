"""A page's query parameters, read strictly: the names it takes, each at most once, UTF-8 text within its
bound; anything else is refused (400), never read some other way.

    q = read_query(request, {"q": 200})          # {"q": "..."}; an absent parameter is ""

Every console page's query is read so before its handler runs (``web.page``): a handler declares the
parameters it takes with ``@takes_query(q=200)``; one that declares none takes none, and any query sent to it
is refused like an unknown parameter elsewhere (a page that ignored it let a link, a log or a person reading
the address take it for a filter that held).

Starlette's ``request.query_params`` keeps the last of a repeated name (a proxy, a log or the person reading
the address sees the first), turns bytes that are not UTF-8 into U+FFFD, takes a parameter of any length and
any name. A page that reads a choice or a time checks it against its own set (``choice``) or parser: a value
outside it was read as no filter at all, every row shown as if filtered.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from starlette.requests import Request

from sentinel_mcp.console.form_body import FormRefused

F = TypeVar("F", bound=Callable[..., Any])
_DECLARED = "_console_query_fields"
MAX_QUERY_BYTES = 8192  # the whole query string as sent (every page's parameters fit many times over)


def read_query(request: Request, fields: Mapping[str, int]) -> dict[str, str]:
    """``fields``: each parameter the page takes and its bound in characters. Raises ``FormRefused``."""
    raw = request.scope.get("query_string", b"")
    if not isinstance(raw, bytes) or len(raw) > MAX_QUERY_BYTES:
        raise FormRefused(400, "refused: the address's query is too long")
    try:
        pairs = parse_qsl(
            raw.decode("ascii"),
            keep_blank_values=True,
            strict_parsing=bool(raw),  # "name" without "=" is no value given
            encoding="utf-8",
            errors="strict",
            max_num_fields=len(fields),
        )
    except (UnicodeError, ValueError):
        raise FormRefused(
            400, "refused: the address's query could not be read (not UTF-8, a name without a value, or too "
            "many parameters)"
        ) from None
    got: dict[str, str] = {}
    for name, value in pairs:
        if name not in fields:
            raise FormRefused(400, f"refused: this page takes no parameter {name[:40]!r}")
        if name in got:
            raise FormRefused(400, f"refused: the parameter {name!r} is given twice")
        if len(value) > fields[name]:
            raise FormRefused(
                400, f"refused: {name} is {len(value)} characters, more than the {fields[name]} taken here"
            )
        got[name] = value
    return {name: got.get(name, "") for name in fields}


def choice(value: str, choices: Collection[str], name: str) -> str:
    """``value`` when it is "" (any) or one of ``choices``; otherwise refused (never read as "any")."""
    if value and value not in choices:
        raise FormRefused(400, f"refused: {name} is one of {', '.join(sorted(choices))}")
    return value


def takes_query(**fields: int) -> Callable[[F], F]:
    """Declares the query parameters a page handler takes, each with its bound in characters."""

    def mark(handler: F) -> F:
        setattr(handler, _DECLARED, dict(fields))
        return handler

    return mark


def declared_query(handler: Callable[..., Any]) -> dict[str, int]:
    """What ``takes_query`` declared for ``handler``: nothing when it declared nothing."""
    return dict(getattr(handler, _DECLARED, {}))
