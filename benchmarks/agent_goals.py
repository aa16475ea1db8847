"""Agent loop benchmark: goals on the simulated phone through the real gateway (device + agent built-ins, the
shipped rulebases), with a scripted model behind a real OpenAI-compatible HTTP endpoint (the loop's own cost:
every step a guarded call) and, with --local, the shipped small model (gemma-3-270m) through the llm built-in.
Prints one table: goal, model, status, steps, seconds, tokens, questions asked.

Run: .venv/bin/python benchmarks/agent_goals.py [--local] [--threads N] [--local-steps N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import tempfile
import threading
import time
from typing import Any

import anyio
import uvicorn
from mcp import Client
from mcp.types import ElicitResult
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sentinel_mcp.config import parse_config
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

GOALS = "goal: scripted goals complete (or stop on the refusal) with no question for navigation"
SCREEN = re.compile(r"screen (s-[0-9a-f]+) of app (\S+)")


def decide(body: dict[str, Any]) -> str:
    """A scripted model: reads the goal and the screen the agent sent, answers the next step."""
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")
    goal = re.search(r"Goal: (.*)", text).group(1).lower()  # type: ignore[union-attr]
    current = text.split("Current screen:", 1)[1]
    sid, app = SCREEN.search(current).groups()  # type: ignore[union-attr]
    lines = current.splitlines()

    def eid(needle: str) -> str:
        return next(line.split()[0] for line in lines if needle in line)

    def act(action: str, element: str | None = None, value: str | None = None) -> str:
        return json.dumps({"action": action, "snapshot_id": sid, "element_id": element, "text": value,
                           "reasoning": "scripted"})

    if "alarm" in goal:
        if "result of device__alarms_show" in text:
            nxt = re.search(r"next alarm: (.*)", text)
            return act("done", value=nxt.group(1) if nxt else "no alarm")
        return json.dumps({"tool": "device__alarms_show", "snapshot_id": sid, "arguments": {}})
    if "message" in goal:
        if app.endswith("nexuslauncher"):
            return act("click", eid("text='Messages'"))
        first = next(i for i, line in enumerate(lines) if "text='Alice'" in line)
        snippet = re.search(r"text='([^']*)'", lines[first + 1]).group(1)  # type: ignore[union-attr]
        return act("done", value=f"Alice: {snippet}")
    if "bank" in goal:
        if app.endswith("nexuslauncher"):
            return act("click", eid("text='Bank'"))
        if any("text='Sign in'" in line for line in lines):
            return act("click", eid("text='Sign in'"))
        return act("done", value="signed in")
    return act("fail", value="no script for this goal")


class ScriptedEndpoint:
    """OpenAI-compatible chat completions on 127.0.0.1, answered by ``decide``."""

    def __init__(self) -> None:
        self.port = 0
        self._server: uvicorn.Server | None = None

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        content = decide(body)
        prompt = "".join(m.get("content", "") for m in body["messages"])
        return JSONResponse(
            {
                "id": "x",
                "object": "chat.completion",
                "model": "scripted",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(content) // 4},
            }
        )

    def start(self) -> ScriptedEndpoint:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        sock.close()
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        self._server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        threading.Thread(target=self._server.run, daemon=True).start()
        while not self._server.started:
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True


def config(data_dir: str, agent: dict[str, Any], llm: dict[str, Any] | None = None):
    builtins = ["device", "agent"] + (["llm"] if llm is not None else [])
    sentinel: dict[str, Any] = {
        "data_dir": data_dir,
        "builtins": builtins,
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "device": {"backend": "simulated"},
        "agent": agent,
    }
    if llm is not None:
        sentinel["llm"] = llm
    return parse_config({"mcpServers": {}, "sentinel": sentinel}, source="<bench>", base_dir=data_dir)


async def run_goal(cfg, goal: str, answer: str | None) -> dict[str, Any]:
    """``answer``: what the person says when asked (``inbox``: the client cannot elicit, and the person
    approves
    in the console inbox as soon as the question is there)."""
    asked: list[str] = []

    async def person(context, params) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"confirm": answer == "yes"})

    async with running_gateway(cfg) as rt:
        inbox = None
        if answer == "inbox":
            from sentinel_mcp.console.inbox import Inbox
            from sentinel_mcp.console.person_questions import PersonQuestions
            from sentinel_mcp.core.decision import Answer

            inbox = Inbox()
            rt.gateway.person_inbox = PersonQuestions(inbox, rt.gateway, 30)
        callback = {} if inbox is not None else {"elicitation_callback": person}
        async with Client(rt.front.server, mode="legacy", **callback) as c, anyio.create_task_group() as tg:

            async def console_person() -> None:
                while True:
                    for item in inbox.open_items("owner"):  # type: ignore[union-attr]
                        asked.extend(q.message for q in item.questions)
                        inbox.answer(
                            item,
                            {
                                q.key: Answer(
                                    action="accept",
                                    content={"confirm": True},  # type: ignore[union-attr]
                                    provenance="user",
                                )
                                for q in item.questions
                            },
                        )
                    await anyio.sleep(0.005)

            if inbox is not None:
                tg.start_soon(console_person)
            t = time.perf_counter()
            r = await c.call_tool("agent__agent_run", {"goal": goal})
            wall = time.perf_counter() - t
            tg.cancel_scope.cancel()
    run = r.structured_content or {}
    return {
        "status": run.get("status", "error: " + r.content[0].text[:60]),
        "steps": len(run.get("steps", [])),
        "seconds": wall,
        "tokens": run.get("tokens", 0),
        "asked": len(asked),
        "answer": run.get("answer"),
    }


async def main(local: bool, threads: int, local_steps: int) -> None:
    rows = []
    endpoint = ScriptedEndpoint().start()
    os.environ["SWARM_OPENAI_BASE_URL"] = f"http://127.0.0.1:{endpoint.port}/v1"
    os.environ.setdefault("SWARM_OPENAI_API_KEY", "bench")
    scripted = {"backend": "openai", "openai": {"model": "scripted", "timeout": 10, "max_attempts": 1}}
    scenarios = [
        ("open Messages and read the newest message", None),
        ("what is my next alarm?", None),
        ("sign in to my bank", "yes"),
        ("sign in to my bank", "no"),
        ("sign in to my bank", "inbox"),
    ]
    try:
        for goal, answer in scenarios:
            with tempfile.TemporaryDirectory() as d:
                out = await run_goal(config(d, scripted), goal, answer)
            label = goal + (
                " (yes in the console inbox)"
                if answer == "inbox"
                else f" (person says {answer})"
                if answer
                else ""
            )
            rows.append((label, "scripted (HTTP)", out))
    finally:
        endpoint.stop()
    if local:
        with tempfile.TemporaryDirectory() as d:
            agent = {"backend": "local", "caps": {"max_steps": local_steps, "max_seconds": 1800}}
            llm = {"n_ctx": 4096, "n_threads": threads, "seed": 1, "temperature": 0.0}
            out = await run_goal(config(d, agent, llm), "open Messages and read the newest message", None)
        rows.append(("open Messages and read the newest message", "gemma-3-270m (local)", out))
    print(GOALS)
    print(
        f"{'goal':<52} {'model':<22} {'status':<10} {'steps':>5} {'seconds':>8} {'tokens':>7} {'asked':>5}  "
        "answer"
    )
    for goal, model, o in rows:
        print(
            f"{goal:<52} {model:<22} {o['status']:<10} {o['steps']:>5} {o['seconds']:>8.2f} {o['tokens']:>7} "
            f"{o['asked']:>5}  {str(o['answer'])[:40]}"
        )


if __name__ == "__main__":
    import logging

    logging.basicConfig(level=logging.WARNING)
    for noisy in ("httpx", "httpx2", "sentinel_mcp", "mcp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", action="store_true", help="also run the small local model (minutes)")
    parser.add_argument(
        "--threads", type=int, default=1, help="llama.cpp threads (1 is fastest on a shared box)"
    )
    parser.add_argument("--local-steps", type=int, default=4)
    args = parser.parse_args()
    anyio.run(main, args.local, args.threads, args.local_steps)
