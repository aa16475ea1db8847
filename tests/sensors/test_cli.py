"""``sentinel-mcp sensors ...`` on the same SQLite store the server uses."""

from __future__ import annotations

import json
import sys

import pytest
from mcp import Client

from device_tools.sensors.server import create_server
from sentinel_mcp.cli import main
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.call_meta import PRINCIPAL_KEY

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path / "state"),
                                                               "sensors": {"default_retention": 120}}}))
    return path


def run(capsys, *argv) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


async def test_cli_grant_is_seen_by_the_server_and_revoke_removes_it(config_file, tmp_path, capsys):
    code, out, _ = run(capsys, "-c", str(config_file), "sensors", "consent", "grant", "location",
                       "--requester", "agent-a", "--scope", "standard", "--expires-in", "3600")
    assert code == 0 and out["granted"]["scope"] == "standard" and out["granted"]["granted_by"] == "cli"

    server = create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "state" / "sensors"))
    async with Client(server, mode="auto") as c:  # no elicitation: only the stored grant can allow it
        r = await c.call_tool("sensor_read", {"sensor": "location", "scope": "standard", "policy_tag": "t"},
                              meta={PRINCIPAL_KEY: "agent-a"})
        assert not r.is_error and r.structured_content["redactions"][0] == "Rounded to street-level precision"

    code, out, _ = run(capsys, "-c", str(config_file), "sensors", "consent", "list")
    assert [(c["requester"], c["sensor"]) for c in out["consents"]] == [("agent-a", "location")]
    code, out, _ = run(
        capsys, "-c", str(config_file), "sensors", "consent", "revoke", "--requester", "agent-a"
    )
    assert out["revoked"] == 1
    code, out, _ = run(capsys, "-c", str(config_file), "sensors", "audit", "--requester", "agent-a")
    assert [(r["decision"], r["policy_tag"]) for r in out["audit"]] == [("allowed", "t")]


def test_cli_read(config_file, capsys, monkeypatch, tmp_path):
    (tmp_path / "empty-input").write_text("")
    with open(tmp_path / "empty-input") as not_a_tty:
        monkeypatch.setattr(sys, "stdin", not_a_tty)  # never prompts
        _cli_read(config_file, capsys)


def _cli_read(config_file, capsys):
    code, out, err = run(capsys, "-c", str(config_file), "sensors", "read", "location", "--scope", "minimal")
    assert code == 1 and out is None and "consent_required" in err
    code, out, err = run(
        capsys, "-c", str(config_file), "sensors", "read", "battery", "--scope", "standard", "--yes"
    )
    assert code == 0 and set(out["payload"]) == {"percentage", "charging", "status", "plugged"}
    code, out, err = run(capsys, "-c", str(config_file), "sensors", "read", "sonar", "--yes")
    assert code == 1 and "unknown sensor 'sonar'" in err
    code, out, _ = run(capsys, "-c", str(config_file), "sensors", "audit")
    assert [r["decision"] for r in out["audit"]] == ["denied", "allowed", "invalid"]
    # a yes for this one read stores no consent, so the reading is not kept (nothing could serve it)
    assert out["audit"][1]["retention"] == 0
    code, _, _ = run(capsys, "-c", str(config_file), "sensors", "consent", "grant", "battery", "--requester",
                     "cli", "--scope", "standard")
    code, out, _ = run(capsys, "-c", str(config_file), "sensors", "read", "battery")
    assert code == 0, out
    code, out, _ = run(capsys, "-c", str(config_file), "sensors", "audit", "--limit", "1")
    assert out["audit"][0]["retention"] == 120  # under a stored consent: the config's default_retention


def test_cli_bad_input(config_file, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["-c", str(config_file), "sensors", "consent", "grant", "sonar", "--requester", "x"])
    assert e.value.code == 2
    capsys.readouterr()
    code, _, err = run(
        capsys,
        "-c",
        str(config_file),
        "sensors",
        "consent",
        "grant",
        "battery",
        "--requester",
        "x",
        "--expires-in",
        "-1",
    )
    assert code == 2 and "expires_in must be a finite positive" in err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path), "sensors": {"source": "radar"}}}))
    code, _, err = run(capsys, "-c", str(bad), "sensors", "consent", "list")
    assert code == 2 and "sentinel.sensors.source" in err
