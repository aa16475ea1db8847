"""Other hosts' config files pasted as they are (Claude Desktop, Claude Code, VS Code, Cursor): their servers
run,
keys Sentinel does not use are warnings naming the key, and what cannot be understood is an error naming it.
Start-up never waits on an upstream that cannot start, nor beyond an upstream's connect_timeout; a late one
joins the catalog with list_changed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import ToolListChangedNotification

from sentinel_mcp.config import ConfigError, load_config, parse_config
from sentinel_mcp.app.runtime import running_gateway

from .helpers import TOOLBOX, make_config, toolbox_stdio

PY = sys.executable


def write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_claude_code_types(tmp_path):
    c = load_config(
        write(
            tmp_path / ".mcp.json",
            {
                "mcpServers": {
                    "local": {"type": "stdio", "command": PY, "args": [TOOLBOX], "env": {}},
                    "web": {"type": "http", "url": "https://example.test/api", "headers": {"X-Key": "k"}},
                    "old": {"type": "sse", "url": "https://example.test/events"},
                }
            },
        )
    )
    assert c.mcp_servers["local"].command == PY
    assert c.mcp_servers["web"].kind == "streamable-http" and c.mcp_servers["web"].headers == {"X-Key": "k"}
    assert c.mcp_servers["old"].kind == "sse"  # by type, though the URL does not end in /sse
    # no key ignored; the one warning is the header's key written in a file others can read (mode 0644)
    assert [w for w in c.warnings if "readable by other users" not in w] == []
    assert any("mcpServers.web.headers.X-Key" in w for w in c.warnings)


def test_vscode_servers_inputs_env_file_and_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTINEL_INPUT_API_KEY", "from-input")
    monkeypatch.setenv("REGION", "eu")
    (tmp_path / "secrets.env").write_text("# a comment\nexport TOKEN='from-file'\nPLAIN=1 # trailing\n\n")
    c = load_config(
        write(
            tmp_path / ".vscode" / "mcp.json",
            {
                "inputs": [
                    {"type": "promptString", "id": "api-key", "description": "API key", "password": True},
                    {"type": "promptString", "id": "mode", "default": "fast"},
                ],
                "servers": {
                    "files": {
                        "type": "stdio",
                        "command": PY,
                        "args": ["${workspaceFolder}/tool.py", "${input:mode}"],
                        "envFile": "${workspaceFolder}/secrets.env",
                        "env": {"KEY": "${input:api-key}", "PLAIN": "env wins", "AREA": "${env:REGION}"},
                    },
                    "remote": {"type": "http", "url": "https://${env:REGION}.example.test/mcp"},
                },
            },
        )
    )
    files = c.mcp_servers["files"]
    assert files.args == [f"{tmp_path}/tool.py", "fast"]
    assert files.env == {"TOKEN": "from-file", "PLAIN": "env wins", "KEY": "from-input", "AREA": "eu"}
    assert c.mcp_servers["remote"].url == "https://eu.example.test/mcp"


def test_cursor_shape_with_env_interpolation(tmp_path, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "ghp")
    c = load_config(
        write(
            tmp_path / ".cursor" / "mcp.json",
            {
                "mcpServers": {
                    "github": {
                        "command": "npx",
                        "args": ["-y", "server-github"],
                        "env": {"GITHUB_TOKEN": "${env:GH_TOKEN}"},
                    },
                    "docs": {
                        "url": "https://docs.example.test/mcp",
                        "headers": {"Authorization": "Bearer ${env:GH_TOKEN}"},
                    },
                }
            },
        )
    )
    assert c.mcp_servers["github"].env == {"GITHUB_TOKEN": "ghp"}
    assert c.mcp_servers["docs"].headers["Authorization"] == "Bearer ghp"


async def test_claude_desktop_config_pasted_verbatim_warns_and_runs(tmp_path, data_dir):
    cfg = write(
        tmp_path / "claude_desktop_config.json",
        {
            "globalShortcut": "Ctrl+Space",
            "mcpServers": {
                "tb": {
                    "command": PY,
                    "args": [TOOLBOX],
                    "autoApprove": ["echo"],
                    "alwaysAllow": ["pid"],
                    "transportType": "stdio",
                }
            },
            "sentinel": {"data_dir": str(data_dir)},
        },
    )
    c = load_config(cfg)
    assert [w.split(": ", 1)[1] for w in c.warnings] == [
        "globalShortcut: not a Sentinel setting; ignored",
        "mcpServers.tb.autoApprove: ignored; Sentinel's policy decides every call (list tools that need no "
        "confirmation in sentinel.policy.allow)",
        "mcpServers.tb.alwaysAllow: ignored; Sentinel's policy decides every call (list tools that need no "
        "confirmation in sentinel.policy.allow)",
        "mcpServers.tb.transportType: not a Sentinel setting; ignored",
    ]
    async with running_gateway(c) as rt:
        assert any("globalShortcut" in p for p in rt.problems)
        async with Client(rt.front.server) as client:
            assert (await client.call_tool("tb__echo", {"text": "ok"})).content[0].text == "ok"
            # autoApprove did not approve anything: a destructive tool still asks (here: no elicitation ->
            # blocked)
            assert (await client.call_tool("tb__delete_thing", {"name": "x"})).is_error


def test_one_expansion_pass_over_the_whole_file_after_the_shapes(tmp_path, monkeypatch):
    """Every string of the normalised file expands with every spelling (the sentinel section too); keys of
    other
    hosts that Sentinel drops are never expanded (an unset variable there is no error); a token left with
    ``${``
    is refused whatever spelled it."""
    monkeypatch.setenv("SHAPE_TOKEN", "token-from-the-env-0123")
    monkeypatch.setenv("SHAPE_DIR", str(tmp_path))
    monkeypatch.setenv("SENTINEL_INPUT_PEER", "peer-key-from-input")
    (tmp_path / "x.env").write_text("A=1\n")
    (tmp_path / "x.env").chmod(0o600)  # a dotenv file others can read is a warning of its own
    c = parse_config(
        {
            "inputs": [{"id": "peer", "type": "promptString"}],
            "servers": {
                "x": {
                    "type": "stdio",
                    "command": PY,
                    "envFile": "${env:SHAPE_DIR}/x.env",
                    "autoApprove": ["${NOT_SET_ANYWHERE}"],
                    "someHostKey": "${input:undeclared}",
                }
            },
            "unknownTop": "${ALSO_NOT_SET}",
            "sentinel": {
                "data_dir": "${workspaceFolder}/state",
                "http": {"token": "${env:SHAPE_TOKEN}"},
                "a2a": {"api_keys": {"rover": "${input:peer}"}},
            },
        },
        source="mixed.json",
        base_dir=tmp_path,
    )
    assert c.mcp_servers["x"].env == {"A": "1"}
    assert c.sentinel.http.token == "token-from-the-env-0123" and str(c.data_dir) == f"{tmp_path}/state"
    assert c.sentinel.builtin_settings("a2a")["api_keys"]["rover"] == "peer-key-from-input"
    assert sorted(w.split(": ", 1)[1].split(":")[0] for w in c.warnings) == [
        "servers.x.autoApprove",
        "servers.x.someHostKey",
        "unknownTop",
    ]
    monkeypatch.setenv("SHAPE_BRACE", "${SHAPE_TOKEN}")  # expansion is one pass: its value stays as it is
    for token in ("${input:nope}", "${env:SHAPE_UNSET}", "${SHAPE_BRACE}", "${env:SHAPE_BRACE}"):
        with pytest.raises(ConfigError):
            parse_config({"sentinel": {"http": {"token": token}}}, source="t.json", base_dir=tmp_path)


@pytest.mark.parametrize(
    "data, expected",
    [
        (
            {"mcpServers": {"x": {"type": "websocket", "url": "ws://a"}}},
            "mcpServers.x.type: 'websocket' is not one of",
        ),
        ({"mcpServers": {"x": {"type": "http", "command": "a"}}}, "mcpServers.x: type 'http' needs 'url'"),
        ({"servers": {"x": {"type": "stdio"}}}, "servers.x: type 'stdio' needs 'command'"),
        (
            {"mcpServers": {"x": {"command": "a"}}, "servers": {"x": {"command": "b"}}},
            "servers.x: defined twice",
        ),
        (
            {"servers": {"x": {"command": "a", "envFile": "/nonexistent/.env"}}},
            "servers.x.envFile: cannot read",
        ),
        (
            {"servers": {"x": {"command": "a", "env": {"K": "${input:nope}"}}}},
            "${input:nope} is not declared",
        ),
        (
            {
                "inputs": [{"id": "tok", "description": "Token"}],
                "servers": {"x": {"command": "a", "env": {"K": "${input:tok}"}}},
            },
            "${input:tok} (Token) has no value; set the environment variable SENTINEL_INPUT_TOK",
        ),
        ({"inputs": {"id": "x"}}, "inputs: must be a list"),
        ({"sentinel": {"polcy": {"deny": ["*"]}, "policy": {"dny": ["*"]}}}, "sentinel.policy.dny"),
    ],
)
def test_what_cannot_be_understood_is_an_error_naming_the_key(data, expected):
    with pytest.raises(ConfigError) as e:
        parse_config(data, source="pasted.json")
    assert expected in str(e.value) and "pasted.json" in str(e.value)


async def test_startup_never_waits_on_an_upstream_that_cannot_start(data_dir):
    """A huge startup_wait: only each upstream's own first attempt (bounded by its connect_timeout) is
    awaited."""
    cfg = make_config(
        data_dir,
        servers={
            "tb": toolbox_stdio(),
            "missing": {"command": "/nonexistent/binary"},
            "crashy": {"command": "sh", "args": ["-c", "exit 3"]},
            "silent": {"command": "sleep", "args": ["60"], "connect_timeout": 1.0},
        },
    )
    with anyio.fail_after(60):  # a bound on the test, far below the 600 s start-up wait it must not sit out
        async with running_gateway(cfg, startup_wait=600) as rt:
            assert rt.manager.upstreams["tb"].state == "ready"
            assert all(rt.manager.upstreams[n].state != "ready" for n in ("missing", "crashy", "silent"))


async def test_a_late_upstream_joins_the_catalog_with_list_changed(tmp_path, data_dir):
    gate = tmp_path / "go"
    late = {
        "command": "sh",
        "args": ["-c", f'while [ ! -e "{gate}" ]; do sleep 0.1; done; exec "{PY}" "{TOOLBOX}"'],
    }
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(), "late": {**late, "connect_timeout": 60}})
    changed = anyio.Event()

    async def on_message(message):  # noqa: ANN001
        if isinstance(message, ToolListChangedNotification):
            changed.set()

    with anyio.fail_after(90):
        async with running_gateway(cfg, startup_wait=1.0) as rt:
            while (
                rt.manager.upstreams["tb"].state != "ready"
            ):  # tb may need longer than 1 s on a busy machine
                await anyio.sleep(0.1)
            async with Client(rt.front.server, mode="legacy", message_handler=on_message) as c:
                names = {t.name for t in (await c.list_tools()).tools}
                assert "tb__echo" in names and "late__echo" not in names
                gate.touch()  # now the late upstream can start
                await changed.wait()
                while "late__echo" not in {t.name for t in (await c.list_tools()).tools}:
                    await anyio.sleep(0.1)
                assert (await c.call_tool("late__echo", {"text": "joined"})).content[0].text == "joined"
