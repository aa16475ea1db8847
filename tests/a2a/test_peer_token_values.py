"""A ``peer_tokens`` value is sent as ``Authorization: Bearer <token>``: one a header cannot carry as it is
(a line break or other control character: header injection; non-ASCII; empty: no header; spaces at its ends,
``Bearer`` written in it, an unexpanded variable, huge: a peer's 401 or a refused request) stops the load at
its key, as other config errors do (exit 2), never quoting the token; and where the header is built
(``peer_client.call_peer``) the same rule refuses it before anything is sent. Before, every value loaded."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from sentinel_mcp.a2a.bearer_token import MAX_CHARS
from sentinel_mcp.a2a.peer_client import PeerError, call_peer
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.cli import _shown
from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.core.errors import user_message

PEER = "http://127.0.0.1:8001/a2a"
SECRET = "s3cretTOKENpart"  # in every bad token: never in what is printed

BAD = {
    "crlf header injection": f"{SECRET}\r\nX-Injected: 1",
    "lf": f"{SECRET}\nX-Injected: 1",
    "cr": f"{SECRET}\r",
    "trailing newline (a file read with its newline)": f"{SECRET}\n",
    "tab": f"\t{SECRET}",
    "nul": f"{SECRET}\x00",
    "del": f"{SECRET}\x7f",
    "escape": f"\x1b[31m{SECRET}",
    "vertical tab": f"{SECRET}\x0b",
    "form feed": f"{SECRET}\x0c",
    "non-ascii letter": f"{SECRET}\u00e9",
    "unicode line separator": f"{SECRET}\u2028X-Injected: 1",
    "next line (NEL)": f"{SECRET}\u0085",
    "zero-width space": f"{SECRET}\u200b",
    "fullwidth letters": f"{SECRET}\uff41",
    "lone surrogate": f"{SECRET}\udc80",
    "space at the end": f"{SECRET} ",
    "space at the start": f" {SECRET}",
    "no-break space": f"{SECRET}\u00a0",
    "empty": "",
    "spaces only": "   ",
    "huge": SECRET + "a" * MAX_CHARS,
    "scheme written in": f"Bearer {SECRET}",
    "scheme in lower case": f"bearer {SECRET}",
    "space inside": f"{SECRET} more",
    "unexpanded variable": f"{SECRET}${{PEER_TOKEN",  # (no closing brace: left as written)
    "unset variable": f"{SECRET}${{PEER_TOKEN_NEVER_SET}}",  # (the expansion's own error, at this key)
    "header separator": f"{SECRET},X-Other",
    "quote": f'{SECRET}"',
    "semicolon": f"{SECRET};",
    "colon": f"x:{SECRET}",
    "padding inside": f"ab=={SECRET}",
}
GOOD = [
    "t0ken-one",
    "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJib29rIn0.c2lnbmF0dXJl",  # a JWT
    "abc+/def==",
    "a-b.c_d~e",
    "x" * MAX_CHARS,
    "A",
]


def refusal(tmp_path: Path, token: str) -> str:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"a2a": {"bridge_targets": {"travel": PEER},
                                                     "peer_tokens": {PEER: token}}}}))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return _shown(user_message(caught.value))


@pytest.mark.parametrize("token", list(BAD.values()), ids=list(BAD))
def test_a_token_a_header_cannot_carry_is_a_config_error_at_its_key(tmp_path: Path, token: str) -> None:
    text = refusal(tmp_path, token)
    # (a NUL or an unset variable is refused by the reading of the file itself, at the same key)
    assert f"sentinel.a2a.peer_tokens.{PEER}: " in text, text
    assert SECRET not in text and "X-Injected" not in text, text


@pytest.mark.parametrize("token, said", [
    (f"{SECRET}\r\nX: 1", "control character"), (f"{SECRET}\u00e9", "outside ASCII"), ("", "is empty"),
    (f"{SECRET} ", "spaces at its start or end"), (SECRET + "a" * MAX_CHARS, "characters long"),
    (f"Bearer {SECRET}", "write the token alone"), (f"{SECRET}${{X", "set the variable"),
    (f"{SECRET};", "RFC 6750"),
])
def test_the_reason_says_what_is_wrong(tmp_path: Path, token: str, said: str) -> None:
    text = refusal(tmp_path, token)
    assert said in text and SECRET not in text, text


@pytest.mark.parametrize("token", GOOD)
def test_a_sound_token_loads(tmp_path: Path, token: str) -> None:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"a2a": {"peer_tokens": {PEER: token}}}}))
    section = load_config(path).sentinel.model_extra["a2a"]  # type: ignore[index]
    assert A2ASettings.from_section(section).peer_tokens[PEER] == token


@pytest.mark.parametrize("written, env", [
    ("${PEER_TOKEN}", {"PEER_TOKEN": f"{SECRET}\r\nX-Injected: 1"}),  # from the environment
    ("${PEER_TOKEN}", {"PEER_TOKEN": f"{SECRET}\n"}),
    ("${input:peer_token}", {"SENTINEL_INPUT_PEER_TOKEN": f"{SECRET}\u00e9"}),  # a VS Code input
    ("${PEER_TOKEN:-}", {}),  # an empty default
])
def test_a_token_from_a_variable_is_held_to_the_same_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           written: str, env: dict[str, str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PEER_TOKEN", raising=False) if not env else None
    data: dict[str, Any] = {"sentinel": {"a2a": {"peer_tokens": {PEER: written}}}}
    if "input:" in written:
        data["inputs"] = [{"id": "peer_token", "type": "promptString", "password": True}]
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = _shown(user_message(caught.value))
    assert "peer_tokens" in text and "the token " in text and SECRET not in text, text


def test_the_cli_exits_2_naming_the_key_never_the_token(tmp_path: Path) -> None:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "d"), "a2a": {
        "peer_tokens": {PEER: f"{SECRET}\r\nX-Injected: 1"}}}}))
    for command in (["config", "show"], ["serve"]):
        run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(path), *command],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 2, (run.returncode, run.stderr)
        assert "sentinel.a2a.peer_tokens" in run.stderr and "control character" in run.stderr, run.stderr
        assert SECRET not in run.stderr + run.stdout and "Traceback" not in run.stderr, run.stderr


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str | None] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.seen.append(self.headers.get("Authorization"))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"jsonrpc": "2.0", "id": "1", "result": {"ok": True}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def peer() -> Iterator[tuple[str, list[str | None]]]:
    seen: list[str | None] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/a2a", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("token", list(BAD.values()), ids=list(BAD))
async def test_where_the_header_is_built_a_bad_token_sends_nothing(peer: tuple[str, list[str | None]],
                                                                   token: str) -> None:
    url, seen = peer
    with pytest.raises(PeerError) as caught:
        await call_peer(url, "GetTask", {"id": "x"}, token, timeout=10)
    assert seen == [] and SECRET not in str(caught.value) and "nothing was sent" in str(caught.value)


async def test_a_sound_token_is_sent_as_a_bearer_token(peer: tuple[str, list[str | None]]) -> None:
    url, seen = peer
    for token in GOOD:
        assert await call_peer(url, "GetTask", {"id": "x"}, token, timeout=10) == {"ok": True}
    assert await call_peer(url, "GetTask", {"id": "x"}, None, timeout=10) == {"ok": True}
    assert seen == [f"Bearer {t}" for t in GOOD] + [None]
