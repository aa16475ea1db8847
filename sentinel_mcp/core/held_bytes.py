"""Bytes of request bodies a server holds (being read, then while their request is served), per holder
against its share and in all.

Each body a front reads is bounded; the number of bodies is not, unless counted: one caller opening a hundred
connections and sending a large body on each without its last byte held hundreds of megabytes. Past its share
a holder's next bytes are refused (the caller answers 429), past the total everyone's (503); what is held is
given back when its request ends. Used by the MCP front (``gateway/held_bodies.py``) and A2A's HTTP binding.
"""

from __future__ import annotations


class HeldBytes:
    def __init__(self, per_holder: int, total: int) -> None:
        self.per_holder = per_holder
        self.total = total
        # a plain dict read with ``get``: a ``Counter``'s missing key calls its Python ``__missing__``, its
        # ``del`` its Python ``__delitem__`` (three calls a request of a caller holding nothing; issue 21)
        self._held: dict[str, int] = {}
        self._count = 0

    def take(self, who: str, n: int) -> tuple[int, str] | None:
        """Count ``n`` more bytes for ``who``; or, refused, the HTTP status and why (nothing counted)."""
        if not n:  # an empty chunk (a body of none) counts nothing and keeps no entry for ``who``
            return None
        held = self._held.get(who, 0) + n
        if held > self.per_holder:
            return 429, "too many bytes of requests being read or served for this caller; retry when some end"
        if self._count + n > self.total:
            return 503, "too many bytes of requests being read or served; retry later"
        self._held[who] = held
        self._count += n
        return None

    def give_back(self, who: str, n: int) -> None:
        if n <= 0:
            return
        left = self._held.get(who, 0) - n
        if left > 0:
            self._held[who] = left
        else:
            self._held.pop(who, None)
        self._count -= n

    def held(self, who: str | None = None) -> int:
        return self._count if who is None else self._held.get(who, 0)
