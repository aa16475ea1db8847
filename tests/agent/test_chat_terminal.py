"""``sentinel-mcp chat`` used as a person uses it: in a real terminal (tmux), typing with send-keys and
reading
the screen with capture-pane. The phone is the simulated one, the model a scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from tests.agent.audit_rows import audit_rows
from tests.agent.phone_policies import act, read_newest_message, screen_of, sign_in_to_bank

from sentinel_mcp.a2a.assist_inbox import AssistInbox, inbox_path
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(180)
CLI = str(Path(sys.executable).parent / "sentinel-mcp")


@pytest.fixture(autouse=True)
def _tmux_installed() -> None:
    """Not installed means FAILED, never skipped (as PostgreSQL for the cluster tests): `make system` installs
    tmux, and the terminal chat untested is a defect."""
    if shutil.which("tmux") is None:
        pytest.fail(
            "tmux is not installed: `make system` installs it (the terminal chat test needs it)",
            pytrace=False,
        )


class Tmux:
    def __init__(self, tmp_path: Path, command: list[str], env: dict[str, str]) -> None:
        self.socket = f"sentinel-chat-{uuid.uuid4().hex[:8]}"  # a private tmux server: nobody else's sessions
        self.target = "chat"
        env_args = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
        self._tmux(
            "new-session",
            "-d",
            "-s",
            self.target,
            "-x",
            "160",
            "-y",
            "60",
            *env_args,
            " ".join(json.dumps(c) for c in command),
        )

    def _tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], check=True, capture_output=True, text=True
        ).stdout

    def type(self, text: str, enter: bool = True) -> None:
        self._tmux("send-keys", "-t", self.target, "-l", text)
        if enter:
            self._tmux("send-keys", "-t", self.target, "Enter")

    def key(self, key: str) -> None:
        self._tmux("send-keys", "-t", self.target, key)

    def screen(self) -> str:
        # without the pane's empty rows below the cursor, so a length marks what was on screen so far
        return self._tmux("capture-pane", "-p", "-t", self.target, "-S", "-500").rstrip()

    def wait_for(self, needle: str, after: int = 0, timeout: float = 60) -> str:
        """The screen once ``needle`` appears after the first ``after`` characters (bounded by time)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            text = self.screen()
            if needle in text[after:]:
                return text
            time.sleep(0.2)
        raise AssertionError(f"{needle!r} never appeared; the screen:\n{self.screen()}")

    def alive(self) -> bool:
        return (
            subprocess.run(
                ["tmux", "-L", self.socket, "has-session", "-t", self.target], capture_output=True
            ).returncode
            == 0
        )

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def chat(tmp_path, model_server):
    config = tmp_path / "sentinel.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {},
                "sentinel": {
                    "data_dir": str(tmp_path / "data"),
                    "builtins": ["sentinel", "device", "agent"],
                    "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
                    "device": {"backend": "simulated", "risk_classifier": False},
                    "agent": {
                        "backend": "openai",
                        "openai": {
                            "timeout": 30.0,
                            "backoff_base": 0.01,
                            "max_attempts": 1,
                            "model": "scripted-1",
                        },
                    },
                },
            }
        )
    )
    env = {
        "SWARM_OPENAI_BASE_URL": model_server.url,
        "SWARM_OPENAI_API_KEY": "test-key",
        "HOME": str(tmp_path),
        "TERM": "xterm",
    }
    term = Tmux(tmp_path, [CLI, "-c", str(config), "chat"], env)
    try:
        term.wait_for("Type a goal, or /help.")
        yield term, model_server, tmp_path / "data"
    finally:
        term.kill()


