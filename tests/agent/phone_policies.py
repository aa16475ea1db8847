"""Scripted "models" for the agent tests: each reads the screen listing the agent sent (in the chat request)
and
answers the next decision, the way a competent model would. They run behind a real OpenAI-compatible HTTP
server (``ScriptedModelServer``), so the agent's whole backend path is exercised."""

from __future__ import annotations

import json
import re
from typing import Any

SNAPSHOT = re.compile(r"screen (s-[0-9a-f]+) of app (\S+)")


def screen_of(body: dict[str, Any]) -> tuple[str, str, list[str]]:
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")
    current = text.split("Current screen:", 1)[1]
    m = SNAPSHOT.search(current)
    assert m, current[:200]
    return m.group(1), m.group(2), current.splitlines()


def element_id(lines: list[str], needle: str) -> str:
    for line in lines:
        if needle in line:
            return line.split()[0]
    raise AssertionError(f"{needle!r} not on the screen: {lines[:5]}")


def act(action: str, sid: str, eid: str | None = None, text: str | None = None, why: str = "") -> str:
    return json.dumps(
        {"action": action, "snapshot_id": sid, "element_id": eid, "text": text, "reasoning": why}
    )


def read_newest_message(body: dict[str, Any]) -> str:
    """Open Messages from the home screen, then report the first conversation."""
    sid, app, lines = screen_of(body)
    if app.endswith("nexuslauncher"):
        return act("click", sid, element_id(lines, "text='Messages'"), why="open Messages")
    if app == "com.google.android.apps.messaging":
        name = next(
            re.search(r"text='([^']*)'", ln).group(1)
            for ln in lines
            if "res=conversation_name" in ln or ("TextView" in ln and "text='Alice'" in ln)
        )
        snippet = next(re.search(r"text='([^']*)'", ln).group(1) for ln in lines if "text='See you" in ln)
        return act("done", sid, text=f"{name}: {snippet}", why="the newest conversation is first")
    return act("fail", sid, text=f"unexpected app {app}")


def sign_in_to_bank(body: dict[str, Any]) -> str:
    sid, app, lines = screen_of(body)
    if app.endswith("nexuslauncher"):
        return act("click", sid, element_id(lines, "text='Bank'"), why="open the bank")
    if app == "com.example.bank" and any("text='Sign in'" in ln for ln in lines):
        return act("click", sid, element_id(lines, "text='Sign in'"), why="sign in")
    if app == "com.example.bank":
        return act("done", sid, text="signed in")
    return act("home", sid, why="start from the home screen")
