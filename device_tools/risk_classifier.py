"""ActionRiskClassifier: the rules decide (``RiskRules``); the built-in ``llm`` may refine where it is asked.

``model_role`` says where the model is asked: ``"ambiguous"`` (only actions the rules rate medium on a bare
keyword, floor low: the band where a keyword may be a false positive), ``"flagged"`` (every action the rules
would confirm), or ``"off"``. The model can lower a keyword false positive ("Send feedback" is not sending
money) but never below the rules' floor, and it can raise a risk. When ``call_tool`` is missing, the tool is
absent, errors, or answers something malformed, the rules' assessment stands: the classifier only ever
refines, it is never needed for safety. Measured: ``benchmarks/risk_classifier.py``.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ValidationError

from .actions import ProposedAction, max_risk
from .firewall import ActionFirewall, Assessment
from .label_window import readable
from .risk_rules import RiskRules
from sentinel_mcp.core.tool_ref import ToolRef

log = logging.getLogger(__name__)
CLASSIFY_TOOL = ToolRef("llm", "llm_classify_risk")  # resolved from the catalog by the gateway


class RiskAnswer(BaseModel):
    risk: Literal["low", "medium", "high", "critical"]
    reasons: list[str] = []
    requires_confirmation: bool


class ActionRiskClassifier:
    def __init__(
        self,
        call_tool: Any | None,
        firewall: ActionFirewall | None = None,
        cache_size: int = 256,
        timeout: float = 20.0,
        model_role: Literal["off", "ambiguous", "flagged"] = "flagged",
    ) -> None:
        self._call_tool = call_tool if model_role != "off" else None
        self._timeout = timeout
        self._rules = RiskRules(firewall or ActionFirewall())
        self.model_role = model_role
        self._cache: dict[tuple[str, str], Assessment] = {}
        self._cache_size = cache_size
        self.calls = 0  # how many times the model was asked (tests, audit)

    async def assess(self, action: ProposedAction, context: str = "") -> Assessment:
        heuristic = self._rules.assess(action)
        if self._call_tool is None or not self.wants_model(heuristic):
            return heuristic
        # the action and the screen it is rated on (its window's app: the action's own package is the node's
        # word): the model's answer for one window is not its answer for another
        key = (action.digest, context)
        if key in self._cache:  # an elicitation retry re-runs the tool; ask the model once
            return self._cache[key]
        answer = await self._ask(readable(action), context)  # a label past the bound: its window only
        if answer is None:
            heuristic.source = "heuristic (llm unavailable)"
            return heuristic
        final = Assessment(
            risk=max_risk(answer.risk, heuristic.floor),
            floor=heuristic.floor,
            reasons=[*heuristic.reasons, *(f"llm: {r}" for r in answer.reasons)],
            source="llm"
            if answer.risk == max_risk(answer.risk, heuristic.floor)
            else "llm, raised to the firewall floor",
        )
        if not answer.requires_confirmation and final.risk == answer.risk and final.requires_confirmation:
            # The model said no confirmation but rated medium+: trust the risk rating, confirm anyway.
            final.reasons.append("llm rated it medium or higher")
        if len(self._cache) >= self._cache_size:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = final
        return final

    def wants_model(self, heuristic: Assessment) -> bool:
        if self.model_role == "ambiguous":
            return heuristic.risk == "medium" and heuristic.floor == "low"
        return heuristic.requires_confirmation

    async def _ask(self, action: ProposedAction, context: str) -> RiskAnswer | None:
        call_tool = self._call_tool
        if call_tool is None:
            return None
        self.calls += 1
        result = None
        try:
            with anyio.move_on_after(self._timeout):  # a slow model must not hold the action hostage
                result = await call_tool(
                    CLASSIFY_TOOL, {"action": action.for_classifier(), "context": context}
                )
        except Exception as exc:  # noqa: BLE001 - the gateway, the tool or the model failed: heuristics decide
            log.info("risk classifier unavailable: %s", exc)
            return None
        if result is None:
            log.info("risk classifier timed out after %gs", self._timeout)
            return None
        if getattr(result, "is_error", False):
            return None
        data = getattr(result, "structured_content", None)
        if isinstance(data, dict) and "result" in data and isinstance(data["result"], dict):
            data = data["result"]
        if data is None:  # a server without an output schema answers with JSON text
            text = next(
                (c.text for c in getattr(result, "content", []) if getattr(c, "type", "") == "text"), ""
            )
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):  # not JSON, or nested past the parser: no answer
                return None
        try:
            return RiskAnswer.model_validate(data)
        except ValidationError:
            return None