def test_a_person_reaches_a_goal_answers_a_question_inline_and_cancels_a_step(chat):
    term, model, data = chat
    model.script("unknown", sign_in_to_bank, sign_in_to_bank, sign_in_to_bank)
    term.type("sign in to my bank")
    # each step shows live: the decision (tool, arguments, why) before its call, then the outcome
    term.wait_for('device__click {"element_id"')
    screen = term.wait_for("[question] Risk high: Tap \u201cSign in\u201d in Bank?")
    assert "step 1: click 'Bank' -> device__click" in screen and "open the bank" in screen
    assert "step 1: click 'Bank': done" in screen
    term.type("y")  # typed as the schema says: a yes is JSON true
    screen = term.wait_for("agent run run-")  # after the marker of the phone's words
    assert "completed" in screen and "signed in" in screen

    # another agent asks the person for help (as the A2A service keeps it): shown at the next prompt, answered
    inbox = AssistInbox(inbox_path(data))
    request = inbox.add(
        from_agent="rover", reason="Which seat? \x1b[2J\u202eeno", questions=["Window or aisle?"]
    )
    mark = len(term.screen())
    term.type("")
    term.wait_for(f"[help request {request}] Sentinel: sent by rover (authenticated)", after=mark)
    screen = term.wait_for("Window or aisle?", after=mark)  # the request's lines are printed one by one
    assert "\u202e" not in screen  # shown safely, marked as another agent's
    term.type(f"/reply {request} aisle please")
    term.wait_for("[sent]", after=mark)
    assert inbox.get(request)["reply"] == "aisle please"

    # the commands
    mark = len(term.screen())
    term.type('/why device__sms_send {"to": "Bob", "body": "hi"')  # malformed ARGS: a clear error
    term.wait_for("ARGS is not JSON", after=mark)
    term.type("/why device__press_home")
    term.wait_for('"decision"', after=mark)
    term.type("/facts")
    term.wait_for("[result]", after=len(term.screen()) - 200)
    mark = len(term.screen())
    term.type("/frobnicate")
    term.wait_for("unknown or incomplete command", after=mark)

    # multi-line input: a trailing backslash goes on; Ctrl-C stops the running goal, not the session
    model.release.clear()
    model.script("unknown", {"hold": True})
    mark = len(term.screen())
    term.type("open Messages and \\")
    term.type("read the newest message")
    term.wait_for("working on: open Messages and read the newest message", after=mark)
    time.sleep(1.0)  # the model request is parked
    term.key("C-c")
    term.wait_for("[cancelled]", after=mark)
    model.release.set()
    assert term.alive()

    # the session goes on: the next goal runs to the end
    def home_then_read(body):
        sid, app, _ = screen_of(body)
        if app == "com.example.bank":  # where the first goal left the phone
            return act("home", sid, why="start from the home screen")
        return read_newest_message(body)

    model.script("unknown", *[home_then_read] * 3)
    mark = len(term.screen())
    term.type("read the newest message")
    # the screen of Messages is a messages read: the person is asked, as for sms_list, and allows it once
    term.wait_for("[question] Sentinel: allow your MCP client to read your messages", after=mark, timeout=90)
    term.wait_for("Allow? [y/N]", after=mark)
    term.type("y")
    term.wait_for("Remember? [y/N]", after=mark)
    term.type("n")
    screen = term.wait_for("agent run run-", after=mark, timeout=90)
    assert "Alice: See you at 7?" in screen[mark:], screen[mark:]

    term.type("/quit")
    end = time.monotonic() + 30
    while term.alive() and time.monotonic() < end:
        time.sleep(0.2)
    # the person's answer went through the gateway like any client's: the audit has the confirmed tap
    # the cancelled run is on record as cancelled, not left running
    import sqlite3

    with sqlite3.connect(data / "agent" / "agent.db") as db:
        statuses = [s for (s,) in db.execute("SELECT status FROM agent_runs ORDER BY started")]
    assert statuses == ["completed", "cancelled", "completed"], statuses
    rows = audit_rows(data, "tool, decision", "client LIKE 'agent:%' AND tool = 'device__click'")
    assert len(rows) >= 2 and all(d == "allow" for _, d in rows), rows
    assert (data / "chat_history").is_file() and "sign in to my bank" in (data / "chat_history").read_text()
