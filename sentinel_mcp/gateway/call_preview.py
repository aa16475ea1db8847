"""Whether a principal could make a call itself now, asked without making it: decided as its own call would
be (its reach, the guard, the consent gate), asking nothing and using nothing up (a confirmation stays
unused). What one principal asks on another's behalf (an orchestrator's sub-task serving a peer's intent,
``a2a/on_behalf.py``) must pass for both: the run decides for one, this for the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.types import Tool

from sentinel_mcp.core.decision import Allow, Guard, Origin, ToolCall
from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.gateway.consent_gate import ConsentGate
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from sentinel_mcp.identity.principal import Principal

if TYPE_CHECKING:
    from sentinel_mcp.gateway.upstream import Upstream


class CallPreview:
    """A base of ``Gateway`` (which sets these attributes and ``principal_for``, ``_self_confirming``)."""

    guard: Guard
    consent_gate: ConsentGate | None
    manager: UpstreamManager

    if TYPE_CHECKING:
        def principal_for(self, principal: Principal | str | None, session_id: str,
                          origin: Origin) -> Principal: ...

        def _self_confirming(self, up: Upstream, tool: Tool) -> bool: ...

    async def refusal_for(
        self, principal: str, name: str, arguments: dict[str, Any], *, session_id: str
    ) -> str | None:
        """Why ``principal`` (by name: an unknown one reaches nothing) could not call ``name`` with
        ``arguments`` as an A2A caller now; None when it could. Anything short of an allow (a question it
        would be asked, an error) is a refusal: fail closed."""
        who = self.principal_for(principal, session_id, "a2a")
        shown = safe_text(principal, 100)
        route = self.manager.catalog.route(name)
        if route is None or not who.may_reach(route.upstream, route.tool):
            return compose(safe_text(name, 200), " is not a tool ", shown, " may use")
        ann = route.exposed.annotations
        call = ToolCall(
            name=name, server=route.upstream, tool=route.tool, arguments=arguments, session_id=session_id,
            client=principal, origin="a2a", principal=who.name,
            read_only=ann.read_only_hint if ann else None, destructive=ann.destructive_hint if ann else None,
            self_confirming=self._self_confirming(self.manager.upstreams[route.upstream], route.exposed),
            secret_arguments=route.secret_arguments,
        )
        try:
            decision = await self.guard.preview(call)
            if isinstance(decision, Allow) and self.consent_gate is not None:
                asked = self.consent_gate.asks(call, route.exposed)
                decision = asked if asked is not None else decision
        except Exception as e:  # noqa: BLE001 - a preview that breaks is a refusal
            return f"{shown}'s side of the call could not be decided ({type(e).__name__})"
        if isinstance(decision, Allow):
            return None
        return f"{shown} may not make this call itself: {decision.reason}"
