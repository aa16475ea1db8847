"""A real HTTP server on 127.0.0.1 answering like an OpenAI-compatible chat-completions service.

It stands in for a remote model service (which cannot exist here). Replies are scripted per role
(the role is read from the agent's system prompt); when a role's script is empty, a default
"competent model" answers: the blueprint, for each coder step an answer that fits the JSON Schema
spelled out in its prompt, ACCEPT, and a verifier report. Scripted
entries may be a reply text, ``{"status": 429}``-style errors (with ``"text"``: a plain-text error page),
``{"delay": s}`` for timeouts, ``{"content": ..., "usage": {...}}`` for an answer with the usage an endpoint
claims,
``{"raw": body}`` for a response body exactly as given,
``{"hold": True}`` to park that one request until ``release`` is set, ``{"drip": s}`` to send the answer a
byte every ``s`` seconds (a slow endpoint, or a hostile one keeping the call open), or a callable ``(body) ->
entry``. Every request is recorded for assertions.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections import defaultdict, deque
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

ROLES = {"Planner": "planner", "Coder": "coder", "Critic": "critic", "Verifier": "verifier"}

SPEC = {
    "app_name": "Notes",
    "package_name": "com.example.notes",
    "features": ["add a note", "list notes"],
    "min_sdk": 24,
    "target_sdk": 34,
}

# the planner's answer: the entity and a screen per feature; the plan's 15 steps follow from it
BLUEPRINT = {
    "entity": "Note",
    "text_field": "text",
    "more_fields": [{"name": "done", "type": "Boolean"}],
    "screens": [
        {"feature": "add a note", "screen": "NoteEditor", "summary": "Type a note and save it."},
        {"feature": "list notes", "screen": "NoteList", "summary": "All notes, newest first."},
    ],
}
PKG = "app/src/main/java/com/example/notes"
REPOSITORY = f"{PKG}/data/NoteRepository.kt"
EDITOR_LAYOUT = "app/src/main/res/layout/activity_note_editor.xml"
EDITOR_VM = f"{PKG}/ui/NoteEditorViewModel.kt"
EDITOR_ACTIVITY = f"{PKG}/ui/NoteEditorActivity.kt"
PLAN_PATHS = [
    "settings.gradle.kts",
    "build.gradle.kts",
    "gradle.properties",
    "app/build.gradle.kts",
    "app/src/main/res/values/themes.xml",
    f"{PKG}/data/Note.kt",
    REPOSITORY,
    EDITOR_LAYOUT,
    EDITOR_VM,
    EDITOR_ACTIVITY,
    "app/src/main/res/layout/activity_note_list.xml",
    f"{PKG}/ui/NoteListViewModel.kt",
    f"{PKG}/ui/NoteListActivity.kt",
    "app/src/main/res/values/strings.xml",
    "app/src/main/AndroidManifest.xml",
]
MODEL_STEPS = 7  # the repository, then layout, view model and activity of each of the two screens

Entry = Any  # str | dict | Callable[[dict], Entry]


def role_of(body: dict[str, Any]) -> str:
    system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
    m = re.match(r"You are the (\w+)", system)
    return ROLES.get(m.group(1), "unknown") if m else "unknown"


def user_prompt(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body.get("messages", []) if m.get("role") == "user"), "")


def target_path(body: dict[str, Any]) -> str:
    m = re.search(r"Step \d+: (\S+?)\.\s", user_prompt(body))
    return m.group(1) if m else ""


def schema_of(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema a backend without constrained decoding spells out in the prompt."""
    text = user_prompt(body)
    marker = "matches this JSON Schema exactly:\n"
    return json.loads(text[text.index(marker) + len(marker) :]) if marker in text else {}


