"""A real HTTP server on 127.0.0.1 answering like an OpenAI-compatible chat-completions service.

It stands in for a remote model service (which cannot exist here). Replies are scripted per role
(the role is read from the agent's system prompt); when a role's script is empty, a default
"competent model" answers: a valid plan, valid files, ACCEPT, and a verifier report. Scripted
entries may be a reply text, ``{"status": 429}``-style errors, ``{"delay": s}`` for timeouts,
``{"hold": True}`` to park that one request until ``release`` is set, or a callable ``(body) -> entry``. Every request is recorded for assertions.
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
from starlette.responses import JSONResponse
from starlette.routing import Route

ROLES = {"Planner": "planner", "Coder": "coder", "Critic": "critic", "Verifier": "verifier"}

SPEC = {"app_name": "Notes", "package_name": "com.example.notes",
        "features": ["add a note", "list notes"], "min_sdk": 24, "target_sdk": 34}

PLAN = {"steps": [
    {"step_number": 1, "phase": "setup", "file_path": "settings.gradle.kts", "file_type": "gradle",
     "dependencies": [], "description": "Gradle settings including the app module"},
    {"step_number": 2, "phase": "setup", "file_path": "app/build.gradle.kts", "file_type": "gradle",
     "dependencies": [1], "description": "App module build file with namespace and SDK levels"},
    {"step_number": 3, "phase": "manifest", "file_path": "app/src/main/AndroidManifest.xml", "file_type": "xml",
     "dependencies": [2], "description": "Manifest declaring MainActivity as launcher"},
    {"step_number": 4, "phase": "ui", "file_path": "app/src/main/res/layout/activity_main.xml", "file_type": "xml",
     "dependencies": [], "description": "Layout with a list and an add button", "features": ["list notes"]},
    {"step_number": 5, "phase": "code", "file_path": "app/src/main/java/com/example/notes/MainActivity.kt",
     "file_type": "kotlin", "dependencies": [3, 4], "description": "Activity that lets the user add a note",
     "features": ["add a note"]},
]}

FILES = {
    "settings.gradle.kts": 'rootProject.name = "Notes"\ninclude(":app")\n',
    "app/build.gradle.kts": ('plugins {\n    id("com.android.application")\n    kotlin("android")\n}\n\n'
                             'android {\n    namespace = "com.example.notes"\n    compileSdk = 34\n'
                             '    defaultConfig {\n        minSdk = 24\n        targetSdk = 34\n    }\n}\n'),
    "app/src/main/AndroidManifest.xml": (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<manifest xmlns:android="http://schemas.android.com/apk/res/android">\n'
        '    <application android:label="Notes">\n'
        '        <activity android:name=".MainActivity" android:exported="true">\n'
        '            <intent-filter>\n'
        '                <action android:name="android.intent.action.MAIN" />\n'
        '                <category android:name="android.intent.category.LAUNCHER" />\n'
        '            </intent-filter>\n'
        '        </activity>\n'
        '    </application>\n'
        '</manifest>\n'),
    "app/src/main/res/layout/activity_main.xml": (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<LinearLayout xmlns:android="http://schemas.android.com/apk/res/android"\n'
        '    android:layout_width="match_parent" android:layout_height="match_parent"\n'
        '    android:orientation="vertical">\n'
        '    <ListView android:id="@+id/notes" android:layout_width="match_parent"\n'
        '        android:layout_height="0dp" android:layout_weight="1" />\n'
        '    <Button android:id="@+id/add" android:layout_width="wrap_content"\n'
        '        android:layout_height="wrap_content" android:text="@android:string/ok" />\n'
        '</LinearLayout>\n'),
    "app/src/main/java/com/example/notes/MainActivity.kt": (
        'package com.example.notes\n\n'
        'import android.os.Bundle\nimport android.widget.ArrayAdapter\nimport android.widget.Button\n'
        'import android.widget.ListView\nimport androidx.appcompat.app.AppCompatActivity\n\n'
        'class MainActivity : AppCompatActivity() {\n'
        '    private val notes = mutableListOf<String>()\n\n'
        '    override fun onCreate(savedInstanceState: Bundle?) {\n'
        '        super.onCreate(savedInstanceState)\n'
        '        setContentView(R.layout.activity_main)\n'
        '        val adapter = ArrayAdapter(this, android.R.layout.simple_list_item_1, notes)\n'
        '        findViewById<ListView>(R.id.notes).adapter = adapter\n'
        '        findViewById<Button>(R.id.add).setOnClickListener {\n'
        '            notes.add("Note ${notes.size + 1}")\n'
        '            adapter.notifyDataSetChanged()\n'
        '        }\n'
        '    }\n'
        '}\n'),
}

Entry = Any  # str | dict | Callable[[dict], Entry]


def role_of(body: dict[str, Any]) -> str:
    system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
    m = re.match(r"You are the (\w+)", system)
    return ROLES.get(m.group(1), "unknown") if m else "unknown"


def user_prompt(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body.get("messages", []) if m.get("role") == "user"), "")


def target_path(body: dict[str, Any]) -> str:
    m = re.search(r"write (\S+) \(", user_prompt(body))
    return m.group(1) if m else ""


def default_entry(role: str, body: dict[str, Any]) -> Entry:
    if role == "planner":
        return json.dumps(PLAN)
    if role == "coder":
        return FILES.get(target_path(body), "// unknown file\n")
    if role == "critic":
        return json.dumps({"decision": "ACCEPT", "issues": []})
    if role == "verifier":
        return json.dumps({"warnings": ["no unit tests"], "missing": [], "quality_score": 0.8})
    return "?"


class ScriptedModelServer:
    def __init__(self) -> None:
        self.scripts: dict[str, deque[Entry]] = defaultdict(deque)
        self.requests: list[dict[str, Any]] = []  # {"role", "body", "status"}
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
    async def _chat(self, request: Request) -> JSONResponse:
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
            if entry.get("status"):
                record["status"] = entry["status"]
                return JSONResponse({"error": {"message": f"scripted {entry['status']}"}},
                                    status_code=entry["status"])
            content = entry.get("content", default_entry(role, body))
        prompt_text = "".join(m.get("content", "") for m in body.get("messages", []))
        return JSONResponse({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            # realistic usage: ~4 characters per token, plus the chat template's overhead
            "usage": {"prompt_tokens": len(prompt_text) // 4 + 12, "completion_tokens": len(content) // 4 + 1,
                      "total_tokens": len(prompt_text) // 4 + 13 + len(content) // 4},
        })

    def start(self) -> ScriptedModelServer:
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off",
                                timeout_graceful_shutdown=1)
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
