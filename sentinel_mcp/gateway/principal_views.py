"""What each principal sees of the catalog, as a digest: a catalog change is told only to the principals
whose view it changed.

A principal limited to some upstreams (``upstreams``, ``tools``) sees none of another's tools, prompts or
resources; telling it ``list_changed`` when one of those moved said that the other upstream changed, and when
(often because another principal called it). Each principal with a listener has the digest of its view as
last told; on a change the views are digested again and compared. Each item's bytes are digested once a
change, whichever principals see it. Only principals with a listener are kept: one that gets a listener
later is noted then (its baseline), and one that has a listener but no digest is told (never left out).
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable

from sentinel_mcp.core.port import FrontPort
from sentinel_mcp.identity.principal import Principal


class PrincipalViews:
    def __init__(self, port: FrontPort) -> None:
        self._port = port
        # principal name -> (the principal as last seen, the digest of its view as last told)
        self._views: dict[str, tuple[Principal, bytes]] = {}

    def note(self, principal: Principal) -> None:
        """``principal`` has a listener now: its view as it is, unless already kept (a principal object
        of the same name that differs, its reach changed by a reload, is digested again)."""
        kept = self._views.get(principal.name)
        if kept is None or kept[0] != principal:
            self._views[principal.name] = (principal, self._digest(principal, {}))

    def changed(self, listening: Iterable[str]) -> set[str]:
        """Of the principals named in ``listening`` (those with a listener now), the ones whose view differs
        from the one they were last told of, or that were never noted; the digests are kept as now, and the
        principals without a listener are forgotten."""
        names = set(listening)
        items: dict[int, tuple[Any, bytes]] = {}  # one change: each item digested once, held while it lasts
        told: set[str] = set()
        views: dict[str, tuple[Principal, bytes]] = {}
        for name in names:
            kept = self._views.get(name)
            if kept is None:
                told.add(name)
                continue
            now = self._digest(kept[0], items)
            if now != kept[1]:
                told.add(name)
            views[name] = (kept[0], now)
        self._views = views
        return told

    def _digest(self, principal: Principal, items: dict[int, tuple[Any, bytes]]) -> bytes:
        port = self._port
        whole = hashlib.sha256()
        for kind, listed in (("tools", port.list_catalog_tools(principal)),
                             ("prompts", port.list_prompts(principal)),
                             ("resources", port.list_resources(principal)),
                             ("templates", port.list_resource_templates(principal))):
            whole.update(kind.encode() + len(listed).to_bytes(8, "big"))
            for item in listed:
                whole.update(_item(item, items))
        return whole.digest()


def _item(item: Any, items: dict[int, tuple[Any, bytes]]) -> bytes:
    """The item's digest, by its object: the same object in another principal's view is not dumped again
    (the object is held beside it, so its id names no other while ``items`` lasts)."""
    found = items.get(id(item))
    if found is None:
        shown = item.model_dump_json(by_alias=True).encode()
        found = items[id(item)] = (item, hashlib.sha256(shown).digest())
    return found[1]