def answer_for(schema: dict[str, Any], key: str = "", _n: list[int] = [0]) -> Any:  # noqa: B006 - a counter
    """The first valid instance of a schema, as a competent model would answer (names unique per call)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return answer_for(next(o for o in schema["anyOf"] if o.get("type") != "null"), key)
    kind = schema.get("type")
    if kind == "object":
        return {
            k: answer_for(v, k)
            for k, v in schema.get("properties", {}).items()
            if k in schema.get("required", [])
        }
    if kind == "array":
        if "prefixItems" in schema:
            return [answer_for(s, key) for s in schema["prefixItems"]]
        items = schema.get("items")
        count = schema.get("minItems", 0) or (
            1 if isinstance(items, dict) and schema.get("maxItems", 1) > 0 else 0
        )
        return [answer_for(items, key) for _ in range(count)]
    if kind == "boolean":
        return True
    if kind in ("number", "integer"):
        return 1
    _n[0] += 1
    pattern = schema.get("pattern", "")
    if pattern.startswith("^[a-z]"):
        return f"{key}{_n[0]}"
    if pattern.startswith("^[A-Z][A-Za-z0-9]"):
        return f"Name{_n[0]}"
    return f"Text for {key} {_n[0]}"


def default_entry(role: str, body: dict[str, Any]) -> Entry:
    if role == "planner":
        return json.dumps(BLUEPRINT)
    if role == "coder":
        return json.dumps(answer_for(schema_of(body)))
    if role == "critic":
        return json.dumps({"decision": "ACCEPT", "issues": []})
    if role == "verifier":
        return json.dumps({"warnings": ["no unit tests"], "missing": [], "quality_score": 0.8})
    return "?"


class ScriptedModelServer:
    def __init__(self) -> None:
        self.scripts: dict[str, deque[Entry]] = defaultdict(deque)
        self.requests: list[dict[str, Any]] = []  # {"role", "body", "status"}
        self.replies: list[str] = []  # the content of every 200 answer, in order
        self.hold = threading.Event()  # set() to make every request wait until released
        self.hold.set()
        self.release = threading.Event()  # lets {"hold": True} requests answer
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- scripting -------------------------------------------------------------------------------------
    def script(self, role: str, *entries: Entry) -> None:
        self.scripts[role].extend(entries)

    def calls(self, role: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.requests if role is None or r["role"] == role]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- HTTP ------------------------------------------------------------------------------------------
    async def _chat(self, request: Request) -> Response:
        if request.headers.get("authorization") != "Bearer test-key":
            return JSONResponse({"error": {"message": "bad key"}}, status_code=401)
        body = await request.json()
        role = role_of(body)
        record: dict[str, Any] = {"role": role, "body": body, "status": 200, "prompt": user_prompt(body)}
        self.requests.append(record)
        while not self.hold.is_set():
            await asyncio.sleep(0.01)
        entry = self.scripts[role].popleft() if self.scripts[role] else default_entry(role, body)
        while callable(entry):
            entry = entry(body)
        content = entry
        if isinstance(entry, dict):
            if entry.get("hold"):
                record["held"] = True
                while not self.release.is_set():
                    await asyncio.sleep(0.01)
            if entry.get("delay"):
                await asyncio.sleep(entry["delay"])
            if "raw" in entry:  # the response body exactly as given (an endpoint's own JSON, however odd)
                return Response(entry["raw"], media_type="application/json")
            if entry.get("status"):
                record["status"] = entry["status"]
                if "text" in entry:  # an error page as proxies and servers send them: plain text, lines
                    return PlainTextResponse(entry["text"], status_code=entry["status"])
                return JSONResponse(
                    {"error": {"message": f"scripted {entry['status']}"}}, status_code=entry["status"]
                )
            content = entry.get("content", default_entry(role, body))
        self.replies.append(content)
        prompt_text = "".join(m.get("content", "") for m in body.get("messages", []))
        answer = JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "scripted"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                # realistic usage: ~4 characters per token, plus the chat template's overhead
                "usage": (entry.get("usage") if isinstance(entry, dict) else None) or {
                    "prompt_tokens": len(prompt_text) // 4 + 12,
                    "completion_tokens": len(content) // 4 + 1,
                    "total_tokens": len(prompt_text) // 4 + 13 + len(content) // 4,
                },
            }
        )
        if isinstance(entry, dict) and entry.get("drip"):
            every = float(entry["drip"])

            async def drip():
                for i in range(len(answer.body)):
                    yield answer.body[i : i + 1]
                    await asyncio.sleep(every)

            record["dripped"] = True
            return StreamingResponse(drip(), media_type="application/json")
        return answer

    def start(self) -> ScriptedModelServer:
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", lifespan="off", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("scripted model server did not start")
            time.sleep(0.01)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        self.hold.set()
        self.release.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
