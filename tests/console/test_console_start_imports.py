"""Cold start over HTTP (issue 21): the console's pages are routed at start, but what only a page's request
needs is imported by that request: the swarm's build service (its pipeline and backends) by the first look
at a build, the sensors' store by the Consents page. A real `serve --http` of the embedded default, in a
process of its own, answers its first tools/list with neither imported; the pages themselves are tested as
before (test_console_builds.py, test_console_sensor_consents.py: each reaches the deferred import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]  # this tree (a worktree of its own too)
LATER = ("sentinel_mcp.swarm.build_service", "sentinel_mcp.console.sensor_consents",
         "device_tools.sensors.bridge", "device_tools.sensors.sources.factory")

# serve --http in this process's main thread; a thread asks tools/list over real HTTP with the owner's token
# (from its file), then writes the modules imported by then and stops the server (SIGINT, its own handler)
DRIVER = textwrap.dedent("""
    import json, os, signal, sys, threading, time, urllib.request
    from pathlib import Path
    from sentinel_mcp.cli import main

    port, data, out = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    BODY = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}}}

    def probe():
        answer, deadline = None, time.monotonic() + 90
        while answer is None and time.monotonic() < deadline:
            time.sleep(0.05)
            token_file = data / "http-token"
            if not token_file.exists():
                continue
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/mcp", data=json.dumps(BODY).encode(), method="POST", headers={
                    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list",
                    "Authorization": "Bearer " + token_file.read_text().strip()})
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    text = r.read().decode()
                answer = text if '"tools"' in text else None
            except OSError:
                pass
        out.write_text(json.dumps({"answered": answer is not None, "modules": sorted(sys.modules),
                                   "tools": answer.count('"name"') if answer else 0}))
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=probe, daemon=True).start()
    main(["serve", "--http", f"127.0.0.1:{port}"])
""")


def _served(tmp_path: Path, code: str = DRIVER) -> dict:
    out = tmp_path / "modules.json"
    env = {**os.environ, "SENTINEL_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    env.pop("SENTINEL_CONFIG", None)
    proc = subprocess.run([sys.executable, "-c", code, str(free_port()), str(tmp_path / "data"), str(out)],
                          capture_output=True, text=True, timeout=180, cwd=ROOT, env=env)
    assert out.exists(), f"exit {proc.returncode}: {proc.stderr[-3000:]}"
    result: dict = json.loads(out.read_text())
    assert result["answered"], proc.stderr[-3000:]
    return result


def test_the_first_tools_list_over_http_leaves_the_pages_services_unimported(tmp_path: Path) -> None:
    result = _served(tmp_path)
    modules = set(result["modules"])
    assert "sentinel_mcp.console.app" in modules  # the console is mounted: its routes are there
    assert "sentinel_mcp.console.builds_pages" in modules and "sentinel_mcp.console.system_pages" in modules
    assert [m for m in LATER if m in modules] == []
    assert result["tools"] > 10  # the airline's and the built-ins' tools were listed

