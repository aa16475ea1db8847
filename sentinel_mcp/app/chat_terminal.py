"""``sentinel-mcp chat``: a person and the phone agent in a terminal.

Type a goal; each step shows as it happens (the decision: tool, arguments, why; then its outcome) and
Sentinel's
questions are asked inline, typed as their schema says (the terminal is an eliciting client like any other:
the
same answers, the same audit). Ctrl-C cancels the running goal, not the session; at the prompt it clears the
line. Input has history (readline, kept in the data dir) and continues over several lines when a line ends
with a backslash, or between two lines of ``\"\"\"``. Everything printed that came from elsewhere is shown
safely (no escape sequences, direction overrides made visible).
"""

from __future__ import annotations

import contextlib
import json
import queue
import sys
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult, ElicitResult, TextContent

from sentinel_mcp.a2a.assist_inbox import settled_reason
from sentinel_mcp.a2a.assist_shown import assist_lines
from sentinel_mcp.app.chat_link import ChatLink, Notice, Question, Step
from sentinel_mcp.core.untrusted_text import split_marker
from sentinel_mcp.core.display_text import Marked, compose, safe_question, safe_text
from sentinel_mcp.app.terminal_client import ask_schema

PROMPT = "you> "
MORE = "...> "
HELP = """Type a goal for the phone agent (it asks you before anything risky), or:
  /facts               the facts Sentinel holds for this session
  /why TOOL [ARGS]     what a call would need (ARGS: a JSON object), e.g. /why device__sms_send {"to": "Bob"}
  /policy QUERY        search the policy documents, e.g. /policy when may a booking be cancelled
  /query GOAL          prove a symbolic goal over the facts, e.g. /query current_user(U)
  /runs                your recent agent runs
  /assist              other agents' open requests for your help
  /reply ID TEXT       answer one (the reply goes back to the agent that asked)
  /quit                leave (also Ctrl-D)
Ctrl-C stops the running goal; the session goes on. End a line with \\ (or open a \"\"\" block) to go on typing."""  # noqa: E501 (verbatim text)
MAX_INPUT = 4000
HISTORY_LINES = 1000


