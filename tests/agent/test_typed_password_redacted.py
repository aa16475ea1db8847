"""A password the agent types into a password field is kept nowhere in the trace: the typed text itself was
redacted, but the same password in the goal, in the model's reasoning or answer, or in a reflection was
stored in clear in agent.db and shown by agent_trace, agent_runs and the console. Every occurrence (any
case, however the record is laid out) is redacted from everything the run keeps, steps written before the
password was typed included."""

from __future__ import annotations

import contextlib
import json
import sqlite3

import pytest
from mcp import Client
from tests.agent.phone_policies import act, element_id, screen_of
from tests.agent.test_agent_loop import agent_config
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
SECRET = "Hunter2-Secret"


def typing_policy(pad_answer: int = 0, pad_why: int = 0):
    """Open the bank, type the password, say done; the pads put the password where a record or a progress
    line cuts the model's answer or reasoning (a cut before the redaction left its first characters)."""
    typed = []

    def policy(body):
        sid, app, lines = screen_of(body)
        if app.endswith("nexuslauncher"):
            return act("click", sid, element_id(lines, "text='Bank'"), why=f"open the bank to use {SECRET}")
        if app == "com.example.bank" and not typed:
            typed.append(1)
            field = element_id(lines, "password")
            return act("type", sid, field, SECRET, why="w" * pad_why + f"the password is {SECRET}")
        return act("done", sid, text="t" * pad_answer + f"typed {SECRET.upper()} as asked",
                   why=f"{SECRET.lower()} is in")

    return policy


async def say_yes(context, params) -> ElicitResult:
    """The person allows every step (the device's confirmations and the guard's askables alike)."""
    props = (params.requested_schema or {}).get("properties") or {}
    yes = {
        k: True if v.get("type") == "boolean" else "yes"
        for k, v in props.items()
        if k in ("answer", "confirm")
    }
    return ElicitResult(action="accept", content=yes)


def everything_in(data_dir) -> str:
    """Every row of the agent builtin's trace store in ``data_dir`` (its own directory, ``agent/``). Opened
    read-only: a wrong path is an error, never a new empty database that holds nothing (it did: every check
    of agent.db here read one, and passed whatever the run kept)."""
    db = data_dir / "agent" / "agent.db"
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = [conn.execute(f"SELECT * FROM {t}").fetchall() for t in tables]
    assert any(rows), f"{db} holds no rows"
    return json.dumps(rows, default=str, ensure_ascii=False)


@pytest.mark.parametrize("pad_answer, pad_why", [(0, 0), (180, 0), (0, 95)])
async def test_a_typed_password_is_redacted_from_everything_the_trace_keeps(
    tmp_path, openai_env, pad_answer, pad_why
):
    policy = typing_policy(pad_answer, pad_why)
    openai_env.script("unknown", policy, policy, policy)
    progress: list[str] = []

    async def on_progress(p, total, message):
        progress.append(message or "")

    goal = f"open my bank and type my password {SECRET} into the password field"
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            r = await c.call_tool("agent__agent_run", {"goal": goal}, progress_callback=on_progress)
            run = r.structured_content
            trace = await c.call_tool("agent__agent_trace", {"run_id": run["run_id"]})
            runs = await c.call_tool("agent__agent_runs", {})
    assert run["status"] == "completed", run["reason"]
    assert any(s.get("tool") == "device__type_text" for s in run["steps"]), run["steps"]
    later = progress[2:]  # the first step's decision was shown before anyone knew the password
    shown = (run, trace.structured_content, runs.structured_content, later)
    kept = [json.dumps(x, ensure_ascii=False) for x in shown]
    kept += [c.text for c in (*trace.content, *runs.content)] + [everything_in(tmp_path)]
    for text in kept:
        assert SECRET[:4].lower() not in text.lower(), text[:2000]  # not even the start of it
    assert "<redacted password>" in json.dumps(trace.structured_content)


# The gateway's audit row of the agent_run call is written (and hash-chained) before the run starts, so it
# cannot be rewritten once the run learns which words of the goal were a password: it keeps no goal text.
@pytest.mark.parametrize(
    "goal",
    [
        f"open my bank and type my password {SECRET} into the password field",
        f"log in to the bank with {SECRET.lower()}",
        f"bank: {SECRET}\n(that is the passphrase)",
    ],
)
async def test_the_goal_is_kept_nowhere_in_the_audit_log(tmp_path, openai_env, goal):
    from sentinel_mcp.gateway.audit import read_audit

    policy = typing_policy()
    openai_env.script("unknown", policy, policy, policy)
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            r = await c.call_tool("agent__agent_run", {"goal": goal})
        await rt.audit.flush()
        rows = await read_audit(rt.config.store_path, tail=200)
    assert r.structured_content["status"] == "completed", r.structured_content["reason"]
    runs = [row for row in rows if row["tool"] == "agent__agent_run"]
    assert runs
    for row in rows:
        assert SECRET[:4].lower() not in json.dumps(row, ensure_ascii=False).lower(), row
    assert SECRET[:4].lower() not in everything_in(tmp_path).lower()
