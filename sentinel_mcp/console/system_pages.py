"""Upstreams (health, breaker, latency, tools; reconnects and the last error are the owner's) and Consents
(this principal's standing consents to personal data, from the gateway's ``ConsentBook``, and to sensors,
from the sensors built-in's registry: ``console/sensor_consents.py``; each revocable)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from device_tools.sensors.errors import StoreUnavailable
from sentinel_mcp.console.auth import Viewer
from sentinel_mcp.console.form_body import FormRefused, bounded
from sentinel_mcp.console.form_values import stored_text
from sentinel_mcp.console.web import HEADERS, Console
from sentinel_mcp.core.sensor_kinds import SensorKind
from sentinel_mcp.gateway.consents import ConsentBook

# characters of a consent kind and purpose the revoke form takes (longer ones are revoked at the command line)
MAX_KIND = 200
MAX_PURPOSE = 200
MAX_SENSOR = 40  # characters of a sensor name the revoke form takes (every sensor's name is far shorter)
_SENSORS = {k.value: k for k in SensorKind}


def routes(console: Console) -> list[tuple[str, Any, list[str], bool]]:
    async def upstreams(request: Request, viewer: Viewer) -> Response:
        rt = console.runtime
        who = viewer.principal
        shown = []
        catalog = rt.catalog_health
        for up in sorted(catalog.upstreams(), key=lambda u: u.name):
            name = up.name
            if not who.may_use(name):
                continue  # an upstream this principal may not use is not shown to it
            tools = [t for t in rt.gateway.list_catalog_tools(who) if catalog.upstream_of(t.name) == name]
            shown.append(
                {
                    "name": name,
                    "state": up.state,
                    "protocol": up.protocol,
                    "breaker": up.breaker,
                    # they move with every principal's calls (and say what the upstream answered them): the
                    # owner's, as /metrics' upstream figures are the operator's
                    "reconnects": up.reconnects if who.is_owner else None,
                    "last_error": up.last_error if who.is_owner else None,
                    "tools": sorted(t.name for t in tools),
                }
            )
        # the owner's to review (console/pins_pages.py): tools held since their definition changed
        held = catalog.held_count if who.is_owner else 0
        return console.render(request, viewer, "upstreams.html", upstreams=shown, held=held)

    def _book() -> ConsentBook | None:
        gate = console.runtime.gateway.consent_gate
        return gate.book if gate is not None else None

    async def consents(request: Request, viewer: Viewer) -> Response:
        from sentinel_mcp.console import sensor_consents  # the sensors' store: by this page, not at start

        book = _book()
        items = book.list(viewer.principal.name) if book is not None else []
        sensors, sensors_down = [], None
        try:
            sensors = await sensor_consents.listed(console.runtime.config, viewer.principal.name)
        except StoreUnavailable as e:  # said on the page: an unreachable store is not "no sensor consent"
            sensors_down = str(e)
        return console.render(request, viewer, "consents.html", consents=items, max_kind=MAX_KIND,
                              max_purpose=MAX_PURPOSE, sensors=sensors, sensors_down=sensors_down)

    async def revoke(request: Request, viewer: Viewer) -> Response:
        book = _book()
        kind = _one(request, "kind", MAX_KIND, "the consent kind")
        purpose = _one(request, "purpose", MAX_PURPOSE, "the consent purpose")
        if book is not None:
            # a text the browser would not send back as it is came as its digest (form_values)
            listed = book.list(viewer.principal.name)
            kind = stored_text(kind, [c.kind for c in listed])
            purpose = stored_text(purpose, [c.purpose for c in listed if c.kind == kind])
            # the row the person pressed, by its exact kind and purpose ("*" is that row, not a pattern); the
            # principal's own only: the principal comes from the sign-in, never from the form
            book.revoke(viewer.principal.name, kind, purpose, by="console")
        return RedirectResponse("/console/consents", status_code=303, headers=HEADERS)

    async def revoke_sensor(request: Request, viewer: Viewer) -> Response:
        # an exact sensor name (allow list): "*", "", a path or another spelling is refused, never read as
        # "every sensor" (the registry's revoke without a sensor); the principal is the sign-in's, never the
        # form's
        sensor = _SENSORS.get(_one(request, "sensor", MAX_SENSOR, "the sensor"))
        if sensor is None:
            raise FormRefused(400, "refused: the sensor is not one of the device's sensors; nothing done")
        from sentinel_mcp.console import sensor_consents

        try:
            await sensor_consents.revoke(console.runtime.config, viewer.principal.name, sensor)
        except StoreUnavailable as e:
            raise FormRefused(503, f"refused: {e}; nothing done") from None
        return RedirectResponse("/console/consents", status_code=303, headers=HEADERS)

    return [
        ("/upstreams", upstreams, ["GET"], False),
        ("/consents", consents, ["GET"], False),
        ("/consents/revoke", revoke, ["POST"], True),
        ("/consents/sensors/revoke", revoke_sensor, ["POST"], True),
    ]


def _one(request: Request, field: str, limit: int, what: str) -> str:
    """One non-empty ``field`` of the form within its bound, else refused (400, nothing done): an absent or
    empty purpose read as "every purpose", or one of two values taken, would revoke what was not pressed."""
    values = request.state.form.getlist(field)
    if len(values) != 1:
        raise FormRefused(400, f"refused: {what} is given {len(values)} times, not once; nothing done")
    value = bounded(values[0], limit, what)
    if not value:
        raise FormRefused(400, f"refused: {what} is empty; nothing done")
    return value
