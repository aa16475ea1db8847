"""Replaying tau2 airline tasks through the policy guard (shared by the replay test and the benchmark)."""

from __future__ import annotations

import json
import re
from typing import Any


from sentinel_mcp.core.decision import Answer, Ask
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR

DATA_DIR = PROJECT_ROOT / "examples" / "airline" / "data"
TASKS = {t["id"]: t for t in json.loads((DATA_DIR / "tasks.json").read_text())}
TRAIN = json.loads((DATA_DIR / "split_tasks.json").read_text())["train"]
AIRLINE_PL = RULEBASES_DIR / "airline.pl"
WRITES = {
    "book_reservation",
    "cancel_reservation",
    "update_reservation_flights",
    "update_reservation_baggages",
    "update_reservation_passengers",
    "send_certificate",
}


def scenario_text(task: dict[str, Any]) -> str:
    ins = task["user_scenario"]["instructions"]
    return " ".join(
        str(ins.get(k) or "") for k in ("reason_for_call", "known_info", "unknown_info", "task_instructions")
    )


def user_of(task: dict[str, Any]) -> str | None:
    m = re.search(r"user id is:?\s*'?([a-z]+_[a-z]+_\d+)", scenario_text(task), re.I)
    return m.group(1) if m else None


def cancel_reason_of(task: dict[str, Any]) -> str:
    """The reason the user gives in the scenario (the answer to the cancel_reason question)."""
    text = scenario_text(task).lower()
    if re.search(r"\b(sick|ill|health|medical|hospital)", text):
        return "health"
    if "weather" in text:
        return "weather"
    if re.search(r"airline cancel|flight (was|got|has been) cancel|cancelled by the airline", text):
        return "airline_cancelled"
    if re.search(r"change of plan|plans? (have |has )?changed|change in plan", text):
        return "change_of_plan"
    return "other"


def write_tasks() -> list[str]:
    return [t for t in TRAIN if any(a["name"] in WRITES for a in TASKS[t]["evaluation_criteria"]["actions"])]


async def answer_questions(guard: Any, call: Any, decision: Ask, answers: dict[str, Any]) -> None:
    for q in decision.questions:
        kind = q.meta.get("kind")
        if kind == "confirm":
            value: Any = True
        else:
            value = answers[q.meta["predicate"]]
        await guard.record_answer(
            call, q, Answer(action="accept", content={"answer": value}, provenance="user")
        )
