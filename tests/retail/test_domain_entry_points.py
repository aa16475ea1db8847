"""Both example domains start through one shared command line (``examples/domain_cli.py``): the same options,
the same refusal of a database they cannot load (named, on stderr, exit 2), each under its own name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from examples import domain_cli
from examples.airline.__main__ import DOMAIN as AIRLINE
from examples.retail.__main__ import DOMAIN as RETAIL

PROJECT_ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)


def test_each_domain_is_a_description_for_the_shared_command_line() -> None:
    for domain, name, env in ((AIRLINE, "airline", "AIRLINE_DB"), (RETAIL, "retail", "RETAIL_DB")):
        assert isinstance(domain, domain_cli.Domain) and domain.name == name and domain.db_env_var == env
        args = domain_cli.parse_args(domain, ["--http", "8000", "--permissive", "--db", "x.json"])
        assert (args.http, args.host, args.permissive, args.db) == (8000, "127.0.0.1", True, "x.json")


@pytest.mark.parametrize("domain", [AIRLINE, RETAIL], ids=["airline", "retail"])
def test_a_bad_database_is_named_on_stderr_with_exit_2(tmp_path: Path, domain: domain_cli.Domain,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for db in (tmp_path / "nope.json", broken):
        assert domain_cli.main(domain, ["--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"{domain.name}: ") and db.name in err, err
    with pytest.raises(SystemExit):
        domain_cli.main(domain, ["--help"])
    shown = capsys.readouterr().out
    assert f"python -m examples.{domain.name}" in shown and f"${domain.db_env_var}" in shown


def test_the_module_entry_point_runs_it() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "examples.retail", "--db", "/nonexistent/db.json"],
        check=False,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.startswith("retail: ") and "db.json" in done.stderr, (
        done.stderr
    )


def test_a_spawned_stdio_server_answers_without_importing_rich(tmp_path: Path) -> None:
    """stderr a pipe (a client spawned it): plain log lines; rich (0.1 s of the start) is never imported. Its
    imports ran with the collector paused (what they built frozen); the collector is on while it serves."""
    import json

    report = tmp_path / "modules.json"
    code = (
        "import atexit, gc, json, runpy, sys\n"
        f"atexit.register(lambda: open({str(report)!r}, 'w').write(json.dumps({{"
        "'modules': sorted(sys.modules), 'frozen': gc.get_freeze_count(), 'collecting': gc.isenabled()})))\n"
        "sys.argv = ['examples.airline']\n"
        "runpy.run_module('examples.airline', run_name='__main__')\n"
    )
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=PROJECT_ROOT, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in (hello, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}):
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        listed: dict = {}
        while listed.get("id") != 1:  # the answer read before stdin ends: an early end cancels requests
            line = proc.stdout.readline()
            assert line, "the server ended before answering tools/list"
            listed = json.loads(line)
        proc.stdin.close()
        proc.wait(60)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert any(t["name"] == "book_reservation" for t in listed["result"]["tools"]), listed
    seen = json.loads(report.read_text())
    assert not [m for m in seen["modules"] if m == "rich" or m.startswith("rich.")], err
    assert seen["collecting"] and seen["frozen"] > 10_000, seen["frozen"]
    assert "Traceback" not in err, err
