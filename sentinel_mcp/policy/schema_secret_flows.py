"""A guard bound to a tool whose schema declares an argument secret is held to the flow check of secrets.

The loader follows an argument whose *name* says secret (``secret_flows.pl``): a piece of it, a case change, a
hash, never reaches a question, a denial's reason or a fact. An argument the tool declares secret only in its
schema (``writeOnly``, ``format: password``, its sensitive list: ``redactor.secret_arguments_of``, the one
definition the call's ``secret_arguments`` hold) is unknown at load: the schemas come later, at listing, and
change when an upstream lists again. So before a guarded call, the guards and effects bound to its tool are
walked with those arguments secret too (``sn_schema_secret_flows``), and while one of them makes something of
such an argument every call of the tool is denied, the reason naming the rule's file and line (the audit keeps
it; the log says it once). The walk runs once per (rulebase, tool, names): a call after it pays one dict
lookup, and a re-listing that changes what the schema declares secret is a new key, walked again. A walk that
fails or does not end denies.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sentinel_mcp.core.decision import Deny, ToolCall
from sentinel_mcp.core.display_text import Marked, safe_text
from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.load_limit import LOAD_INFERENCE_LIMIT
from sentinel_mcp.policy.prolog_text import json_atom, quote_atom
from sentinel_mcp.policy.rulebase import Rulebase

__all__ = ["LEAKING_GUARD", "SchemaSecretFlows"]

log = logging.getLogger(__name__)
LEAKING_GUARD = "guard_leaks_schema_secret"
_MAX_KNOWN = 4096  # (rulebase, tool, names) walked: past it all are forgotten (walked again when called)
_MAX_SHOWN = 3  # rules named in a reason


class SchemaSecretFlows:
    """The refusal each (rulebase, tool, schema secret names) earns, walked once."""

    def __init__(self, engine: PrologEngine) -> None:
        self.engine = engine
        self._known: dict[tuple[str, str, frozenset[str]], Deny | None] = {}

    async def refusal(self, rb: Rulebase, call: ToolCall) -> Deny | None:
        """Why ``call`` is denied because a rule bound to its tool leaks an argument its schema declares
        secret, or None (``of``)."""
        return await self.of(rb, call.identity, call.name, call.secret_arguments)

    async def of(self, rb: Rulebase, identity: str, name: str, secret: Iterable[str]) -> Deny | None:
        """Why a call of the tool ``identity`` (exposed as ``name``, its schema declaring ``secret``) is
        denied because a guard or effect bound to it leaks one of them, or None; walked at a listing
        (``app/listed_secret_flows.py``) or at the first call. Names said secret by their spelling are walked
        too: the load walked them only where the rulebase names them, and a guard showing the whole argument
        list (``args(A)``) of a tool it names no secret of shows them (secret_named_arguments.pl)."""
        secret = secret if isinstance(secret, frozenset) else frozenset(secret)  # a route's own: hash kept
        key = (rb.module, identity, secret)
        if key in self._known:  # the hot path: one lookup
            known = self._known[key]
            return None if known is None else known.model_copy()  # each call's decision its own
        extra = secret
        if not extra or not (rb.info.guards_tool(identity) or rb.info.names_effect(identity)):
            self._remember(key, None)
            return None
        try:
            deny, final = await self._walk(rb, identity, name, extra)
        except Exception:  # noqa: BLE001 - a check that errors denies (and is tried again on the next call)
            log.exception("the secret flow check of %s failed", safe_text(name, 120))
            return _unfinished(name, "it failed (Sentinel's log says why)")
        if not final:  # an unfinished walk denies this call and is tried again on the next
            return deny
        self._remember(key, deny)
        return None if deny is None else deny.model_copy()

    def _remember(self, key: tuple[str, str, frozenset[str]], deny: Deny | None) -> None:
        if len(self._known) >= _MAX_KNOWN:
            self._known.clear()
        self._known[key] = deny

    async def _walk(self, rb: Rulebase, identity: str, name: str,
                    extra: Iterable[str]) -> tuple[Deny | None, bool]:
        """The walk's refusal (None: no rule leaks), and whether it finished (an unfinished one denies)."""
        out = await self.engine.json_query(
            f"sentinel_core:sn_schema_secret_flows({quote_atom(rb.module)}, {quote_atom(identity)}, "
            f"{json_atom(sorted(extra))}, {LOAD_INFERENCE_LIMIT}, Out)")
        shown = safe_text(name, 120)
        if "unfinished" in out:
            log.warning("the secret flow check of %s (rulebase %s) did not finish: %s; its calls are denied",
                        shown, rb.version, out["unfinished"])
            return _unfinished(name, "it did not finish"), False
        errors = out.get("errors") or []
        if not errors:
            return None, True
        # the names and the messages quoting them are the upstream's text: shown bounded and visible; each
        # rule once, with the first thing found in it
        firsts: dict[str, str] = {}
        for e in errors:
            firsts.setdefault(f"{e['file']}:{e['line']}", str(e["message"]))
        places = [safe_text(f"{where}: {why}", 600) for where, why in firsts.items()]
        names = safe_text(", ".join(sorted(extra)), 200)
        log.warning("%s is denied while these rules are bound to it (an argument its server's schema "
                    "declares secret: %s): %s", shown, names, "; ".join(places))
        more = f" (and {len(places) - _MAX_SHOWN} more)" if len(places) > _MAX_SHOWN else ""
        return Deny(
            reason=Marked(f"{shown} is denied: a rule bound to it makes something of an argument its "
                          f"server's schema declares secret ({names}): " + "; ".join(places[:_MAX_SHOWN])
                          + more),
            unmet=[LEAKING_GUARD],
            how_to_unblock=["tell the user: the rulebase's rule named above must not show, take a piece of "
                            "or transform that argument (compare it, measure it, or pass it whole to a "
                            "tool)"],
        ), True


def _unfinished(name: str, why: str) -> Deny:
    return Deny(reason=Marked(f"{safe_text(name, 120)} is denied: the check that its rules show no argument "
                              f"its server's schema declares secret did not end well: {why}"),
                unmet=[LEAKING_GUARD])