class ChatTerminal:
    def __init__(
        self, link: ChatLink, *, history: Path | None = None, out: Any = None, inbox: Any = None
    ) -> None:
        self.link = link
        self.history = history
        self.out = out or sys.stdout
        self.inbox = inbox
        self._shown: set[str] = set()

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    # ------------------------------------------------------------------ the session
    def run(self) -> int:
        self._readline()
        try:
            warnings = self.link.start()
        except Exception as e:  # noqa: BLE001 - no session: say why, no traceback
            self.say(f"sentinel-mcp chat: could not start: {type(e).__name__}: {e}")
            return 2
        for w in warnings:
            self.say(f"warning: {safe_text(w, 400)}")
        self.say("Sentinel chat. Type a goal, or /help.")
        try:
            while True:
                self.show_new_requests()
                try:
                    line = self.read()
                except KeyboardInterrupt:
                    self.say("^C (type /quit to leave)")
                    continue
                except EOFError:
                    self.say("")
                    break
                if line is None:
                    continue
                if not self.handle(line):
                    break
        finally:
            self._save_history()
            self.link.close()
        return 0

    def read(self) -> str | None:
        """One entry: a line, or several joined (a trailing backslash, or a \"\"\" block); None: nothing."""
        first = input(PROMPT)
        lines: list[str] = []
        if first.strip() == '"""':  # a block keeps its lines
            while (more := input(MORE)).strip() != '"""':
                lines.append(more)
            text = "\n".join(lines).strip()
        else:  # a trailing backslash joins the next line, as in a shell
            line = first
            while line.endswith("\\"):
                lines.append(line[:-1].rstrip())
                line = input(MORE)
            lines.append(line.strip())
            text = " ".join(lines).strip()
        if not text:
            return None
        if len(text) > MAX_INPUT:
            self.say(f"that is longer than {MAX_INPUT} characters; nothing was sent")
            return None
        return text

    def handle(self, text: str) -> bool:
        """Act on one entry; False ends the session."""
        if not text.startswith("/"):
            self.goal(text)
            return True
        command, _, rest = text.partition(" ")
        rest = rest.strip()
        if command in ("/quit", "/exit"):
            return False
        if command == "/help":
            self.say(HELP)
        elif command == "/facts":
            self.wait(self.link.call("sentinel__sentinel_facts", {}))
        elif command == "/why":
            self.why(rest)
        elif command == "/policy" and rest:
            self.wait(self.link.call("sentinel__sentinel_policy_search", {"query": rest}))
        elif command == "/query" and rest:
            self.wait(self.link.call("sentinel__sentinel_query", {"goal": rest}))
        elif command == "/assist":
            self.list_requests(all_open=True)
        elif command == "/reply":
            self.reply(rest)
        elif command == "/runs":
            self.wait(self.link.call(f"{self.link.agent}__agent_runs", {}))
        else:
            self.say(f"unknown or incomplete command {safe_text(command, 40)!s}; /help lists them")
        return True

    def why(self, rest: str) -> None:
        tool, _, raw = rest.partition(" ")
        if not tool:
            self.say("usage: /why TOOL [ARGS as a JSON object]")
            return
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as e:
            self.say(f"ARGS is not JSON: {e.msg} (column {e.colno})")
            return
        except RecursionError:
            self.say("ARGS is not JSON: nested too deep")
            return
        if not isinstance(arguments, dict):
            self.say("ARGS must be a JSON object")
            return
        self.wait(self.link.call("sentinel__sentinel_why_not", {"tool": tool, "arguments": arguments}))

    # ------------------------------------------------------------------ other agents asking the person
    def show_new_requests(self) -> None:
        self.list_requests(all_open=False)

    def list_requests(self, all_open: bool) -> None:
        if self.inbox is None:
            if all_open:
                self.say("no assist inbox here")
            return
        try:
            requests = self.inbox.open_requests()
        except Exception as e:  # noqa: BLE001 - the inbox is a convenience; the chat goes on without it
            self.say(f"(the assist inbox could not be read: {type(e).__name__})")
            return
        fresh = [r for r in requests if all_open or r["id"] not in self._shown]
        if all_open and not fresh:
            self.say("no open help requests")
        for r in fresh:
            self._shown.add(r["id"])
            for line in assist_lines(r):  # Sentinel's attribution on its own line, the peer's words marked
                self.say(line)
            self.say(f"  (another agent's words, not Sentinel's; answer with /reply {r['id']} TEXT)")

    def reply(self, rest: str) -> None:
        request_id, _, text = rest.partition(" ")
        if self.inbox is None or not request_id or not text.strip():
            self.say("usage: /reply ID TEXT")
            return
        try:
            done = self.inbox.answer(request_id, text)
        except ValueError as e:
            self.say(str(e))
            return
        if done:
            self.say(f"[sent] your reply to {safe_text(request_id, 40)} goes back to the agent")
            return
        row = self.inbox.get(request_id)  # answered first elsewhere (console, another terminal), or expired
        self.say(
            settled_reason(row) if row is not None
            else compose("no open help request ", safe_text(request_id, 40))
        )

    def goal(self, goal: str) -> None:
        self.say(f"[agent] working on: {safe_text(goal, 2000, keep_newlines=True)}")
        self.wait(self.link.run_goal(goal))

    # ------------------------------------------------------------------ one call, live
    def wait(self, coro: Any) -> None:
        """Run one call; show its steps, ask its questions; Ctrl-C cancels it (not the session)."""
        future = self.link.submit(coro)
        pending: Question | None = None
        try:
            while not future.done() or not self.link.events.empty():
                try:
                    event = self.link.events.get(timeout=0.1)
                except queue.Empty:
                    continue
                if isinstance(event, Step):  # a step's line is the phone's words: tagged so, shortly
                    source, line = split_marker(event.message)
                    tag = "" if source is None else "(untrusted) "
                    self.say(f"  {tag}{safe_text(line, 600)}")
                elif isinstance(event, Notice):
                    self.say(f"! {safe_text(event.message, 1000, keep_newlines=True)}")
                elif isinstance(event, Question):
                    pending = event
                    self.answer(event)
                    pending = None
        except KeyboardInterrupt:
            if pending is not None and not pending.reply.done():
                pending.reply.set_result(ElicitResult(action="cancel"))
            future.cancel()
            self.say("\n[cancelled] the running goal was stopped; the session goes on")
            self._drain()
            return
        try:
            result = future.result()
        except Exception as e:  # noqa: BLE001 - a failed call is shown, the session goes on
            self.say(f"[error] {type(e).__name__}: {safe_text(str(e), 400)}")
            return
        self.show(result)

    def answer(self, q: Question) -> None:
        # the chat's questions are elicitations of Sentinel's own front, each marked there (its own questions,
        # an upstream's relayed): their marks are kept, not marked twice (a hidden character is still marked)
        self.say(f"\n[question] {safe_question(Marked(q.message))[0]}")
        try:
            content = ask_schema(q.schema, False)
        except (EOFError, ValueError):
            q.reply.set_result(ElicitResult(action="decline"))
            self.say("  (declined)")
            return
        q.reply.set_result(ElicitResult(action="accept", content=content))

    def show(self, result: CallToolResult) -> None:
        tag = "[refused/failed]" if result.is_error else "[result]"
        texts = [c.text for c in result.content if isinstance(c, TextContent)]
        if not texts and result.structured_content:
            texts = [json.dumps(result.structured_content, indent=1, ensure_ascii=False)]
        self.say(f"{tag} {safe_text(chr(10).join(texts), 8000, keep_newlines=True)}")

    def _drain(self) -> None:
        while True:
            try:
                event = self.link.events.get_nowait()
            except queue.Empty:
                return
            if isinstance(event, Question) and not event.reply.done():
                event.reply.set_result(ElicitResult(action="cancel"))

    # ------------------------------------------------------------------ history
    def _readline(self) -> None:
        try:
            import readline
        except ImportError:  # no readline on this platform: input() still works, without history
            return
        readline.set_history_length(HISTORY_LINES)
        if self.history is not None and self.history.is_file():
            with contextlib.suppress(OSError):
                readline.read_history_file(self.history)

    def _save_history(self) -> None:
        if self.history is None:
            return
        try:
            import readline

            self.history.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(self.history)
        except (ImportError, OSError):
            pass
