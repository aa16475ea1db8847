"""A client that carries its Sentinel session back, as a 2026-07-28 client must to keep one conversation
(it has no connection; Sentinel returns the session's sealed id in every result's ``_meta``)."""

from __future__ import annotations

from typing import Any

SESSION_META = "sentinel/session"


class Carried:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.session: str | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> Any:
        meta = {**(kw.pop("meta", None) or {}), **({SESSION_META: self.session} if self.session else {})}
        result = await self.client.call_tool(name, arguments, meta=meta or None, **kw)
        self.session = (result.meta or {}).get(SESSION_META) or self.session
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)
