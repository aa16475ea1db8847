"""Risk classifier benchmark: the labelled phone actions in benchmarks/data/, classified by the firewall's
keywords alone (before issue 16), the rules (RiskRules), the local model alone, and the rules with the model
in
two roles (asked about every flagged action, or only about the ambiguous band). Prints one table per set.

"dev" is the set the rules were written against; "holdout" was written after them and never used to tune them.
Metrics: for high/critical (is the action rated high or critical?) precision and recall; for asking (rated
medium or more, which is what asks the person) precision and recall; the exact level.

Run: .venv/bin/python benchmarks/risk_classifier.py [--model] [--threads N] [--sample K] [--cache FILE]
(--model loads the small local model, gemma-3-270m: it is asked about the rules' ambiguous band in full, and,
for
"model alone" and the "flagged" role, about a sample of K actions per level from each set; on a shared
2-core machine a single answer takes from 10 s to a minute. --cache keeps answers across runs.)
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio

from device_tools.actions import RISK_ORDER, ProposedAction
from device_tools.firewall import ActionFirewall
from device_tools.risk_classifier import ActionRiskClassifier
from device_tools.risk_rules import RiskRules

DATA = Path(__file__).parent / "data"
SETS = {"dev": DATA / "risk_actions.json", "holdout": DATA / "risk_actions_holdout.json"}
GOALS = "goal: high/critical recall 1.0 (never miss a risky action), ask precision >= 0.9 (navigation quiet)"


def load(name: str) -> list[dict[str, Any]]:
    return json.loads(SETS[name].read_text())


def metrics(items: list[dict[str, Any]], predicted: dict[int, str]) -> dict[str, float]:
    def pr(threshold: int) -> tuple[float, float]:
        tp = sum(
            1
            for d in items
            if RISK_ORDER[predicted[d["id"]]] >= threshold and RISK_ORDER[d["label"]] >= threshold
        )
        pp = sum(1 for d in items if RISK_ORDER[predicted[d["id"]]] >= threshold)
        ap = sum(1 for d in items if RISK_ORDER[d["label"]] >= threshold)
        return (tp / pp if pp else 1.0), (tp / ap if ap else 1.0)

    hc_p, hc_r = pr(RISK_ORDER["high"])
    ask_p, ask_r = pr(RISK_ORDER["medium"])
    exact = sum(1 for d in items if predicted[d["id"]] == d["label"]) / len(items)
    return {
        "hc_precision": hc_p,
        "hc_recall": hc_r,
        "ask_precision": ask_p,
        "ask_recall": ask_r,
        "exact": exact,
    }


def classify_with(assess, items: list[dict[str, Any]]) -> dict[int, str]:
    return {d["id"]: assess(ProposedAction.model_validate(d["action"])).risk for d in items}


class ModelAnswers:
    """Asks the local model (the Cortex, in-process, as llm__llm_classify_risk does) once per action."""

    def __init__(self, threads: int, cache: Path | None = None) -> None:
        from sentinel_mcp.llm.cortex import Cortex
        from sentinel_mcp.llm.settings import LlmSettings

        self.cortex = Cortex(LlmSettings(n_ctx=2048, n_threads=threads, seed=7, temperature=0.0))
        self.cache = cache
        self.answers: dict[str, dict[str, Any] | None] = (
            json.loads(cache.read_text()) if cache is not None and cache.exists() else {}
        )
        self.seconds = 0.0
        self.asked = 0

    async def ask(self, shown: dict[str, Any]) -> dict[str, Any] | None:
        key = json.dumps(shown, sort_keys=True)
        if key not in self.answers:
            t = time.perf_counter()
            try:
                self.answers[key] = await self.cortex.classify_risk(shown, "")
            except Exception as e:  # noqa: BLE001 - an unusable answer counts as "the model was no help"
                print(f"  model failed on {key[:60]}: {type(e).__name__}: {e}", flush=True)
                self.answers[key] = None
            self.seconds += time.perf_counter() - t
            self.asked += 1
            if self.cache is not None:
                self.cache.write_text(json.dumps(self.answers))
        return self.answers[key]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """What ActionRiskClassifier calls (llm__llm_classify_risk), answered by the same model in-process."""
        answer = await self.ask(arguments["action"])
        if answer is None:
            raise RuntimeError("no usable answer")
        return SimpleNamespace(is_error=False, structured_content=answer)


async def with_model(
    model: ModelAnswers, role: str, items: list[dict[str, Any]]
) -> tuple[dict[int, str], int]:
    classifier = ActionRiskClassifier(model.call_tool, model_role=role, timeout=600)  # type: ignore[arg-type]
    out: dict[int, str] = {}
    for d in items:
        out[d["id"]] = (await classifier.assess(ProposedAction.model_validate(d["action"]))).risk
    return out, classifier.calls


async def model_alone(model: ModelAnswers, items: list[dict[str, Any]]) -> dict[int, str]:
    out = {}
    for d in items:
        answer = await model.ask(ProposedAction.model_validate(d["action"]).for_classifier())
        out[d["id"]] = answer["risk"] if answer else "low"
    return out


def row(name: str, m: dict[str, float], calls: str = "0") -> str:
    return (
        f"{name:<44} {m['hc_precision']:>8.2f} {m['hc_recall']:>8.2f} {m['ask_precision']:>8.2f} "
        f"{m['ask_recall']:>8.2f} {m['exact']:>7.2f} {calls:>12}"
    )


def sample(items: list[dict[str, Any]], per_level: int) -> list[dict[str, Any]]:
    """The first ``per_level`` actions of each level (the sets are ordered by level, not by difficulty)."""
    return [d for lvl in RISK_ORDER for d in [x for x in items if x["label"] == lvl][:per_level]]


async def main(use_model: bool, threads: int, per_level: int, cache: Path | None) -> None:
    model = ModelAnswers(threads, cache) if use_model else None
    print(GOALS, flush=True)
    for set_name in SETS:
        items = load(set_name)
        counts = {lvl: sum(1 for d in items if d["label"] == lvl) for lvl in RISK_ORDER}
        print(f"\n{set_name}: {len(items)} actions " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        print(
            f"{'classifier':<44} {'hc prec':>8} {'hc rec':>8} {'ask prec':>8} {'ask rec':>8} {'exact':>7} "
            f"{'model calls':>12}"
        )
        firewall, rules = ActionFirewall(), RiskRules()
        print(row("firewall keywords alone", metrics(items, classify_with(firewall.assess, items))))
        t = time.perf_counter()
        predicted = classify_with(rules.assess, items)
        per_action_us = (time.perf_counter() - t) / len(items) * 1e6
        print(
            row("rules (RiskRules)", metrics(items, predicted)) + f"   {per_action_us:.0f} µs/action",
            flush=True,
        )
        if model is None:
            print(f"{'rules + model':<44} (run with --model to measure the local model)")
            continue
        before, asked_before = model.seconds, model.asked
        predicted, calls = await with_model(model, "ambiguous", items)
        print(row("rules + model (ambiguous band)", metrics(items, predicted), str(calls)), flush=True)
        part = sample(items, per_level)
        tag = f"sample {len(part)}"
        print(row(f"rules ({tag})", metrics(part, classify_with(rules.assess, part))))
        print(
            row(f"model alone ({tag})", metrics(part, await model_alone(model, part)), str(len(part))),
            flush=True,
        )
        predicted, calls = await with_model(model, "flagged", part)
        print(row(f"rules + model (flagged, {tag})", metrics(part, predicted), str(calls)))
        print(
            f"  model: {model.asked - asked_before} new answers in {model.seconds - before:.0f} s "
            f"(gemma-3-270m, {threads} thread(s))",
            flush=True,
        )


def misses(set_name: str) -> list[tuple[int, str, str, str]]:
    """(id, label, predicted, why) for every action RiskRules rates differently from its label."""
    rules = RiskRules()
    out = []
    for d in load(set_name):
        got = rules.assess(ProposedAction.model_validate(d["action"])).risk
        if got != d["label"]:
            out.append((d["id"], d["label"], got, d["why"]))
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="store_true", help="also measure the local model (slow)")
    parser.add_argument(
        "--threads", type=int, default=1, help="llama.cpp threads for the model (1: shared box)"
    )
    parser.add_argument("--sample", type=int, default=4, help="actions per level for the slow model rows")
    parser.add_argument("--cache", type=Path, help="a JSON file keeping the model's answers across runs")
    parser.add_argument("--misses", action="store_true", help="list the rules' misses per set")
    args = parser.parse_args()
    anyio.run(main, args.model, args.threads, args.sample, args.cache)
    if args.misses:
        for name in SETS:
            for miss in misses(name):
                print(name, *miss)
