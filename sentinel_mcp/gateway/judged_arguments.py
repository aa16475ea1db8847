"""The arguments a call is judged on, made once for every reader: the call path (``Gateway._validate``) and
every look that asks what a call would get (``sentinel_why_not``, the console's what-if replay). A look that
judged the arguments as given would answer another question than the call got: a schema's default the call
path fills (``transfer(amount, dry_run=false)``) changes what a guard reads, and a key the schema does not
declare is refused before any guard.

The steps: the schema and the wire's limits (``argument_check``), the declared defaults filled and the
undeclared keys refused, dropped or passed as the tool's upstream is set (``argument_shape``), then the
argument form (``argument_form``: 13.0 is the upstream's 13).
"""

from __future__ import annotations

from typing import Any


from sentinel_mcp.core.wire_limits import ValueWalk
from sentinel_mcp.gateway.argument_check import ArgumentCheck
from sentinel_mcp.gateway.argument_form import argument_form
from sentinel_mcp.gateway.argument_shape import Undeclared, shaped, walk_after
from sentinel_mcp.gateway.catalog import ToolRoute
from sentinel_mcp.gateway.upstream_manager import UpstreamManager

__all__ = ["JudgedArguments"]


class JudgedArguments:
    """A base of ``Gateway`` (which sets ``arguments``, ``manager`` and ``config``)."""

    arguments: ArgumentCheck
    manager: UpstreamManager
    config: Any

    async def judged_arguments(self, name: str, arguments: Any) -> tuple[dict[str, Any], str | None]:
        """``(the arguments a call of ``name`` is judged on, None)``, or ``(arguments as given, why the call
        path refuses them)`` (``core.port.GatewayPort.judged_arguments``). A name with no route: as given."""
        given = arguments if isinstance(arguments, dict) else {}
        route = self.manager.catalog.route(name)
        if route is None:
            return given, None
        problem, walk = await self._checked(route, arguments)
        if problem is not None:
            return given, problem
        judged, problem = self._shaped(route, arguments, walk)
        if problem is not None:
            return given, f"invalid arguments for {name}: {problem}"
        return judged or {}, None

    async def _checked(self, route: ToolRoute, arguments: Any) -> tuple[str | None, ValueWalk | None]:
        """The schema's and the limits' problem with ``arguments``, and their walk (``ArgumentCheck.check``),
        texts held to NFC unless the tool's upstream takes them as sent (``config_arguments``)."""
        tool = route.exposed
        if not self.arguments.ready(tool):  # compiled off the event loop on the tool's first call
            await self.arguments.prepare(tool)
        target = self.manager.upstreams[route.upstream].target
        composed = getattr(target, "argument_texts", "nfc") != "as_sent"  # a built-in's: NFC
        return self.arguments.check(tool, arguments, self.config.sentinel.max_argument_bytes, composed)

    def _shaped(self, route: ToolRoute, arguments: Any,
                walk: ValueWalk | None) -> tuple[dict[str, Any] | None, str | None]:
        """Defaults filled, undeclared keys as the upstream is set, then the argument form: the arguments the
        guard reads and the upstream gets, or the problem (without the tool's name)."""
        given = self.arguments.shape(route.exposed)
        problem: str | None = None
        if not given.plain:
            target = self.manager.upstreams[route.upstream].target
            undeclared: Undeclared = getattr(target, "undeclared_arguments", "refuse")
            arguments, problem = shaped(given, arguments or {}, undeclared)
            walk = walk_after(given, walk)  # and what the defaults filled may hold
        if problem is None:
            arguments, problem = argument_form(route.exposed.input_schema, arguments, walk)
        return arguments, problem
