"""A rulebase's questions never quote a secret argument's value: whatever its text writes (``~w`` of the
argument, of a piece of JSON holding it, glued to other words), the value is masked where every question
text is composed (``AskUser.shown``), so no rule spelling prints it. Real SWI-Prolog, a real guard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentinel_mcp.core.decision import Ask, ToolCall
from sentinel_mcp.policy.guard import PolicyGuard

pytestmark = pytest.mark.timeout(120)

SECRET = "Hunter2-canary-7731"
RULES = """
guard('t__plain', [password = P], confirmed('Set the password to ~w?', [P])).
guard('t__glued', [password = P], confirmed('Set the password to xx~wyy?', [P])).
guard('t__quoted', [password = P], confirmed('Set the password to ~q?', [P])).
guard('t__whole', [password = P, user = U], confirmed('Change ~w with ~w?', [U, P])).
guard('t__twice', [password = P], confirmed('~w? Really ~w?', [P, P])).
askable(why_change(P, W), "Why change the password to ~w?", text, []).
guard('t__ask', [password = P], why_change(P, _)).
"""
TOOLS = ["t__plain", "t__glued", "t__quoted", "t__whole", "t__twice", "t__ask"]


def secret_call(name: str, password: str, session: str) -> ToolCall:
    server, _, tool = name.partition("__")
    return ToolCall(name=name, server=server, tool=tool, arguments={"password": password, "user": "ann"},
                    session_id=session, secret_arguments=frozenset({"password"}))


@pytest.mark.parametrize("password", [SECRET, "a'b\\c\"d-secret-canary"])
async def test_no_question_a_rulebase_writes_quotes_a_secret_argument(tmp_path: Path, password: str) -> None:
    rb = tmp_path / "secrets.pl"
    rb.write_text(RULES)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        for tool in TOOLS:
            decision = await guard.decide(secret_call(tool, password, f"s-{tool}"))
            assert isinstance(decision, Ask), (tool, decision)
            # what a person reads (and what answers are keyed by); an askable's meta keeps its inputs, which
            # the calling client (who sent the value) answers with, and is never shown to the person
            shown = json.dumps([[q.key, q.message] for q in decision.questions], ensure_ascii=False)
            assert decision.questions, (tool, decision)
            for piece in ("canary", password, json.dumps(password)[1:-1]):
                assert piece not in shown and piece not in decision.reason, (tool, piece, shown)
            assert f"[redacted {len(password)} chars]" in shown, (tool, shown)
    finally:
        await guard.close()
