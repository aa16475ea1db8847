"""Config errors name the key and the problem; catalog names stay unique, short and deterministic."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from mcp.types import Tool

from sentinel_mcp.config import ConfigError, embedded_default, load_config, parse_config
from sentinel_mcp.gateway.catalog import Catalog, exposed_name


def test_claude_desktop_shape_with_env_expansion(tmp_path, monkeypatch):
    monkeypatch.setenv("API_TOKEN", "t0k")
    cfg = tmp_path / "c.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fs": {
                        "command": "npx",
                        "args": ["-y", "server-fs", "${HOME_DIR:-/srv}"],
                        "env": {"TOKEN": "${API_TOKEN}"},
                    },
                    "web": {
                        "url": "https://example.test/mcp",
                        "headers": {"Authorization": "Bearer ${API_TOKEN}"},
                    },
                    "old": {"url": "http://127.0.0.1:9000/sse"},
                }
            }
        )
    )
    c = load_config(cfg)
    assert c.mcp_servers["fs"].env == {"TOKEN": "t0k"} and c.mcp_servers["fs"].args[-1] == "/srv"
    assert c.mcp_servers["web"].headers["Authorization"] == "Bearer t0k"
    assert c.mcp_servers["web"].kind == "streamable-http" and c.mcp_servers["old"].kind == "sse"


@pytest.mark.parametrize(
    "data, expected",
    [
        ({"mcpServers": {"x": {"args": []}}}, "mcpServers.x: needs either 'command'"),
        ({"mcpServers": {"x": {"command": "a", "url": "http://b"}}}, "has both 'command' and 'url'"),
        ({"mcpServers": {"x": {"url": "ftp://b"}}}, "mcpServers.x.url: must start with http"),
        (
            {"mcpServers": {"x": {"command": "a", "args": "b"}}},
            "mcpServers.x.args: Input should be a valid list",
        ),
        ({"mcpServers": {"x": {"command": "a", "timeout": -1}}}, "mcpServers.x.timeout"),
        ({"sentinel": {"http": {"port": "eighty"}}}, "sentinel.http.port"),
        ({"sentinel": {"policy": {"default": "maybe"}}}, "sentinel.policy.default"),
        (
            {"mcpServers": {"x": {"command": "a", "env": {"K": "${NOPE_NOT_SET}"}}}},
            "mcpServers.x.env.K: environment variable ${NOPE_NOT_SET} is not set",
        ),
        ([1, 2], "the top level must be a JSON object"),
    ],
)
def test_invalid_config_names_the_key(data, expected):
    with pytest.raises(ConfigError) as e:
        parse_config(data, source="cfg.json")
    assert expected in str(e.value)
    assert "cfg.json" in str(e.value)


def test_config_file_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "mcpServers": {\n    "x": {"command": "a",}\n  }\n}')
    with pytest.raises(ConfigError, match=r"bad.json, line 3"):
        load_config(bad)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.json")


@pytest.mark.parametrize("text,key,line", [
    ('{"mcpServers": {},\n "sentinel": {"rulebases": ["strict.pl"],\n  "rulebases": []}}', "rulebases", 3),
    ('{"sentinel": {"rulebases": ["strict.pl"]},\n "mcpServers": {},\n "sentinel": {}}', "sentinel", 3),
    ('{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}', "a", 1),
])
def test_a_key_given_twice_is_refused_never_the_last_one_kept(tmp_path, text, key, line):
    bad = tmp_path / "sentinel.json"
    bad.write_text(text)
    with pytest.raises(ConfigError, match=f"line {line}: the key {key!r} is given twice"):
        load_config(bad)


@pytest.mark.parametrize("number", ["1e999", "-1e999", "Infinity", "-Infinity", "NaN", "1E400",
                                    "9" * 400 + ".0"])
@pytest.mark.parametrize("where", ["confirm_ttl", "guard_timeout", "hold_seconds"])
def test_a_number_that_is_not_finite_is_refused_with_its_line(tmp_path, number, where):
    """JSON's reader in Python takes ``1e999`` as infinity and ``Infinity``/``NaN`` as numbers: a timeout that
    never ends, a time to live that never passes. Refused wherever it stands, naming the file and line."""
    section = {"confirm_ttl": '"policy": {"confirm_ttl": N}',
               "guard_timeout": '"policy": {"guard_timeout": N}',
               "hold_seconds": '"console": {"hold_seconds": N}'}[where]
    bad = tmp_path / "sentinel.json"
    bad.write_text('{"mcpServers": {},\n "sentinel": {\n  ' + section.replace("N", number) + "}}")
    with pytest.raises(ConfigError, match=r"sentinel.json, line 3: .* is not a finite number"):
        load_config(bad)
    bad.write_text('{"mcpServers": {},\n "sentinel": {\n  ' + section.replace("N", "1e3") + "}}")
    load_config(bad)  # a finite one in the same place loads


@pytest.mark.parametrize("text", ["Infinity", "inf", "-inf", "+Infinity", "1e999", "INF", "nan", "NaN"])
@pytest.mark.parametrize("where", [
    '"policy": {"confirm_ttl": T}', '"policy": {"guard_timeout": T}',
    '"search": {"memory_ttl": T}', '"sensors": {"sweep_interval": T}', '"device": {"confirm_timeout": T}',
])
def test_a_text_that_reads_as_a_number_that_is_not_finite_is_refused(tmp_path, text, where):
    """A text that reads as a number ("Infinity", "1e999") past the JSON reader's check: refused, in the top
    config and in every built-in's section (a text where a number belongs is the wrong type: strict
    models)."""
    bad = tmp_path / "sentinel.json"
    bad.write_text('{"mcpServers": {}, "sentinel": {' + where.replace("T", json.dumps(text)) + "}}")
    with pytest.raises(ConfigError) as e:
        load_config(bad)
    # refused as not finite, or by the field's own bound (NaN is greater than nothing; "le=600" refuses inf)
    assert any(w in str(e.value) for w in ("not a finite number", "greater than", "less than",
                                           "should be a valid number")), str(e.value)
    assert "sentinel.json" in str(e.value)


def test_config_nested_too_deep_is_a_config_error(tmp_path):
    bad = tmp_path / "sentinel.json"
    bad.write_text('{"mcpServers": {}, "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ConfigError, match="nested too deep"):
        load_config(bad)


def test_cli_reports_config_errors_without_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {"x": {"url": "nope"}}}')
    p = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(bad), "serve"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert "mcpServers.x.url: must start with http" in p.stderr and "Traceback" not in p.stderr


def test_claude_snippet_runs_sentinel_over_stdio(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "config", "claude"], capture_output=True, text=True, timeout=60
    )
    snippet = json.loads(p.stdout)
    entry = snippet["mcpServers"]["sentinel"]
    assert entry["command"].endswith("sentinel-mcp") and entry["args"] == ["serve"]


def test_embedded_default_runs_the_airline_example():
    c = embedded_default()
    assert c.mcp_servers["airline"].args == ["-m", "examples.airline"]
    assert "sentinel" in c.sentinel.builtins


class _Up:
    def __init__(self, name, tools, prefix=None):  # noqa: ANN001
        self.name, self.prefix = name, prefix
        self.tools = {t: Tool(name=t, input_schema={"type": "object"}) for t in tools}
        self.prompts, self.resources, self.resource_templates = [], [], []
        self.builtin = False


def test_names_are_prefixed_limited_and_collisions_deterministic():
    long_tool = "t" * 80
    a = _Up("alpha", ["x", "search", long_tool])
    b = _Up("beta", ["search"], prefix="")
    c = _Up("gamma", ["search"], prefix="")
    cat = Catalog()
    cat.rebuild([c, a, b])
    names = set(cat.tools)
    assert "alpha__x" in names and "search" in names
    assert all(len(n) <= 64 for n in names)
    assert cat.tools["search"].upstream == "beta"  # alphabetically first server keeps the plain name
    renamed = [n for n, r in cat.tools.items() if r.upstream == "gamma"][0]
    assert renamed.startswith("search_") and renamed != "search"
    again = Catalog()
    again.rebuild([b, a, c])
    assert set(again.tools) == names
    assert exposed_name("srv", "bad name/with:chars") == "srv__bad_name_with_chars"


def test_a_route_names_the_arguments_its_tool_declares_secret_each_time_it_is_asked():
    """What the audit masks for a tool (``sensitive_fields_of``), read from the route, as many times as asked;
    a changed definition is a new route, with its own names."""
    from sentinel_mcp.core.secret_names import sensitive_fields_of

    up = _Up("srv", [])
    up.tools["pay"] = Tool(name="pay", input_schema={"type": "object", "properties": {
        "card": {"type": "string", "writeOnly": True}, "pin": {"type": "string", "format": "password"},
        "note": {"type": "string"}}}, _meta={"sentinel/sensitive": ["note", "to"]})
    up.tools["plain"] = Tool(name="plain", input_schema={"type": "object"})
    for builtin in (False, True):
        up.builtin = builtin
        cat = Catalog()
        cat.rebuild([up])
        route = cat.tools["srv__pay"]
        for _ in range(3):
            assert route.sensitive == {"card", "pin", "note", "to"} == sensitive_fields_of(route.exposed)
            assert type(route.sensitive) is frozenset
        assert cat.tools["srv__plain"].sensitive == frozenset()
    up.tools["pay"] = Tool(name="pay", input_schema={"type": "object"})
    cat.rebuild([up])
    assert cat.tools["srv__pay"].sensitive == frozenset()


def test_every_server_setting_the_models_take_is_kept_not_dropped_as_unknown():
    """The keys a server entry keeps are the server models' fields: none is dropped as "not a Sentinel
    setting" (a hand-kept list once dropped the documented ``max_call_seconds``), and an unknown one is."""
    from pathlib import Path

    from sentinel_mcp.config import SERVER_KEYS, RemoteServer, StdioServer
    from sentinel_mcp.config_shapes import normalize

    for model in (StdioServer, RemoteServer):
        spec = {name: None for name in model.model_fields} | {"not_a_setting": 1}
        out, warnings = normalize({"mcpServers": {"s": spec}}, Path("."), SERVER_KEYS)
        assert set(out["mcpServers"]["s"]) == set(model.model_fields), warnings
        assert warnings == ["mcpServers.s.not_a_setting: not a Sentinel setting; ignored"]
    cfg = parse_config({"mcpServers": {"s": {"command": "x", "max_call_seconds": 10, "max_in_flight": 4}}})
    server = cfg.mcp_servers["s"]
    assert (server.max_call_seconds, server.max_in_flight, cfg.warnings) == (10, 4, [])
