"""Cold start (issue 21): the stdio ``serve`` of the embedded default, a real subprocess with its airline
upstream, answers initialize and tools/list in both protocol eras, and by its exit it has not imported what
its start never needs: the script table of ``confusable_homoglyphs`` (a JSON table read at its import) for
checking ASCII server names. The modules are written at the gateway's exit by a
``sitecustomize`` on its ``PYTHONPATH``; the upstreams do not get that environment (only the SDK's names)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
NOT_AT_START = ("confusable_homoglyphs", "confusable_homoglyphs.categories")
_HOOK = """import atexit, os, sys
def _written():
    if sys.argv and sys.argv[0].endswith(os.path.join("sentinel_mcp", "__main__.py")):
        with open(os.environ["MODULES_OUT"], "w") as f:
            f.write("\\n".join(sorted(sys.modules)))
atexit.register(_written)
"""
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def _answer(proc: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        assert line, "serve ended before answering"
        got: dict[str, Any] = json.loads(line)
        if got.get("id") == message["id"]:
            return got


def _served(tmp_path: Path, era: str) -> tuple[list[str], set[str]]:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_HOOK)
    out = tmp_path / "modules.txt"
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "MODULES_OUT": str(out),
           "SENTINEL_DATA_DIR": str(tmp_path / "d")}
    env.pop("SENTINEL_CONFIG", None)
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True, cwd=ROOT,
                            start_new_session=True)
    try:
        if era == "2025-11-25":
            hello = _answer(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": era, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
            assert hello["result"]["protocolVersion"] == era
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
            listed = _answer(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        else:
            listed = _answer(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                    "params": {"_meta": META}})
        names = [t["name"] for t in listed["result"]["tools"]]
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(60)
    assert proc.returncode == 0
    return names, set(out.read_text().split())


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_stdio_serve_lists_its_tools_without_the_script_table(tmp_path: Path, era: str) -> None:
    names, modules = _served(tmp_path, era)
    assert any(n.startswith("airline") for n in names), names  # the upstream's tools, through the gateway
    assert "sentinel_mcp.app.serve" in modules  # the hook saw the gateway itself
    assert [m for m in NOT_AT_START if m in modules] == []
